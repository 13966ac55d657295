"""The Gaussian posterior an :class:`~npbandit.models.NPModel` gives BoTorch on its marginal
path (a diagonal surrogate, or ``q = 1``), and the pieces both posterior paths build from.

For a diagonal surrogate the posterior is Gaussian with each point's marginal the NP's
predictive; across distinct ``q`` points it is independent (``covariance="diagonal"``, the
default: the NP's targets are conditionally independent, so MC acquisition functions sample
them independently) or correlated by the covariance the network's conditioning implies
(``covariance="conditioning"``: :mod:`npbandit.models.covariance`). Equal points within a t-batch
(equal in the columns the network reads) share one latent draw (``f`` at one input is one
random variable; observation noise stays independent, :func:`gaussian_posterior`). Points
in different t-batches never interact. Rows equal in
every t-batch -- the observed points qNEI appends to each candidate -- are predicted once,
with each t-batch's exact first derivative (second derivatives through them are not
propagated), and the model keeps their moments and Jacobians for its next calls
(:class:`~npbandit.models.cache.SharedRows`): an acquisition optimisation predicts the
observed points once, not in each of its hundreds of evaluations. The kept rows must match
exactly (values, dtype, device); a conditioned model and a model that loaded a state dict
predict them again from their own state.

The joint posterior of a joint-predictive surrogate is in :mod:`npbandit.models.joint`.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.posteriors import Posterior
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch import settings as gpytorch_settings
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from linear_operator.operators import DiagLinearOperator, LinearOperator, RootLinearOperator, ZeroLinearOperator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from npbandit.models.cache import SHARED_ROWS_MIN, SharedRows
from npbandit.models.checks import broadcasts, check_output_indices, check_points
from npbandit.models.covariance import decoupled, shrink_to_positive_definite
from npbandit.surrogates.gaussian import MIN_LATENT_VAR

__all__ = ["IndependentOutputs", "MarginalPosteriorMixin", "covariance_root", "first_equal_rows", "gaussian_posterior",
           "independent_outputs", "low_rank_root", "PAIRWISE_MAX"]

# first_equal_rows compares every pair of rows up to this many element comparisons, sorts beyond
PAIRWISE_MAX = 1 << 22


def first_equal_rows(X: Tensor, pairwise_max: int = PAIRWISE_MAX) -> Tensor | None:
    """For ``X`` (``batch x q x d``): the index of the first row equal to each row within its
    t-batch (``batch x q``), or ``None`` when no t-batch holds two equal rows.

    Up to ``pairwise_max`` element comparisons every pair of rows is compared; beyond, the
    rows are sorted (``torch.unique``). Both give the same answer."""
    q, d = X.shape[-2:]
    X = X.detach()
    if X.numel() * q <= pairwise_max:
        # an acquisition's t-batches (a few candidates plus the observed points): comparing
        # every pair is a handful of elementwise ops, where torch.unique(dim=0) sorts rows
        # with one comparison call per pair, a sizeable share of a qNEI evaluation
        positions = torch.arange(q, device=X.device)
        equal = (X.unsqueeze(-2) == X.unsqueeze(-3)).all(dim=-1)  # batch x q x q
        first = torch.where(equal, positions, q).amin(dim=-1)
        return None if bool((first == positions).all()) else first
    flat = X.reshape(-1, d)
    b = flat.shape[0] // q
    batch = torch.arange(b, device=X.device).repeat_interleave(q).unsqueeze(-1).to(flat.dtype)
    _, group, counts = torch.unique(torch.cat([batch, flat], dim=-1), dim=0, return_inverse=True, return_counts=True)
    if bool((counts == 1).all()):
        return None
    position = torch.arange(b * q, device=X.device) % q
    first = torch.full((counts.shape[0],), q, dtype=torch.long, device=X.device)
    first = first.scatter_reduce(0, group, position, reduce="amin")
    return first[group].reshape(X.shape[:-1])


class IndependentOutputs(DiagLinearOperator):
    """The diagonal covariance of ``q`` independent points' ``m`` independent outputs.

    A ``DiagLinearOperator`` whose elementwise product (:meth:`mul`, ``*``) with a matrix that
    broadcasts to its shape reads that matrix's diagonal after broadcasting. ``linear_operator``'s
    reads it before, so a row of per-entry weights ``w`` (``1 x qm``) multiplied every diagonal entry by
    ``w[0]``: BoTorch's ``ScalarizedPosteriorTransform`` weights an interleaved multi-output
    covariance of ``q > 1`` points so (``w_row * covar * w_row^T``), and the scalarised
    variance came back without the outputs' weights. No public class of ``linear_operator``
    holds a diagonal that multiplies so (a ``BlockDiagLinearOperator`` of per-output diagonals,
    which BoTorch would scalarise block by block, is built as a ``DiagLinearOperator``), hence
    this subclass, which overrides the public ``LinearOperator.mul`` (what ``*`` calls)."""

    def mul(self, other: Any) -> Any:
        """``self * other``, elementwise: a matrix ``other`` (a tensor of more than one element or
        a linear operator, neither diagonal nor of this matrix's shape) broadcast to this shape
        first, the product again an ``IndependentOutputs``; anything else as
        ``DiagLinearOperator`` multiplies it (a constant, another diagonal, a matrix of this
        shape, or one that does not broadcast, refused there)."""
        if (isinstance(other, (Tensor, LinearOperator)) and other.numel() > 1
                and not isinstance(other, (DiagLinearOperator, ZeroLinearOperator))
                and other.shape[-2:] != self.shape[-2:]):
            try:
                shape = torch.broadcast_shapes(other.shape, self.shape)
            except RuntimeError:
                return super().mul(other)  # raises, naming both shapes
            dense = other.to_dense().expand(shape)
            return IndependentOutputs(self.diagonal() * dense.diagonal(dim1=-2, dim2=-1))
        return super().mul(other)


def independent_outputs(posterior: Any) -> Any:
    """``posterior`` with a multi-output diagonal covariance held as :class:`IndependentOutputs`
    (an outcome transform's ``untransform_posterior`` builds a plain ``DiagLinearOperator``
    again); any other posterior as it is."""
    mvn = getattr(posterior, "distribution", None)
    if not isinstance(posterior, GPyTorchPosterior) or not isinstance(mvn, MultitaskMultivariateNormal):
        return posterior
    covar = mvn.lazy_covariance_matrix
    if type(covar) is not DiagLinearOperator:
        return posterior
    return GPyTorchPosterior(MultitaskMultivariateNormal(mvn.mean, IndependentOutputs(covar.diagonal()),
                                                         interleaved=mvn._interleaved))


def gaussian_posterior(mean: Tensor, var: Tensor, obs_var: Tensor | None = None,
                       same: Tensor | None = None, correlation: Tensor | None = None) -> GPyTorchPosterior:
    """Gaussian posterior from ``mean`` / latent ``var`` (``... x q x m``), plus independent
    observation noise ``obs_var`` (same shape) when given.

    The latent values are independent across the ``q`` points unless ``correlation`` (``...
    x m x q x q``, one positive definite correlation matrix per output; see
    :mod:`npbandit.models.covariance`) correlates them; outputs are independent. Equal
    points (``same``: ``... x q``, the index of the first equal point in the t-batch)
    share one latent draw: ``f`` at one input is one random variable. Without that, qNEI,
    which appends the observed points to each candidate, scores a candidate placed exactly
    on an observed point as a fresh independent draw, and proposes observed points again
    and again (Ax then re-runs its generation and falls back to a random point).

    Variances below gpytorch's floor (``gpytorch.settings.min_variance``: 1e-10 in float64,
    1e-6 in float32) are raised to it here, as gpytorch raises them when they are read. A
    network's variance near a well-observed optimum, in the outcome's units, can be positive
    and far smaller (1e-13 seen); raised on reading, it made gpytorch warn of "negative
    variance" on every acquisition call."""
    m = mean.shape[-1]
    floor = gpytorch_settings.min_variance.value(var.dtype)
    var = var.clamp_min(floor)
    if same is None and correlation is None:
        total = var if obs_var is None else var + obs_var
        if m == 1:
            return GPyTorchPosterior(MultivariateNormal(mean.squeeze(-1), DiagLinearOperator(total.squeeze(-1))))
        covar = IndependentOutputs(total.reshape(*total.shape[:-2], -1))  # interleaved (q, m) order
        return GPyTorchPosterior(MultitaskMultivariateNormal(mean, covar, interleaved=True))
    q = mean.shape[-2]
    if same is not None:
        # equal points take the first one's moments: bit-identical draws, whatever the rounding of
        # the network's batched predictions (a float32 network differs by ~1e-7 across positions)
        first = same.unsqueeze(-1).expand_as(mean)
        mean, var = mean.gather(-2, first), var.gather(-2, first)
    if correlation is None:
        # root R with R[(j, i), (same[j], i)] = std[j, i]: R R^T correlates equal points fully
        pick = torch.nn.functional.one_hot(same, q).to(var)  # ... x q x q
        eye = torch.eye(m, dtype=var.dtype, device=var.device)
        root = pick[..., :, None, :, None] * eye[:, None, :] * var.sqrt()[..., :, :, None, None]
        root = root.reshape(*var.shape[:-2], q * m, q * m)
    else:
        std = var.sqrt().transpose(-1, -2)  # ... x m x q
        cov = std.unsqueeze(-1) * correlation.to(var) * std.unsqueeze(-2)  # ... x m x q x q
        eye = torch.eye(m, dtype=var.dtype, device=var.device)
        # interleaved (q, m) order, outputs independent: [(i, o), (j, o')] = [o, i, j] if o == o'
        dense = (cov.permute(*range(cov.dim() - 3), -2, -3, -1).unsqueeze(-1) * eye[:, None, :])
        root = covariance_root(dense.reshape(*var.shape[:-2], q * m, q * m), same, m)
    covar = RootLinearOperator(root)
    if obs_var is not None:
        covar = covar + DiagLinearOperator(obs_var.reshape(*obs_var.shape[:-2], q * m))
    if m == 1:
        return GPyTorchPosterior(MultivariateNormal(mean.squeeze(-1), covar))
    return GPyTorchPosterior(MultitaskMultivariateNormal(mean, covar, interleaved=True))


