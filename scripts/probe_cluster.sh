#!/usr/bin/env bash
# Probe 2 (issue: BO surrogates that steer): cmanp-bo re-evaluates one point over and over
# in BO (an observation barely moves it); the prior's contexts are uniform, a BO run's are
# clustered. Two fine-tunes of cmanp-bo-long at 186k, as scripts/probe_near_context.sh's
# (12k-step cosine, one thread each, MINUTES each), on the prior with half the context
# clustered and half the targets near the context, at lr 1e-4 and 3e-4; evaluated on the
# plain prior.   MINUTES=20 scripts/probe_cluster.sh
set -euo pipefail
cd "$(dirname "$0")/.."
NPB=${NPB:-.venv/bin/npbandit}
MINUTES=${MINUTES:-20}
common=(--model cmanp --prior bo --set n_latents=32 --set n_block_latents=32 --init-from training_runs/init/probe/cmanp-bo.json
        --steps 12000 --loss expected --threads 1 --eval-every 2000 --eval-batches 16
        --checkpoint-every 500 --max-minutes "$MINUTES" --eval-prior-set near_context_frac=0.0
        --prior-set near_context_frac=0.5 --prior-set context_cluster_frac=0.5)
"$NPB" train --out training_runs/probe-cluster "${common[@]}" --lr 1e-4 > training_runs/probe-cluster.log 2>&1 &
"$NPB" train --out training_runs/probe-cluster-lr3 "${common[@]}" --lr 3e-4 > training_runs/probe-cluster-lr3.log 2>&1 &
wait
