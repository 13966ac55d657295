"""``Bilog``: the symmetric log of the scaled outputs, ``symlog(y / c)``.

``symlog(y) = sign(y) log(1 + |y|)`` compresses large magnitudes and leaves values near
zero almost as they are (slope 1 at 0), so outputs of very different sizes (the wheel
bandit's rewards of 1 and 50) stay apart in model units without the large ones dominating
a Gaussian loss. Its inverse is ``c · symexp(z)``, ``symexp(z) = sign(z)(e^|z| - 1)``; the
mean and variance of ``symexp(Z)`` for a Gaussian ``Z`` are closed-form sums of truncated
log-normal moments (:func:`symexp_moments`).
"""

from __future__ import annotations

import math

import torch
from torch import Tensor

from npbandit.transforms.base import OutcomeTransform
from npbandit.transforms.scale import check_scale

__all__ = ["Bilog", "symexp_moments"]


def symexp_moments(loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``symexp(Z)``, ``Z ~ N(loc, scale²)`` (elementwise, any shape).

    With ``A_k = E[e^{kZ}; Z > 0] = exp(k m + k² s²/2) Φ((m + k s²)/s)`` and
    ``B_k = E[e^{-kZ}; Z < 0] = exp(-k m + k² s²/2) Φ((k s² - m)/s)``:
    ``E[symexp Z] = A_1 - B_1 - Φ(m/s) + Φ(-m/s)`` and
    ``E[symexp(Z)²] = A_2 + B_2 - 2 (A_1 + B_1) + 1``. Computed in float64 (the variance
    is a difference of two large numbers when ``s`` is small) and returned in ``loc``'s
    dtype (``scale > 0``); a moment too large for float64 or for that dtype is ``inf``
    (float64: variance beyond ``|m| ≈ 350``; float32: the mean beyond ``|m| ≈ 88``).
    """
    m, s = loc.double(), scale.double()

    def truncated(k: int, sign: int) -> Tensor:  # E[e^{sign k Z}; sign Z > 0], via log Φ: no inf * 0
        return torch.exp(sign * k * m + k * k * s * s / 2 + torch.special.log_ndtr((sign * m + k * s * s) / s))

    a1, b1, a2, b2 = truncated(1, 1), truncated(1, -1), truncated(2, 1), truncated(2, -1)
    mean = a1 - b1 - torch.special.ndtr(m / s) + torch.special.ndtr(-m / s)
    second = a2 + b2 - 2 * (a1 + b1) + 1  # inf - inf = NaN once A_2 or B_2 overflows: then it is inf
    overflow = torch.isinf(a2) | torch.isinf(b2)
    variance = torch.where(overflow, torch.inf, (second - mean * mean).clamp_min(0))
    return mean.to(loc.dtype), variance.to(loc.dtype)


class Bilog(OutcomeTransform):
    """``forward(y) = symlog(y / scale)``; ``untransform(z) = scale · symexp(z)``.

    Args:
        scale: a positive finite divisor applied before the symlog (``1.0``: none).

    Exact predictive moments (:func:`symexp_moments`); the arithmetic runs in the
    input's dtype (the moments: in float64, returned in the input's dtype).
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = check_scale("scale", scale)

    def forward(self, Y: Tensor) -> Tensor:
        y = Y / self.scale
        return torch.sign(y) * torch.log1p(y.abs())

    def untransform(self, Y: Tensor) -> Tensor:
        return torch.sign(Y) * torch.expm1(Y.abs()) * self.scale

    def untransform_log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        # d/dz [c symexp(z)] = c e^|z|
        return Y.abs() + math.log(self.scale)

    def untransform_moments(self, loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
        mean, variance = symexp_moments(loc, scale)
        c = self.scale
        return c * mean, c * c * variance

    def describe(self) -> str:
        return f"symlog(y / {self.scale:g})"

    def __eq__(self, other: object) -> bool:
        return type(other) is Bilog and other.scale == self.scale

    def __hash__(self) -> int:
        return hash((Bilog, self.scale))
