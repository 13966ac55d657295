"""Which subspace lets a ``bo`` NP (width 6) search more inputs: the choosing suite.

``BOPolicy(D, model="tnpd-bo", subspace=...)`` for ``D`` wider than the checkpoint, as
``optimize`` runs it (LogEI, trust region, ``budget`` passed), against Sobol search:

- ``count-sketch``: ``CountSketch()`` (HeSBO / BAxUS's embedding, ``d_e = 6``);
- ``coordinates``: ``CoordinateSubspace()`` (6 coordinates per proposal, uniformly drawn);
- ``coordinates-relevance``: ``CoordinateSubspace(relevance=0.5)`` (half of the choice by
  the relevance estimate of the seen points);
- ``coordinates-ard``: ``CoordinateSubspace(relevance=0.9, scores=ard_relevance)`` (90 % of
  the choice by an ARD GP's inverse squared lengthscales, fitted to every observation at
  each proposal by :func:`~npbandit.acquisition.relevance.ard_relevance`, 10 % uniform);
- ``redealt-sketch``: ``RedealtSketch()`` (the count sketch for the first 40 observations,
  then re-dealt into new bins and signs every 20 observations on a slice through the
  incumbent; :mod:`npbandit.acquisition.redealt_sketch`);
- ``redealt-ard``: ``RedealtSketch(relevance=ard_relevance)`` (as ``redealt-sketch``, but at
  each phase change the 6 inputs of highest :func:`ard_relevance` score, an ARD GP fitted to
  every observation before the phase, each lead a different bin; the time of each fit is
  kept with the run as ``relevance_seconds``);
- ``redealt-concentrated``: ``RedealtSketch(relevance=concentrated_ard)`` (as ``redealt-ard``,
  but only inputs scoring at least 10 times the median score lead a bin: with most inputs
  active, the deal stays random);
- ``redealt-stalled``: ``RedealtSketch(schedule=StalledPhases)`` (a boundary re-deals only if
  the 20 evaluations before it did not improve the incumbent; the schedule is the lab's,
  ``redeal_schedules.py``, as are the early phases below);
- ``redealt-concentrated-stalled``: both;
- ``redealt-early``: ``RedealtSketch(relevance=concentrated_ard, schedule=early_phases(27, 13))``
  (as ``redealt-concentrated``, with one early phase: at 27 observations a random slice through
  the incumbent, so the fit at 40 sees points of two slices and can tell apart most inputs that
  shared a bin of the first);
- ``datnp``: ``BOPolicy(D, model=<DATNP_CARD>)``, the dimension-agnostic network of
  ``experiments/training/records/datnp16`` (16 inputs wide) as ``optimize`` runs a card: every
  input read at ``D <= 16``, the default subspace of width 16 above;
- ``datnp-cs``: as ``datnp``, maximising the acquisition with ``CandidateSearch()`` (the
  optimiser ``tnpd-bo``'s card recommends) instead of ``optimize_acqf``;
- ``sobol``: ``SobolPolicy(D)``.

The choosing suite (NOT the reporting suite of issue 45, which is Hartmann-6 / Branin
embedded in 30-100 inputs and Ackley / Levy / Rosenbrock at d = 10-50; nothing here is
chosen on those), on the unit cube, minimised, every optimum away from the cube's centre
(an embedding of the centred kind always contains the centre, which would flatter it):

- ``hartmann3-in-24``: Hartmann-3 on 3 of 24 inputs (the active ones a fixed random
  choice), the other 21 inert;
- ``rastrigin12-shifted``: Rastrigin-12 on ``[-5.12, 5.12]^12`` with its minimum moved to a
  fixed random point of ``[-2, 2]^12`` (every input active, many local minima);
- ``styblinski-tang-4-in-16``: Styblinski-Tang-4 on ``[-5, 5]^4`` on 4 of 16 inputs;
- ``rastrigin6-in-48-shifted``: Rastrigin-6, its minimum moved as above, on 6 of 48 inputs
  (six active inputs among many, as many as a width-6 slice has bins);
- ``bumps6-in-60``: a smooth function of 6 of 60 inputs, four Gaussian bumps of random heights,
  widths and centres (:func:`bumps6`; no function of the reporting suite): six active inputs
  among many on a landscape where a relevance fit can find them, which Rastrigin's many local
  minima hide (added in session 47, after the four-problem rules above were applied).

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
from redeal_schedules import StalledPhases, early_phases  # noqa: E402

from npbandit.acquisition.relevance import ard_relevance, concentrated_ard  # noqa: E402

CHECKPOINT = "tnpd-bo"
METHODS = ("count-sketch", "coordinates", "coordinates-relevance", "coordinates-ard", "redealt-sketch", "redealt-ard",
           "redealt-concentrated", "redealt-stalled", "redealt-concentrated-stalled", "redealt-early", "redealt-short",
           "redealt-short30", "datnp", "datnp-cs", "sobol")
#: the dimension-agnostic probe network (small, trained on the CPU at d <= 16 and up to 100 points; its run's
#: record and card): the ``datnp`` column runs it as ``optimize`` would with this card
DATNP_CARD = ROOT / "experiments" / "training" / "records" / "datnp16" / "datnp-main.json"
#: what each column runs, as the log says it
DESCRIPTIONS = {"count-sketch": "`CountSketch()` (d_e = 6)",
                "coordinates": "`CoordinateSubspace()` (6 uniformly drawn coordinates per proposal)",
                "coordinates-relevance": "`CoordinateSubspace(relevance=0.5)`",
                "coordinates-ard": "`CoordinateSubspace(relevance=0.9, scores=ard_relevance)` "
                                   "(this script's ARD GP fit)",
                "redealt-sketch": "`RedealtSketch()` (d_e = 6; `CountSketch()`'s slice for the first 40 observations, "
                                  "then every 20 the inputs re-dealt into new bins and signs on a slice through "
                                  "the incumbent, the model seeing the points on the current slice only)",
                "redealt-ard": "`RedealtSketch(relevance=ard_relevance)` (as redealt-sketch, but at each phase "
                               "change the 6 inputs of highest ARD relevance, this script's GP fitted to every "
                               "observation before the phase, each lead a different bin; the others dealt at random)",
                "redealt-concentrated": "`RedealtSketch(relevance=concentrated_ard)` (as redealt-ard, but only "
                                        "inputs whose ARD score is at least 10 times the median score lead a bin)",
                "redealt-stalled": "`RedealtSketch(schedule=StalledPhases)` (the lab's schedule; as redealt-sketch, "
                                   "but a boundary re-deals only if the 20 evaluations before it did not improve the "
                                   "incumbent)",
                "redealt-concentrated-stalled": "`RedealtSketch(relevance=concentrated_ard, schedule=StalledPhases)`",
                "redealt-early": "`RedealtSketch(relevance=concentrated_ard, schedule=early_phases(27, 13))` (the "
                                 "lab's schedule; as redealt-concentrated, with a random slice through the incumbent "
                                 "from 27 observations to 40, so the fit at 40 sees points of two slices)",
                "redealt-short": "`RedealtSketch(relevance=concentrated_ard, phase_length=10)` (as "
                                 "redealt-concentrated, re-dealt every 10 observations from the 40th instead of 20)",
                "redealt-short30": "`RedealtSketch(relevance=concentrated_ard, phase_start=30, phase_length=10)` (as "
                                   "redealt-short, the first re-deal at 30 observations)",
                "datnp": "`BOPolicy(D, model=<the datnp16 card>)`: DATNP reading every input at D <= 16 (its "
                         "trained width), above it the default subspace at width 16",
                "datnp-cs": "as datnp, with `acq_optimizer=CandidateSearch()` (tnpd-bo's card's optimiser)",
                "sobol": "`SobolPolicy(D)`"}
DEFAULT_RECORD = ROOT / "runs" / "highd_subspace.json"
PROBLEMS = ("hartmann3-in-24", "rastrigin12-shifted", "styblinski-tang-4-in-16", "rastrigin6-in-48-shifted",
            "bumps6-in-60")


def bumps6():
    """The smooth six-input function of ``bumps6-in-60``: ``x -> -sum_k a_k exp(-sum_j B_kj (x_j - P_kj)^2)``
    on ``[0, 1]^6``, four Gaussian bumps whose heights ``a`` (1 to 3), widths ``B`` (2 to 12 per input) and
    centres ``P`` (0.1 to 0.9) are drawn from a fixed seed, and its minimum, found by L-BFGS-B from each
    centre and 64 fixed random starts. Returns ``(f, minimum value)``; ``f`` maps ``[6]`` to a float."""
    import scipy.optimize

    rng = np.random.default_rng(5)
    a, B, P = rng.uniform(1.0, 3.0, 4), rng.uniform(2.0, 12.0, (4, 6)), rng.uniform(0.1, 0.9, (4, 6))

    def f(x):
        return float(-(a * np.exp(-(B * (np.asarray(x)[None] - P) ** 2).sum(1))).sum())

    starts = np.concatenate([P, np.random.default_rng(6).uniform(0.0, 1.0, (64, 6))])
    best = min(scipy.optimize.minimize(f, x0, method="L-BFGS-B", bounds=[(0.0, 1.0)] * 6).fun for x0 in starts)
    return f, float(best)


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
    if name == "rastrigin6-in-48-shifted":
        active = np.random.default_rng(3).permutation(48)[:6]
        shift = np.random.default_rng(4).uniform(-2.0, 2.0, 6)

        def rastrigin6(u):
            x = -5.12 + 10.24 * np.asarray(u)[active] - shift
            return float(10 * len(x) + np.sum(x**2 - 10 * np.cos(2 * np.pi * x)))

        return 48, rastrigin6, 0.0
    if name == "bumps6-in-60":
        active = np.random.default_rng(7).permutation(60)[:6]
        f, minimum = bumps6()
        return 60, lambda u: f(np.asarray(u)[active]), minimum
    raise ValueError(f"problem must be one of {PROBLEMS}, got {name!r}")


def timed(relevance, seconds: list[float]):
    """``relevance`` that appends the seconds of each call to ``seconds``."""
    def scores(X, Y):
        start = time.perf_counter()
        out = relevance(X, Y)
        seconds.append(time.perf_counter() - start)
        return out

    scores.__name__ = relevance.__name__
    return scores


def make_policy(method: str, dim: int, budget: int, relevance_seconds: list[float] | None = None):
    from npbandit.acquisition.redealt_sketch import RedealtSketch
    from npbandit.acquisition.subspace import CoordinateSubspace, CountSketch
    from npbandit.policies.bo import BOPolicy
    from npbandit.policies.design import SobolPolicy

    if method == "sobol":
        return SobolPolicy(dim)
    if method in ("datnp", "datnp-cs"):
        from npbandit.acquisition.optimizers import CandidateSearch

        optimizer = CandidateSearch() if method == "datnp-cs" else None
        return BOPolicy(dim, model=str(DATNP_CARD), budget=budget, threads=1, acq_optimizer=optimizer)
    seconds = [] if relevance_seconds is None else relevance_seconds
    subspace = {"count-sketch": CountSketch(), "coordinates": CoordinateSubspace(),
                "coordinates-relevance": CoordinateSubspace(relevance=0.5),
                "coordinates-ard": CoordinateSubspace(relevance=0.9, scores=ard_relevance),
                "redealt-sketch": RedealtSketch(),
                "redealt-ard": RedealtSketch(relevance=timed(ard_relevance, seconds)),
                "redealt-concentrated": RedealtSketch(relevance=timed(concentrated_ard, seconds)),
                "redealt-stalled": RedealtSketch(schedule=StalledPhases),
                "redealt-concentrated-stalled": RedealtSketch(relevance=timed(concentrated_ard, seconds),
                                                              schedule=StalledPhases),
                "redealt-early": RedealtSketch(relevance=timed(concentrated_ard, seconds),
                                               schedule=early_phases(27, 13)),
                "redealt-short": RedealtSketch(relevance=timed(concentrated_ard, seconds), phase_length=10),
                "redealt-short30": RedealtSketch(relevance=timed(concentrated_ard, seconds), phase_start=30,
                                                 phase_length=10)}[method]
    return BOPolicy(dim, model=CHECKPOINT, subspace=subspace, budget=budget, threads=1)


def one_run(problem: str, method: str, seed: int, budget: int) -> dict:
    """One search: log10 simple regret after each evaluation, seconds per evaluation, params."""
    import torch

    torch.set_num_threads(1)
    dim, f, optimum = make_problem(problem)
    relevance_seconds: list[float] = []
    policy = make_policy(method, dim, budget, relevance_seconds)
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
    out = {"regret": curve, "seconds_per_evaluation": (time.perf_counter() - start) / budget,
           "params": policy.params()}
    if relevance_seconds:
        out["relevance_seconds"] = relevance_seconds
    return out


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = np.quantile(values, [0.25, 0.5, 0.75])
    return float(q[1]), float(q[0]), float(q[2])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--problems", nargs="+", default=list(PROBLEMS), choices=PROBLEMS)
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=METHODS)
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=100)
    parser.add_argument("--record", default=str(DEFAULT_RECORD),
                        help="the runs' file; another than the default writes a section and a result file of its own")
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
    record_path = Path(args.record).resolve()
    default = record_path == DEFAULT_RECORD.resolve()
    command = ("OMP_NUM_THREADS=1 nice python experiments/benchmarks/highd_subspace.py"
               + ("" if args.seeds == 3 else f" --seeds {args.seeds}")
               + ("" if args.budget == 100 else f" --budget {args.budget}")
               + ("" if args.methods == list(METHODS) else " --methods " + " ".join(args.methods))
               + ("" if args.problems == list(PROBLEMS) else " --problems " + " ".join(args.problems))
               + ("" if default else f" --record runs/{record_path.name}"))
    columns = "; ".join(f"{method}: {DESCRIPTIONS[method]}" for method in args.methods)
    heading = ("## High-dimensional search with a width-6 NP: which subspace (choosing suite)" if default else
               f"### The choosing suite again, recorded in `runs/{record_path.name}`")
    text = (f"{heading}\n\n"
            f"Command: `{command}`. `{CHECKPOINT}`, LogEI in the trust region as `optimize` runs it "
            f"(`BOPolicy(D, model='{CHECKPOINT}', subspace=..., budget={args.budget})`, its default "
            f"`n_init = 2 d_e + 1 = 13` Sobol points in the subspace's search cube), {args.seeds} seeds, "
            f"{args.budget} evaluations; log10 simple regret at the last evaluation: median [25 %, 75 %] "
            f"(seconds per evaluation, mean). The choosing suite of `highd_subspace.py`'s docstring, not the "
            f"reporting suite of issue 45. {columns}.\n\n{table}\n")
    section = "highd-subspace" if default else record_path.stem.replace("_", "-")
    publish(section, text, "highd_subspace.json" if default else record_path.name, command,
            {"budget": args.budget, "seeds": args.seeds, "checkpoint": CHECKPOINT, "results": summary}, threads=1)


if __name__ == "__main__":
    main()
