"""Batch BO through BoTorch with NPModel: q-batches of qLogNEI, diagonal against conditioned covariance.

The BoTorch closed loop a user writes (as BoTorch's batch-BO tutorial does): ``2 d + 1``
scrambled Sobol points, then ``--batches`` rounds of ``q`` points, each round a model built
on every observation so far (inputs on the unit cube, the function maximised as
``-f``), ``qLogNoisyExpectedImprovement(model, X_baseline=X, prune_baseline=True)`` and
``optimize_acqf(q=q, num_restarts=10, raw_samples=512)``.

Methods: ``NPModel.from_pretrained(checkpoint, X, Y, covariance=c)`` for each checkpoint of
``--checkpoints`` and ``c`` in ``conditioning`` / ``diagonal`` (see
:mod:`npbandit.models.covariance`), and ``SingleTaskGP(X, Y)`` (its defaults: Standardize
outcome transform) fitted with ``fit_gpytorch_mll``. One torch thread.

Reported per function and method, over seeds: the final log10 simple regret (median and
quartiles), how many batches held two points closer than ``CLOSE`` (Euclidean, unit cube),
the median of a batch's least pairwise distance, and the median seconds per round (model
built, fitted for the GP, and the acquisition optimised). Runs are appended to ``--out``
(JSON lines) and skipped when already there, so the script resumes.

    python experiments/benchmarks/botorch_batch.py --suite choosing --seeds 5 --out runs/botorch_batch.jsonl
    python experiments/benchmarks/botorch_batch.py --summarise runs/botorch_batch.jsonl
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import botorch_test_function, jsonl_rows, jsonl_study, quartile_text  # noqa: E402

COMMAND = "python experiments/benchmarks/botorch_batch.py"
#: batches with two points closer than this (unit cube) count as bunched
CLOSE = 0.01
# suite -> {label: (botorch test function class, dimension or None for its own)}
SUITES = {
    "choosing": {"branin": ("Branin", None), "hartmann3": ("Hartmann", 3), "rosenbrock3": ("Rosenbrock", 3)},
    "reporting": {"six-hump-camel": ("SixHumpCamel", None), "hartmann6": ("Hartmann", 6),
                  "styblinski-tang4": ("StyblinskiTang", 4), "michalewicz5": ("Michalewicz", 5),
                  "ackley5": ("Ackley", 5)},
}


def problem(label: str, suite: str):
    return botorch_test_function(*SUITES[suite][label])


def build(method: str, X: torch.Tensor, Y: torch.Tensor):
    if method == "gp":
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from gpytorch.mlls import ExactMarginalLogLikelihood

        model = SingleTaskGP(X, Y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        return model
    from npbandit import NPModel

    checkpoint, covariance = method.rsplit(":", 1)
    return NPModel.from_pretrained(checkpoint, X, Y, covariance=covariance)


def run(label: str, suite: str, method: str, seed: int, q: int, batches: int) -> dict:
    from botorch.acquisition import qLogNoisyExpectedImprovement
    from botorch.optim import optimize_acqf

    f = problem(label, suite)
    d = f.dim
    lo, hi = f.bounds[0].double(), f.bounds[1].double()
    unit = torch.stack([torch.zeros(d), torch.ones(d)]).double()
    sobol = torch.quasirandom.SobolEngine(d, scramble=True, seed=seed)
    X = sobol.draw(2 * d + 1).double()

    def value(x):  # maximised: -f on the function's own box
        return -f(lo + x * (hi - lo)).unsqueeze(-1)

    Y = value(X)
    seconds, least = [], []
    for _ in range(batches):
        torch.manual_seed(seed * 1000 + len(seconds))
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = build(method, X, Y)
            acq = qLogNoisyExpectedImprovement(model, X_baseline=X, prune_baseline=True)
            batch, _ = optimize_acqf(acq, unit, q=q, num_restarts=10, raw_samples=512)
        seconds.append(time.perf_counter() - start)
        least.append(float(torch.pdist(batch.detach()).min()))
        X, Y = torch.cat([X, batch.detach()]), torch.cat([Y, value(batch.detach())])
    regret = float(-Y.max() - f.optimal_value)
    return {"function": label, "suite": suite, "method": method, "seed": seed, "q": q, "batches": batches,
            "regret": regret, "seconds": seconds, "least_distance": least}


def summarise(path: Path) -> str:
    import math

    rows = jsonl_rows(path)
    functions = list(dict.fromkeys(r["function"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    lines = ["| function | method | seeds | final log10 regret | bunched batches | least distance in a batch "
             "(median) | s per round (median) |", "|---|---|---:|---:|---:|---:|---:|"]
    for fn in functions:
        for method in methods:
            runs = [r for r in rows if r["function"] == fn and r["method"] == method]
            if not runs:
                continue
            regrets = [math.log10(max(r["regret"], 1e-12)) for r in runs]
            least = [x for r in runs for x in r["least_distance"]]
            bunched = sum(x < CLOSE for x in least)
            secs = [s for r in runs for s in r["seconds"]]
            lines.append(f"| {fn} | {method} | {len(runs)} | {quartile_text(regrets)} | {bunched}/{len(least)} | "
                         f"{statistics.median(least):.3f} | {statistics.median(secs):.2f} |")
    return "\n".join(lines)


def cells(args: argparse.Namespace) -> list[dict]:
    """The study's cells: each seed, function and method (every checkpoint with each covariance,
    then the GP unless ``--no-gp``)."""
    methods = [f"{c}:{cov}" for c in args.checkpoints for cov in ("diagonal", "conditioning")]
    if not args.no_gp:
        methods.append("gp")
    return [{"function": fn, "method": method, "seed": seed, "q": args.q, "batches": args.batches}
            for seed in range(args.seeds) for fn in args.functions or list(SUITES[args.suite]) for method in methods]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", choices=sorted(SUITES), default="choosing")
    parser.add_argument("--functions", nargs="+", default=None, help="labels of the suite (default: all)")
    parser.add_argument("--checkpoints", nargs="+", default=["tnpd-bo"])
    parser.add_argument("--no-gp", action="store_true")
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--q", type=int, default=4)
    parser.add_argument("--batches", type=int, default=6)
    jsonl_study(
        parser, argv, command=COMMAND, default_out=Path("runs/botorch_batch.jsonl"),
        keys=("function", "method", "seed", "q", "batches"), cells=cells,
        run=lambda args, c: run(c["function"], args.suite, c["method"], c["seed"], c["q"], c["batches"]),
        describe=lambda row: (f"{row['function']} {row['method']} seed {row['seed']}: regret {row['regret']:.3g}, "
                              f"{statistics.median(row['seconds']):.1f} s per round"),
        summarise=summarise)


if __name__ == "__main__":
    main()
