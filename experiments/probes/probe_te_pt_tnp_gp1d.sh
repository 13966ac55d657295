#!/usr/bin/env bash
# Equal-budget probe for te-pt-tnp-gp1d (issue: the papers' numbers): which recipe learns fastest on the gp1d
# prior. Every candidate trains MINUTES of one thread, one after another (so they share the machine alike),
# and logs its held-out log-likelihood (16 batches per kernel) every 1000 steps in <OUT>/<candidate>.
#
#   MINUTES=12 OUT=runs/probe-te-pt-tnp-gp1d experiments/probes/probe_te_pt_tnp_gp1d.sh [candidate ...]
#   .venv/bin/python experiments/probes/probe_te_pt_tnp_gp1d_table.py runs/probe-te-pt-tnp-gp1d   # the table
set -euo pipefail
cd "$(dirname "$0")/../.."
NPB=${NPB:-.venv/bin/npbandit}
MINUTES=${MINUTES:-12}
OUT=${OUT:-runs/probe-te-pt-tnp-gp1d}
common=(--model te-pt-tnp --prior gp1d --threads 1 --eval-every 1000 --eval-batches 16 --final-eval-batches 16
        --checkpoint-every 1000 --steps 200000 --max-minutes "$MINUTES")
run() {
    case "$1" in
        # the shipped checkpoint (small, 16 pseudo-tokens, 20k steps) trained on, papers' sampled targets
        shipped-sampled) "$NPB" train "${common[@]}" --out "$OUT/$1" --size small --init-from te-pt-tnp-gp1d ;;
        # the same start, the expected loss under the targets' exact predictive given the context
        shipped-expected) "$NPB" train "${common[@]}" --out "$OUT/$1" --size small --init-from te-pt-tnp-gp1d \
                          --loss expected ;;
        # from scratch: small with the paper's 32 pseudo-tokens; the expected loss
        small32-expected) "$NPB" train "${common[@]}" --out "$OUT/$1" --size small --set n_pseudo=32 --loss expected ;;
        # from scratch: d_model 64 (the other gp1d checkpoints' width), 3 layers, 32 pseudo-tokens
        wide32-expected) "$NPB" train "${common[@]}" --out "$OUT/$1" --size small --set n_pseudo=32 --set d_model=64 \
                         --set d_ff=128 --loss expected ;;
        # the pseudo-locations' offsets start evenly spaced on [-2, 2] (the prior's input range) instead of
        # 0.5 N(0, 1): the shipped model's 16 ended with 11 within 0.03 of each other
        small32-spread-expected) "$NPB" train "${common[@]}" --out "$OUT/$1" --size small --set n_pseudo=32 \
                                 --set pseudo_offset_range=2 --loss expected ;;
        wide32-spread-expected) "$NPB" train "${common[@]}" --out "$OUT/$1" --size small --set n_pseudo=32 \
                                --set d_model=64 --set d_ff=128 --set pseudo_offset_range=2 --loss expected ;;
        *) echo "unknown candidate $1" >&2; exit 2 ;;
    esac
}
cands=("$@")
if [[ ${#cands[@]} -eq 0 ]]; then cands=(shipped-sampled shipped-expected small32-expected wide32-expected small32-spread-expected
                                           wide32-spread-expected); fi
mkdir -p "$OUT"
for c in "${cands[@]}"; do run "$c" > "$OUT/$c.log" 2>&1; done
