"""Running moments of outputs, so whoever standardises a stream by fixed statistics can tell
in ``O(new points)`` whether they have gone stale (:func:`drifted`): a streamed
:class:`~npbandit.models.NPModel` (:mod:`npbandit.models.conditioning`) and the per-arm bandit
policy's shared reward scale (:mod:`npbandit.policies.per_arm`).

Moments are ``(count, mean, sum of squared deviations)`` per output column, the last two
float64 tensors of ``m`` values.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from npbandit.transforms.standardize import spread

__all__ = ["Moments", "moments", "merge_moments", "moment_statistics", "drifted", "RESCALE_TOL"]

Moments = tuple[int, Tensor, Tensor]

#: how far the pooled reward mean (in stds) or std (as a factor ``1 +``) may drift before a bandit
#: policy's arms are re-scaled: the ``tol`` of :func:`drifted` for the reward scale the per-arm NP
#: policy and GP-UCB share across their arms
RESCALE_TOL = 0.2


def moments(Y: Tensor) -> Moments:
    """``(count, mean, sum of squared deviations)`` per column of ``Y [n, m]``, float64."""
    Y = Y.detach().to(torch.float64)
    mean = Y.mean(dim=0)
    return Y.shape[0], mean, (Y - mean).pow(2).sum(dim=0)


def merge_moments(a: Moments, b: Moments) -> Moments:
    """Moments of the union of two sets from theirs (Chan, Golub and LeVeque's pairwise update)."""
    (na, ma, sa), (nb, mb, sb) = a, b
    n = na + nb
    delta = mb.to(ma) - ma
    return n, ma + delta * (nb / n), sa + sb.to(sa) + delta.pow(2) * (na * nb / n)


def moment_statistics(moments: Moments) -> tuple[Tensor, Tensor]:
    """``(mean, std)`` (``m`` values each) as :func:`~npbandit.transforms.standardize.standardization`
    defines them: the sample std, 1 for a single point or for a constant's
    (:func:`~npbandit.transforms.standardize.spread`)."""
    n, mean, m2 = moments
    if n == 1:
        return mean, torch.ones_like(mean)
    std = (m2 / (n - 1)).sqrt()
    return mean, spread(mean, std)


def drifted(mean: Tensor, std: Tensor, ref_mean: Tensor, ref_std: Tensor, tol: float) -> bool:
    """Whether statistics ``(mean, std)`` have left those a stream is standardised by,
    ``(ref_mean, ref_std)``: in some column the mean moved by more than ``tol`` reference
    stds, or the std changed by more than a factor ``1 + tol``."""
    moved = ((mean - ref_mean).abs() > tol * ref_std).any()
    rescaled = ((std / ref_std).log().abs() > math.log1p(tol)).any()
    return bool(moved or rescaled)