def covariance_root(cov: Tensor, same: Tensor | None, m: int) -> Tensor:
    """A square root ``R`` (``... x q m x q m``) of the covariance ``cov`` of ``q`` points'
    ``m`` outputs in interleaved ``(q, m)`` order, ``same`` (``... x q`` or ``None``) the
    first equal point of each point.

    Equal points share one draw: the Cholesky factor is taken with the later copies
    decoupled (their off-diagonal entries zeroed), whose columns then meet no first copy's
    row, and every copy takes its first copy's row of it, so ``R R^T`` is the covariance of
    the distinct points, repeated, with ``q m`` base samples per draw whatever the repeats."""
    n = cov.shape[-1]
    first = None
    if same is not None:
        first = (same.unsqueeze(-1) * m + torch.arange(m, device=same.device)).flatten(-2)
        later = first != torch.arange(n, device=same.device)
        decouple = (later.unsqueeze(-1) | later.unsqueeze(-2)) & ~torch.eye(n, dtype=torch.bool, device=cov.device)
        cov = cov.masked_fill(decouple, 0.0)
    root = psd_safe_cholesky(cov)
    if first is not None:
        root = root.gather(-2, first.unsqueeze(-1).expand_as(root))
    return root


def low_rank_root(factor: Tensor, diag: Tensor, same: Tensor | None) -> Tensor:
    """A square root ``R`` (``... x q m x q m``) of ``Phi Phi^T + diag(d)``, the variables in
    interleaved ``(q, m)`` order: ``factor`` ``... x q x m x r``, ``diag`` ``... x q x m``
    (positive), ``same`` (``... x q`` or ``None``) the first equal point of each point
    (:func:`covariance_root`)."""
    m = diag.shape[-1]
    phi, d = factor.flatten(-3, -2), diag.flatten(-2)
    return covariance_root(phi @ phi.transpose(-1, -2) + torch.diag_embed(d), same, m)


