#!/usr/bin/env bash
# Trains every checkpoint shipped in npbandit/surrogates/weights/ (issue: pretraining).
# Two queues run side by side, one torch thread each (2-core machines). Every run is
# resumable: re-running this script continues unfinished runs from runs/<name>/.
# When a run finishes, copy runs/<name>/<name>.{safetensors,json} into the weights dir.
set -euo pipefail
cd "$(dirname "$0")/../.."
NP=".venv/bin/npbandit"
COMMON=(--threads 1 --eval-every 2000 --checkpoint-every 500)
WHEEL=(--set d_model=16 --set n_heads=1 --set d_ff=64 --set n_layers=4 --set emb_depth=3 --batch-size 8)
STEPS_GP=${STEPS_GP:-30000}
STEPS_WHEEL=${STEPS_WHEEL:-25000}
STEPS_BO=${STEPS_BO:-25000}

# The wheel prior's default encoding (symlog rewards, zeros for unobserved arms; see
# npbandit/priors/wheel.py) is what cmanp-wheel and tnpd-wheel use; lbanp-wheel below differs (v1: the shipped
# lbanp-wheel is v2 since 2026-11-27, RUNS=lbanp-wheel-played experiments/training/train_papers_long.sh).
queue_w() {
  # cmanp-wheel also trains on short histories (half the batches draw 1..512 context rows): trained on
  # 512 rows only, it mis-played the first rounds of a bandit run (experiments/log/results.md, "Wheel bandit")
  $NP train --model cmanp --prior wheel --steps "$STEPS_WHEEL" --out runs/cmanp-wheel --set n_latents=8 --set n_block_latents=8 "${WHEEL[@]}" "${COMMON[@]}" \
    --prior-set min_context=1 --prior-set full_context_prob=0.5
  # lbanp-wheel keeps the previous encoding (rewards / 50, N(0, 1) fill, 20k steps): with the
  # symlog/zeros default our LBANP got stuck on arm 0 in the bandit loop (experiments/log/results.md)
  $NP train --model lbanp --prior wheel --steps 20000 --out runs/lbanp-wheel --set n_latents=8 "${WHEEL[@]}" "${COMMON[@]}" \
    --prior-set reward_scale=50 --prior-set reward_transform=identity --prior-set reward_fill=noise
  $NP train --model tnpd  --prior wheel --steps "$STEPS_WHEEL" --out runs/tnpd-wheel "${WHEEL[@]}" "${COMMON[@]}"
}
queue_a() {
  $NP train --model cmanp --prior bo    --steps "$STEPS_BO" --out runs/cmanp-bo --set n_latents=32 --set n_block_latents=32 "${COMMON[@]}"
  queue_w
}
queue_b() {
  $NP train --model cmanp --prior gp1d  --steps "$STEPS_GP" --out runs/cmanp-gp1d --set n_latents=32 --set n_block_latents=32 "${COMMON[@]}"
  $NP train --model lbanp --prior gp1d  --steps "$STEPS_GP" --out runs/lbanp-gp1d --set n_latents=8 "${COMMON[@]}"
  $NP train --model tnpd  --prior gp1d  --steps "$STEPS_GP" --out runs/tnpd-gp1d "${COMMON[@]}"
}
# issues 4 and 5 (first, short CPU runs; the *-bo checkpoints are still to come)
queue_c() {
  $NP train --model te-pt-tnp --prior gp1d --steps "${STEPS_TE:-20000}" --out runs/te-pt-tnp-gp1d --size small "${COMMON[@]}"
}
queue_d() {
  $NP train --model retreever --prior gp1d --steps "${STEPS_RT:-20000}" --out runs/retreever-gp1d "${COMMON[@]}"
}
# issues 4 and 5: the BO-prior checkpoints (same prior and sizes as cmanp-bo / the gp1d runs)
queue_e() {
  $NP train --model retreever --prior bo --steps "${STEPS_RT_BO:-25000}" --out runs/retreever-bo "${COMMON[@]}"
}
queue_f() {
  $NP train --model te-pt-tnp --prior bo --steps "${STEPS_TE_BO:-25000}" --out runs/te-pt-tnp-bo --size small "${COMMON[@]}"
}
mkdir -p runs
for q in ${QUEUES:-a b}; do   # QUEUES=a runs one queue only; QUEUES="c d" / "e f" the issue 4/5 runs, QUEUES=w the wheel runs
  "queue_$q" > "runs/queue_$q.log" 2>&1 &
done
wait
