"""The covariance across a q-batch that :class:`~npbandit.models.NPModel` gives a diagonal
surrogate: read from how the network's predictions respond to conditioning.

Why
---
A diagonal neural process (TNP-D, CMANP, LBANP, ...) predicts each target on its own: its
predictive says nothing about how two targets move together. Taken as independent, two
candidates 1e-6 apart count as two fresh draws, so a joint q-batch acquisition (qLogEI,
qLogNEI with ``q > 1``) puts several of its points on one spot, and qLogNEI scores a
candidate next to the incumbent as if the two were unrelated.

What the model does
-------------------
For a Gaussian process with noise variance ``s2``, conditioning on an observation ``y_i``
at ``x_i`` moves the posterior mean at ``x_j`` by ``k_ij / (k_ii + s2) (y_i - mu_i)``,
where ``k_ij`` is the posterior covariance of the latent values. So the covariance is the
mean's response to one more observation: with ``v_i = k_ii + s2`` the predictive variance
of ``y_i`` and a fantasy ``y_i = mu_i + delta_i``,

    k_ij = v_i (mu_j' - mu_j) / delta_i

(exact for a GP whatever ``delta_i``). A neural process is trained to approximate that
posterior predictive, so the same reading of its own conditioning gives its implied
covariance. For each t-batch the model conditions the network, once per point ``i``, on
the fantasy ``(x_i, mu_i + sqrt(v_i))`` (one standard deviation, in the network's units;
a batched ``update`` of copies of the network state) and reads the means at all ``q``
points. The responses ``c_ij`` are not exactly symmetric, nor scaled like the marginal
variances (a network may move its mean at ``x_i`` by more than a GP would), so the model
keeps only the correlation they imply,

    r_ij = (c_ij + c_ji) / 2 / sqrt(c_ii c_jj),   clipped to [-1, 1],

(``r_ij = 0`` for a point whose own response ``c_ii`` is not positive). A pair of a point
the model was conditioned on (a row of ``train_X``, such as the observed points qLogNEI
scores beside its candidates) and another point ``j`` takes the fantasy at the observed
point ``i`` alone, ``r_ij = c_ij sqrt(k_ii) / (c_ii sqrt(k_jj))`` with ``k`` the marginal
latent variances, which is as exact for a GP and needs no fantasy at the candidate. The
model then shrinks the matrix toward the identity just enough to be positive definite
(``(1 - a) R + a I``, the smallest ``a`` that leaves the least eigenvalue at
:data:`MIN_EIGENVALUE`), and puts the marginal
variances back: ``Cov = S R S`` with ``S`` the latent standard deviations of the marginal
path. Every point's mean and variance are therefore exactly the ``q = 1`` posterior's;
only the correlations are new.

Equal points (in the columns the network reads) share one latent draw, as on the marginal
path. Outputs are independent (one correlation matrix per output). Differentiable in
``X``, as BoTorch's optimisers need.

Which is the default
--------------------
``"diagonal"``. ``"conditioning"`` (this module) is the option for joint q-batch
acquisitions: a batch's points close together no longer count as independent draws, at the
cost below. Which one is the default was decided by measurement
(``experiments/benchmarks/botorch_batch.py``); the rule and the results are in
``experiments/log/benchmarks.md``, section "NPModel's q-batch covariance".

Cost
----
Per t-batch of ``q`` points not observed, ``q`` one-point ``update`` calls and ``q^2``
predictions, against ``q`` predictions on the diagonal path (a TNP-D ``update`` re-encodes
its whole context; CMANP's costs the same whatever the context). Rows shared by every
t-batch (observed and pending points) are conditioned on once and kept across calls (while
the rows stay the same), so a qLogNEI optimisation with one candidate costs a few times the
diagonal posterior's, and one of ``q`` candidates ``q`` updates per t-batch more. Above
:data:`MAX_CORRELATED_POINTS` points per t-batch (a posterior over many test points, say) the
model gives the diagonal posterior instead, as ``covariance="diagonal"`` does, and says so with a
``RuntimeWarning`` (once per model); say ``covariance="diagonal"`` to always have it, or ask for
the points as t-batches of one point each (``X.unsqueeze(-2)``, the same marginals) to have it
for one call without the warning.
"""

