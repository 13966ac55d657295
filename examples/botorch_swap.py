"""A standard BoTorch closed loop, run twice: SingleTaskGP, then the one-line NP swap.

The loop has the shape of BoTorch's closed-loop tutorial: a few Sobol points, then
LogEI maximised with ``optimize_acqf`` each iteration, on Hartmann-6 (minimised; the
problem's inputs already live in the unit cube). Only the model line differs:

    model = SingleTaskGP(X, Y)
    model = NPModel.from_pretrained("cmanp-bo", X, Y)

The fitting line after it, ``fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood,
model))``, stays for both: for the pretrained NP it fits nothing.

Both loops run inside ``torch_threads()``: one torch thread (``NPBANDIT_THREADS`` or
``OMP_NUM_THREADS`` says otherwise). ``NPModel`` runs its own network calls so anyway; the
block also covers BoTorch's arithmetic around them and the gradients ``optimize_acqf`` takes
back through the network, which on many threads cost a small model far more than they
compute, most of all on a busy machine.

Run:  .venv/bin/python examples/botorch_swap.py [--iterations 30] [--seed 0]
"""

from __future__ import annotations

import argparse
import time
import warnings

import torch
from botorch.acquisition import LogExpectedImprovement
from botorch.fit import fit_gpytorch_mll
from botorch.models import SingleTaskGP
from botorch.optim import optimize_acqf
from botorch.test_functions import Hartmann
from botorch.utils.sampling import draw_sobol_samples
from gpytorch.mlls import ExactMarginalLogLikelihood

from npbandit.models import NPModel
from npbandit.threads import torch_threads


def run(kind: str, iterations: int, seed: int) -> tuple[list[float], float]:
    problem = Hartmann(dim=6, negate=True)  # maximise -f
    bounds = problem.bounds.to(torch.float64)
    X = draw_sobol_samples(bounds, n=2 * 6 + 1, q=1, seed=seed).squeeze(1)
    Y = problem(X).unsqueeze(-1)
    regrets, start = [], time.perf_counter()
    with torch_threads():  # the whole loop on npbandit's thread count, this process's count back after it
        for _ in range(iterations):
            if kind == "gp":
                model = SingleTaskGP(X, Y)
            else:
                model = NPModel.from_pretrained("cmanp-bo", X, Y)
            fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
            acq = LogExpectedImprovement(model, best_f=Y.max())
            candidate, _ = optimize_acqf(acq, bounds, q=1, num_restarts=10, raw_samples=512)
            X = torch.cat([X, candidate])
            Y = torch.cat([Y, problem(candidate).unsqueeze(-1)])
            regrets.append(problem.optimal_value - Y.max().item())
    return regrets, time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    # BoTorch warns when a restart of optimize_acqf stops early and it retries; that is
    # routine here and would bury the two result lines
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    warnings.filterwarnings("ignore", message=".*Optimization.*")
    torch.manual_seed(args.seed)
    for kind, label in (("gp", "SingleTaskGP + fit_gpytorch_mll"), ("np", 'NPModel.from_pretrained("cmanp-bo")')):
        regrets, seconds = run(kind, args.iterations, args.seed)
        marks = [regrets[i] for i in (0, len(regrets) // 2, len(regrets) - 1)]
        print(f"{label:<38} simple regret after 1 / {len(regrets) // 2 + 1} / {len(regrets)} iterations: "
              + " / ".join(f"{r:.3f}" for r in marks) + f"   ({seconds:.1f} s, {seconds / len(regrets):.2f} s/iter)")


if __name__ == "__main__":
    main()
