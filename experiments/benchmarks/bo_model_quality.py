"""How informative a ``*-bo`` surrogate's posterior mean is on real test functions.

For N random training points (unit cube, float64) of Branin-2, Hartmann-3 and
Hartmann-6, the Pearson correlation between the posterior mean and the true function
on 500 random test points, for ``NPModel.from_pretrained(<checkpoint>)`` and for a
fitted ``SingleTaskGP``. A quick diagnostic of whether a BO surrogate has learned
enough to steer an acquisition function (not a benchmark of BO itself).

    python experiments/benchmarks/bo_model_quality.py [--checkpoint cmanp-bo]
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import publish  # noqa: E402

COMMAND = "python experiments/benchmarks/bo_model_quality.py"


def correlation(model, X: torch.Tensor, y: torch.Tensor) -> float:
    with torch.no_grad():
        mean = model.posterior(X[:, None]).mean.reshape(-1)
    return float(np.corrcoef(mean.numpy(), y.numpy())[0, 1])


def main(argv: list[str] | None = None) -> None:
    from botorch.fit import fit_gpytorch_mll
    from botorch.models import SingleTaskGP
    from botorch.test_functions import Branin, Hartmann
    from gpytorch.mlls import ExactMarginalLogLikelihood

    from npbandit import NPModel

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", default="cmanp-bo")
    parser.add_argument("--sizes", type=int, nargs="+", default=[10, 30, 100])
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    problems = {"branin": Branin(negate=True), "hartmann3": Hartmann(dim=3, negate=True),
                "hartmann6": Hartmann(dim=6, negate=True)}
    rows = []
    warnings.simplefilter("ignore")
    for name, problem in problems.items():
        d = problem.dim
        lo, hi = problem.bounds.to(torch.float64)
        for n in args.sizes:
            g = torch.Generator().manual_seed(0)
            X = torch.rand(n, d, generator=g, dtype=torch.float64)
            Y = problem(lo + X * (hi - lo)).unsqueeze(-1)
            Xt = torch.rand(500, d, generator=g, dtype=torch.float64)
            yt = problem(lo + Xt * (hi - lo))
            gp = SingleTaskGP(X, Y)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
            row = {"function": name, "n": n, "np": correlation(NPModel.from_pretrained(args.checkpoint, X, Y), Xt, yt),
                   "gp": correlation(gp, Xt, yt)}
            print(row)
            rows.append(row)
    lines = [f"## How informative `{args.checkpoint}` is on test functions", "",
             f"Command: `{COMMAND}`. Correlation between the posterior mean and the true function on 500 random "
             "points, N random training points in the unit cube (seed 0).", "",
             f"| function | N | {args.checkpoint} | SingleTaskGP |", "|---|---:|---:|---:|"]
    lines += [f"| {r['function']} | {r['n']} | {r['np']:.2f} | {r['gp']:.2f} |" for r in rows]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        publish("bo-model-quality", text, "bo_model_quality.json", COMMAND, {"checkpoint": args.checkpoint,
                                                                            "rows": rows})


if __name__ == "__main__":
    main()
