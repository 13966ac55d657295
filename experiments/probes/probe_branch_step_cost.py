"""How does the cost of a step of ``optimize``'s search by branch grow over a long run?

One run of ``npbandit.optimize`` with its defaults (one torch thread, ``db=None``) on a problem of
``experiments/benchmarks/optuna_conditional.py`` written as a conditional space (its
``spaces()``; by branch, as the benchmark's ``optimize`` column), ``--budget`` evaluations. The
objective notes the wall clock and the process's CPU clock at each call; a step's seconds are
those between two calls (the policy's proposal, its bookkeeping and the objective, which for the
synthetic problems costs microseconds). Printed: the median of the ``WINDOW`` steps ending at
each evaluation of ``--at``, wall and CPU, and the npbandit the run imported (run with another
tree on ``PYTHONPATH`` to measure that tree).

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_branch_step_cost.py --problem three-branch --budget 200
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from optuna_conditional import PROBLEMS, ParamsTrial, spaces  # noqa: E402

#: the steps each reported median is over
WINDOW = 10


def step_clocks(problem: str, budget: int, seed: int) -> list[tuple[float, float]]:
    """``(wall, cpu)`` seconds at each call of the objective of one run."""
    import npbandit

    objective, clocks = PROBLEMS[problem], []

    def timed(params: dict) -> float:
        clocks.append((time.perf_counter(), time.process_time()))
        return objective(ParamsTrial(params))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        npbandit.optimize(timed, spaces()[problem], budget=budget, seed=seed, db=None, progress=False, branches=True)
    return clocks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problem", choices=list(PROBLEMS), default="three-branch")
    parser.add_argument("--budget", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--at", type=int, nargs="+", default=[50, 100, 200])
    args = parser.parse_args()
    if any(not WINDOW < end <= args.budget for end in args.at):
        parser.error(f"--at must lie in ({WINDOW}, --budget]")
    torch.set_num_threads(1)
    import npbandit

    clocks = step_clocks(args.problem, args.budget, args.seed)
    out = {"npbandit": str(Path(npbandit.__file__).parent), "problem": args.problem, "seed": args.seed}
    for end in args.at:  # steps from call t - 1 to call t, for the WINDOW calls ending at call `end` (1-based)
        part = clocks[end - WINDOW - 1:end]
        out[end] = {kind: round(statistics.median(b[k] - a[k] for a, b in zip(part, part[1:])), 4)
                    for k, kind in enumerate(("wall_s", "cpu_s"))}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