from __future__ import annotations

import math
import warnings

import torch
from torch import Tensor

from npbandit.surrogates.gaussian import MIN_LATENT_VAR
from npbandit.surrogates.states import NPState
from npbandit.threads import torch_threads

__all__ = ["COVARIANCES", "MAX_CORRELATED_POINTS", "MIN_EIGENVALUE", "ResponseCovarianceMixin",
           "correlation_from_responses", "decoupled", "shrink_to_positive_definite"]

#: the values of ``NPModel(covariance=...)``
COVARIANCES = ("conditioning", "diagonal")

#: above this many points per t-batch the posterior is diagonal (the response costs ``q^2`` predictions)
MAX_CORRELATED_POINTS = 64

#: the least eigenvalue a correlation matrix is shrunk to (keeps its Cholesky factor well conditioned)
MIN_EIGENVALUE = 1e-4


def correlation_from_responses(c: Tensor, latent: Tensor | None = None, known: Tensor | None = None) -> Tensor:
    """The correlation matrices implied by responses ``c`` (``... x q x q``, ``c[..., i, j]``:
    the response at point ``j`` to conditioning at point ``i``), clipped to ``[-1, 1]``, unit
    diagonal.

    A pair of points both in ``known`` (``... x q``, bool), or both not, takes both responses,
    symmetrised and scaled by the points' own responses: ``(c_ij + c_ji) / 2 / sqrt(c_ii c_jj)``.
    A pair of a known point ``i`` and another ``j`` takes the response to conditioning at ``i``
    alone, scaled by ``i``'s own response and the marginal latent variances ``latent``
    (``... x q``): ``c_ij sqrt(k_ii) / (c_ii sqrt(k_jj))``. Both are ``k_ij / sqrt(k_ii k_jj)``
    for a GP. A pair whose conditioning point's own response is not positive is uncorrelated."""
    own = c.diagonal(dim1=-2, dim2=-1)
    valid = own > 0
    scale = torch.where(valid, own, torch.ones_like(own)).sqrt()
    r = 0.5 * (c + c.transpose(-1, -2)) / (scale.unsqueeze(-1) * scale.unsqueeze(-2))
    pair = valid.unsqueeze(-1) & valid.unsqueeze(-2)
    if known is not None and bool(known.any()):
        std = latent.clamp_min(torch.finfo(latent.dtype).tiny).sqrt()
        own_safe = torch.where(valid, own, torch.ones_like(own))
        one_sided = c * (std / own_safe).unsqueeze(-1) / std.unsqueeze(-2)  # c_ij sqrt(k_ii) / (c_ii sqrt(k_jj))
        mixed = known.unsqueeze(-1) & ~known.unsqueeze(-2)  # i known, j not
        r = torch.where(mixed, one_sided, r)
        r = torch.where(mixed.transpose(-1, -2), one_sided.transpose(-1, -2), r)
        pair = torch.where(mixed, valid.unsqueeze(-1), torch.where(mixed.transpose(-1, -2), valid.unsqueeze(-2), pair))
    r = torch.where(pair, r.clamp(-1.0, 1.0), torch.zeros_like(r))
    eye = torch.eye(c.shape[-1], dtype=torch.bool, device=c.device)
    return torch.where(eye, torch.ones_like(r), r)


