"""Seconds of one look-ahead proposal: ``optimize_acqf(qKnowledgeGradient)`` on NPModel against SingleTaskGP.

N uniform points of Hartmann-6 (unit cube, float64, seed 0; maximised as ``-f``), then
``optimize_acqf(qKnowledgeGradient(model, num_fantasies=F), unit cube, q=1, num_restarts=R,
raw_samples=S)``. Each fantasy conditions the model on a fantasised observation, and the
optimiser takes gradients back through those conditionings, so this is where a network call
per evaluation costs most against a GP's closed form. Models: ``gp`` (``SingleTaskGP``, its
``fit_gpytorch_mll`` included in the seconds) and each ``--checkpoints`` entry as
``NPModel.from_pretrained(checkpoint, X, Y)`` with the views its card recommends, or
``n_views=V`` for an entry written ``checkpoint:V``. One torch thread; one timed call per
model after an untimed warm-up (the model built and the acquisition evaluated once); printed:
seconds and the ratio to the GP's.

    python experiments/probes/probe_knowledge_gradient_cost.py --checkpoints tnpd-bo cmanp-bo:1
    python experiments/probes/probe_knowledge_gradient_cost.py --checkpoints cmanp-bo
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from common import machine_line  # noqa: E402


def build(method: str, X: torch.Tensor, Y: torch.Tensor):
    """``gp`` or ``checkpoint[:views]`` (see the module docstring)."""
    if method == "gp":
        from botorch.fit import fit_gpytorch_mll
        from botorch.models import SingleTaskGP
        from gpytorch.mlls import ExactMarginalLogLikelihood

        model = SingleTaskGP(X, Y)
        fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))
        return model
    from npbandit import NPModel

    checkpoint, _, views = method.partition(":")
    options = {"n_views": int(views)} if views else {}
    return NPModel.from_pretrained(checkpoint, X, Y, **options)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--checkpoints", nargs="+", default=["tnpd-bo", "cmanp-bo:1"])
    parser.add_argument("--fantasies", type=int, default=16)
    parser.add_argument("--restarts", type=int, default=4)
    parser.add_argument("--raw-samples", type=int, default=64)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    from botorch.acquisition import qKnowledgeGradient
    from botorch.optim import optimize_acqf
    from botorch.test_functions import Hartmann

    f = Hartmann(dim=6, negate=True)
    X = torch.rand(args.n, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    Y = f(X).unsqueeze(-1)
    unit = torch.stack([torch.zeros(6), torch.ones(6)]).double()
    print(f"# {machine_line(1)}; Hartmann-6, N = {args.n}, {args.fantasies} fantasies, q = 1, "
          f"{args.restarts} restarts, {args.raw_samples} raw samples")
    print("| model | s per optimize_acqf | / gp |")
    print("|---|---:|---:|")
    gp_seconds = None
    for method in ["gp", *args.checkpoints]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            torch.manual_seed(0)  # warm-up: load the checkpoint, evaluate the acquisition once
            qKnowledgeGradient(build(method, X, Y), num_fantasies=args.fantasies)(X[:1 + args.fantasies][None])
            torch.manual_seed(0)
            start = time.perf_counter()
            model = build(method, X, Y)
            acq = qKnowledgeGradient(model, num_fantasies=args.fantasies)
            optimize_acqf(acq, unit, q=1, num_restarts=args.restarts, raw_samples=args.raw_samples)
            seconds = time.perf_counter() - start
        gp_seconds = seconds if method == "gp" else gp_seconds
        print(f"| {method} | {seconds:.1f} | {seconds / gp_seconds:.1f}x |", flush=True)


if __name__ == "__main__":
    main()
