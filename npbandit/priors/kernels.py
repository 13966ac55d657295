"""Stationary kernels with per-task (ARD) lengthscales, and exact GP sampling."""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["KERNELS", "kernel_matrix", "sample_gp"]

KERNELS = ("rbf", "matern52", "matern32")


def _scaled_distance(x1: Tensor, x2: Tensor, lengthscale: Tensor) -> Tensor:
    """``||(x1 - x2) / l||``: ``x1 [B, N, d]``, ``x2 [B, M, d]``, ``lengthscale [B, d]`` -> ``[B, N, M]``."""
    a = x1 / lengthscale[:, None, :]
    b = x2 / lengthscale[:, None, :]
    sq = (a.pow(2).sum(-1)[:, :, None] + b.pow(2).sum(-1)[:, None, :] - 2 * a @ b.transpose(-2, -1)).clamp_min(0)
    return sq.sqrt()


def kernel_matrix(kernel: str, x1: Tensor, x2: Tensor, lengthscale: Tensor, outputscale: Tensor) -> Tensor:
    """``k(x1, x2)`` for a batch of tasks; ``outputscale [B]`` is the signal variance."""
    r = _scaled_distance(x1, x2, lengthscale)
    if kernel == "rbf":
        k = torch.exp(-0.5 * r.pow(2))
    elif kernel == "matern52":
        s = math.sqrt(5) * r
        k = (1 + s + s.pow(2) / 3) * torch.exp(-s)
    elif kernel == "matern32":
        s = math.sqrt(3) * r
        k = (1 + s) * torch.exp(-s)
    else:
        raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")
    return outputscale[:, None, None] * k


def sample_gp(kernels: list[str], x: Tensor, lengthscale: Tensor, outputscale: Tensor, noise_std: Tensor,
              generator: torch.Generator) -> Tensor:
    """One draw of ``f(x) + eps`` per task: ``x [B, N, d]`` (float64) -> ``[B, N, 1]``.

    ``kernels[b]`` names task ``b``'s kernel; ``noise_std [B]`` is the observation
    noise added on the diagonal. Sampled exactly through a float64 Cholesky factor.
    """
    n = x.shape[1]
    cov = torch.stack([
        kernel_matrix(kind, x[b:b + 1], x[b:b + 1], lengthscale[b:b + 1], outputscale[b:b + 1])[0]
        for b, kind in enumerate(kernels)
    ])
    cov = cov + (noise_std.pow(2)[:, None, None] + 1e-8) * torch.eye(n, dtype=x.dtype)
    chol = torch.linalg.cholesky(cov)
    z = torch.randn(x.shape[0], n, 1, generator=generator, dtype=x.dtype)
    return chol @ z
