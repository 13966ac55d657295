"""González et al. (2016)'s local penalty around points still being evaluated, for LogEI.

:class:`LocalPenalty` is the penalty term, estimated once per proposal from the model;
:class:`PenalisedAcquisition` adds its log to a log acquisition (LogEI), so the
acquisition is damped around each pending point instead of the model being told a value
there (:class:`~npbandit.acquisition.pending.LocalPenalisation`).

This module imports BoTorch at import time; the rest of the acquisition package imports
it only when a penalty is built.
"""

from __future__ import annotations

import torch
from botorch.acquisition import AcquisitionFunction
from torch.special import log_ndtr

__all__ = ["LocalPenalty", "PenalisedAcquisition"]


class LocalPenalty:
    """González et al. (2016)'s local penalty around pending points, for a log acquisition.

    ``log phi_j(x) = log Phi((L |x - x_j| - M + mu_j) / sigma_j)`` summed over the pending
    points ``x_j`` (``[p, d]``), where ``mu_j``, ``sigma_j`` are the model's predictive mean
    and standard deviation at ``x_j`` (``[p]`` each); ``L`` estimates the objective's Lipschitz
    constant, the largest norm of the gradient of the model's mean over
    :attr:`LIPSCHITZ_POINTS` Sobol points of the searched box, and ``M`` its maximum, the
    largest of the best observed value and the model's mean at those points and at the
    pending ones (as Trieste's local penalisation does, so a point in flight where the model
    expects a new best is penalised too, not waved through for lying above the best
    observation). Build it with :meth:`build`.
    """

    #: Sobol points of the searched box on which ``L`` and ``M`` are estimated
    LIPSCHITZ_POINTS = 256

    def __init__(self, pending: torch.Tensor, mean: torch.Tensor, std: torch.Tensor, best_f: torch.Tensor,
                 lipschitz: float) -> None:
        self.pending, self.mean, self.std, self.best_f, self.lipschitz = pending, mean, std, best_f, lipschitz

    @classmethod
    def build(cls, model, pending: torch.Tensor, best_f, bounds: torch.Tensor, seed: int) -> LocalPenalty:
        """The penalty of ``model`` around ``pending`` ``[p, d]``, ``best_f`` the best observed
        output, ``bounds`` ``[2, d]`` the box searched, ``seed`` seeding its Sobol points. Of a
        model with several outputs (an objective and its constraints), output 0 is the
        objective."""
        objective = [0] if model.num_outputs > 1 else None
        with torch.no_grad():
            post = model.posterior(pending, output_indices=objective)
            mean = post.mean.reshape(-1)
            std = post.variance.reshape(-1).clamp_min(1e-12).sqrt()
        points = bounds[0] + (bounds[1] - bounds[0]) * torch.quasirandom.SobolEngine(
            pending.shape[-1], scramble=True, seed=seed).draw(cls.LIPSCHITZ_POINTS, dtype=torch.float64)
        points.requires_grad_(True)
        with torch.enable_grad():
            # t-batches of one point: the means are marginals, and a model that correlates the
            # points of a t-batch (NPModel(covariance="conditioning")) need not correlate these
            means = model.posterior(points.unsqueeze(-2), output_indices=objective).mean
            grad, = torch.autograd.grad(means.sum(), points)
        lipschitz = max(float(grad.norm(dim=-1).max()), 1e-6)  # a flat mean: only the point itself is damped
        top = torch.stack([torch.as_tensor(best_f, dtype=torch.float64).reshape(()), means.detach().max(), mean.max()])
        return cls(pending, mean, std, top.max(), lipschitz)

    def log_penalty(self, X: torch.Tensor) -> torch.Tensor:
        """``X`` ``[b, 1, d]`` -> ``[b]``: the summed log penalty."""
        dist = torch.cdist(X.squeeze(-2), self.pending.to(X))  # [b, p]
        z = (self.lipschitz * dist - self.best_f + self.mean) / self.std
        return log_ndtr(z).sum(-1)

    def wrap(self, acq: AcquisitionFunction) -> PenalisedAcquisition:
        """``acq`` (a log acquisition on ``[b, 1, d]``) plus this log penalty."""
        return PenalisedAcquisition(acq, self)


class PenalisedAcquisition(AcquisitionFunction):
    """A log acquisition (``[b, 1, d]`` -> ``[b]``, e.g. LogEI) plus a :class:`LocalPenalty`'s
    log penalty: the acquisition multiplied by the penalty, in log space."""

    def __init__(self, base: AcquisitionFunction, penalty: LocalPenalty) -> None:
        if not isinstance(base, AcquisitionFunction):
            raise TypeError(f"base must be a BoTorch AcquisitionFunction, got {type(base).__name__}")
        if not isinstance(penalty, LocalPenalty):
            raise TypeError(f"penalty must be a LocalPenalty, got {type(penalty).__name__}")
        super().__init__(base.model)
        self.base = base
        self.penalty = penalty

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.base(X) + self.penalty.log_penalty(X)
