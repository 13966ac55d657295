"""Columns of the unit cube held at given values while a proposal searches the others: one trial
with some parameters set by the caller (``Optimizer.ask(fixed=...)``; Ax's ``fixed_features``,
Optuna's ``PartialFixedSampler``).

The proposal step keeps every box, model and rule it has and maximises the acquisition over the
free columns only: the acquisition is judged at each candidate with the pinned columns set
(:class:`PinnedAcquisition`, so a move along a pinned column changes nothing and the optimiser
gains nothing by it), every candidate it returns is set likewise before the repeat check, and the
point it hands out is set exactly. An optimiser therefore needs no notion of fixed columns (a box
whose lower and upper corners meet, which the optimisers refuse, is not needed), and qLogNEI's
joint optimisation takes them as ``optimize_acqf``'s own ``fixed_features``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from botorch.acquisition import AcquisitionFunction

__all__ = ["Pinned", "PinnedAcquisition", "pin"]


@dataclass(frozen=True)
class Pinned:
    """Unit-cube columns and the values they are held at.

    Attributes:
        columns: ``[f]`` (long) the columns, distinct, each in ``[0, d)``.
        values: ``[f]`` (float64) their values, in the frame of the cube searched (the whole
            unit cube: ``[0, 1]``; a trust region's frame may put them outside it, see
            :meth:`in_frame`).
    """

    columns: torch.Tensor
    values: torch.Tensor

    def __post_init__(self) -> None:
        columns, values = torch.as_tensor(self.columns), torch.as_tensor(self.values, dtype=torch.float64)
        if columns.ndim != 1 or values.shape != columns.shape or columns.dtype not in (torch.int64, torch.int32):
            raise ValueError(f"Pinned: columns [f] (ints) and values [f] must match, got {tuple(columns.shape)} "
                             f"{columns.dtype} and {tuple(values.shape)}")
        if len(torch.unique(columns)) != len(columns) or (len(columns) and int(columns.min()) < 0):
            raise ValueError(f"Pinned: columns must be distinct and >= 0, got {columns.tolist()}")
        if not torch.isfinite(values).all():
            raise ValueError(f"Pinned: values must be finite, got {values.tolist()}")
        object.__setattr__(self, "columns", columns.to(torch.int64))
        object.__setattr__(self, "values", values)

    def apply(self, points: Any) -> Any:
        """``points`` ``[..., d]`` (a tensor or a numpy array, which is copied) with the pinned columns set."""
        if isinstance(points, np.ndarray):
            out = np.array(points, dtype=np.float64)
            out[..., self.columns.numpy()] = self.values.numpy()
            return out
        out = points.clone()
        out[..., self.columns.to(out.device)] = self.values.to(out)
        return out

    def in_frame(self, lower: torch.Tensor, span: torch.Tensor, bounds: torch.Tensor | None = None) -> Pinned:
        """The same columns in the frame whose unit cube is the box ``lower + [0, 1] * span``
        (``[d]`` each); with ``bounds`` ``[2, d]`` (a box of that frame that holds the values),
        moved onto its faces where the mapping's rounding put them outside."""
        values = (self.values - lower[self.columns]) / span[self.columns]
        if bounds is not None:
            values = values.clamp(bounds[0, self.columns], bounds[1, self.columns])
        return Pinned(self.columns, values)

    def reach(self, lower: torch.Tensor, upper: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The box ``lower``, ``upper`` (``[d]`` each) stretched on the pinned columns to hold their values."""
        lower, upper = lower.clone(), upper.clone()
        lower[self.columns] = torch.minimum(lower[self.columns], self.values.to(lower))
        upper[self.columns] = torch.maximum(upper[self.columns], self.values.to(upper))
        return lower, upper

    def features(self) -> dict[int, float]:
        """``optimize_acqf``'s ``fixed_features``: ``{column: value}``."""
        return {int(c): float(v) for c, v in zip(self.columns, self.values, strict=True)}

    def wrap(self, acq: Any) -> PinnedAcquisition:
        """``acq`` judged with these columns set (:class:`PinnedAcquisition`)."""
        return PinnedAcquisition(acq, self)


def pin(pinned: Pinned | None, points: Any) -> Any:
    """``points`` with ``pinned``'s columns set, as they are without any."""
    return points if pinned is None else pinned.apply(points)


class PinnedAcquisition(AcquisitionFunction):
    """A BoTorch acquisition (``[b, q, d]`` -> ``[b]``) judged at its inputs with ``pinned``'s
    columns set: a function of the free columns alone, whose gradient along a pinned column is 0."""

    def __init__(self, base: Any, pinned: Pinned) -> None:
        super().__init__(base.model)
        self.base = base
        self.pinned = pinned

    def forward(self, X: torch.Tensor) -> torch.Tensor:
        return self.base(self.pinned.apply(X))
