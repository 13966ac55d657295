"""How much of the Hartmann-6-in-60 gap is the embedding's and how much the six-input search's: the
default surrogate (``optimize-tnpd``) and Optuna's GPSampler on Hartmann-6 alone (6 inputs) and on the
wide benchmark's Hartmann-6 in 30 and in 60 inputs (the same problems, active coordinates and seeds as
``bo_wide.py``), budget 100. Prints median log10 simple regret at 40 / 60 / 80 / 100 evaluations and
the paired difference. A diagnosis, nothing chosen by it:

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_hartmann6_width.py --seeds 10
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

CHECKPOINTS = (40, 60, 80, 100)


def problem(width: int):
    from bo_wide_problems import _synthetic

    if width == 6:
        return _synthetic("hartmann6", "synthetic", "Hartmann", {"dim": 6})
    return _synthetic(f"hartmann6-in{width}", "high-d", "Hartmann", {"dim": 6}, embed_in=width)


def trace(method: str, width: int, seed: int, budget: int) -> list[float]:
    """log10 simple regret after each evaluation of one run."""
    from bo_wide_methods import run

    p = problem(width)
    values: list[float] = []

    def evaluate(params: dict) -> float:
        values.append(float(p.objective(params)))
        return values[-1]

    run(method, p, seed, budget, evaluate)
    best, out = math.inf, []
    for v in values:
        best = min(best, v)
        out.append(math.log10(max(best - p.optimal_value, 1e-12)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--widths", type=int, nargs="+", default=[6, 30, 60])
    parser.add_argument("--methods", nargs="+", default=["optimize-tnpd", "optuna-gp"])
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--json", default=None, help="write every trace here")
    args = parser.parse_args()
    traces = {f"{m}/{w}": [trace(m, w, s, args.budget) for s in range(args.seeds)]
              for w in args.widths for m in args.methods}
    if args.json:
        Path(args.json).write_text(json.dumps(traces))
    marks = [c for c in CHECKPOINTS if c <= args.budget]
    print("| inputs | method | " + " | ".join(f"n = {c}" for c in marks) + " |")
    print("|---:|---|" + "---:|" * len(marks))
    for w in args.widths:
        for m in args.methods:
            rows = traces[f"{m}/{w}"]
            medians = [f"{statistics.median(r[c - 1] for r in rows):.2f}" for c in marks]
            print(f"| {w} | {m} | " + " | ".join(medians) + " |")
    if len(args.methods) == 2:
        a, b = args.methods
        for w in args.widths:
            diffs = [x[-1] - y[-1] for x, y in zip(traces[f"{a}/{w}"], traces[f"{b}/{w}"])]
            lower = sum(d < 0 for d in diffs)
            print(f"{w} inputs: {a} minus {b}, median of paired finals {statistics.median(diffs):+.2f}, "
                  f"{a} lower on {lower}/{len(diffs)}")


if __name__ == "__main__":
    main()
