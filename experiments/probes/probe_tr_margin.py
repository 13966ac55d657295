"""The choosing run of the trust region's success margin (session 55): default ``optimize`` with each
variant of what counts as a success (``best``: TuRBO's ``1e-3 |best|``; ``range``: 1e-3 of the range of the values
observed; ``strict``: any strict improvement) on the choosing suite of experiments/log/benchmarks.md, "The trust
region's success margin": five BoTorch functions no suite reports (Beale, DropWave, HolderTable, EggHolder, a
shifted Rastrigin-4) and two of them with a constant added. Budget 60, seeds 0-9, ``db=None``. Written to a JSON
file as ``{"<problem>/<variant>/<seed>": log10 final simple regret}`` (floored at 1e-12); a run already in the file
is not repeated, so an interrupted run continues. ``--summary`` prints the table and the rule's verdict.

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_tr_margin.py runs/tr_margin.json
    python experiments/probes/probe_tr_margin.py runs/tr_margin.json --summary
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

VARIANTS = {"best": {}, "range": {"margin_scale": "range"}, "strict": {"success_margin": 0.0}}
#: (label, BoTorch name, kwargs, shift the optimum, constant added to the values)
PROBLEMS = [("beale2", "Beale", {}, False, 0.0), ("dropwave2", "DropWave", {}, False, 0.0),
            ("holdertable2", "HolderTable", {}, False, 0.0), ("eggholder2", "EggHolder", {}, False, 0.0),
            ("rastrigin4-shifted", "Rastrigin", {"dim": 4}, True, 0.0),
            ("beale2-plus1e3", "Beale", {}, False, 1e3),
            ("rastrigin4-shifted-plus1e4", "Rastrigin", {"dim": 4}, True, 1e4)]
FLOOR = 1e-12


def problem(label: str):
    """``(objective of an array, bounds [2, d], optimal value)`` of the choosing problem ``label``."""
    import numpy as np
    from bo_wide_problems import _synthetic

    _, name, kwargs, shift, constant = next(p for p in PROBLEMS if p[0] == label)
    base = _synthetic(label.replace("-plus1e3", "").replace("-plus1e4", ""), "choosing", name, kwargs, shift=shift)
    names = [p.name for p in base.space]
    bounds = np.array([[p.low for p in base.space], [p.high for p in base.space]])
    return (lambda x: base(dict(zip(names, map(float, x)))) + constant), bounds, base.optimal_value + constant


def run(label: str, variant: str, seed: int, budget: int) -> float:
    import npbandit
    from npbandit.policies import TrustRegionSettings

    f, bounds, optimum = problem(label)
    result = npbandit.optimize(f, bounds, budget=budget, seed=seed, db=None, progress=False,
                               trust_region=TrustRegionSettings(**VARIANTS[variant]))
    return math.log10(max(result.best_value - optimum, FLOOR))


def summary(results: dict[str, float], seeds: int) -> None:
    unshifted = [p[0] for p in PROBLEMS if p[4] == 0.0]
    shifted = [p[0] for p in PROBLEMS if p[4] != 0.0]
    med = {(p, v): statistics.median(results[f"{p}/{v}/{s}"] for s in range(seeds))
           for p, *_ in PROBLEMS for v in VARIANTS if all(f"{p}/{v}/{s}" in results for s in range(seeds))}
    print("| problem | " + " | ".join(VARIANTS) + " |\n|---|" + "---:|" * len(VARIANTS))
    for p, *_ in PROBLEMS:
        print(f"| {p} | " + " | ".join(f"{med[(p, v)]:.2f}" if (p, v) in med else "-" for v in VARIANTS) + " |")
    passing = {}
    for v in VARIANTS:
        if v == "best" or any((p, v) not in med or (p, "best") not in med for p, *_ in PROBLEMS):
            continue
        a = all(med[(p, v)] < med[(p, "best")] - 0.01 for p in shifted)
        b = all(med[(p, v)] <= med[(p, "best")] + 0.1 for p in unshifted)
        diffs = [results[f"{p}/{v}/{s}"] - results[f"{p}/best/{s}"] for p in unshifted for s in range(seeds)]
        lower, higher = sum(d < -0.01 for d in diffs), sum(d > 0.01 for d in diffs)
        c = lower >= higher
        print(f"{v}: (a) {a} (b) {b} (c) {c}: lower on {lower}, higher on {higher} of {len(diffs)} pairs; "
              f"sum of medians without a constant {sum(med[(p, v)] for p in unshifted):.2f} against "
              f"{sum(med[(p, 'best')] for p in unshifted):.2f}")
        if a and b and c:
            passing[v] = sum(med[(p, v)] for p in unshifted)
    print("adopted:", min(passing, key=passing.get) if passing else "none (best stays)")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the JSON file to write (and continue)")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--problems", nargs="+", default=[p[0] for p in PROBLEMS], choices=[p[0] for p in PROBLEMS])
    parser.add_argument("--summary", action="store_true", help="print the table and the rule's verdict only")
    args = parser.parse_args(argv)
    path = Path(args.out)
    results = json.loads(path.read_text()) if path.exists() else {}
    if args.summary:
        summary(results, args.seeds)
        return
    for seed in range(args.seeds):  # seed-major: a partial file already holds whole seeds of every problem
        for label in args.problems:
            for variant in args.variants:
                key = f"{label}/{variant}/{seed}"
                if key in results:
                    continue
                results[key] = run(label, variant, seed, args.budget)
                print(key, f"{results[key]:.3f}", flush=True)
                path.write_text(json.dumps(results, indent=0, sort_keys=True))


if __name__ == "__main__":
    main()
