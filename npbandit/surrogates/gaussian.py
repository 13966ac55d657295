"""The Gaussian arithmetic the surrogates' predictives share.

- :func:`target_log_prob` -- the log-density of targets under a factorised Gaussian
  predictive, or its expectation over noisy targets ``N(yt, yt_var)`` (the training loss
  a prior's predictive targets give);
- :func:`hold_out_noise` -- the latent part of a low-rank-plus-diagonal Gaussian joint of
  noisy observations, the noise taken out (joint draws of ``f`` rather than of ``y``:
  :class:`~npbandit.surrogates.cmanp_and.CMANPAND` and the BoTorch adapter's joint posterior);
- :data:`MIN_LATENT_VAR` -- the smallest latent variance either side reports.

Shapes in each function's docstring; nothing here depends on a network.
"""

from __future__ import annotations

import torch
from torch import Tensor
from torch.distributions import Normal

__all__ = ["target_log_prob", "hold_out_noise", "MIN_LATENT_VAR", "DIAGONAL_SHARE"]

#: the smallest latent variance :func:`hold_out_noise` leaves (standardised units)
MIN_LATENT_VAR = 1e-6
#: the share of each latent variance :func:`hold_out_noise` keeps on the diagonal at least
DIAGONAL_SHARE = 1e-3


def target_log_prob(dist: Normal, yt: Tensor, yt_var: Tensor | None = None) -> Tensor:
    """``log q(yt)`` per target and output, or, given ``yt_var``, its expectation over
    ``y ~ N(yt, yt_var)``.

    For ``q = N(mu, s^2)``: ``E[log q(y)] = log q(yt) - yt_var / (2 s^2)``, which is
    ``-log s - (yt_var + (yt - mu)^2) / (2 s^2) - log(2 pi) / 2``. Its expectation over
    the task distribution equals that of the sampled log-likelihood (same optimum),
    with the sampling noise of ``y`` integrated out.
    """
    log_prob = dist.log_prob(yt)
    if yt_var is None:
        return log_prob
    if yt_var.shape != yt.shape:
        raise ValueError(f"yt_var must have the shape of yt {tuple(yt.shape)}, got {tuple(yt_var.shape)}")
    return log_prob - yt_var / (2 * dist.scale.pow(2))


def hold_out_noise(cov_factor: Tensor, cov_diag: Tensor, noise: Tensor,
                   min_var: float = MIN_LATENT_VAR) -> tuple[Tensor, Tensor]:
    """The latent part of a low-rank-plus-diagonal Gaussian joint of noisy observations.

    Observations ``y = f + eps`` with independent ``eps ~ N(0, noise)`` and
    ``Cov(y) = W W^T + diag(d)`` (``cov_factor`` ``W [..., n, r]``, ``cov_diag`` ``d [..., n]``,
    ``noise`` broadcastable to ``d``). Returns ``(W', d')`` with
    ``Cov(f) = W' W'^T + diag(d')``, where for each variable ``i``

    - ``v_i = max(d_i + |w_i|^2 - noise_i, min_var)`` -- the latent variance, exactly
      what the marginal path of :class:`~npbandit.models.NPModel` reports;
    - ``w'_i = c_i w_i`` with ``c_i = min(1, sqrt((1 - a) v_i) / |w_i|)``, ``a`` =
      ``DIAGONAL_SHARE``;
    - ``d'_i = v_i - c_i^2 |w_i|^2``, at least ``a v_i`` (> 0).

    Wherever ``d_i - noise_i >= a v_i`` this is ``Cov(y) - noise I`` itself (``c_i = 1``);
    where the diagonal cannot carry the noise, variable ``i``'s factors shrink until its
    variance is ``v_i``. Either way the result is positive definite and its diagonal is
    ``v``, so a joint posterior's marginals are the marginal posterior's.
    """
    sq_norm = cov_factor.pow(2).sum(-1)
    var = (cov_diag + sq_norm - noise).clamp_min(min_var)
    room = (1 - DIAGONAL_SHARE) * var
    keep = sq_norm <= room
    # divides only where the factors exceed the room (never by ~0: no inf/NaN in a gradient)
    shrink = torch.where(keep, torch.ones_like(var), room / torch.where(keep, torch.ones_like(sq_norm), sq_norm))
    return cov_factor * shrink.sqrt().unsqueeze(-1), var - shrink * sq_norm
