"""The Bayes posterior predictive of a GP prior with unknown hyperparameters.

What a model that has learnt a GP task prior perfectly would predict: the mixture, over
the prior's hyperparameters (kernel, lengthscales, noise) weighted by how well each
explains the context, of the GP predictives. A reference for the pretrained
surrogates: it sees exactly what
``NPModel`` gives a network -- the context's inputs, and its outputs only up to an
unknown offset and scale (``NPModel`` standardises them) -- so whatever it scores is
attainable from that information, unlike the exact GP that is told the hyperparameters.

Per hyperparameter set ``theta`` the outputs are ``y = m 1 + s g`` with ``g`` the GP of
``theta`` (unit signal variance plus its noise: covariance ``C``) and the offset ``m``
and scale ``s`` integrated out under ``p(m, s) ~ 1 / s``. That prior makes everything
invariant to an affine map of the outputs, as a context-standardised predictor is; the
results are the classical ones of Bayesian kriging with a constant mean:

- the context's likelihood (its *shape*, up to a constant in ``n``):
  ``-1/2 log|C| - 1/2 log(1' C^-1 1) - (n - 1)/2 log Q``, with
  ``Q = y' C^-1 y - (1' C^-1 y)^2 / 1' C^-1 1`` the generalised-least-squares residual;
- the predictive at ``x``: Student-t with ``n - 1`` degrees of freedom, location
  ``mu + k' C^-1 (y - mu 1)`` (``mu = 1' C^-1 y / 1' C^-1 1``) and squared scale
  ``Q / (n - 1) * (c - k' C^-1 k + (1 - 1' C^-1 k)^2 / 1' C^-1 1)``, ``c`` the prior
  variance at ``x`` (with the noise for an observation, without for the latent value).

The hyperparameters are integrated by importance sampling from the prior: weights are
the likelihoods above. With few effective samples the mixture is close to the best
drawn GP -- still a predictor built from the context alone, so its scores fall short of
the Bayes optimum rather than exceed it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

import torch
from torch import Tensor

from npbandit.priors.kernels import mixed_kernel_matrix

__all__ = ["BayesPosterior"]

#: components whose log weight is this far below the largest are dropped (relative weight
#: below 1e-26: nothing any score or moment can show)
_PRUNE_NATS = 60.0

#: the fields with one entry per component (besides ``kernels``)
_PER_COMPONENT = ("lengthscale", "noise", "chol", "whitened_one", "whitened_resid", "u", "mu", "q", "log_weight")


@dataclass(frozen=True)
class BayesPosterior:
    """A weighted set of GP posteriors (one per kept hyperparameter draw) given a context.

    Build it with :meth:`fit` (or ``BOPrior.bayes_posterior``). ``K`` kept components,
    ``n`` context points.

    Attributes:
        xc: ``[n, d]`` context inputs (float64).
        kernels: each component's kernel name (``K``).
        lengthscale: ``[K, d]``; ``noise``: ``[K]`` observation noise variances.
        chol: ``[K, n, n]`` Cholesky factors of the context covariances ``C``.
        whitened_one: ``[K, n]`` ``L^-1 1``; ``whitened_resid``: ``[K, n]`` ``L^-1 (y - mu 1)``.
        u: ``[K]`` ``1' C^-1 1``; ``mu``: ``[K]`` the constant means; ``q``: ``[K]`` the residuals ``Q``.
        log_weight: ``[K]`` normalised log weights.
        ess: the effective sample size of the importance weights over all draws.
    """

    xc: Tensor
    kernels: tuple[str, ...]
    lengthscale: Tensor
    noise: Tensor
    chol: Tensor
    whitened_one: Tensor
    whitened_resid: Tensor
    u: Tensor
    mu: Tensor
    q: Tensor
    log_weight: Tensor
    ess: float

    @property
    def df(self) -> int:
        """Degrees of freedom of every component's Student-t: ``n - 1``."""
        return self.xc.shape[0] - 1

    @classmethod
    def fit(cls, xc: Tensor, yc: Tensor, draw: Callable[[int], tuple[list[str], Tensor, Tensor]],
            num_samples: int, chunk: int = 512) -> BayesPosterior:
        """Weigh ``num_samples`` hyperparameter draws by the context ``xc [n, d]``, ``yc [n, 1]``.

        Args:
            xc: context inputs ``[n, d]``, ``n >= 3``.
            yc: context outputs ``[n, 1]``, in any units (the weights are invariant to an
                affine map of them).
            draw: ``draw(k)`` returns ``k`` draws from the prior: kernel names (``k``),
                lengthscales ``[k, d]`` and noise variances ``[k]`` (unit signal variance).
            num_samples: hyperparameter draws in all.
            chunk: draws weighed at a time; bounds memory (``chunk`` Cholesky factors of
                ``[n, n]`` at once).

        Returns:
            The posterior: the draws not pruned (a draw is dropped once its log weight
            falls ``_PRUNE_NATS`` below the largest seen so far), weights renormalised;
            ``ess`` over all draws.

        Raises:
            ValueError: fewer than 3 context points, mismatched shapes, ``num_samples < 1``,
                non-finite data.
        """
        if xc.dim() != 2 or yc.shape != (xc.shape[0], 1):
            raise ValueError(f"need xc [n, d] and yc [n, 1], got {tuple(xc.shape)} and {tuple(yc.shape)}")
        n = xc.shape[0]
        if n < 3:
            raise ValueError(f"need at least 3 context points (n - 1 degrees of freedom after the mean), got {n}")
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples < 1:
            raise ValueError(f"num_samples must be a positive int, got {num_samples!r}")
        if not (torch.isfinite(xc).all() and torch.isfinite(yc).all()):
            raise ValueError("xc and yc must be finite")
        xc, y = xc.double(), yc.double().reshape(-1)
        kept: BayesPosterior | None = None
        all_log_w = []
        for start in range(0, num_samples, chunk):
            k = min(chunk, num_samples - start)
            kinds, lengthscale, noise = draw(k)
            cov = mixed_kernel_matrix(kinds, xc.expand(k, -1, -1), xc.expand(k, -1, -1), lengthscale,
                                      torch.ones(k, dtype=torch.float64))
            chol = torch.linalg.cholesky(cov + (noise + 1e-8)[:, None, None] * torch.eye(n, dtype=torch.float64))
            rhs = torch.stack([torch.ones(k, n, dtype=torch.float64), y.expand(k, n)], dim=-1)
            one, white_y = torch.linalg.solve_triangular(chol, rhs, upper=False).unbind(-1)
            u, v, w = one.pow(2).sum(-1), (one * white_y).sum(-1), white_y.pow(2).sum(-1)
            q = (w - v.pow(2) / u).clamp_min(1e-300)
            logdet = 2 * torch.diagonal(chol, dim1=-2, dim2=-1).log().sum(-1)
            log_w = -0.5 * logdet - 0.5 * u.log() - 0.5 * (n - 1) * q.log()  # unnormalised while fitting
            mu = v / u
            all_log_w.append(log_w)
            part = cls(xc=xc, kernels=tuple(kinds), lengthscale=lengthscale, noise=noise, chol=chol,
                       whitened_one=one, whitened_resid=white_y - mu[:, None] * one, u=u, mu=mu, q=q,
                       log_weight=log_w, ess=float("nan"))
            kept = part if kept is None else kept._concat(part)
            # keep memory bounded: drop what cannot matter against the best so far
            kept = kept._select(kept.log_weight >= kept.log_weight.max() - _PRUNE_NATS, renormalise=False)
        weights = torch.softmax(torch.cat(all_log_w), 0)
        return replace(kept._select(torch.ones_like(kept.mu, dtype=torch.bool), renormalise=True),
                       ess=float(1.0 / weights.pow(2).sum()))

    def keep(self, mask: Tensor) -> BayesPosterior:
        """Only the components where ``mask [K]`` is true, their weights renormalised (a
        cheaper predictor; ``ess`` stays that of all the draws)."""
        if mask.shape != self.log_weight.shape or not mask.any():
            raise ValueError(f"mask must be a [{len(self.log_weight)}] bool tensor keeping at least one component")
        return self._select(mask, renormalise=True)

    def _select(self, mask: Tensor, renormalise: bool) -> BayesPosterior:
        values = {name: getattr(self, name)[mask] for name in _PER_COMPONENT}
        if renormalise:
            values["log_weight"] = values["log_weight"] - torch.logsumexp(values["log_weight"], 0)
        return replace(self, kernels=tuple(k for k, m in zip(self.kernels, mask.tolist()) if m), **values)

    def _concat(self, other: BayesPosterior) -> BayesPosterior:
        return replace(self, kernels=self.kernels + other.kernels,
                       **{name: torch.cat([getattr(self, name), getattr(other, name)]) for name in _PER_COMPONENT})

    def components(self, xt: Tensor, observation_noise: bool = True) -> tuple[Tensor, Tensor]:
        """Each component's Student-t location and scale at ``xt [m, d]``: ``[K, m]`` each.
        ``observation_noise``: for a new observation (``True``) or the latent value."""
        if xt.dim() != 2 or xt.shape[-1] != self.xc.shape[-1]:
            raise ValueError(f"xt must be [m, {self.xc.shape[-1]}], got {tuple(xt.shape)}")
        k = len(self.kernels)
        cross = mixed_kernel_matrix(self.kernels, self.xc.expand(k, -1, -1), xt.double().expand(k, -1, -1),
                                    self.lengthscale, torch.ones(k, dtype=torch.float64))
        white_k = torch.linalg.solve_triangular(self.chol, cross, upper=False)  # [K, n, m]
        loc = self.mu[:, None] + (white_k * self.whitened_resid.unsqueeze(-1)).sum(-2)
        resid = 1 - (white_k * self.whitened_one.unsqueeze(-1)).sum(-2)
        prior_var = 1 + (self.noise[:, None] if observation_noise else 0.0)
        var = (prior_var - white_k.pow(2).sum(-2) + resid.pow(2) / self.u[:, None]).clamp_min(1e-12)
        return loc, ((self.q / self.df)[:, None] * var).sqrt()

    def log_prob(self, xt: Tensor, yt: Tensor) -> Tensor:
        """Log-density of new observations ``yt [m, 1]`` at ``xt [m, d]``, each under the
        mixture's marginal there: ``[m]``."""
        loc, scale = self.components(xt)
        per = torch.distributions.StudentT(self.df, loc, scale).log_prob(yt.double().reshape(1, -1))
        return torch.logsumexp(per + self.log_weight[:, None], 0)

    def moments(self, xt: Tensor, observation_noise: bool = False) -> tuple[Tensor, Tensor]:
        """The mixture's mean and variance at ``xt [m, d]`` (``[m]`` each). A Student-t with
        ``n - 1 = 2`` degrees of freedom has no variance; there each component counts with
        twice its squared scale (the variance of its ``n - 1 = 4`` counterpart)."""
        loc, scale = self.components(xt, observation_noise)
        df = self.df
        var = scale.pow(2) * (df / (df - 2) if df > 2 else 2.0)
        w = self.log_weight.exp()[:, None]
        mean = (w * loc).sum(0)
        return mean, (w * (var + (loc - mean).pow(2))).sum(0)
