"""Running moments of a model's outputs, so a streamed model can tell in ``O(new points)``
whether its fixed standardisation has gone stale (see :mod:`npbandit.models.conditioning`).

Moments are ``(count, mean, sum of squared deviations)`` per output column, the last two
float64 tensors of ``m`` values.
"""

from __future__ import annotations

import torch
from torch import Tensor

from npbandit.transforms.standardize import spread

__all__ = ["Moments", "moments", "merge_moments", "moment_statistics"]

Moments = tuple[int, Tensor, Tensor]


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
