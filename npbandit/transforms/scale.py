"""``Scale``: outputs divided by a fixed positive constant, ``y / c``.

The identity reward encoding of the early wheel checkpoints (``y / 50``), and the
divisor :class:`~npbandit.transforms.bilog.Bilog` applies before its symlog. Affine, so
its predictive in data units is Gaussian with exact moments ``c m`` and ``(c s)²``.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import Tensor

from npbandit.transforms.base import OutcomeTransform

__all__ = ["Scale", "check_scale"]


def check_scale(name: str, value: Any) -> float:
    """``value`` as a positive finite float; ``ValueError`` naming ``name`` otherwise."""
    if isinstance(value, bool) or not (isinstance(value, (int, float)) and math.isfinite(value) and value > 0):
        raise ValueError(f"{name} must be a positive finite number, got {value!r}")
    return float(value)


class Scale(OutcomeTransform):
    """``forward(y) = y / scale``; ``untransform(z) = z · scale``.

    Args:
        scale: a positive finite divisor.
    """

    def __init__(self, scale: float = 1.0) -> None:
        self.scale = check_scale("scale", scale)

    def forward(self, Y: Tensor) -> Tensor:
        return Y / self.scale

    def untransform(self, Y: Tensor) -> Tensor:
        return Y * self.scale

    def untransform_log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        return torch.full_like(Y, math.log(self.scale))

    def untransform_moments(self, loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
        c = self.scale
        return c * loc, (c * scale).pow(2)

    def untransform_mean_variance(self, mean: Tensor, variance: Tensor) -> tuple[Tensor, Tensor]:
        c = self.scale
        return c * mean, c * c * variance

    def describe(self) -> str:
        return f"y / {self.scale:g}"

    def __eq__(self, other: object) -> bool:
        return type(other) is Scale and other.scale == self.scale

    def __hash__(self) -> int:
        return hash((Scale, self.scale))
