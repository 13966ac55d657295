"""Stationary kernels with per-task (ARD) lengthscales, and exact GP sampling."""

from __future__ import annotations

import math

import torch
from torch import Tensor

__all__ = ["KERNELS", "kernel_matrix", "mixed_kernel_matrix", "sample_gp", "sample_gp_conditional"]

KERNELS = ("rbf", "matern52", "matern32")


def _scaled_distance(x1: Tensor, x2: Tensor, lengthscale: Tensor) -> Tensor:
    """``||(x1 - x2) / l||``: ``x1 [B, N, d]``, ``x2 [B, M, d]``, ``lengthscale [B, d]`` -> ``[B, N, M]``."""
    a = x1 / lengthscale[:, None, :]
    b = x2 / lengthscale[:, None, :]
    sq = (a.pow(2).sum(-1)[:, :, None] + b.pow(2).sum(-1)[:, None, :] - 2 * a @ b.transpose(-2, -1)).clamp_min(0)
    if not (torch.is_grad_enabled() and (x1.requires_grad or x2.requires_grad or lengthscale.requires_grad)):
        return sq.sqrt()  # the same values as below, at a third of the cost (a prior's draws)
    # sqrt's gradient is infinite at 0 (a point on top of another): there the kernels' is 0,
    # so take the root only where it is positive (a model differentiated in x stays finite)
    positive = sq > 0
    return torch.where(positive, torch.where(positive, sq, torch.ones_like(sq)).sqrt(), torch.zeros_like(sq))


def kernel_matrix(kernel: str, x1: Tensor, x2: Tensor, lengthscale: Tensor, outputscale: Tensor) -> Tensor:
    """``k(x1, x2)`` for a batch of tasks sharing one kernel.

    Args:
        kernel: one of :data:`KERNELS`.
        x1: ``[B, N, d]``; x2: ``[B, M, d]``.
        lengthscale: ``[B, d]`` per-task ARD lengthscales.
        outputscale: ``[B]`` the signal variance.

    Returns:
        ``[B, N, M]``.

    Raises:
        ValueError: an unknown ``kernel``.
    """
    k = _stationary(kernel, _scaled_distance(x1, x2, lengthscale))
    return outputscale[:, None, None] * k


def _stationary(kernel: str, r: Tensor) -> Tensor:
    if kernel == "rbf":
        return torch.exp(-0.5 * r.pow(2))
    if kernel == "matern52":
        s = math.sqrt(5) * r
        return (1 + s + s.pow(2) / 3) * torch.exp(-s)
    if kernel == "matern32":
        s = math.sqrt(3) * r
        return (1 + s) * torch.exp(-s)
    raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")


def mixed_kernel_matrix(kernels: list[str] | tuple[str, ...], x1: Tensor, x2: Tensor, lengthscale: Tensor,
                        outputscale: Tensor) -> Tensor:
    """:func:`kernel_matrix` for a batch whose tasks use different kernels: ``kernels[b]``
    names task ``b``'s. One distance matrix for the whole batch, then each kernel on the
    tasks that use it: ``[B, N, M]``."""
    if len(kernels) != x1.shape[0]:
        raise ValueError(f"kernels must name one kernel per task ({x1.shape[0]}), got {len(kernels)}")
    r = _scaled_distance(x1, x2, lengthscale)
    cov = torch.empty_like(r)
    for kind in set(kernels):
        idx = torch.tensor([b for b, k in enumerate(kernels) if k == kind], device=r.device)
        cov[idx] = _stationary(kind, r[idx])
    return outputscale[:, None, None] * cov


def _joint_cholesky(kernels: list[str], x: Tensor, lengthscale: Tensor, outputscale: Tensor,
                    noise_std: Tensor) -> Tensor:
    cov = mixed_kernel_matrix(kernels, x, x, lengthscale, outputscale)
    cov = cov + (noise_std.pow(2)[:, None, None] + 1e-8) * torch.eye(x.shape[1], dtype=x.dtype, device=x.device)
    return torch.linalg.cholesky(cov)


def sample_gp(kernels: list[str], x: Tensor, lengthscale: Tensor, outputscale: Tensor, noise_std: Tensor,
              generator: torch.Generator) -> Tensor:
    """One draw of ``f(x) + eps`` per task: ``x [B, N, d]`` (float64) -> ``[B, N, 1]``.

    ``kernels[b]`` names task ``b``'s kernel; ``noise_std [B]`` is the observation
    noise added on the diagonal. Sampled exactly through a float64 Cholesky factor.
    """
    return sample_gp_conditional(kernels, x, lengthscale, outputscale, noise_std, generator, x.shape[1])[0]


def sample_gp_conditional(kernels: list[str], x: Tensor, lengthscale: Tensor, outputscale: Tensor,
                          noise_std: Tensor, generator: torch.Generator, n_condition: int,
                          device: torch.device | None = None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """A draw as :func:`sample_gp`, plus the predictive distribution of the points after
    the first ``n_condition`` given those first points (and the task's hyperparameters).

    Returns ``y [B, N, 1]``, ``mean [B, M, 1]``, ``var [B, M, 1]`` and ``factor [B, M, M]``
    (``M = N - n_condition``; observation noise included): the later points are jointly
    ``N(mean, factor factor^T)`` given the first, ``var`` the diagonal of that covariance.
    All come from the joint Cholesky factor the draw uses: with ``y = L z`` and
    ``L = [[L11, 0], [L21, L22]]``, ``y2 | y1`` has mean ``L21 z1`` and covariance
    ``L22 L22^T``, so they cost nothing extra. The draw is the same as :func:`sample_gp`'s
    for the same generator state.

    ``device`` (default: the inputs'): where the kernel matrix, its Cholesky factor and the
    outputs live; the standard normals come from ``generator`` on its own device (the CPU's for
    the priors), so the draw is the same on every device up to rounding.
    """
    if not 0 <= n_condition <= x.shape[1]:
        raise ValueError(f"n_condition must be in 0..{x.shape[1]}, got {n_condition}")
    z = torch.randn(x.shape[0], x.shape[1], 1, generator=generator, dtype=x.dtype, device=generator.device)
    x, lengthscale, outputscale, noise_std, z = (
        t.to(x.device if device is None else device) for t in (x, lengthscale, outputscale, noise_std, z))
    chol = _joint_cholesky(kernels, x, lengthscale, outputscale, noise_std)
    y = chol @ z
    k = n_condition
    mean = chol[:, k:, :k] @ z[:, :k]
    factor = chol[:, k:, k:]
    return y, mean, factor.pow(2).sum(-1, keepdim=True), factor