def decoupled(r: Tensor, same: Tensor) -> Tensor:
    """Correlation matrices ``r`` (``... x m x q x q``) with every later copy of an equal point
    (``same``: ``... x q``, the first equal point of each) uncorrelated with the rest: the
    posterior gives each copy its first copy's draw (:func:`~npbandit.models.posterior.covariance_root`),
    and two fully correlated rows would leave nothing for the shrinkage to keep."""
    q = r.shape[-1]
    later = (same != torch.arange(q, device=same.device)).unsqueeze(-2)  # ... x 1 x q
    off = later.unsqueeze(-1) | later.unsqueeze(-2)
    off = off & ~torch.eye(q, dtype=torch.bool, device=r.device)
    return r.masked_fill(off, 0.0)


def shrink_to_positive_definite(r: Tensor, min_eigenvalue: float = MIN_EIGENVALUE) -> Tensor:
    """``(1 - a) r + a I`` for correlation matrices ``r`` (``... x q x q``, unit diagonal),
    with ``a`` in ``[0, 1]`` per matrix the smallest that lifts the least eigenvalue to
    ``min_eigenvalue`` (``0`` when it is there already). ``a`` is differentiable in ``r``
    (through the least eigenvalue), so an optimiser's gradient is the value's."""
    least = torch.linalg.eigvalsh(r.to(torch.float64)).amin(dim=-1)
    a = ((min_eigenvalue - least) / (1.0 - least)).clamp(0.0, 1.0).to(r.dtype)
    eye = torch.eye(r.shape[-1], dtype=r.dtype, device=r.device)
    a = a[..., None, None]
    return (1.0 - a) * r + a * eye


