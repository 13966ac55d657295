"""Symmetric views of a box: test-time averaging over the symmetries of a prior.

A prior whose tasks are unchanged in distribution by permuting the input dimensions
and by reflecting any of them about the box's centre (the ``bo`` prior: iid uniform
inputs, a stationary kernel with iid per-dimension lengthscales) has the same
posterior predictive in every such *view* of the data: predict at ``g(x)`` after
conditioning on ``g(X)`` for any symmetry ``g``. A trained network is only
approximately invariant, and its errors differ from view to view, so averaging its
predictives over a few views cancels part of those errors while keeping what every
view agrees on. TabPFN ensembles over feature permutations for the same reason.

:class:`InputViews` holds ``K`` views of a ``d``-dimensional problem zero-padded to a
network's ``x_dim`` inputs (the padding columns are left alone) and maps a batch onto
all of them at once, view-minor (element ``b * K + k`` is batch element ``b`` in view
``k``), so one network call serves every view and a state's ``repeat`` (which tiles the
batch) keeps each view with its batch element.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["InputViews", "symmetry_count"]


def symmetry_count(d: int) -> int:
    """The number of distinct views of a ``d``-box: ``d!`` orders times ``2^d`` reflections."""
    return math.factorial(d) * 2**d


class InputViews:
    """``K`` symmetries of the box ``[low, high]^d``: view 0 is the identity, the others are
    distinct (order of the dimensions, reflected dimensions) pairs drawn with a fixed
    seed, so a model is deterministic. ``K`` is at most :func:`symmetry_count` ``(d)``.

    Args:
        d: the problem's input dimension (the first ``d`` of the network's inputs).
        x_dim: the network's input width (``>= d``; the rest is padding).
        n_views: ``K``.
        domain: ``(low, high)``, the box; a reflection maps ``x`` to ``low + high - x``.

    Raises:
        ValueError: ``n_views`` not a positive int or more than the box has; ``d`` not in
            ``1..x_dim``; ``low >= high``.
    """

    def __init__(self, d: int, x_dim: int, n_views: int, domain: tuple[float, float]) -> None:
        for name, value in (("d", d), ("x_dim", x_dim), ("n_views", n_views)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if d > x_dim:
            raise ValueError(f"d must be at most x_dim={x_dim}, got {d}")
        if n_views > symmetry_count(d):
            raise ValueError(f"n_views must be at most {symmetry_count(d)}, the symmetries of a {d}-dimensional box, "
                             f"got {n_views}")
        if not domain[0] < domain[1]:
            raise ValueError(f"domain must be (low, high) with low < high, got {domain}")
        generator = torch.Generator().manual_seed(d)
        seen = {(tuple(range(d)), (False,) * d)}
        views = [next(iter(seen))]
        while len(views) < n_views:
            view = (tuple(torch.randperm(d, generator=generator).tolist()),
                    tuple((torch.rand(d, generator=generator) < 0.5).tolist()))
            if view not in seen:
                seen.add(view)
                views.append(view)
        pad = tuple(range(d, x_dim))
        #: ``[K, x_dim]``: the input column each view reads into each position
        self.order = torch.tensor([perm + pad for perm, _ in views])
        #: ``[K, x_dim]``: the columns each view reflects (never a padding column)
        self.reflect = torch.tensor([flips + (False,) * len(pad) for _, flips in views])
        self.d, self.x_dim, self.n_views = d, x_dim, n_views
        self.centre_twice = float(domain[0] + domain[1])

    def inputs(self, x: Tensor) -> Tensor:
        """``[B, M, x_dim]`` -> ``[B * K, M, x_dim]``, element ``b * K + k`` in view ``k``.

        Raises:
            ValueError: ``x`` does not have ``x_dim`` columns.
        """
        B, M, xd = x.shape
        if xd != self.x_dim:
            raise ValueError(f"x must have {self.x_dim} columns, got {xd}")
        reflect = self.reflect.to(x.device)[None, :, None, :]
        viewed = torch.where(reflect, self.centre_twice - x.unsqueeze(1), x.unsqueeze(1))
        order = self.order.to(x.device)[None, :, None, :].expand(B, -1, M, -1)
        return viewed.gather(-1, order).reshape(B * self.n_views, M, xd)

    def outputs(self, y: Tensor) -> Tensor:
        """``[B, ...]`` -> ``[B * K, ...]``: each element once per view (outputs do not change)."""
        return y.repeat_interleave(self.n_views, dim=0)

    def combine(self, mean: Tensor, var: Tensor) -> tuple[Tensor, Tensor]:
        """Per-view moments ``[B * K, ...]`` -> the moments of their equal-weight mixture,
        ``[B, ...]``: the mean of the means, and the mean variance plus the variance of
        the means (so the views' disagreement counts as uncertainty)."""
        K = self.n_views
        mean = mean.reshape(-1, K, *mean.shape[1:])
        var = var.reshape(-1, K, *var.shape[1:])
        centre = mean.mean(dim=1)
        spread = ((mean - centre.unsqueeze(1)) ** 2).mean(dim=1)
        return centre, var.mean(dim=1) + spread
