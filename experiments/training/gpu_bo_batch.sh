#!/usr/bin/env bash
# A lent GPU's 15 minutes spent on issue 14's open question: is the shipped cmanp-bo (v4: 60k steps at batch 16
# on CPU, flat at d >= 4) limited by gradient noise / sample count rather than by the model? Two fine-tunes of
# v4 on its own recipe (shaped bo prior, expected loss, lr 3e-4 cosine) at batch 128 and batch 512, side by side
# on one GPU, the prior drawn by loader workers on the CPU cores. Each run's length is set from a 30 s probe of
# the same command so that its cosine schedule ends inside the time left (TRAIN_S).
#   experiments/training/gpu_bo_batch.sh            # on the device; states + logs land in $OUT (or ./gpu_out)
# The device tool sends the working tree (64 MiB at most) and the committed training states alone are ~200 MB,
# so before the call: `git rm -r -q --cached training_runs && mv training_runs ../training_runs_aside`; after it:
# `mv ../training_runs_aside training_runs && git reset -q training_runs`. The device's image has torch and
# botorch but not gymnasium / sqlalchemy: carry their wheels (.whl, see the device tool's README) and run with
# PYTHONPATH=/tmp/site:$PWD.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-gpu_out}; TRAIN_S=${TRAIN_S:-380}; mkdir -p "$OUT"
source experiments/training/recipes.sh
npb() { python3 -c 'import sys; from npbandit.cli import main; sys.exit(main())' "$@"; }
args() {  # $1 batch, $2 loader workers; evaluations on the 16-task batches every run shares (16 x 16, card 64 x 16)
    echo "${CMANP_BO_ELITE[@]}" --prior bo --loss expected "${BO_SHAPED_DATA[@]}" --lr 3e-4 \
         --init-from npbandit/surrogates/weights/cmanp-bo.json --batch-size "$1" --loader-workers "$2" \
         --threads 1 --device ${DEVICE:-cuda} --eval-batches 16 --eval-every 1000 --checkpoint-every 1000 --final-eval-batches 64
}
declare -A W=([128]=5 [512]=9)
for b in 128 512; do
    npb train $(args $b ${W[$b]}) --out /tmp/probe$b --steps 100000 --max-minutes 0.5 > "$OUT/probe$b.log" 2>&1 &
done
wait
for b in 128 512; do
    n=$(python3 -c "import json; print(json.load(open('/tmp/probe$b/train_state.json'))['step'])")
    S=$(( n * TRAIN_S / 30 )); S=$(( S > 500 ? S : 500 ))
    echo "batch $b: probe $n steps in 30 s -> schedule $S steps"
    npb train $(args $b ${W[$b]}) --out training_runs/cmanp-bo-gpu-b$b --steps $S \
        --max-minutes $(python3 -c "print(($TRAIN_S + 30) / 60)") > "$OUT/b$b.log" 2>&1 &
done
wait
for b in 128 512; do
    mkdir -p "$OUT/b$b"; cp training_runs/cmanp-bo-gpu-b$b/train_state.* "$OUT/b$b/"
    python3 -c "import json; [print($b, e) for e in json.load(open('training_runs/cmanp-bo-gpu-b$b/train_state.json'))['log'][-3:]]"
done