class ResponseCovarianceMixin:
    """:class:`~npbandit.models.NPModel`'s correlations across a q-batch for a diagonal
    surrogate (see the module docstring).

    A mixin of ``NPModel`` only: it reads the model's state (``_state``, ``_d``,
    ``_covariance``, ``_views``, ``surrogate``, ``train_X``; ``_shared_fantasy`` and
    ``_warned``, which it keeps) and uses its methods (``_element_index``, ``_state_rows``,
    ``_to_surrogate_inputs``, ``_fold``, ``_unfold``, ``noise_variance``)."""

    def _correlates(self, q: int) -> bool:
        """Whether a posterior over ``q`` points per t-batch takes correlations from the
        network's responses. Above :data:`MAX_CORRELATED_POINTS` it does not, and says so with
        a ``RuntimeWarning`` (called from ``posterior``: the warning names its caller), once per
        model and the models conditioned from it (they share ``_warned``): the user asked for
        ``"conditioning"`` and gets the diagonal posterior."""
        if self._covariance != "conditioning" or q <= 1 or self.surrogate.y_dim != 1:
            return False
        if q <= MAX_CORRELATED_POINTS:
            return True
        if "uncorrelated" not in self._warned:
            self._warned.add("uncorrelated")
            warnings.warn(f"NPModel(covariance='conditioning') was asked for a posterior over {q} points per t-batch, "
                          f"more than the {MAX_CORRELATED_POINTS} (MAX_CORRELATED_POINTS) it correlates (the "
                          "correlations cost q^2 predictions), and gives the diagonal posterior there: the points "
                          "independent, each with its own mean and variance; for that posterior without this warning "
                          "ask for the points as t-batches of one (X.unsqueeze(-2)) or build the model with "
                          "covariance='diagonal' (this model warns of it once)", RuntimeWarning, stacklevel=3)
        return False

    def _response_correlation(self, X: Tensor, mean: Tensor, var: Tensor) -> Tensor:
        """The correlation matrices across each t-batch's points: ``out_batch x m x q x q``
        in ``mean``'s dtype, for ``X`` (``batch_shape x q x d``) with the network's predictive
        ``mean`` and ``var`` there (``out_batch x q x m``, network units, the noise included,
        as :meth:`_marginals` gives them).

        Which fantasies are made: a pair of a point the model was conditioned on (a row of
        ``train_X``: qLogNEI's observed points) and another takes the fantasy at the observed
        point alone (:func:`correlation_from_responses`), so a t-batch of one candidate beside
        observed points needs no fantasy at the candidate. Rows equal in every t-batch of a
        model without batch shape (observed and pending points) are conditioned on once, not
        once per t-batch: their fantasies are the same in every t-batch, so each is read at
        the shared rows and at every t-batch's own points in one call. With symmetric views
        the responses are read in view 0 (the data as given) alone: the correlations need not
        average the views' small differences, and each view would cost as much again."""
        out_batch, q, m = mean.shape[:-2], mean.shape[-2], mean.shape[-1]
        n_out = math.prod(out_batch)
        X_in = self._to_surrogate_inputs(X.expand(*out_batch, q, self._d)).reshape(n_out, q, -1)
        mean_n = mean.reshape(n_out, q, m).to(X_in)
        delta = var.reshape(n_out, q, m).to(X_in).clamp_min(torch.finfo(X_in.dtype).tiny).sqrt()
        latent = (var - self.noise_variance().to(var)).clamp_min(MIN_LATENT_VAR).reshape(n_out, q, m)
        known = shared = None
        if not self.batch_shape:
            observed = self._to_surrogate_inputs(self.train_X.detach())
            known = (X_in.detach().unsqueeze(-2) == observed).all(dim=-1).any(dim=-1)  # n_out x q
            if n_out > 1:
                shared = (X_in == X_in[:1]).all(dim=-1).all(dim=0)  # q
                if not bool(shared.any()) or bool(shared.all()):
                    shared = None
        if shared is None:
            c = self._responses(self._element_index(out_batch).repeat_interleave(q), X_in.reshape(n_out * q, 1, -1),
                                mean_n.reshape(n_out * q, 1, m), delta.reshape(n_out * q, 1, m),
                                X_in.repeat_interleave(q, dim=0), mean_n.repeat_interleave(q, dim=0))
            c = c.reshape(n_out, q, q, m)  # [b, i, j, o]: the response at j to conditioning at i
        else:
            # fantasies at the own points are read only for pairs of two points not observed
            unknown = (~known).sum(dim=-1)
            c = self._shared_responses(shared, X_in, mean_n, delta, own_needed=bool(
                (unknown >= 2).any() and (~known[:, ~shared]).any()))
        known_m = None if known is None else known.unsqueeze(1).expand(n_out, m, q)
        r = correlation_from_responses(c.permute(0, 3, 1, 2), latent.permute(0, 2, 1).to(c), known_m)
        return r.reshape(*out_batch, m, q, q).to(mean.dtype)

    def _responses(self, elements: Tensor, x_new: Tensor, mean_new: Tensor, delta_new: Tensor, targets: Tensor,
                   mean_targets: Tensor, state: NPState | None = None) -> Tensor:
        """``c[e, j, o] = delta_e (mu_j' - mu_j)``: the response of the mean at ``targets[e, j]``
        (``mean_targets``: the means there) to conditioning model element ``elements[e]``
        (view 0) on the fantasy ``(x_new[e], mean_new[e] + delta_new[e])`` (``[E, 1, x_dim]``,
        ``[E, 1, m]``), in the network's units: ``[E, M, m]``. ``state``: that fantasy's
        network state when made before (:meth:`_fantasy_state`)."""
        if state is None:
            state = self._fantasy_state(elements, x_new, mean_new + delta_new)
        with torch_threads():
            moved = self._unfold(self.surrogate.predict(state, self._fold(targets)[0], check=False).loc)
        return (moved - mean_targets) * delta_new  # k_ij = v_i (mu_j' - mu_j) / delta_i, v_i = delta_i^2

    def _fantasy_state(self, elements: Tensor, x_new: Tensor, y_new: Tensor) -> NPState:
        """The network state of model elements ``elements`` (view 0) updated with one point each
        (``x_new [E, 1, x_dim]``, ``y_new [E, 1, m]``, network units)."""
        rows = self._state_rows(elements)
        if self._views is not None:
            rows = rows[:: self._views.n_views]  # view 0 of each element and task
        x_fold, y_fold = self._fold(x_new, y_new)
        with torch_threads():
            return self.surrogate.update(self._state.select(rows), x_fold, y_fold)

    def _shared_responses(self, shared: Tensor, X_in: Tensor, mean_n: Tensor, delta: Tensor,
                          own_needed: bool = True) -> Tensor:
        """The responses ``[b, i, j, o]`` of :meth:`_response_correlation` when the rows
        ``shared`` (a ``q`` mask) are equal in every t-batch: each shared row's fantasy is
        made once and read at the shared rows and at all t-batches' own points; each own
        point's fantasy is made per t-batch and read at its t-batch's points, unless
        ``own_needed`` is false (the responses to them are then zeros, to be read by no pair).

        The shared rows' fantasies are made without gradient, as rows the data fixes
        (qLogNEI's observed points, pending points) need none; a row of the optimiser's own
        that happens to be equal in every t-batch (every restart's point on one corner of the
        box) then gets the gradient of its mean, variance and of the responses at it, not of
        its own fantasy, so its gradient is not the value's. The values are exact either way."""
        n_out, q, m = mean_n.shape
        k = int(shared.sum())
        own = ~shared
        q_own = q - k
        x_s, mu_s, d_s = X_in[0, shared], mean_n[0, shared], delta[0, shared]  # k x .
        x_o, mu_o, d_o = X_in[:, own], mean_n[:, own], delta[:, own]  # n_out x q_own x .
        # the shared rows' fantasies, and the responses among them, are kept for the next call
        # (an acquisition optimisation asks about the same observed points hundreds of times);
        # made without gradient: the shared rows are the data's, not the optimiser's
        kept = self._shared_fantasy
        if kept is None or kept[0].shape != x_s.shape or kept[0].dtype != x_s.dtype or not torch.equal(kept[0], x_s):
            with torch.no_grad():
                zero = torch.zeros(k, dtype=torch.long, device=X_in.device)
                state = self._fantasy_state(zero, x_s.unsqueeze(1), (mu_s + d_s).unsqueeze(1))
                among = self._responses(zero, x_s.unsqueeze(1), mu_s.unsqueeze(1), d_s.unsqueeze(1),
                                        x_s.expand(k, -1, -1), mu_s.expand(k, -1, -1), state)
            kept = self._shared_fantasy = (x_s.detach().clone(), state, among)
        _, state, among = kept
        targets = x_o.reshape(1, n_out * q_own, -1).expand(k, -1, -1)
        means = mu_o.reshape(1, n_out * q_own, m).expand(k, -1, -1)
        to_own = self._responses(None, None, None, d_s.unsqueeze(1), targets, means, state)
        from_shared = torch.cat([among.to(to_own), to_own], dim=1)
        if own_needed:
            elements = torch.zeros(n_out * q_own, dtype=torch.long, device=X_in.device)
            targets = torch.cat([x_s.expand(n_out, -1, -1), x_o], dim=1).repeat_interleave(q_own, dim=0)
            means = torch.cat([mu_s.expand(n_out, -1, -1), mu_o], dim=1).repeat_interleave(q_own, dim=0)
            from_own = self._responses(elements, x_o.reshape(-1, 1, x_o.shape[-1]), mu_o.reshape(-1, 1, m),
                                       d_o.reshape(-1, 1, m), targets, means).reshape(n_out, q_own, q, m)
        else:
            from_own = mean_n.new_zeros(n_out, q_own, q, m)
        # assembled in the order [shared rows, own rows], then put back in the t-batch's order
        ss = from_shared[:, :k].expand(n_out, k, k, m)
        so = from_shared[:, k:].reshape(k, n_out, q_own, m).transpose(0, 1)
        c = torch.cat([torch.cat([ss, so], dim=2), from_own], dim=1)
        order = torch.cat([shared.nonzero().squeeze(-1), own.nonzero().squeeze(-1)])
        inverse = torch.argsort(order)
        return c[:, inverse][:, :, inverse]
