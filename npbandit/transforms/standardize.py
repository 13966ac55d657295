"""``Standardize``: outputs centred and scaled by the statistics of observed data.

One definition of the statistics (:func:`standardization`), used by the ``bo`` prior at
training time and by the BoTorch adapter at inference, so a pretrained model always sees
data scaled the way it was trained. It follows BoTorch's ``Standardize``: mean and
unbiased std over the observed points; with a single point, or a std that only measures a
constant's rounding, the std is 1 (:func:`spread`).

Where BoTorch counts any std below ``1e-8`` as zero, here the threshold is relative to the
values' level (:data:`MIN_STD` times ``|mean|``): a GP fits its output scale to outputs of
order ``1e-9``, but a pretrained network has no output scale to fit, and given them
unscaled it would predict its prior's unit spread around nearly constant data.
"""

from __future__ import annotations

import torch
from torch import Tensor

from npbandit.transforms.base import OutcomeTransform

__all__ = ["Standardize", "standardization", "spread", "MIN_STD"]

#: a std at most this share of the mean's magnitude (or exactly zero) counts as zero: the
#: data are standardised by 1 instead
MIN_STD = 1e-8


def spread(mean: Tensor, std: Tensor) -> Tensor:
    """``std`` where it measures a spread of the values, else 1: a std that is zero, or at
    most :data:`MIN_STD` of ``|mean|`` (the rounding of a constant), counts as none."""
    constant = (std == 0) | (std <= MIN_STD * mean.abs())
    return torch.where(constant, torch.ones_like(std), std)


def standardization(y: Tensor) -> tuple[Tensor, Tensor]:
    """``(mean, std)`` of ``y [..., N, dy]`` over its points, each ``[..., 1, dy]``.

    Raises ``ValueError`` for ``N = 0`` (there is nothing to standardise by)."""
    if y.shape[-2] == 0:
        raise ValueError("y must hold at least one point to standardise by")
    mean = y.mean(dim=-2, keepdim=True)
    if y.shape[-2] == 1:
        return mean, torch.ones_like(mean)
    return mean, spread(mean, y.std(dim=-2, keepdim=True))


class Standardize(OutcomeTransform):
    """``forward(y) = (y - mean) / std``; ``untransform(z) = z · std + mean``.

    Args:
        mean, std: the statistics, broadcastable to the outputs (``[..., 1, dy]`` from
            :meth:`fit`); ``std`` positive. The arithmetic runs in the promoted dtype of
            the outputs and the statistics, as ``(y - mean) / std`` does.

    Affine, so its predictive in data units is Gaussian with exact moments.
    """

    def __init__(self, mean: Tensor, std: Tensor) -> None:
        for name, value in (("mean", mean), ("std", std)):
            if not isinstance(value, Tensor) or not value.is_floating_point():
                raise TypeError(f"{name} must be a floating-point tensor, got {type(value).__name__}")
        if not bool(torch.isfinite(mean).all()) or not bool((torch.isfinite(std) & (std > 0)).all()):
            raise ValueError("mean must be finite and std positive and finite")
        torch.broadcast_shapes(mean.shape, std.shape)
        self.mean, self.std = mean, std

    @classmethod
    def fit(cls, Y: Tensor) -> Standardize:
        """The transform standardising ``Y [..., N, dy]`` by its own statistics
        (:func:`standardization`)."""
        if not isinstance(Y, Tensor) or Y.dim() < 2:
            raise ValueError(f"Y must be a tensor of shape [..., N, dy], got {getattr(Y, 'shape', type(Y).__name__)}")
        return cls(*standardization(Y))

    def forward(self, Y: Tensor) -> Tensor:
        return (Y - self.mean) / self.std

    def untransform(self, Y: Tensor) -> Tensor:
        return Y * self.std + self.mean

    def untransform_log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        log_std = torch.log(self.std)
        return torch.broadcast_to(log_std, torch.broadcast_shapes(Y.shape, log_std.shape)).to(Y.dtype)

    def untransform_moments(self, loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
        return loc * self.std + self.mean, (scale * self.std).pow(2)

    def untransform_mean_variance(self, mean: Tensor, variance: Tensor) -> tuple[Tensor, Tensor]:
        return mean * self.std + self.mean, variance * self.std.pow(2)

    def describe(self) -> str:
        return f"(y - mean) / std over {tuple(self.mean.shape)}"

    def __eq__(self, other: object) -> bool:
        return (type(other) is Standardize and other.mean.shape == self.mean.shape
                and torch.equal(other.mean, self.mean) and torch.equal(other.std, self.std))

    __hash__ = None  # type: ignore[assignment]  # holds tensors
