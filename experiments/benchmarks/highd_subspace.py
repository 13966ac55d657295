"""Which subspace lets a ``bo`` NP (width 6) search more inputs: the choosing suite.

``BOPolicy(D, model="tnpd-bo", subspace=...)`` for ``D`` wider than the checkpoint, as
``optimize`` runs it (LogEI, trust region, ``budget`` passed), against Sobol search:

- ``count-sketch``: ``CountSketch()`` (HeSBO / BAxUS's embedding, ``d_e = 6``);
- ``coordinates``: ``CoordinateSubspace()`` (6 coordinates per proposal, uniformly drawn);
- ``coordinates-relevance``: ``CoordinateSubspace(relevance=0.5)`` (half of the choice by
  the relevance estimate of the seen points);
- ``coordinates-ard``: ``CoordinateSubspace(relevance=0.9, scores="ard")`` (90 % of the
  choice by an ARD GP's inverse squared lengthscales, fitted to every observation at each
  proposal, 10 % uniform);
- ``sobol``: ``SobolPolicy(D)``.

The choosing suite (NOT the reporting suite of issue 45, which is Hartmann-6 / Branin
embedded in 30-100 inputs and Ackley / Levy / Rosenbrock at d = 10-50; nothing here is
chosen on those), on the unit cube, minimised, every optimum away from the cube's centre
(an embedding of the centred kind always contains the centre, which would flatter it):

- ``hartmann3-in-24``: Hartmann-3 on 3 of 24 inputs (the active ones a fixed random
  choice), the other 21 inert;
- ``rastrigin12-shifted``: Rastrigin-12 on ``[-5.12, 5.12]^12`` with its minimum moved to a
  fixed random point of ``[-2, 2]^12`` (every input active, many local minima);
- ``styblinski-tang-4-in-16``: Styblinski-Tang-4 on ``[-5, 5]^4`` on 4 of 16 inputs.

Reported: median [quartiles] of log10 simple regret at the last of ``--budget``
evaluations, per (problem, method), over ``--seeds`` seeds; seconds per evaluation. Each
run is kept in ``runs/highd_subspace.json`` (a stopped study resumes). One process, one
torch thread; run it under ``nice``.

    OMP_NUM_THREADS=1 nice python experiments/benchmarks/highd_subspace.py             # the study
    OMP_NUM_THREADS=1 nice python experiments/benchmarks/highd_subspace.py --seeds 1 --budget 20 --no-write
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, RunRecord, publish  # noqa: E402

CHECKPOINT = "tnpd-bo"
METHODS = ("count-sketch", "coordinates", "coordinates-relevance", "coordinates-ard", "sobol")
PROBLEMS = ("hartmann3-in-24", "rastrigin12-shifted", "styblinski-tang-4-in-16")


def make_problem(name: str):
    """``(D, f, optimum)``: ``f`` maps a point ``[D]`` of the unit cube to the value minimised."""
    import torch
    from botorch.test_functions import Hartmann, StyblinskiTang

    if name == "hartmann3-in-24":
        active = np.random.default_rng(0).permutation(24)[:3]
        h = Hartmann(dim=3)
        return 24, lambda u: float(h(torch.as_tensor(u[active])[None])[0]), float(h.optimal_value)
    if name == "rastrigin12-shifted":
        shift = np.random.default_rng(1).uniform(-2.0, 2.0, 12)

        def rastrigin(u):
            x = -5.12 + 10.24 * np.asarray(u) - shift
            return float(10 * len(x) + np.sum(x**2 - 10 * np.cos(2 * np.pi * x)))

        return 12, rastrigin, 0.0
    if name == "styblinski-tang-4-in-16":
        active = np.random.default_rng(2).permutation(16)[:4]
        st = StyblinskiTang(dim=4)
        return 16, lambda u: float(st(torch.as_tensor(-5.0 + 10.0 * u[active])[None])[0]), float(st.optimal_value)
    raise ValueError(f"problem must be one of {PROBLEMS}, got {name!r}")


def make_policy(method: str, dim: int, budget: int):
    from npbandit.acquisition.subspace import CoordinateSubspace, CountSketch
    from npbandit.policies.bo import BOPolicy, SobolPolicy

    if method == "sobol":
        return SobolPolicy(dim)
    subspace = {"count-sketch": CountSketch(), "coordinates": CoordinateSubspace(),
                "coordinates-relevance": CoordinateSubspace(relevance=0.5),
                "coordinates-ard": CoordinateSubspace(relevance=0.9, scores="ard")}[method]
    return BOPolicy(dim, model=CHECKPOINT, subspace=subspace, budget=budget, threads=1)


def one_run(problem: str, method: str, seed: int, budget: int) -> dict:
    """One search: log10 simple regret after each evaluation, seconds per evaluation, params."""
    import torch

    torch.set_num_threads(1)
    dim, f, optimum = make_problem(problem)
    policy = make_policy(method, dim, budget)
    policy.reset(seed)
    best, curve = math.inf, []
    start = time.perf_counter()
    for _ in range(budget):
        x = policy.act(None)
        if x.shape != (dim,) or not ((x >= 0) & (x <= 1)).all():
            raise AssertionError(f"{method} proposed a point outside the cube: {x}")
        value = f(x)
        policy.observe(None, x, -value, {})
        best = min(best, value)
        curve.append(math.log10(max(best - optimum, 1e-12)))
    return {"regret": curve, "seconds_per_evaluation": (time.perf_counter() - start) / budget,
            "params": policy.params()}


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = np.quantile(values, [0.25, 0.5, 0.75])
    return float(q[1]), float(q[0]), float(q[2])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--record", default=str(ROOT / "runs" / "highd_subspace.json"))
    parser.add_argument("--no-write", action="store_true", help="print the table, write no log page")
    parser.add_argument("--recorded-only", action="store_true",
                        help="run nothing: tabulate the runs already recorded (a cell names its seed count when it "
                             "has fewer than --seeds)")
    args = parser.parse_args(argv)
    record = RunRecord(args.record)
    results: dict[tuple[str, str], list[dict]] = {}
    for seed in range(args.seeds):  # seed-major, so a study cut short has every cell at fewer seeds
        for problem in args.problems:
            for method in args.methods:
                key = f"{problem}|{method}|{seed}|{args.budget}"
                if args.recorded_only and key not in record.runs:
                    continue
                results.setdefault((problem, method), []).append(
                    record.get(key, lambda p=problem, m=method, s=seed: one_run(p, m, s, args.budget)))
    header = "| problem (D) | " + " | ".join(args.methods) + " |"
    lines = [header, "|---|" + "---:|" * len(args.methods)]
    summary = {}
    for problem in args.problems:
        dim = make_problem(problem)[0]
        cells = []
        for method in args.methods:
            runs = results.get((problem, method), [])
            if not runs:
                cells.append("-")
                continue
            med, lo, hi = quartiles([r["regret"][-1] for r in runs])
            secs = statistics.mean(r["seconds_per_evaluation"] for r in runs)
            summary[f"{problem}|{method}"] = {"median": med, "q25": lo, "q75": hi, "seconds_per_evaluation": secs,
                                              "final": [r["regret"][-1] for r in runs],
                                              "curves": [r["regret"] for r in runs],
                                              "params": runs[0]["params"]}
            seeds = "" if len(runs) == args.seeds else f", {len(runs)} seeds"
            cells.append(f"{med:.2f} [{lo:.2f}, {hi:.2f}] ({secs:.2f} s{seeds})")
        lines.append(f"| {problem} ({dim}) | " + " | ".join(cells) + " |")
    table = "\n".join(lines)
    print(table)
    if args.no_write:
        return
    command = ("OMP_NUM_THREADS=1 nice python experiments/benchmarks/highd_subspace.py"
               + ("" if args.seeds == 3 else f" --seeds {args.seeds}")
               + ("" if args.budget == 100 else f" --budget {args.budget}")
               + ("" if args.methods == list(METHODS) else " --methods " + " ".join(args.methods))
               + ("" if args.problems == list(PROBLEMS) else " --problems " + " ".join(args.problems)))
    text = (f"## High-dimensional search with a width-6 NP: which subspace (choosing suite)\n\n"
            f"Command: `{command}`. `{CHECKPOINT}`, LogEI in the trust region as `optimize` runs it "
            f"(`BOPolicy(D, model='{CHECKPOINT}', subspace=..., budget={args.budget})`, its default "
            f"`n_init = 2 d_e + 1 = 13` Sobol points in the subspace's search cube), {args.seeds} seeds, "
            f"{args.budget} evaluations; log10 simple regret at the last evaluation: median [25 %, 75 %] "
            f"(seconds per evaluation, mean). The choosing suite of `highd_subspace.py`'s docstring, not the "
            f"reporting suite of issue 45. count-sketch: `CountSketch()` (d_e = 6); coordinates: "
            f"`CoordinateSubspace()` (6 uniformly drawn coordinates per proposal); coordinates-relevance: "
            f"`CoordinateSubspace(relevance=0.5)`; coordinates-ard: "
            f"`CoordinateSubspace(relevance=0.9, scores='ard')`; sobol: `SobolPolicy(D)`.\n\n{table}\n")
    publish("highd-subspace", text, "highd_subspace.json", command,
            {"budget": args.budget, "seeds": args.seeds, "checkpoint": CHECKPOINT, "results": summary}, threads=1)


if __name__ == "__main__":
    main()
