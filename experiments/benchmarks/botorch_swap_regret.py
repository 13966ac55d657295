"""Regret of the plain BoTorch swap: NPModel in SingleTaskGP's place, LogEI over the full box.

The loop of the guide's snippet (docs/guides/botorch.md) and examples/botorch_swap.py, as a
BoTorch user writes it: ``2 d + 1`` scrambled Sobol points in the function's box
(``draw_sobol_samples``, seeded by the seed), then ``--iterations`` rounds of: build the model
on every observation so far, ``LogExpectedImprovement(model, best_f=Y.max())``,
``optimize_acqf(q=1, num_restarts=10, raw_samples=512)`` over the function's box, evaluate
(``-f`` maximised). Methods, public API only:

- ``gp``: ``SingleTaskGP(X, Y, input_transform=Normalize(d, bounds=bounds))`` (its default
  ``Standardize`` outcome transform) fitted with ``fit_gpytorch_mll``, as BoTorch's
  documentation sets a GP up (inputs on the unit cube, outputs standardised);
- ``tnpd-bo``, ``cmanp-bo``: ``NPModel.from_pretrained(name, X, Y, bounds=bounds)``, every
  other option at its default (the swap);
- ``optimize``: ``npbandit.optimize(f, bounds, initial=(X0, f(X0)), budget=iterations,
  db=None)`` with its defaults (``tnpd-bo``, a trust region, ``CandidateSearch``), from the
  same Sobol points: what the guide points a user to instead.

Reported per function and method, over seeds: the final log10 simple regret (median and
quartiles, and each seed's), on how many seeds it ended below the GP's, and the median
seconds per iteration (model built and fitted, acquisition optimised; for ``optimize`` its
wall time over its iterations). Runs are appended to ``--out`` (JSON lines) and skipped when
already there, so the script resumes. One torch thread.

    nice -n 10 python experiments/benchmarks/botorch_swap_regret.py --seeds 5 --out runs/botorch_swap_regret.jsonl
    python experiments/benchmarks/botorch_swap_regret.py --summarise runs/botorch_swap_regret.jsonl
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import botorch_test_function, jsonl_rows, jsonl_study, quartile_text  # noqa: E402

COMMAND = "python experiments/benchmarks/botorch_swap_regret.py"
FUNCTIONS = {"hartmann6": ("Hartmann", 6), "branin": ("Branin", None)}
METHODS = ("gp", "tnpd-bo", "cmanp-bo", "optimize")


def problem(label: str):
    return botorch_test_function(*FUNCTIONS[label])  # minimised: f as BoTorch defines it


def build(method: str, X: torch.Tensor, Y: torch.Tensor, bounds: torch.Tensor):
    if method == "gp":
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from botorch.models.transforms.input import Normalize
        from gpytorch.mlls import ExactMarginalLogLikelihood

        model = SingleTaskGP(X, Y, input_transform=Normalize(X.shape[-1], bounds=bounds))
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        return model
    from npbandit import NPModel

    return NPModel.from_pretrained(method, X, Y, bounds=bounds)


def botorch_loop(f, method: str, X: torch.Tensor, iterations: int, seed: int) -> tuple[list[float], list[float]]:
    """The swap's loop; returns every evaluated ``f`` value (initial design first) and the
    seconds of each iteration."""
    from botorch.acquisition import LogExpectedImprovement
    from botorch.optim import optimize_acqf

    bounds = f.bounds.double()
    Y = -f(X).unsqueeze(-1)
    torch.manual_seed(seed)
    seconds = []
    for _ in range(iterations):
        start = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # optimize_acqf's restart and fitting notes
            model = build(method, X, Y, bounds)
            acq = LogExpectedImprovement(model, best_f=Y.max())
            candidate, _ = optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512)
        seconds.append(time.perf_counter() - start)
        candidate = candidate.detach()
        X, Y = torch.cat([X, candidate]), torch.cat([Y, -f(candidate).unsqueeze(-1)])
    return (-Y.squeeze(-1)).tolist(), seconds


def optimize_loop(f, X: torch.Tensor, iterations: int, seed: int) -> tuple[list[float], list[float]]:
    """``npbandit.optimize`` at its defaults from the same initial points."""
    from npbandit import optimize

    values = f(X)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = optimize(lambda x: float(f(torch.as_tensor(x, dtype=torch.float64).unsqueeze(0))),
                          f.bounds.double().numpy(), budget=iterations, initial=(X.numpy(), values.numpy()),
                          seed=seed, db=None, progress=False)
    elapsed = time.perf_counter() - start
    own = [float(h["value"]) for h in result.history if h.get("value") is not None][-iterations:]
    return values.tolist() + own, [elapsed / iterations] * iterations


def run(label: str, method: str, seed: int, iterations: int) -> dict:
    from botorch.utils.sampling import draw_sobol_samples

    f = problem(label)
    X = draw_sobol_samples(f.bounds.double(), n=2 * f.dim + 1, q=1, seed=seed).squeeze(1)
    if method == "optimize":
        values, seconds = optimize_loop(f, X, iterations, seed)
    else:
        values, seconds = botorch_loop(f, method, X, iterations, seed)
    return {"function": label, "method": method, "seed": seed, "iterations": iterations,
            "evaluations": len(values), "regret": min(values) - float(f.optimal_value), "seconds": seconds}


def summarise(path: Path) -> str:
    rows = jsonl_rows(path)
    functions = list(dict.fromkeys(r["function"] for r in rows))
    methods = [m for m in METHODS if any(r["method"] == m for r in rows)]
    lines = ["| function | method | seeds | final log10 regret | per seed (0, 1, ...) | below the GP's "
             "(paired) | s per iteration (median) |", "|---|---|---:|---:|---|---:|---:|"]
    for fn in functions:
        gp = {r["seed"]: r["regret"] for r in rows if r["function"] == fn and r["method"] == "gp"}
        for method in methods:
            runs = sorted((r for r in rows if r["function"] == fn and r["method"] == method), key=lambda r: r["seed"])
            if not runs:
                continue
            logs = [math.log10(max(r["regret"], 1e-12)) for r in runs]
            paired = [r for r in runs if r["seed"] in gp]
            below = "-" if method == "gp" else f"{sum(r['regret'] < gp[r['seed']] for r in paired)}/{len(paired)}"
            secs = [s for r in runs for s in r["seconds"]]
            lines.append(f"| {fn} | {method} | {len(runs)} | {quartile_text(logs)} | "
                         f"{', '.join(f'{v:.2f}' for v in logs)} | {below} | {statistics.median(secs):.2f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", choices=sorted(FUNCTIONS), default=list(FUNCTIONS))
    parser.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=30)
    jsonl_study(
        parser, argv, command=COMMAND, default_out=Path("runs/botorch_swap_regret.jsonl"),
        keys=("function", "method", "seed", "iterations"),
        cells=lambda args: [{"function": fn, "method": method, "seed": seed, "iterations": args.iterations}
                            for seed in range(args.seeds) for fn in args.functions for method in args.methods],
        run=lambda args, c: run(c["function"], c["method"], c["seed"], c["iterations"]),
        describe=lambda row: (f"{row['function']} {row['method']} seed {row['seed']}: log10 regret "
                              f"{math.log10(max(row['regret'], 1e-12)):.2f}, {statistics.median(row['seconds']):.2f} "
                              "s per iteration"),
        summarise=summarise)


if __name__ == "__main__":
    main()
