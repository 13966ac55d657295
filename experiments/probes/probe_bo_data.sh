#!/usr/bin/env bash
# Equal-budget probes of the bo prior's training data (issue: BO surrogates that steer): fine-tunes
# of cmanp-bo-long at 186k steps (training_runs/init/probe), a 12k-step cosine schedule, one thread
# each, two at a time for MINUTES, scored on the plain prior (experiments/log/benchmarks.md, "bo-shaped-data").
#   MINUTES=25 experiments/probes/probe_bo_data.sh near      # uniform targets (control) vs half near the context, lr 1e-4
#   MINUTES=20 experiments/probes/probe_bo_data.sh cluster   # half near + half the context clustered, lr 1e-4 and 3e-4
#   MINUTES=20 experiments/probes/probe_bo_data.sh elite     # the lr 3e-4 cluster probe with a 16-point elite memory
#                                                 # (CMANPConfig.n_elite; one run, beside a long run)
# Export a probe that stopped on MINUTES by running its command again with --export-now.
set -euo pipefail
cd "$(dirname "$0")/../.."
NPB=${NPB:-.venv/bin/npbandit}
MINUTES=${MINUTES:-20}
common=(--model cmanp --prior bo --set n_latents=32 --set n_block_latents=32 --init-from training_runs/init/probe/cmanp-bo.json
        --steps 12000 --loss expected --threads 1 --eval-every 2000 --eval-batches 16
        --checkpoint-every 500 --max-minutes "$MINUTES" --eval-prior-set near_context_frac=0.0)
near=(--prior-set near_context_frac=0.5)
cluster=("${near[@]}" --prior-set context_cluster_frac=0.5)
probe() {  # <run name> <args...>
    local name=$1; shift
    "$NPB" train --out "training_runs/$name" "${common[@]}" "$@" > "training_runs/$name.log" 2>&1 &
}
case "${1:-}" in
    near) probe probe-uniform --lr 1e-4; probe probe-near --lr 1e-4 "${near[@]}" ;;
    cluster) probe probe-cluster --lr 1e-4 "${cluster[@]}"; probe probe-cluster-lr3 --lr 3e-4 "${cluster[@]}" ;;
    elite) probe probe-elite --lr 3e-4 "${cluster[@]}" --set n_elite=16 ;;
    *) echo "usage: $0 near|cluster|elite" >&2; exit 2 ;;
esac
wait
