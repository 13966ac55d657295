#!/usr/bin/env bash
# Issue 49: the `bo` surrogates for d <= 16 and 300-point contexts, trained from scratch in resumable calls
# (a lent GPU's commands last at most 10 minutes; every call trains each run in RUNS side by side for TRAIN_S
# seconds and saves). Two phases per run, as the training study found: a warm-up on whole-task
# standardisation with the sampled loss (WARM steps), then the context-standardised expected loss from the
# warm-up's weights (STEPS, the cosine schedule's length). Smooth activations (ACT): with ReLU MLPs the
# network's mean and std have kinks in x, and BoTorch's L-BFGS-B restarts end on them (one-sided derivatives
# of opposite signs; experiments/probes/probe_lbfgs_kinks.py) after 2-5x a GP's evaluations. Swapping the
# shipped weights' ReLUs for Softplus removed the kinks and halved the evaluations on tnpd-bo, not on cmanp-bo
# (experiments/log/benchmarks.md); a smooth activation can only be trained in. Trained in, on tnpd-bo (a GELU
# fine-tune, session 44), it cut optimize_acqf's evaluations at N = 1,000 from 63 to 36 at the same held-out
# quality as a ReLU fine-tune of the same length ("A smooth activation for tnpd-bo" in the log); whether it
# does on these models is measured on them.
#
# Batches: drawn in each training process, on the GPU (WORKERS=0: `train` then does the prior's GP draws on the
# device). Session 43's call drew them in 5 CPU loader workers per run and was capped by the CPU at ~4.5 steps/s
# of batch 128 (experiments/log/results.md, "Issue 49 on a lent H200").
#
#   The device's image lacks gymnasium and SQLAlchemy (npbandit imports them): here, once,
#     echo /.whl/ >> .git/info/exclude; .venv/bin/python -m pip download --no-deps --only-binary=:all: \
#       --python-version 3.12 --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 \
#       -d .whl gymnasium==1.4.0 farama-notifications sqlalchemy==2.1.9 greenlet==3.5.6
#   On the device (the `run` tool, carry [".whl", "training_runs/bo16"]; the second absent the first time):
#     python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site .whl/*.whl &&
#       PYTHONPATH=/tmp/site:$PWD RUNS="cmanp128 tnpd datnp" TRAIN_S=480 experiments/training/gpu_bo16.sh
#   Back here: rm -rf training_runs/bo16 && for f in <files_at>/bo16_*.tgz; do tar xzf $f; done
#   (the device returns at most 8 files, so the run folders come back as archives; the next call carries them.
#   Session 43's runs, 1,300-2,200 steps each, are not worth resuming: their datnp ran on padded batches)
#   A call on CUDA with WORKERS=0 first runs the CUDA test of the prior's draws (tests/priors, -k device; falls
#   back to 5 CPU loader workers if it fails).
#   STEPS=auto (one call, no later resume): the main phase's cosine schedule is sized to the time left after
#   the warm-up, at the warm-up's own steps per second, so the card exported at the end has a finished schedule.
#   INIT=<card.json> (with STEPS a number, LR optional): each run in RUNS fine-tunes that card with the expected
#   loss, no warm-up (session 52: datnp from the CPU run datnp300c's export, SIZE=small to match it).
#   Rates with the draws on an H200 (session 52, one run per call): the small datnp at 33.5 steps / s of batch 32
#   and 18.9 of batch 64. Its 12,549 steps there moved the held-out mean by 0.013 (results.md, "Issue 49 on a
#   lent H200 again"): the small network is near its capacity, so a next call is better spent on a larger one
#   from scratch, e.g. RUNS=datnp SIZE=paper WARM=1000 STEPS=auto TRAIN_S=480, its card recorded (record.py
#   --weights), and each later lend's call INIT=<that record's card> SIZE=paper: a session's checkout has no
#   training_runs/, so a run goes on from its committed weights with a fresh schedule, not from its state.
#   A CPU smoke (twice: the warm-up, then the main phase): PATH=$PWD/.venv/bin:$PATH DEVICE=cpu SIZE=tiny \
#       BATCH=8 WORKERS=0 WARM=10 STEPS=40 TRAIN_S=60 OUT=/tmp/o experiments/training/gpu_bo16.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-gpu_out}; TRAIN_S=${TRAIN_S:-480}; RUNS=${RUNS:-cmanp128 tnpd datnp}; DEVICE=${DEVICE:-cuda}
WARM=${WARM:-20000}; STEPS=${STEPS:-300000}; BATCH=${BATCH:-128}; WORKERS=${WORKERS:-0}; SIZE=${SIZE:-paper}
ACT=${ACT:-silu}
source experiments/training/recipes.sh
mkdir -p "$OUT"
if [[ $DEVICE == cuda* && $WORKERS == 0 ]]; then  # the prior's draws on the GPU: checked once, else CPU workers
    if ! python3 -m pytest -q -p no:cacheprovider tests/priors/test_priors.py -k device > "$OUT/preflight.log" 2>&1
    then
        echo "the prior's draws failed on $DEVICE (preflight.log): CPU loader workers instead" >&2; WORKERS=5
    fi
