#!/usr/bin/env bash
# The long `*-bo` runs (issue: BO surrogates that steer), resumable across sessions.
#
# Recipe chosen by experiments/benchmarks/bo_training_study.py (experiments/log/benchmarks.md, section "bo-training-study"):
# targets standardised by the context alone (what NPModel sees), the expected loss
# under the targets' exact GP moments (--loss expected), fine-tuned from the v1
# checkpoints (CMANP from scratch did not leave the N(0, 1) level in 4,000 steps).
# The cosine schedule spans 200k steps; each call trains for MINUTES and saves.
# Run directories live in training_runs/ and are committed, so any machine resumes.
#
#   RUNS="cmanp te-pt-tnp" MINUTES=120 experiments/training/train_bo_long.sh      # two runs, one thread each
#   EXPORT=1 RUNS=tnpd experiments/training/train_bo_long.sh      # export the saved state as a checkpoint card
#                                                      # (<run dir>/<name>.json; safe while the run trains)
set -euo pipefail
cd "$(dirname "$0")/../.."
NPB=${NPB:-.venv/bin/npbandit}
MINUTES=${MINUTES:-120}
RUNS=${RUNS:-cmanp te-pt-tnp}
common=(--prior bo --steps 200000 --loss expected --threads 1 --eval-every 2000 --eval-batches 16
        --checkpoint-every 500 --max-minutes "$MINUTES")
if [[ -n "${EXPORT:-}" ]]; then common+=(--export-now); fi
source experiments/training/recipes.sh
shaped=("${BO_SHAPED_DATA[@]}" --lr 3e-4 --steps 60000)
run() {
    case "$1" in
        cmanp) "$NPB" train --model cmanp --out training_runs/cmanp-bo-long --set n_latents=32 --set n_block_latents=32 \
                   --init-from training_runs/init/v1/cmanp-bo.json "${common[@]}" ;;
        # the paper's 128 latents, widened from cmanp-bo-long at 40.5k steps (experiments/training/widen_cmanp.py)
        cmanp128) "$NPB" train --model cmanp --out training_runs/cmanp128-bo-long --set n_latents=128 \
                   --set n_block_latents=128 --init-from training_runs/init/cmanp128/cmanp-bo.json "${common[@]}" ;;
        te-pt-tnp) "$NPB" train --model te-pt-tnp --size small --out training_runs/te-pt-tnp-bo-long \
                   --init-from training_runs/init/v1/te-pt-tnp-bo.json "${common[@]}" ;;
        retreever) "$NPB" train --model retreever --out training_runs/retreever-bo-long \
                   --init-from training_runs/init/v1/retreever-bo.json "${common[@]}" ;;
        tnpd) "$NPB" train --model tnpd --out training_runs/tnpd-bo-long "${common[@]}" ;;
        # CMANP-AND (issue 18) from cmanp-bo-long at 120.5k steps: the encoder starts trained, the
        # covariance head learns from the expected joint loss under the targets' exact GP covariance
        cmanp-and) "$NPB" train --model cmanp-and --out training_runs/cmanp-and-bo-long --set n_latents=32 \
                   --set n_block_latents=32 --init-from training_runs/init/cmanp-and/cmanp-bo.json "${common[@]}" \
                   --steps 40000 ;;  # a head to learn on a trained encoder: a shorter schedule
        # shaped data, from the lr 3e-4 probe (cmanp-bo-long at 186k + 11k steps on that prior); shipped as cmanp-bo v3
        cmanp-shaped) "$NPB" train --model cmanp --out training_runs/cmanp-shaped-bo-long --set n_latents=32 \
                   --set n_block_latents=32 --init-from training_runs/init/shaped/cmanp-bo.json "${common[@]}" \
                   "${shaped[@]}" ;;
        # cmanp-shaped's data and recipe with a 16-point elite memory (CMANPConfig.n_elite: the decoder also
        # reads the 16 best observations), from the elite probe (experiments/probes/probe_bo_data.sh elite, 12k steps)
        cmanp-elite) "$NPB" train "${CMANP_BO_ELITE[@]}" --out training_runs/cmanp-elite-bo-long \
                   --init-from training_runs/init/elite/cmanp-bo.json "${common[@]}" "${shaped[@]}" ;;
        # cmanp-elite widened to the paper's 128 latents (experiments/training/widen_cmanp.py, function-preserving) at the end
        # of its 60k schedule (shipped as cmanp-bo v4): its plain-prior eval was flat at d >= 4 from ~30k steps.
        # Stopped at 10.7k (committed state: 7.6k): eval at 10k -0.27 / -0.79 / -1.12 / -1.32 / -1.44 / -1.50,
        # no better than v4 at d >= 4 and worse at d <= 2 after the lr restart: width is not the limit
        cmanp-elite128) "$NPB" train --model cmanp --out training_runs/cmanp-elite128-bo-long --set n_latents=128 \
                   --set n_block_latents=128 --set n_elite=16 --init-from training_runs/init/elite128/cmanp-bo.json \
                   "${common[@]}" "${shaped[@]}" ;;
        # cmanp-bo v4 (cmanp-elite at 60k, training_runs/init/v4) reading the 64 best points instead of 16:
        # a BO run of up to 64 evaluations is then read point by point; a fine-tune (lr 1e-4, 30k). Stopped
        # at 11.6k: plain-prior eval 0.05 / -0.68 / -1.08 / -1.31 / -1.45 / -1.53 at 10k, v4 0.24 / -0.70 /
        # -1.11 / -1.32 / -1.44 / -1.50 (reading more raw points did not help at d >= 4)
        cmanp-elite64) "$NPB" train --model cmanp --out training_runs/cmanp-elite64-bo-long --set n_latents=32 \
                   --set n_block_latents=32 --set n_elite=64 --init-from training_runs/init/v4/cmanp-bo.json \
                   "${common[@]}" "${shaped[@]}" --lr 1e-4 --steps 30000 ;;
        # v4 with contextual elites (CMANPConfig.elite_context: the 16 elite points read each layer's latents
        # before the targets read them, as a TNP's context tokens evolve through its layers); starts as v4.
        # Stopped at 11.8k: eval at 10k 0.04 / -0.75 / -1.12 / -1.34 / -1.45 / -1.53 (v4: 0.24 / -0.70 / -1.11 /
        # -1.32 / -1.44 / -1.50): no gain at d >= 4 in 12k steps
        cmanp-ctx) "$NPB" train --model cmanp --out training_runs/cmanp-ctx-bo-long --set n_latents=32 \
                   --set n_block_latents=32 --set n_elite=16 --set elite_context=true \
                   --init-from training_runs/init/v4/cmanp-bo.json "${common[@]}" "${shaped[@]}" --lr 2e-4 --steps 30000 ;;
        *) echo "unknown run $1" >&2; exit 2 ;;
    esac
}
for r in $RUNS; do
    if [[ -n "${EXPORT:-}" ]]; then run "$r"; else run "$r" > "training_runs/$r.log" 2>&1 & fi
done
wait
