"""``YeoJohnson``: outputs standardised, then power-transformed towards a Gaussian.

The observations are standardised (mean and *population* std, ``ddof = 0``) and passed
through the Yeo-Johnson power transform with the exponent ``lambda`` that makes them most
Gaussian (maximum likelihood, ``scipy.stats.yeojohnson_normmax``), as PFNs4BO does before
its surrogate sees them. Strictly increasing, so the best observation stays the best; it
spreads out the values near the top when a few very bad ones dominate the spread, where a
surrogate trained on Gaussian-process draws expects them. A constant output column maps
to zeros. The arithmetic is scipy's, in float64 (numpy), returned in the input's dtype.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch
from torch import Tensor

from npbandit.transforms.base import OutcomeTransform

__all__ = ["YeoJohnson", "yeo_johnson_warp"]

_EPS = float(np.finfo(np.float64).eps)  # scipy's threshold for the lambda = 0 and lambda = 2 branches


def _columns(Y: Tensor, m: int | None = None) -> np.ndarray:
    """``Y [..., dy]`` as a float64 array ``[rows, dy]`` (checks ``dy`` against ``m``)."""
    if not isinstance(Y, Tensor) or not Y.is_floating_point() or Y.dim() < 1:
        raise TypeError(f"Y must be a floating-point tensor [..., dy], got {getattr(Y, 'dtype', type(Y).__name__)}")
    if m is not None and Y.shape[-1] != m:
        raise ValueError(f"Y must have {m} output columns (last dimension), got shape {tuple(Y.shape)}")
    return Y.detach().to("cpu", torch.float64).reshape(-1, Y.shape[-1]).numpy()


def _branches(z: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """``z >= 0``, and ``z`` with the other branch's entries set to 0 for each branch (no
    NaN from the branch ``torch.where`` discards, in values or gradients)."""
    up = z >= 0
    zero = torch.zeros_like(z)
    return up, torch.where(up, z, zero), torch.where(up, zero, z)


class YeoJohnson(OutcomeTransform):
    """Per output column ``j``: ``forward(y) = YJ_{lambda_j}((y - mean_j) / std_j)``,
    or ``0`` for a constant column (``std_j = 0``).

    Args:
        mean, std, lmbda: one float per output column (:meth:`fit` finds them).

    No closed-form predictive moments (``untransform_moments`` raises); the predictive in
    data units (``untransform_predictive``) is exact.
    """

    def __init__(self, mean: Any, std: Any, lmbda: Any) -> None:
        self.mean, self.std, self.lmbda = (tuple(float(v) for v in vs) for vs in (mean, std, lmbda))
        if not len(self.mean) == len(self.std) == len(self.lmbda) >= 1:
            raise ValueError("mean, std and lmbda must hold one value per output column")
        if not all(math.isfinite(v) for v in self.mean + self.std + self.lmbda) or min(self.std) < 0:
            raise ValueError("mean, std and lmbda must be finite and std non-negative")

    @classmethod
    def fit(cls, Y: Tensor) -> YeoJohnson:
        """The transform fitted to ``Y [n, dy]`` (finite), column by column."""
        from scipy.stats import yeojohnson_normmax

        if isinstance(Y, Tensor) and Y.dim() != 2:
            raise ValueError(f"Y must have shape [n, dy], got {tuple(Y.shape)}")
        data = _columns(Y)
        if data.shape[0] == 0 or not np.isfinite(data).all():
            raise ValueError(f"Y must hold at least one point and only finite values, got shape {tuple(Y.shape)}")
        mean, std, lmbda = [], [], []
        for j in range(data.shape[1]):
            y = np.ascontiguousarray(data[:, j])
            s = y.std()
            if not s > 0:
                mean.append(y.mean()), std.append(0.0), lmbda.append(1.0)
                continue
            mean.append(y.mean()), std.append(s), lmbda.append(yeojohnson_normmax((y - y.mean()) / s))
        return cls(mean, std, lmbda)

    def forward(self, Y: Tensor) -> Tensor:
        from scipy.stats import yeojohnson

        data = _columns(Y, len(self.mean))
        out = np.zeros_like(data)
        for j, (mean, std, lmbda) in enumerate(zip(self.mean, self.std, self.lmbda)):
            if std > 0:
                out[:, j] = yeojohnson((np.ascontiguousarray(data[:, j]) - mean) / std, lmbda)
        return torch.as_tensor(out.reshape(Y.shape), dtype=Y.dtype, device=Y.device)

    def _per_column(self, Y: Tensor, step) -> Tensor:
        if Y.shape[-1] != len(self.mean):
            raise ValueError(f"Y must have {len(self.mean)} output columns (last dimension), "
                             f"got shape {tuple(Y.shape)}")
        z = Y.to(torch.float64)
        cols = [step(z[..., j], *params) for j, params in enumerate(zip(self.mean, self.std, self.lmbda))]
        return torch.stack(cols, dim=-1).to(Y.dtype)

    def untransform(self, Y: Tensor) -> Tensor:
        def inverse(z: Tensor, mean: float, std: float, lam: float) -> Tensor:
            if not std > 0:
                return torch.full_like(z, mean)
            up, zp, zn = _branches(z)
            pos = torch.expm1(torch.log1p(lam * zp) / lam) if abs(lam) >= _EPS else torch.expm1(zp)
            neg = (-torch.expm1(torch.log1p(-(2 - lam) * zn) / (2 - lam)) if abs(lam - 2) > _EPS
                   else -torch.expm1(-zn))
            return torch.where(up, pos, neg) * std + mean

        return self._per_column(Y, inverse)

    def untransform_log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        def log_slope(z: Tensor, mean: float, std: float, lam: float) -> Tensor:
            if not std > 0:
                return torch.full_like(z, -math.inf)  # every value maps to the constant
            up, zp, zn = _branches(z)
            pos = (1 / lam - 1) * torch.log1p(lam * zp) if abs(lam) >= _EPS else zp
            neg = (1 / (2 - lam) - 1) * torch.log1p(-(2 - lam) * zn) if abs(lam - 2) > _EPS else -zn
            return torch.where(up, pos, neg) + math.log(std)

        return self._per_column(Y, log_slope)

    def describe(self) -> str:
        return "Yeo-Johnson(standardised y, lambda=" + ", ".join(f"{v:.3g}" for v in self.lmbda) + ")"

    def __eq__(self, other: object) -> bool:
        return type(other) is YeoJohnson and (other.mean, other.std, other.lmbda) == (self.mean, self.std, self.lmbda)

    def __hash__(self) -> int:
        return hash((YeoJohnson, self.mean, self.std, self.lmbda))


def yeo_johnson_warp(y: np.ndarray) -> np.ndarray:
    """``y [n]`` through :class:`YeoJohnson` fitted to it (standardised, then power-transformed
    towards a Gaussian; a constant ``y`` maps to zeros): the transform's array form.
    ``BOPolicy(output_warp="yeo-johnson")`` uses the transform itself."""
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or not np.isfinite(y).all():
        raise ValueError(f"y must be a 1-D array of finite values, got shape {y.shape}")
    Y = torch.from_numpy(y).unsqueeze(-1)
    return YeoJohnson.fit(Y).forward(Y).squeeze(-1).numpy()