fi
npb() { PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PWD/experiments/probes" python3 -m npbandit "$@"; }  # da_cmanp importable
common=(--prior bo "${BO16_PRIOR[@]}" "${BO16_EVAL[@]}" --size "$SIZE" --set activation="$ACT"
        --lr "${LR:-3e-4}" --device "$DEVICE" --threads 1 --loader-workers "$WORKERS" --eval-every 2000 --eval-batches 8
        --checkpoint-every 1000 --final-eval-batches "${FINAL_EVAL:-32}")
model() {
    case "$1" in
        cmanp128) echo --model cmanp --set n_latents=128 --set n_block_latents=128 --set n_elite=16 ;;
        tnpd) echo --model tnpd ;;
        # the dimension-agnostic family (one token per input dimension of each point: d times a TNP-D's
        # tokens, so a smaller batch), on batches of their own width (no padding columns)
        datnp) echo --model datnp --prior-set padding=none --eval-prior-set padding=none ;;
        # the dimension-agnostic CMANP of experiments/probes/da_cmanp.py (streamed per input column; a probe,
        # registered by --plugin), 32 latents per column at the size's width
        dacmanp) echo --plugin da_cmanp --model dacmanp --set n_latents=32 --set n_block_latents=32 \
                      --prior-set padding=none --eval-prior-set padding=none ;;
        # the inducing-point NP of any width of experiments/probes/da_inducing.py (streamed, attention with a
        # distance term; a probe, registered by --plugin), 128 inducing points
        daind) echo --plugin da_inducing --model daind --set n_inducing=128 \
                    --prior-set padding=none --eval-prior-set padding=none ;;
        *) echo "unknown run $1 (cmanp128 | tnpd | datnp | dacmanp | daind)" >&2; return 2 ;;
    esac
}
batch() { if [[ $1 == datnp || $1 == dacmanp || $1 == daind ]]; then echo "${DATNP_BATCH:-32}"; else echo "$BATCH"; fi; }
minutes() { python3 -c "print(max($1, 0) / 60)"; }
train() {  # $1 run: the warm-up until it has exported its card, then the main phase from it, in TRAIN_S seconds
    local dir=training_runs/bo16/$1 args start=$SECONDS warmed='' end=$((SECONDS + TRAIN_S))
    args=$(model "$1") || return 2
    args+=" --batch-size $(batch "$1")"
    if [[ -n ${INIT:-} ]]; then  # a fine-tune of an exported card: no warm-up, STEPS a number
        local main=(--loss expected --steps "$STEPS" --init-from "$INIT" --name "$1-bo16" --out "$dir")
        npb train $args "${common[@]}" "${main[@]}" --max-minutes "$(minutes $((end - SECONDS - 20)))"
        npb train $args "${common[@]}" "${main[@]}" --export-now
        return
    fi
    if [[ ! -f $dir-warm/$1-warm.json ]]; then
        npb train $args "${common[@]}" --prior-set standardize=task --loss sampled --steps "$WARM" \
            --name "$1-warm" --out "$dir-warm" --max-minutes "$(minutes $((end - SECONDS)))"
        warmed=1
    fi
    if [[ -f $dir-warm/$1-warm.json ]] && (( end - SECONDS > 30 )); then
        local steps=$STEPS
        if [[ $steps == auto ]]; then  # the warm-up's rate (start-up and its card's evaluation included: low)
            [[ -n $warmed ]] || { echo "STEPS=auto needs the warm-up in the same call" >&2; return 2; }
            steps=$(python3 -c "print(max(int($WARM / max($((SECONDS - start)), 1) * $((end - SECONDS - 60)) * 0.9), 100))")
            echo "STEPS=auto: $steps main-phase steps" >&2
        fi
        local main=(--loss expected --steps "$steps" --init-from "$dir-warm/$1-warm.json" --name "$1-bo16" --out "$dir")
        npb train $args "${common[@]}" "${main[@]}" --max-minutes "$(minutes $((end - SECONDS - 20)))"
        npb train $args "${common[@]}" "${main[@]}" --export-now  # a card of where it stands, for the yardstick
    fi
}
mkdir -p "$OUT" training_runs/bo16
for run in $RUNS; do train "$run" > "training_runs/bo16/$run.log" 2>&1 & done
wait
for run in $RUNS; do tail -c 600 "training_runs/bo16/$run.log"; echo; done
rm -f training_runs/bo16/*/train.lock
# cards, logs and metrics in one archive, the optimiser states (for a resume) in another: the device returns 8 files
# (and the main phases' states each in its own, a paper-size cmanp128's being about 16 MB, the limit per file)
tar czf "$OUT/bo16_cards.tgz" --exclude='train_state*' --exclude='*.lock' training_runs/bo16
for run in $RUNS; do
    [[ -f training_runs/bo16/$run/train_state.json ]] &&
        tar czf "$OUT/bo16_state_$run.tgz" training_runs/bo16/"$run"/train_state.*
done
ls -la "$OUT"
