"""``Chain``: outcome transforms applied one after another."""

from __future__ import annotations

from torch import Tensor

from npbandit.transforms.base import OutcomeTransform

__all__ = ["Chain"]


class Chain(OutcomeTransform):
    """``forward`` applies ``transforms`` in order, ``untransform`` their inverses in
    reverse order (``Chain(a, b).forward(y) = b(a(y))``).

    Predictive moments are exact when every transform but the last is affine
    (:meth:`~npbandit.transforms.base.OutcomeTransform.untransform_mean_variance`):
    the last one maps the Gaussian's moments, the affine ones map those on.
    """

    def __init__(self, *transforms: OutcomeTransform) -> None:
        if not transforms:
            raise ValueError("Chain needs at least one transform")
        for i, t in enumerate(transforms):
            if not isinstance(t, OutcomeTransform):
                raise TypeError(f"transforms[{i}] must be an npbandit OutcomeTransform, got {type(t).__name__}")
        self.transforms = tuple(transforms)

    def forward(self, Y: Tensor) -> Tensor:
        for t in self.transforms:
            Y = t.forward(Y)
        return Y

    def untransform(self, Y: Tensor) -> Tensor:
        for t in reversed(self.transforms):
            Y = t.untransform(Y)
        return Y

    def untransform_log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        total = None
        for t in reversed(self.transforms):  # the chain rule: each step's at its own input
            step = t.untransform_log_abs_det_jacobian(Y)
            total = step if total is None else total + step
            Y = t.untransform(Y)
        return total

    def untransform_moments(self, loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
        mean, variance = self.transforms[-1].untransform_moments(loc, scale)
        for t in reversed(self.transforms[:-1]):
            mean, variance = t.untransform_mean_variance(mean, variance)
        return mean, variance

    def untransform_mean_variance(self, mean: Tensor, variance: Tensor) -> tuple[Tensor, Tensor]:
        for t in reversed(self.transforms):
            mean, variance = t.untransform_mean_variance(mean, variance)
        return mean, variance

    def describe(self) -> str:
        return " then ".join(t.describe() for t in self.transforms)

    def __eq__(self, other: object) -> bool:
        return type(other) is Chain and other.transforms == self.transforms

    __hash__ = None  # type: ignore[assignment]  # its members may hold tensors
