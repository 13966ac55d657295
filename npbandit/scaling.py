"""How observed outputs are standardised before an NP sees them.

One definition, used by the ``bo`` prior at training time and by the BoTorch adapter
at inference, so a pretrained model always sees data scaled the way it was trained.
It follows BoTorch's ``Standardize``: mean and unbiased std over the observed
points; with a single point, or a std below ``1e-8``, the std is 1.
"""

from __future__ import annotations

import torch
from torch import Tensor

__all__ = ["standardization", "MIN_STD"]

MIN_STD = 1e-8


def standardization(y: Tensor) -> tuple[Tensor, Tensor]:
    """``(mean, std)`` of ``y [..., N, dy]`` over its points, each ``[..., 1, dy]``.

    Raises ``ValueError`` for ``N = 0`` (there is nothing to standardise by)."""
    if y.shape[-2] == 0:
        raise ValueError("y must hold at least one point to standardise by")
    mean = y.mean(dim=-2, keepdim=True)
    if y.shape[-2] == 1:
        return mean, torch.ones_like(mean)
    std = y.std(dim=-2, keepdim=True)
    return mean, torch.where(std >= MIN_STD, std, torch.ones_like(std))
