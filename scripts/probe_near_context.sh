#!/usr/bin/env bash
# Probe (issue: BO surrogates that steer): do targets near the observations teach CMANP to
# interpolate? Two fine-tunes of cmanp-bo-long at 186k steps with the same CPU budget and
# schedule (lr 1e-4 cosine over 12k steps, one thread each, MINUTES each), differing only in
# where the bo prior puts its targets: uniform on the cube (control) or half of them near
# context points (near_context_frac=0.5). Both are evaluated on the plain prior.
#   MINUTES=25 scripts/probe_near_context.sh
#   then: benchmarks/bo_interpolation.py / bo_yardstick.py --models training_runs/probe-*
set -euo pipefail
cd "$(dirname "$0")/.."
NPB=${NPB:-.venv/bin/npbandit}
MINUTES=${MINUTES:-25}
common=(--model cmanp --prior bo --set n_latents=32 --set n_block_latents=32 --init-from training_runs/init/probe/cmanp-bo.json
        --steps 12000 --lr 1e-4 --loss expected --threads 1 --eval-every 2000 --eval-batches 16
        --checkpoint-every 500 --max-minutes "$MINUTES" --eval-prior-set near_context_frac=0.0)
"$NPB" train --out training_runs/probe-uniform "${common[@]}" > training_runs/probe-uniform.log 2>&1 &
"$NPB" train --out training_runs/probe-near "${common[@]}" --prior-set near_context_frac=0.5 \
    > training_runs/probe-near.log 2>&1 &
wait
