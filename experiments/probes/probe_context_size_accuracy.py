"""Does NPModel's prediction get worse past the 100 points the ``bo`` checkpoints were trained on?

Per function (Branin, Hartmann-3, Hartmann-6 on the unit cube, float64, noise-free) and seed,
``N`` uniform points are drawn, nested (the first 50 of the 300 are the N = 50 set), and
``NPModel.from_pretrained(checkpoint, X[:N], Y[:N])`` (the views its card recommends) predicts
``--test`` fresh uniform points; ``SingleTaskGP`` with ``fit_gpytorch_mll`` on the same points is
the yardstick. Printed per function, model and N, medians over the seeds: the posterior mean's
RMSE over the test points in units of the function's std there, and the mean negative log
predictive density of the test values (``observation_noise=True``), both in standardised units
(lower is better).

    python experiments/probes/probe_context_size_accuracy.py --seeds 0 1 2 --sizes 50 100 200 300
"""

from __future__ import annotations

import argparse
import math
import statistics
import warnings

import torch


def function(name: str):
    from botorch.test_functions import Branin, Hartmann

    if name == "branin":
        f = Branin()
        lo, hi = f.bounds[0].double(), f.bounds[1].double()
        return 2, lambda x: f(lo + x * (hi - lo))
    f = Hartmann(dim=int(name[-1]))
    return f.dim, f


def fit(method: str, X: torch.Tensor, Y: torch.Tensor):
    if method == "gp":
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from gpytorch.mlls import ExactMarginalLogLikelihood

        model = SingleTaskGP(X, Y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        return model
    from npbandit import NPModel

    return NPModel.from_pretrained(method, X, Y)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", default=["branin", "hartmann3", "hartmann6"])
    parser.add_argument("--models", nargs="+", default=["tnpd-bo", "cmanp-bo", "gp"])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 300])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--test", type=int, default=500)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    print(f"RMSE / std of f and NLPD (standardised), medians over seeds {args.seeds}, {args.test} test points")
    print("| function | model | " + " | ".join(f"N = {n}" for n in args.sizes) + " |")
    print("|---|---|" + "---:|" * len(args.sizes))
    for name in args.functions:
        d, f = function(name)
        data = []
        for seed in args.seeds:
            g = torch.Generator().manual_seed(seed)
            X = torch.rand(max(args.sizes), d, generator=g, dtype=torch.float64)
            Xt = torch.rand(args.test, d, generator=g, dtype=torch.float64)
            data.append((X, f(X).unsqueeze(-1), Xt, f(Xt)))
        for method in args.models:
            cells = []
            for n in args.sizes:
                rmse, nlpd = [], []
                for X, Y, Xt, yt in data:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        post = fit(method, X[:n], Y[:n]).posterior(Xt, observation_noise=True)
                    mean, var = post.mean.squeeze(-1).detach(), post.variance.squeeze(-1).detach()
                    scale = float(yt.std())
                    z, v = (yt - mean) / scale, var / scale**2
                    rmse.append(float(z.pow(2).mean().sqrt()))
                    nlpd.append(float((0.5 * (z**2 / v + v.log() + math.log(2 * math.pi))).mean()))
                cells.append(f"{statistics.median(rmse):.3f} / {statistics.median(nlpd):.2f}")
            print(f"| {name} | {method} | " + " | ".join(cells) + " |", flush=True)


if __name__ == "__main__":
    main()
