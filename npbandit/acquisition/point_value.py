"""The value of the acquisition at one point, in the objective's units, so that the points of
different models compare: how a search with one model per branch of a conditional space
(Optuna's ``NPSampler``; ``optimize``'s :class:`~npbandit.policies.branches.BranchBOPolicy`)
picks the branch whose proposal is worth most."""

from __future__ import annotations

import math

import torch

__all__ = ["acquisition_value"]


def acquisition_value(model, point: torch.Tensor, acquisition: str, *, best_f: float, beta: float,
                      outputs: torch.Tensor | None = None, constraints: int = 0, seed: int = 0) -> float:
    """The acquisition's value at ``point`` (``[d]``, the model's cube) under ``model``, in the
    objective's units, so branches' values compare: ``"logei"`` log expected improvement over
    ``best_f`` (with ``constraints``, weighted by the probability of feasibility, improving on
    the best feasible row of ``outputs`` ``[n, 1 + k]``), ``"ucb"`` the upper confidence bound
    with ``beta``, the Thompson acquisitions one posterior draw (seeded by ``seed``)."""
    from botorch.acquisition import LogExpectedImprovement, UpperConfidenceBound

    from npbandit.acquisition.constrained import constrained_log_ei

    x = point.reshape(1, 1, -1).to(torch.float64)
    with torch.no_grad():
        if acquisition == "logei":
            acq = (constrained_log_ei(model, outputs, constraints) if constraints
                   else LogExpectedImprovement(model, best_f=best_f))
            return float(acq(x))
        if acquisition == "ucb":
            return float(UpperConfidenceBound(model, beta=beta)(x))
        posterior = model.posterior(x.reshape(1, -1))
        generator = torch.Generator().manual_seed(seed)
        noise = torch.randn(1, generator=generator, dtype=torch.float64)
        value = float(posterior.mean.reshape(-1)[0] + posterior.variance.reshape(-1)[0].sqrt() * noise)
        return value if math.isfinite(value) else -math.inf
