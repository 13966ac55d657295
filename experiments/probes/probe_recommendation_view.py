"""Which model should pick ``optimize``'s ``recommended_x``? A choosing probe (issue 45 item 4).

Runs ``npbandit.optimize`` (the defaults, ``surrogate="tnpd"``) on noisy and noise-free
objectives, then scores four ways of choosing among the evaluated points, all from the same
run (a recommendation never changes what a run evaluates):

* ``observed``: ``best_x``, the best noisy observation;
* ``api``: ``recommended_x`` as the library returns it;
* ``global``: the highest posterior mean of ``NPModel.from_pretrained(<checkpoint>, X, Y)`` on
  every evaluation (the whole cube), at the evaluated points;
* ``global-loo``: the same model's observations de-noised: at each evaluated point ``x_i`` the
  NP's predictive of a new observation from the other points, ``N(mu_i, v_i)``, combined with
  ``y_i`` under the model's noise estimate ``s2`` as a Gaussian latent would be:
  ``mu_i + (v_i - s2) / v_i * (y_i - mu_i)`` (weight clipped to ``[0, 1]``).

Score: the true value at the chosen point minus the best true value among the evaluated
points, divided by the objective's noise sd (the noisy version's sd for a noise-free one);
mean over seeds. ``gp`` (BoTorch ``SingleTaskGP`` fitted on every evaluation, highest posterior
mean among them, as Ax recommends) is shown for reference.

    python experiments/probes/probe_recommendation_view.py --seeds 12
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import torch
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.models.transforms import Standardize
from botorch.test_functions import Branin, Hartmann
from gpytorch.mlls import ExactMarginalLogLikelihood

import npbandit
from npbandit.models import NPModel

H3 = Hartmann(dim=3)
BRANIN = Branin()


def sphere3(x):
    return float(4 * np.sum((np.asarray(x) - 0.3) ** 2))


def hartmann3(x):
    return float(H3(torch.as_tensor(x, dtype=torch.float64)[None]))


def branin(x):  # on the unit square
    x = np.asarray(x)
    return float(BRANIN(torch.tensor([[15 * x[0] - 5, 15 * x[1]]], dtype=torch.float64)))


# name: (function, dimension, noise sd of the noisy version, noisy?)
FUNCTIONS = {
    "sphere3-noisy": (sphere3, 3, 0.5, True),
    "hartmann3-noisy": (hartmann3, 3, 0.3, True),
    "branin-noisy": (branin, 2, 2.0, True),
    "hartmann3": (hartmann3, 3, 0.3, False),
    "branin": (branin, 2, 2.0, False),
}


def noisy_version(f, sd: float, rng: np.random.Generator):
    return lambda x: f(x) + sd * rng.standard_normal()


def global_means(checkpoint: str, X: torch.Tensor, Y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The plain and the de-noised posterior means at every row of ``X`` (``Y`` maximised)."""
    n = len(X)
    full = NPModel.from_pretrained(checkpoint, X, Y)
    with torch.no_grad():
        plain = full.posterior(X.unsqueeze(-2)).mean.reshape(-1)
        noise = float(full.likelihood.noise.reshape(-1)[0])
        loo = torch.empty(n, dtype=torch.float64)
        for i in range(n):
            keep = torch.arange(n) != i
            p = NPModel.from_pretrained(checkpoint, X[keep], Y[keep]).posterior(X[i:i + 1].unsqueeze(-2),
                                                                                observation_noise=True)
            mu, v = float(p.mean), float(p.variance)
            w = min(max((v - noise) / v, 0.0), 1.0)
            loo[i] = mu + w * (float(Y[i, 0]) - mu)
    return plain, loo


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=12)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=list(FUNCTIONS))
    args = parser.parse_args()
    torch.set_num_threads(1)
    warnings.filterwarnings("ignore")
    names = ["observed", "api", "global", "global-loo", "gp"]
    for fname in args.functions:
        f, d, sd, noisy = FUNCTIONS[fname]
        gaps = []
        for seed in range(args.seeds):
            rng = np.random.default_rng(1000 + seed)
            objective = noisy_version(f, sd, rng) if noisy else f
            res = npbandit.optimize(objective, np.array([[0.0] * d, [1.0] * d]), budget=args.budget, seed=seed,
                                    db=None, progress=False)
            X = torch.tensor(np.array([h["x"] for h in res.history]), dtype=torch.float64)
            y = np.array([h["value"] for h in res.history])
            Y = -torch.tensor(y, dtype=torch.float64)[:, None]
            plain, loo = global_means("tnpd-bo", X, Y)
            gp = SingleTaskGP(X, Y, outcome_transform=Standardize(1))
            fit_gpytorch_mll(ExactMarginalLogLikelihood(gp.likelihood, gp))
            with torch.no_grad():
                gp_mean = gp.posterior(X).mean.reshape(-1)
            true = np.array([f(x) for x in X.numpy()])
            chosen = [true[int(np.argmin(y))], f(np.asarray(res.recommended_x)), true[int(torch.argmax(plain))],
                      true[int(torch.argmax(loo))], true[int(torch.argmax(gp_mean))]]
            gaps.append([(c - true.min()) / sd for c in chosen])
            print(fname, seed, " ".join(f"{n} {g:.3f}" for n, g in zip(names, gaps[-1])), flush=True)
        mean = np.mean(gaps, axis=0)
        print(f"== {fname} ({args.seeds} seeds, budget {args.budget}): mean gap / sd: "
              + ", ".join(f"{n} {m:.3f}" for n, m in zip(names, mean)), flush=True)


if __name__ == "__main__":
    main()
