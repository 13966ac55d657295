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

Values too large for their spread's variance to be held in float64 (an objective's ``1e300``
for a bad point), or spanning a range so small that absolute variance floors downstream would
decide the search, are brought into range first by one exact power of two per output
(:func:`output_scale`), what ``optimize`` and ``NPSampler`` both give their models.
"""

from __future__ import annotations

import math
import sys

import torch
from torch import Tensor

from npbandit.transforms.base import OutcomeTransform

__all__ = ["Standardize", "standardization", "spread", "MIN_STD", "output_scale", "MAX_MAGNITUDE_EXPONENT",
           "MIN_RANGE_EXPONENT"]

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


#: the largest magnitude, as a power of two, of the values a model is given (:func:`output_scale`): values
#: up to ``2 ** 100`` have a variance (their square, times the count) far inside float64's ``1.8e308``,
#: while a spread of values near ``1e300`` has one past it, and the acquisition is NaN
MAX_MAGNITUDE_EXPONENT = 100
#: the smallest range (largest minus smallest value), as a power of two, of the values a model is given
#: unscaled (:func:`output_scale`): about 0.001. A model's predictive variance, in the outputs' units, is a
#: small share of their range's square near the data; below this range it meets the absolute floors
#: downstream (gpytorch raises a float64 variance below 1e-10 to it, BoTorch's analytic acquisitions one
#: below 1e-12), and the search changes with the objective's units (an objective times 1e-5 was searched
#: worse than the same objective unscaled)
MIN_RANGE_EXPONENT = -10
#: the exponent of float64's largest power of two, ``2 ** 1023``: the largest factor :func:`output_scale` gives
_LARGEST_EXPONENT = sys.float_info.max_exp - 1


def output_scale(Y: Tensor) -> Tensor:
    """``[m]``: per output (column) of ``Y [n, m]``, the power of two its values are multiplied
    by before a model sees them: the one that brings the column's largest finite magnitude
    under ``2 ** MAX_MAGNITUDE_EXPONENT``; else, for a column whose finite values span a range
    below ``2 ** MIN_RANGE_EXPONENT`` (and above 0), the one that brings that range into
    ``[1, 2)`` (at most ``2 ** 1023``, float64's largest, for a range of subnormal values that
    even it leaves below 1); else exactly 1 (also for a column with
    no finite value or a constant one; non-finite entries, such as a missing value held as
    NaN, are passed over). The column's smallest and largest finite values decide it, so a
    caller that keeps only those two per output gets the factor of all its values.

    A power of two scales exactly (only the exponent changes, short of underflow far below the
    spread), standardisation by the values' own mean and std is unchanged by it, and so is every
    comparison between them: a model that standardises what it is given makes the same
    predictions in standardised units, and an acquisition the same choice, where no absolute
    floor downstream (:data:`MIN_RANGE_EXPONENT`) would have changed them. Values that need
    no scaling are multiplied by 1, so a search whose values stay between the thresholds
    is the search it was without this.

    Raises:
        ValueError: ``Y`` is not a 2-D floating-point tensor.
    """
    if not isinstance(Y, Tensor) or Y.dim() != 2 or not Y.is_floating_point():
        raise ValueError(f"Y must be a 2-D floating-point tensor [n, m], got "
                         f"{getattr(Y, 'shape', type(Y).__name__)}")
    Y = Y.to(torch.float64)
    finite = torch.isfinite(Y)
    inf = torch.tensor(math.inf, dtype=torch.float64)
    low = torch.where(finite, Y, inf).amin(dim=0).tolist() if Y.shape[0] else [math.inf] * Y.shape[1]
    high = torch.where(finite, Y, -inf).amax(dim=0).tolist() if Y.shape[0] else [-math.inf] * Y.shape[1]
    scales = []
    for lo, hi in zip(low, high):
        if lo > hi:  # no finite value
            scales.append(1.0)
            continue
        largest, extent = max(abs(lo), abs(hi)), hi - lo  # extent inf only where largest is past the bound
        if largest >= 2.0 ** MAX_MAGNITUDE_EXPONENT:  # largest times this: under 2 ** 100
            scales.append(math.ldexp(1.0, MAX_MAGNITUDE_EXPONENT - math.frexp(largest)[1]))
        elif 0.0 < extent < 2.0 ** MIN_RANGE_EXPONENT:
            # extent times this: in [1, 2); the magnitude then stays under 2 ** 54, since two float64
            # values differ by at least the largest's last place, 2 ** -52 of it. A range below 2 ** -1023
            # (subnormal values) would need a factor past float64's largest power of two: it gets that one
            scales.append(math.ldexp(1.0, min(1 - math.frexp(extent)[1], _LARGEST_EXPONENT)))
        else:
            scales.append(1.0)
    return torch.tensor(scales, dtype=torch.float64)


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