class MarginalPosteriorMixin:
    """:class:`~npbandit.models.NPModel`'s marginal path: ``posterior`` for a diagonal
    surrogate (or ``q = 1``), the shared-row cache, and the noise a posterior adds.

    A mixin of ``NPModel`` only: it reads the model's state (``_state``, ``_d``,
    ``_y_mean`` / ``_y_std``, ``_shared_rows``, ``_output_indices``) and its scaling
    methods (``_to_surrogate_inputs``, ``_read_columns``, ``_predict``, ``noise_variance``)."""

    def _marginals(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """The NP's predictive mean and variance at ``X`` (``batch_shape x q x d``), in
        standardised units: ``broadcast(batch_shape, model.batch_shape) x q x m`` each, in
        ``X``'s dtype."""
        out_batch = torch.broadcast_shapes(X.shape[:-2], self.batch_shape)
        q, m = X.shape[-2], self._m
        X = X.expand(*out_batch, q, self._d)
        if not q * math.prod(out_batch):  # no points: nothing to ask the network (not every one takes no targets)
            empty = X.new_zeros((*out_batch, q, m))
            return empty, empty
        n_model = math.prod(self.batch_shape)
        n_extra = math.prod(out_batch) // n_model
        if n_model == 1 and q > 1:
            # Rows equal in every t-batch -- the observed points qNEI appends to each
            # candidate, pending points -- are predicted once (the marginals are per point,
            # so this is exact) and kept for the next call (SharedRows). A gradient then
            # needs each t-batch's own share: the shared rows' Jacobian carries it (first
            # order; see posterior). A t-batch of one point (an analytic acquisition's)
            # shares a row with the others only when every t-batch holds the same point:
            # not looked for.
            flat = X.reshape(n_extra, q, self._d)
            needs_grad = X.requires_grad and torch.is_grad_enabled()
            entry = self._shared_moments(flat, needs_grad)
            if entry is not None:
                own = self._predict_rows(flat[:, entry.own].reshape(-1, self._d), X.dtype)
                rows = flat[:, entry.mask]
                offset = (rows - rows.detach()).unsqueeze(-2) if needs_grad else None  # b x k x 1 x d, zero
                out = []
                for o, c, jac in zip(own, (entry.mean, entry.var), (entry.jac_mean, entry.jac_var)):
                    c = c.expand(n_extra, -1, -1) if offset is None else c + (offset * jac).sum(-1)
                    t = torch.cat([o.reshape(n_extra, -1, m), c], dim=1)[:, entry.order]
                    out.append(t.reshape(*out_batch, q, m))
                return out[0], out[1]
        flat, unflatten = self._as_targets(X)
        mean, var = self._predict(flat)
        return unflatten(mean), unflatten(var)

    def _as_targets(self, X: Tensor) -> tuple[Tensor, Any]:
        """``X`` (``out_batch x q x d``, ``out_batch = broadcast(X's batch, model.batch_shape)``)
        as the surrogate's targets: ``[n_model, n_extra * q, x_dim]``, one task per model
        batch element with the points of every t-batch that reads it (a point's predictive,
        and the joint of a sub-block of a consistent joint model, do not depend on the other
        targets). Returns them and ``unflatten(t, *tail)``, which maps a per-target result
        (``t`` of ``n_model x n_extra * q * m x prod(tail)`` elements, target-major) back to
        ``out_batch x q x m x *tail`` in ``X``'s dtype."""
        out_batch, q = X.shape[:-2], X.shape[-2]
        m = self._m
        n_model = math.prod(self.batch_shape)
        n_out = math.prod(out_batch)
        n_extra = n_out // n_model
        X_in = self._to_surrogate_inputs(X).reshape(n_out, q, -1)
        # t-batches grouped by the model element they read; a model dimension of size 1
        # broadcast against the t-batches is read by all of them (one model element: nothing to group)
        order = None if n_model == 1 else torch.argsort(self._element_index(out_batch), stable=True)
        if order is not None:
            X_in = X_in.index_select(0, order.to(X_in.device))
        flat = X_in.reshape(n_model, n_extra * q, -1)
        inverse = None if order is None else torch.argsort(order)

        def unflatten(t: Tensor, *tail: int) -> Tensor:
            t = t.reshape(n_out, q, m, *tail)
            if inverse is not None:
                t = t.index_select(0, inverse.to(t.device))
            return t.reshape(*out_batch, q, m, *tail).to(X.dtype)

        return flat, unflatten

    def _element_index(self, out_batch: torch.Size) -> Tensor:
        """For each element of ``out_batch`` (flattened, row-major; ``out_batch`` broadcasts
        ``model.batch_shape``), the model batch element it reads."""
        n_model = math.prod(self.batch_shape)
        return torch.arange(n_model).reshape(self.batch_shape).expand(out_batch).reshape(-1)

    def _shared_moments(self, flat: Tensor, needs_grad: bool) -> SharedRows | None:
        """The moments at the rows of ``flat`` (``b x q x d``) equal in every t-batch, with
        their Jacobians when ``needs_grad``; ``None`` when no row is shared or predicting
        them once would not pay.

        The last shared rows and their moments are kept (:class:`SharedRows`), so qNEI's
        observed points are predicted once per model rather than once per acquisition
        evaluation; a single t-batch holding the kept rows at their positions uses them
        too (the last restarts of a batched L-BFGS-B)."""
        entry = self._shared_rows
        if entry is not None and entry.matches(flat):
            # the rows came back: predicting them apart (with their Jacobian) pays from now on
            entry = self._shared_rows = entry.complete(self._predict_rows, needs_grad)
            return entry
        b = flat.shape[0]
        if b < 2:
            return None
        mask = (flat == flat[:1]).all(dim=-1).all(dim=0)
        k = int(mask.sum())
        if not k:
            return None
        if needs_grad and (b - 1) * k < SHARED_ROWS_MIN:
            # a Jacobian costs a backward pass per output column and moment: for a few rows
            # seen once, predicting them in every t-batch is cheaper; if they come back, not
            self._shared_rows = SharedRows.seen(mask, flat[0, mask])
            return None
        # the local name, not the attribute: another thread may keep other rows meanwhile
        entry = self._shared_rows = SharedRows.predict(self._predict_rows, mask, flat[0, mask], needs_grad)
        return entry

    def _predict_rows(self, rows: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        """Mean and variance (``n x m`` each, ``dtype``) at raw inputs ``rows`` (``n x d``)."""
        m = self._m
        if not rows.shape[0]:
            empty = rows.new_zeros((0, m), dtype=dtype)
            return empty, empty
        mean, var = self._predict(self._to_surrogate_inputs(rows).unsqueeze(0))
        return mean.reshape(-1, m).to(dtype), var.reshape(-1, m).to(dtype)

    def posterior(self, X: Tensor, output_indices: list[int] | None = None,
                  observation_noise: bool | Tensor = False,
                  posterior_transform: PosteriorTransform | None = None) -> Posterior:
        """Gaussian posterior at ``X`` (``batch_shape x q x d``): for a diagonal surrogate the
        NP's marginals, correlated across ``q`` as ``covariance`` says (``"conditioning"``:
        :mod:`npbandit.models.covariance`; ``"diagonal"``: independent); the surrogate's joint
        across ``q`` for a joint-predictive one (``surrogate.joint_predictive``, ``q > 1``:
        :meth:`_joint_posterior`).

        Returns a ``GPyTorchPosterior`` over ``broadcast(batch_shape, model.batch_shape) x q x m``
        in ``X``'s dtype (an ``outcome_transform`` with wider statistics promotes it, as torch
        does), differentiable in ``X``; through an outcome transform that is not affine, such as
        ``Log``, what its ``untransform_posterior`` makes of that (a ``TransformedPosterior``, as
        for a GP). ``X`` without points (``q = 0``, or an empty t-batch such as ``0 x q x d``)
        gives the empty posterior of those shapes, as a GP's.

        ``observation_noise``: ``False``, the latent posterior; ``True``, plus the noise estimate
        (:mod:`npbandit.models.likelihood`); a tensor broadcasting to ``batch_shape x q x m``,
        plus that noise variance (finite and ``>= 0``, else ``ValueError``), in the units of ``Y``
        after the outcome transform (BoTorch's convention; ``Y``'s units without one).

        A point of ``X`` outside ``bounds`` (without them, ``input_domain``) after the input
        transform is predicted all the same, with an ``InputDataWarning``: the network's
        output there is an extrapolation it was never trained for, and a ``Normalize`` that
        learned its bounds from the data (BoTorch's common script) puts candidates there (see
        "Input domain" in :mod:`npbandit.models.network`)."""
        check_points(X, self._d)
        if not broadcasts(X.shape[:-2], self.batch_shape):
            raise ValueError(f"X's batch shape {tuple(X.shape[:-2])} must broadcast with the model's batch_shape "
                             f"{tuple(self.batch_shape)} (X: batch_shape x q x {self._d})")
        self.eval()
        self._check_inputs("X", X, refuse=False)
        q = X.shape[-2]
        # a posterior over no points (q = 0, or an empty t-batch) takes the marginal path, whose
        # _marginals answers it without the network: its shapes are the joint's and a GP's
        points = q * math.prod(torch.broadcast_shapes(X.shape[:-2], self.batch_shape))
        if self.surrogate.joint_predictive and q > 1 and points:
            return self._joint_posterior(X, output_indices, observation_noise, posterior_transform)
        indices = self._state_outputs(output_indices)
        mean, var = self._marginals(X)
        correlation = self._response_correlation(X, mean, var) if points and self._correlates(q) else None
        noise = self.noise_variance().to(var)
        var = (var - noise).clamp_min(MIN_LATENT_VAR)
        obs_var = self._observation_variance(observation_noise, var)
        scale = self._y_std.to(var) ** 2
        mean = mean * self._y_std.to(mean) + self._y_mean.to(mean)
        var = var * scale
        obs_var = None if obs_var is None else obs_var * scale
        if indices is not None:
            mean, var = mean[..., indices], var[..., indices]
            obs_var = None if obs_var is None else obs_var[..., indices]
            correlation = None if correlation is None else correlation[..., indices, :, :]
        read = self._read_columns(X)  # points equal in the columns the network reads are one point to it
        same = first_equal_rows(read.expand(*mean.shape[:-2], *read.shape[-2:])) if X.shape[-2] > 1 else None
        if correlation is not None:
            correlation = shrink_to_positive_definite(correlation if same is None else decoupled(correlation, same))
        posterior = self._untransformed(gaussian_posterior(mean, var, obs_var, same, correlation), indices, X)
        if posterior_transform is not None:
            posterior = posterior_transform(posterior)
        return posterior

    def _state_outputs(self, output_indices: list[int] | None) -> list[int] | None:
        """The outputs of the model's state (``_m`` of them) that ``posterior(X, output_indices)``
        reports: ``output_indices`` index this model's ``num_outputs`` outputs, which for a
        ``subset_output`` of a network with outputs of its own are a selection
        (``_output_indices``) of the state's; ``None``: all of the state's. A one-output model
        reports its one output whatever (non-negative) indices it is given, as BoTorch's
        one-output ``SingleTaskGP`` does: BoTorch's ``ModelList`` hands each member the list's
        own indices (``[1]`` to its second model) along with a tensor ``observation_noise``."""
        if output_indices is None:
            return self._output_indices
        if self.num_outputs == 1:
            check_output_indices("output_indices", output_indices, None)
            return self._output_indices
        output_indices = check_output_indices("output_indices", output_indices, self.num_outputs)
        if self._output_indices is None:
            return output_indices
        return [self._output_indices[i] for i in output_indices]

    def _untransformed(self, posterior: GPyTorchPosterior, indices: list[int] | None, X: Tensor) -> Any:
        """``posterior`` (over the state's outputs ``indices``, all when ``None``) in the data's
        units: through the outcome transform, if any, subset to those outputs. A transform
        holds one mean and std (or other statistics) per output of the state, so the outputs
        a posterior reports -- ``output_indices``, or a :meth:`subset_output` of a network with
        outputs of its own -- take their own; untransformed whole, a selection would fail the
        transform's output count, or, as a reordering of all of them, take another output's
        statistics. A transform without ``subset_output`` raises ``NotImplementedError`` there,
        as it does for :meth:`subset_output`."""
        if not hasattr(self, "outcome_transform"):
            return posterior
        transform = self.outcome_transform if indices is None else self.outcome_transform.subset_output(indices)
        return independent_outputs(transform.untransform_posterior(posterior, X=X))

    def _observation_variance(self, observation_noise: bool | Tensor, like: Tensor) -> Tensor | None:
        """The variance ``observation_noise`` adds, in standardised units, shaped like
        ``like`` (``... x q x m``, the state's ``m`` outputs); ``None`` for the latent
        posterior. A tensor holds the noise of this model's ``num_outputs`` outputs (or one
        value for all), in the outcome-transformed units; a negative, NaN or infinite one is
        refused (``ValueError``)."""
        if isinstance(observation_noise, Tensor):
            expected = (*like.shape[:-1], self.num_outputs)
            if not broadcasts(observation_noise.shape, expected, to=True):
                raise ValueError(f"observation_noise must be a bool or a tensor that broadcasts to the posterior's "
                                 f"batch_shape x q x num_outputs {tuple(expected)}, got shape "
                                 f"{tuple(observation_noise.shape)}")
            bad = ~(torch.isfinite(observation_noise) & (observation_noise >= 0))
            if bad.any():
                at = tuple(int(i) for i in bad.nonzero()[0])
                raise ValueError(f"observation_noise must hold finite variances >= 0, got "
                                 f"{observation_noise[at].item()} at index {at}")
            noise = observation_noise.to(like)
            if self._output_indices is not None and noise.shape[-1] != 1:
                # this model's outputs are some of the state's: place their noise there
                full = like.new_zeros((*noise.shape[:-1], like.shape[-1]))
                full[..., self._output_indices] = noise
                noise = full
            return (noise / self._y_std.to(like) ** 2).expand_as(like)
        if observation_noise:
            return self._observation_noise().to(like).expand_as(like)
        return None
