"""The choosing runs of NPSampler's defaults for studies of several objectives (sessions 53, 55): NPSampler with its
defaults on choosing problems of the multi-objective benchmark (``bo_multi.py``'s ``mo-choosing``; by default
Branin-Currin and DTLZ2 with d = 4 and two objectives), 40 trials (10 start-up), seeds 0-9, through the public API;
printed per run: the final log10 hypervolume gap (the benchmark's reference point and maximum hypervolume), the run's
seconds and the mean seconds of its last 10 proposals (from one objective call's return to the point of the next,
which NPSampler proposes at the trial's first ``suggest_float``); written
to a JSON file as ``{"<problem>/<seed>": [gap, seconds per NP trial, seconds per proposal over the last 10]}``.
``--exact`` runs the library with the exact box decomposition for every number of objectives
(``multi_objective.partitioning_alpha`` replaced, for this script only, by one that returns 0), the variant the
session 55 rule compares the approximate one with for four objectives and more.

Each column of the log's choosing tables is this script run on the tree that had that default
(experiments/log/benchmarks.md, "Several objectives in NPSampler", "... in closed form" and "... the partitioning for
four or more"): no warp and the Monte Carlo estimate at f205dc4, the warp with the estimate at 469df0c and 62ddcea,
the warp with the closed form at 6f99ad0 and after.

    OMP_NUM_THREADS=1 python experiments/probes/probe_mo_choosing.py runs/mo_choosing.json
    OMP_NUM_THREADS=1 python experiments/probes/probe_mo_choosing.py runs/m4.json --problems gmm-m4 dtlz4-d6m4 \\
        --trials 60 --exact
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import time
from pathlib import Path
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

LAST = 10  # the proposals whose seconds are averaged: the run's last ones


def main(argv: list[str] | None = None) -> None:
    import optuna
    from bo_multi import GAP_FLOOR, all_problems, hypervolume

    from npbandit.acquisition import multi_objective
    from npbandit.integrations.optuna import NPSampler

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="the JSON file to write")
    parser.add_argument("--problems", nargs="+", default=["branin-currin", "dtlz2-d4m2"],
                        help="labels of bo_multi.py's problems")
    parser.add_argument("--seeds", type=int, nargs="+", default=list(range(10)))
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--exact", action="store_true", help="the exact box decomposition for any objectives")
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    exact = mock.patch.object(multi_objective, "partitioning_alpha", lambda objectives: 0.0)
    out = {}
    with exact if args.exact else contextlib.nullcontext():
        for name in args.problems:
            problem = all_problems()[name]
            for seed in args.seeds:
                calls: list[tuple[float, float]] = []  # (proposed, exit) of each objective call

                def objective(trial, problem=problem, calls=calls):
                    # NPSampler proposes at the trial's first suggest_float: the point is known once they return
                    params = {p.name: trial.suggest_float(p.name, p.low, p.high) for p in problem.space}
                    proposed = time.perf_counter()
                    values = problem(params)
                    calls.append((proposed, time.perf_counter()))
                    return values

                study = optuna.create_study(directions=["minimize"] * problem.num_objectives,
                                            sampler=NPSampler(seed=seed))
                start = time.time()
                study.optimize(objective, n_trials=args.trials)
                seconds = time.time() - start
                values = [t.values for t in study.trials]
                hv = hypervolume(values, problem.ref_point)
                gap = math.log10(max(problem.max_hv - hv, GAP_FLOOR))
                last = statistics.fmean(calls[i][0] - calls[i - 1][1] for i in range(len(calls) - LAST, len(calls)))
                out[f"{name}/{seed}"] = [gap, seconds / (args.trials - 10), last]
                print(name, seed, round(gap, 3), round(seconds, 1), round(last, 2), flush=True)
                with open(args.out, "w") as handle:  # after every run, so that a stopped script keeps its runs
                    json.dump(out, handle, indent=1)


if __name__ == "__main__":
    main()
