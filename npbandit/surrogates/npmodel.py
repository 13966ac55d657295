"""NPModel: a pretrained neural process as a first-class BoTorch ``Model``.

Swap one line of a BoTorch pipeline::

    model = SingleTaskGP(train_X, train_Y)                              # before
    model = NPModel.from_pretrained("cmanp-bo", train_X, train_Y)       # after
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))  # may stay

and keep the acquisition functions, ``optimize_acqf``, transforms and fantasies.
The fitting line fits nothing (the surrogate is pretrained; see
:meth:`NPModel.custom_fit` and :class:`NPLikelihood`).

Only BoTorch's public extension points are used (``Model.posterior``,
``condition_on_observations`` with ``FantasizeMixin.fantasize``, ``subset_output``,
``num_outputs`` / ``batch_shape``, transforms, ``Model.construct_inputs``,
``custom_fit`` on BoTorch 0.18 and the ``FitGPyTorchMLL`` dispatcher on 0.17); the
supported range is pinned in ``pyproject.toml`` and ``make botorch-compat`` tests both
ends of it.

Inside Ax: ``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint":
"cmanp-bo"})``. Ax builds the model through :meth:`NPModel.construct_inputs` (the
checkpoint is loaded once per process, :func:`shared_surrogate`), passes the transforms
as arguments (positional-or-keyword: Ax reads ``getfullargspec``) and ``train_Yvar``
when the noise is known, fits it through ``npbandit.integrations.ax`` (nothing to fit)
and loads state dicts for cross-validation (see "State dict" below).

What the model does with the data
---------------------------------
* **Inputs** are mapped onto the box the surrogate was trained on (``[0, 1]^d`` for
  ``*-bo``): from ``bounds`` when given, after a BoTorch ``input_transform`` (e.g.
  ``Normalize``) when given; with neither, ``train_X`` must already lie in the box.
  A ``d``-dimensional problem is zero-padded to the surrogate's input width (the
  ``bo`` prior was trained that way; ``d`` may not exceed it).
* **Outputs** go through the optional BoTorch ``outcome_transform`` and then, for
  surrogates whose prior standardised outputs (``*-bo``), are standardised with
  the training data's mean and std (:mod:`npbandit.scaling`), as in training.
* **Streaming.** ``condition_on_observations`` folds new points in with the
  surrogate's ``update`` (constant cost for CMANP; the old points are not
  re-encoded) and keeps the standardisation fixed -- BoTorch's own convention for
  outcome transforms in eval mode. Fixed statistics slowly go stale as real data
  arrives, so for non-batched updates the model keeps running moments of all
  outputs (updated in ``O(new points)``) and, when the mean moved by more than
  ``restandardize_tol`` old stds or the std by more than a factor
  ``1 + restandardize_tol``, re-standardises and re-conditions once from the raw
  data it keeps (one full conditioning, O(N) for CMANP; with many points a single
  observation rarely moves the moments that far). Fantasy (batched) updates never
  re-standardise.
* **Cost per streamed update does not grow with N** (for a constant-cost ``update``
  such as CMANP's), outside those rare re-standardisations: ``train_X`` / ``train_Y``
  of a chain of streamed models are views into one growing buffer (amortised
  ``O(new points)``; branching twice from the same model copies once), the drift
  check uses the running moments, and the noise estimate below reads at most
  ``noise_points`` observed points. A fantasy model materialises its
  ``batch x (N + n) x d`` ``train_X`` / ``train_Y`` only when they are read.

What the NP's standard deviation means
--------------------------------------
The priors' targets are noisy observations, so the NP predicts a *new noisy
observation* ``y``: its variance ``var_y(x)`` is the noise plus what the NP still
does not know about ``f(x)``. Read with homoscedastic noise, ``var_y(x_i) >= noise``
at every observed point ``x_i``, so the smallest of them is the tightest upper bound
of the noise the NP's own predictions give. The model takes that minimum as its
noise estimate -- over all observed points up to ``noise_points`` (256), beyond
that over ``noise_points`` of them evenly spaced in order of arrival (first and
newest included), so its cost does not grow with N; it is recomputed for every
streamed model (fantasies inherit the estimate of the real data) -- and reports

* ``observation_noise=False`` (BoTorch's default, the latent ``f``):
  ``max(var_y - noise, 1e-6)`` in standardised units;
* ``observation_noise=True``: that plus the noise estimate, i.e. the NP's own
  predictive variance wherever the latent variance is above the floor;
* ``observation_noise=<Tensor>``: the latent variance plus the given noise.

So the latent variance is the NP's uncertainty *relative to its most confident
observed point*: about zero there and, since an NP is usually least uncertain at its
data, positive almost everywhere else. A larger estimate clamps part of the space at
the floor, where LogEI is flat and degenerate: the median over the observed points,
used before, clamped half of the observed points by construction and 35-69 % of 1000
random points on Branin with ``cmanp-bo`` at N = 5, 20 and 60 (Sobol designs, 3
seeds), and a streamed run kept the estimate of its first model; the minimum clamps
5-27 % at N = 5 and 0-11 % at N = 20 and 60 (``tests/test_botorch.py`` holds a
case). An estimate from one point (N = 1) zeroes the latent variance there and
clamps wherever the NP is more confident than at that point.

This is not a GP's latent variance: at an observed point it falls only as far as the
NP's predictive variance does there, and the shipped ``cmanp-bo`` stays unsure at
some observed points (on Branin, corners it had evaluated several times kept a
latent std of about half the data's), so LogEI can still propose a point it has
seen. Without the floor LogEI follows that std more than before: in 30-evaluation
runs of ``npbandit.optimize`` with ``cmanp-bo`` it re-proposed points less often on
Hartmann-3 and more often on Branin. For a noisy objective, ask for
``observation_noise=True`` where an acquisition needs a new observation's
distribution.

For a diagonal surrogate the posterior is Gaussian and diagonal across distinct ``q``
points (the NP's targets are conditionally independent), so MC acquisition functions
sample them
independently; equal points within a t-batch share one latent draw (``f`` at one input
is one random variable; observation noise stays independent). Points in different
t-batches never interact. Rows equal in every t-batch -- the observed points qNEI
appends to each candidate -- are predicted once, with each t-batch's exact first
derivative (second derivatives through them are not propagated), and the model keeps
their moments and Jacobians for its next calls: an acquisition optimisation predicts
the observed points once, not in each of its hundreds of evaluations. The kept rows
must match exactly (values, dtype, device); a conditioned model and a model that
loaded a state dict predict them again from their own state.

For a joint-predictive surrogate (``surrogate.joint_predictive``, CMANP-AND) and
``q > 1`` the posterior is the surrogate's one-shot joint across each t-batch's ``q``
points, with the noise held out as above (:meth:`NPModel._joint_posterior`), so qLogEI,
qLogNEI and qKG see points that move together; ``q = 1`` takes the marginal path.
:meth:`NPModel.joint_sample` draws the latent objective jointly at thousands of points
through the surrogate's autoregressive ``sample`` (BO Thompson sampling).

Symmetric views
---------------
The ``bo`` prior is unchanged by permuting the input dimensions and by reflecting any
of them about the box's centre, so its posterior predictive is the same in every such
view of the data; a trained network is only approximately so, and its errors differ
from view to view. With ``n_views = K > 1`` the model conditions the network on ``K``
views of the data at once (view 0 the data as given, the others fixed symmetries:
:class:`~npbandit.surrogates.views.InputViews`; one batched network call serves them
all) and predicts the moments of the equal-weight mixture of the ``K`` predictives:
the mean of the means, and the mean variance plus the variance of the means.
``from_pretrained`` and ``construct_inputs`` use the number the checkpoint's card
recommends (``card["use"]["n_views"]``, default 1; fewer for ``d = 1``, whose box has two
symmetries): the held-out log-likelihood on the ``bo`` prior rises for every ``*-bo``
checkpoint at every ``d`` (docs/benchmarks.md, "bo-yardstick"), for about 1.3 x the
network time per call at ``K = 4`` (small calls are overhead-bound), but a search is what
counts, so a card recommends views only where the BO suite improved: ``cmanp-bo`` (4;
better on five of six functions), not ``tnpd-bo`` (worse on Rosenbrock-3 and Hartmann-3;
docs/results.md). Streaming updates, fantasies and the noise estimate work view by view,
and update cost stays constant in ``N`` (``K`` constant states). Joint-predictive surrogates take no views
(a mixture of their joints is not the Gaussian joint the posterior gives BoTorch).

Known noise
-----------
``train_Yvar`` (Ax passes it when the noise is known) is the noise of a new
observation -- ``observation_noise=True`` and ``likelihood.noise`` use its mean per
output, in place of the estimate -- while the latent variance keeps the NP's own
estimate: the NP conditions on ``Y`` alone, and its predictive variance carries the
noise level it inferred, whatever the truth. Streamed models keep the level.

State dict
----------
A GP's state dict holds its hyperparameters; the NP's counterpart is its network, which
the model holds outside its parameters. ``state_dict()`` holds the transforms' buffers
and the network's fingerprint (``_extra_state``, the sha256 of its weights);
``load_state_dict`` refuses a state from another network with a ``ValueError`` and
otherwise loads the transforms and re-conditions on the model's own data through them,
so a cross-validation fold (Ax: the full model's state loaded into a model on the fold's
data) sees only its own data.

dtype and device
----------------
The network stays in its own dtype (float32 from ``load_surrogate``) and is held
outside this module's parameters, so ``model.to(X)`` -- which analytic acquisition
functions call -- cannot silently upcast it. Inputs of any floating dtype are
accepted; posteriors come back in ``X``'s dtype. ``construct_inputs`` (Ax) loads it in
float32 too unless told otherwise (``network_dtype``). In float32 the acquisition value is
smooth only to about 1e-7, so BoTorch's L-BFGS-B ends a few more of Ax's 20 restarts
"ABNORMAL" and ``optimize_acqf`` starts again more often than in float64; but with four
symmetric views a float64 network call costs 1.5-2.7 x a float32 one, which outweighs
those retries (Ax on Branin: 2.04 x ``optimize``'s time per trial in float32, 2.40 x in
float64; docs/benchmarks.md, "ax-cost").
"""

from __future__ import annotations

import hashlib
import math
import sys
import threading
from pathlib import Path
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import FantasizeMixin, Model
from botorch.models.transforms.input import InputTransform
from botorch.models.transforms.outcome import OutcomeTransform
from botorch.posteriors.gpytorch import GPyTorchPosterior
from botorch.utils.datasets import MultiTaskDataset, SupervisedDataset
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from gpytorch.likelihoods import _GaussianLikelihoodBase
from gpytorch.likelihoods.noise_models import Noise
from gpytorch.mlls import MarginalLogLikelihood
from gpytorch.models import GP
from linear_operator.operators import DiagLinearOperator, RootLinearOperator
from linear_operator.utils.cholesky import psd_safe_cholesky
from torch import Tensor

from npbandit.priors import PRIORS
from npbandit.scaling import MIN_STD, standardization
from npbandit.surrogates.base import MIN_LATENT_VAR, NeuralProcess, NPState, hold_out_noise
from npbandit.surrogates.views import InputViews, symmetry_count

__all__ = ["NPModel", "NPLikelihood", "shared_surrogate"]

NOISE_POINTS = 256
# the infix of the columns Ax's OneHot transform makes of an unordered choice parameter
ONE_HOT_INFIX = "_OH_PARAM_"
# below this many rows saved, predicting the shared rows once (and their Jacobian) costs
# more than predicting them in every t-batch when a gradient is needed (CPU, cmanp-bo)
SHARED_ROWS_MIN = 100
# _first_equal_rows compares every pair of rows up to this many element comparisons, sorts beyond
PAIRWISE_MAX = 1 << 22


class _Held:
    """Keeps the network out of the ``nn.Module`` tree (see the module docstring)."""

    def __init__(self, surrogate: NeuralProcess) -> None:
        self.surrogate = surrogate


class _Rows:
    """Append-only rows shared by a chain of streamed models.

    Each model holds a view of the first ``n`` rows of ``store``; ``used`` rows are
    taken. Appending after the last taken row writes in place (the capacity doubles
    when full, so adding ``k`` rows costs ``O(k)`` amortised) and leaves every earlier
    view unchanged; appending after an older model's rows (a second branch) copies
    those rows into a new store.
    """

    def __init__(self, rows: Tensor) -> None:
        self.store = rows  # the caller's tensor until the first append; never written into
        self.used = rows.shape[0]

    def append(self, n: int, new: Tensor) -> tuple["_Rows", Tensor]:
        """``(rows, view)``: the rows ``[:n]`` followed by ``new``, and where they live."""
        new = new.detach().to(self.store)
        if n != self.used:
            rows = _Rows(torch.cat([self.store[:n], new]))
            return rows, rows.store
        end = n + new.shape[0]
        if end > self.store.shape[0]:
            grown = self.store.new_empty((max(2 * end, 16), *self.store.shape[1:]))
            grown[:n] = self.store[:n]
            self.store = grown
        self.store[n:end] = new
        self.used = end
        return self, self.store[:end]


def _moments(Y: Tensor) -> tuple[int, Tensor, Tensor]:
    """``(count, mean, sum of squared deviations)`` per column of ``Y [n, m]``, float64."""
    Y = Y.detach().to(torch.float64)
    mean = Y.mean(dim=0)
    return Y.shape[0], mean, (Y - mean).pow(2).sum(dim=0)


def _merge_moments(a: tuple[int, Tensor, Tensor], b: tuple[int, Tensor, Tensor]) -> tuple[int, Tensor, Tensor]:
    """Moments of the union of two sets from theirs (Chan, Golub and LeVeque's pairwise update)."""
    (na, ma, sa), (nb, mb, sb) = a, b
    n = na + nb
    delta = mb.to(ma) - ma
    return n, ma + delta * (nb / n), sa + sb.to(sa) + delta.pow(2) * (na * nb / n)


def _moment_statistics(moments: tuple[int, Tensor, Tensor]) -> tuple[Tensor, Tensor]:
    """``(mean, std)`` as :func:`~npbandit.scaling.standardization` defines them."""
    n, mean, m2 = moments
    if n == 1:
        return mean, torch.ones_like(mean)
    std = (m2 / (n - 1)).sqrt()
    return mean, torch.where(std >= MIN_STD, std, torch.ones_like(std))


def _evenly_spaced(n: int, k: int) -> Tensor | slice:
    """All of ``range(n)`` when ``n <= k``, else ``k`` indices evenly spaced over it, both ends included."""
    if n <= k:
        return slice(None)
    return torch.linspace(0, n - 1, k, dtype=torch.float64).round().long()


class _SharedRows:
    """The moments of one model at rows shared by every t-batch of a call, for the next call.

    qNEI appends its observed points to every candidate in every acquisition evaluation;
    a diagonal model's moments there do not depend on the candidates, so they are
    predicted once (values, and each row's Jacobian once a gradient is asked for) and
    reused while the rows are the same. The entry belongs to one model: a conditioned
    model starts without one, and :meth:`NPModel._set_data` (``load_state_dict``) drops it.
    A call uses it only when its rows at ``mask`` equal ``rows`` exactly, in the same
    dtype and device.

    ``mask``: ``q`` booleans, the positions of the shared rows (``own``: the others;
    ``order``: puts the other rows followed by the shared ones back in place); ``rows``:
    ``k x d`` (raw inputs, detached); ``mean`` / ``var``: ``k x m``, or ``None`` for rows
    seen once and not predicted apart (:meth:`seen`); ``jac_mean`` / ``jac_var``:
    ``k x m x d``, or ``None`` (not asked for yet). All in the rows' dtype, detached.
    """

    __slots__ = ("mask", "own", "order", "rows", "mean", "var", "jac_mean", "jac_var")

    def __init__(self, mask: Tensor, rows: Tensor, mean: Tensor | None, var: Tensor | None,
                 jac_mean: Tensor | None, jac_var: Tensor | None) -> None:
        self.mask, self.rows, self.mean, self.var = mask, rows, mean, var
        self.jac_mean, self.jac_var = jac_mean, jac_var
        self.own = ~mask
        # the other rows first, then the shared ones, back into the caller's order
        self.order = torch.argsort(torch.cat([torch.nonzero(self.own).squeeze(-1), torch.nonzero(mask).squeeze(-1)]))

    @classmethod
    def predict(cls, model: "NPModel", mask: Tensor, rows: Tensor, jacobians: bool) -> "_SharedRows":
        """The entry for ``rows`` (``k x d``) at ``mask``; with ``jacobians``, the rows'
        Jacobians too: one backward pass per output column and moment gives them for all
        rows at once (the rows' predictions are independent)."""
        rows = rows.detach().clone()
        if not jacobians:
            with torch.no_grad():
                mean, var = model._predict_rows(rows, rows.dtype)
            return cls(mask, rows, mean, var, None, None)
        leaf = rows.clone().requires_grad_(True)
        with torch.enable_grad():
            mean, var = model._predict_rows(leaf, rows.dtype)
            jac = [torch.stack([torch.autograd.grad(t[:, i].sum(), leaf, retain_graph=True)[0]
                                for i in range(t.shape[-1])], dim=-2)  # k x m x d
                   for t in (mean, var)]
        return cls(mask, rows, mean.detach(), var.detach(), jac[0], jac[1])

    @classmethod
    def seen(cls, mask: Tensor, rows: Tensor) -> "_SharedRows":
        """An entry without moments: ``rows`` (``k x d``) at ``mask`` were shared once."""
        return cls(mask, rows.detach().clone(), None, None, None, None)

    def complete(self, model: "NPModel", jacobians: bool) -> "_SharedRows":
        """This entry, with its moments (and Jacobians when asked for) predicted if missing."""
        if self.mean is not None and (self.jac_mean is not None or not jacobians):
            return self
        return _SharedRows.predict(model, self.mask, self.rows, jacobians)

    def matches(self, flat: Tensor) -> bool:
        """Whether every t-batch of ``flat`` (``b x q x d``) holds ``rows`` at ``mask``."""
        if flat.shape[-2] != self.mask.shape[0] or flat.dtype != self.rows.dtype or flat.device != self.rows.device:
            return False
        return bool((flat[:, self.mask] == self.rows).all())


class NPModel(Model, FantasizeMixin, GP):
    """A neural-process surrogate plus its training data, as a BoTorch ``Model``.

    It is also a GPyTorch ``GP`` with a Gaussian :class:`NPLikelihood`, so a GP
    script's ``fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))``
    runs unchanged; it fits nothing (see :meth:`custom_fit`).

    Args:
        surrogate: any :class:`~npbandit.surrogates.NeuralProcess` without an
            ``outcome_transform`` (the ``*-wheel`` checkpoints carry one: refused).
        train_X: ``n x d`` training inputs (``d`` at most the surrogate's input width).
        train_Y: ``n x m`` training outputs (``m`` = the surrogate's output width).
        train_Yvar: optional ``n x m`` known observation-noise variances (see "Known
            noise" in the module docstring).
        bounds: optional ``2 x d`` search-space box (lower row, upper row) mapped onto
            ``input_domain``.
        input_transform, outcome_transform: BoTorch transforms, applied as for any
            BoTorch model.
        input_domain: the box the surrogate's inputs were drawn from in training.
        standardize: standardise outputs by the training data (as the ``bo`` prior does).
        restandardize_tol: see "Streaming" in the module docstring.
        noise_points: at most this many observed points (evenly spaced in order of
            arrival) give the noise estimate; see the module docstring.
        n_views: average the predictive over this many symmetric views of the input
            box (see "Symmetric views" in the module docstring); only for a surrogate
            whose prior is unchanged by permuting and reflecting the inputs
            (``from_pretrained`` takes the number the card recommends), and not for a
            joint-predictive one. 1: the network as it is.

    ``train_X`` / ``train_Y`` hold the raw data the model was given (detached), as a
    BoTorch user expects; after streamed updates they are views into a buffer shared
    with the parent models, so treat them as read-only.
    """

    _num_outputs: int

    # Ax reads this: an NPModel models one outcome (the ``*-bo`` checkpoints' one output),
    # so Ax puts several outcomes in a ModelList instead of one batched model
    _supports_batched_models = False

    # The transforms are positional-or-keyword (not keyword-only) because Ax decides
    # whether a model class "supports" a transform from ``getfullargspec(cls).args``.
    def __init__(self, surrogate: NeuralProcess, train_X: Tensor, train_Y: Tensor, train_Yvar: Tensor | None = None,
                 input_transform: InputTransform | None = None, outcome_transform: OutcomeTransform | None = None,
                 *, bounds: Tensor | None = None, input_domain: tuple[float, float] = (0.0, 1.0),
                 standardize: bool = True, restandardize_tol: float = 0.2, noise_points: int = NOISE_POINTS,
                 n_views: int = 1) -> None:
        super().__init__()
        if not isinstance(surrogate, NeuralProcess):
            raise TypeError(f"surrogate must be an npbandit NeuralProcess, got {type(surrogate).__name__}")
        if surrogate.outcome_transform is not None:  # its predictive is not Gaussian in the data's units
            raise ValueError(f"surrogate reads its outputs through an outcome transform "
                             f"({surrogate.outcome_transform.describe()}); NPModel gives BoTorch a Gaussian "
                             "posterior in the data's units, which such a model does not have: use a checkpoint "
                             "without one (the *-bo ones), or set surrogate.outcome_transform = None and pass "
                             "train_Y in the network's own units")
        _check_matrix("train_X", train_X)
        _check_matrix("train_Y", train_Y)
        if train_X.shape[0] != train_Y.shape[0]:
            raise ValueError(f"train_X and train_Y must have the same number of rows, "
                             f"got {train_X.shape[0]} and {train_Y.shape[0]}")
        if train_Yvar is not None:
            _check_matrix("train_Yvar", train_Yvar)
            if train_Yvar.shape != train_Y.shape:
                raise ValueError(f"train_Yvar must have train_Y's shape {tuple(train_Y.shape)}, "
                                 f"got {tuple(train_Yvar.shape)}")
            if (train_Yvar < 0).any():
                raise ValueError("train_Yvar (observation noise variances) must be non-negative")
        if train_X.shape[0] == 0:
            raise ValueError("train_X must hold at least one point")
        if train_X.shape[-1] > surrogate.x_dim:
            raise ValueError(f"train_X has d={train_X.shape[-1]} inputs but the surrogate accepts at most "
                             f"{surrogate.x_dim}")
        if train_Y.shape[-1] != surrogate.y_dim:
            raise ValueError(f"train_Y must have {surrogate.y_dim} column(s) (the surrogate's outputs), "
                             f"got {train_Y.shape[-1]}")
        if not input_domain[0] < input_domain[1]:
            raise ValueError(f"input_domain must be (low, high) with low < high, got {input_domain}")
        if not restandardize_tol > 0:
            raise ValueError(f"restandardize_tol must be positive, got {restandardize_tol}")
        if not isinstance(noise_points, int) or isinstance(noise_points, bool) or noise_points < 1:
            raise ValueError(f"noise_points must be a positive int, got {noise_points!r}")
        if not isinstance(n_views, int) or isinstance(n_views, bool) or n_views < 1:
            raise ValueError(f"n_views must be a positive int, got {n_views!r}")
        if n_views > 1 and surrogate.joint_predictive:
            raise ValueError(f"n_views > 1 averages marginal predictives; {type(surrogate).__name__} is "
                             "joint-predictive and a mixture of its joints is not the Gaussian joint it gives BoTorch "
                             "(use n_views=1)")
        if n_views > 1 and not _input_symmetric(surrogate):
            raise ValueError(f"n_views > 1 needs a surrogate trained on a prior that permuting and reflecting the "
                             f"inputs leaves unchanged (the bo prior); this one's card names the "
                             f"{surrogate.card['prior']['name']!r} prior")
        self._held = _Held(surrogate)
        self._d = train_X.shape[-1]
        self._input_domain = (float(input_domain[0]), float(input_domain[1]))
        self._standardize = bool(standardize)
        self._tol = float(restandardize_tol)
        self._noise_points = noise_points
        self._bounds = None if bounds is None else _check_bounds(bounds, self._d)
        self._views = None if n_views == 1 else InputViews(self._d, surrogate.x_dim, n_views, self._input_domain)
        if input_transform is not None:
            self.input_transform = input_transform
        if outcome_transform is not None:
            self.outcome_transform = outcome_transform
        self.likelihood = NPLikelihood(self)
        self._batch_shape = torch.Size()
        self._num_outputs = surrogate.y_dim
        self._output_indices: list[int] | None = None
        self._pending: tuple[NPModel, Tensor, Tensor] | None = None  # a fantasy's data, until read
        self._train_Yvar = None if train_Yvar is None else train_Yvar.detach()
        self._set_data(train_X.detach(), train_Y.detach(), check=True)
        self.eval()  # transforms learned their statistics on the training data above

    def _set_data(self, train_X: Tensor, train_Y: Tensor, check: bool = False) -> None:
        """Derive everything the model keeps from its raw data, through the transforms in
        their current mode: at construction they learn their statistics here; after
        :meth:`load_state_dict` (eval mode) they apply the loaded ones. ``check``: refuse
        ``train_X`` outside the box (at construction; the data a model was conditioned on
        later were accepted then, see :meth:`condition_on_observations`)."""
        Yvar = self._train_Yvar
        Yvar_t = None
        if hasattr(self, "outcome_transform"):
            if Yvar is not None and Yvar.shape[-2] == train_Y.shape[-2]:
                train_Y_t, Yvar_t = self.outcome_transform(train_Y, Yvar, X=train_X)
            else:
                train_Y_t, _ = self.outcome_transform(train_Y, X=train_X)
                if Yvar is not None:  # a streamed model: the known noise of the points it was built on
                    k = Yvar.shape[-2]
                    _, Yvar_t = self.outcome_transform(train_Y[:k], Yvar, X=train_X[:k])
            self.outcome_transform.eval()
        else:
            train_Y_t, Yvar_t = train_Y, Yvar
        # one level per output (the NP conditions on Y alone and cannot weight points by
        # their noise), in the units of the outcome-transformed outputs, as a GP's noise
        self._known_noise = None if Yvar_t is None else Yvar_t.detach().to(torch.float64).mean(dim=-2)
        self.train_X = train_X
        self.train_Y = train_Y
        self._train_Y_t = train_Y_t.detach()
        self._rows = (_Rows(self.train_X), _Rows(self.train_Y),
                      None if train_Y_t is train_Y else _Rows(self._train_Y_t))
        self._moments = _moments(train_Y_t)
        X_in = self._to_surrogate_inputs(train_X, check="train_X" if check else None)
        self._set_statistics(train_Y_t)
        self._state = self._condition(X_in, train_Y_t)
        self._noise_var: Tensor | None = None
        self._shared_rows: _SharedRows | None = None  # moments at the conditioning just made are not kept

    # -- construction --------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, name: str | NeuralProcess, train_X: Tensor, train_Y: Tensor, **kwargs: Any) -> "NPModel":
        """Build from a shipped checkpoint (e.g. ``"cmanp-bo"``), a checkpoint path, or a
        surrogate already returned by ``load_surrogate`` (to load it once for many models).

        The input box and output standardisation follow the prior the checkpoint was
        trained on; any keyword of the constructor can override them."""
        from npbandit.surrogates.pretrained import load_surrogate

        surrogate = name if isinstance(name, NeuralProcess) else load_surrogate(name)
        for key, value in _pretrained_defaults(surrogate, train_X, train_Y, "from_pretrained").items():
            kwargs.setdefault(key, value)
        return cls(surrogate, train_X, train_Y, **kwargs)

    #: the constructor's options that ``construct_inputs`` (Ax's ``model_options``) passes on
    OPTIONS = ("bounds", "input_domain", "standardize", "restandardize_tol", "noise_points", "n_views")

    @classmethod
    def construct_inputs(cls, training_data: SupervisedDataset, *, checkpoint: str | Path | NeuralProcess | None = None,
                         network_dtype: torch.dtype | None = None, **options: Any) -> dict[str, Any]:
        """The constructor's keyword arguments from a dataset and model options: how Ax
        builds the model, ``ModelConfig(botorch_model_class=NPModel,
        model_options={"checkpoint": "cmanp-bo"})``.

        Args:
            training_data: a BoTorch ``SupervisedDataset`` (``X``: ``n x d``, ``Y``:
                ``n x m``, optional ``Yvar``: ``n x m`` known noise variances).
            checkpoint: a checkpoint name or path (loaded once per process and shared,
                see :func:`shared_surrogate`), or a loaded surrogate.
            network_dtype: the dtype a named checkpoint is loaded in; default float32,
                as ``load_surrogate`` and ``optimize`` use (faster per call than float64,
                for a few more restarted optimisations: see "dtype and device" in the
                module docstring).
            options: any of :attr:`OPTIONS`, passed on to the constructor.

        Returns ``train_X``, ``train_Y``, ``train_Yvar`` (when the dataset has it),
        ``surrogate``, the checkpoint's ``input_domain`` / ``standardize`` (as in
        :meth:`from_pretrained`) and ``options``.

        Raises:
            ValueError: no ``checkpoint``; a checkpoint for another kind of task; a
                dataset with categorical, fidelity or task features (Ax passes those
                for search spaces NPModel cannot model).
            TypeError: an option the constructor does not take.
        """
        _register_with_ax()
        unsupported = {"categorical_features": "categorical parameters", "fidelity_features": "fidelity parameters",
                       "task_feature": "a task parameter", "hierarchical_dependencies": "a hierarchical search space"}
        for key, what in unsupported.items():
            if options.get(key):
                raise ValueError(f"NPModel models continuous (range) parameters only; this search space has {what} "
                                 f"({key}={options[key]!r})")
            options.pop(key, None)
        unknown = sorted(set(options) - set(cls.OPTIONS))
        if unknown:
            raise TypeError(f"NPModel got unknown model option(s) {unknown}; it takes checkpoint and {list(cls.OPTIONS)}")
        if checkpoint is None:
            raise ValueError("NPModel needs a checkpoint: model_options={'checkpoint': 'cmanp-bo'} in Ax's "
                             "ModelConfig (or construct_inputs(dataset, checkpoint=...)); see `npbandit models`")
        if isinstance(training_data, MultiTaskDataset):
            raise ValueError("NPModel models a single task; training_data is a MultiTaskDataset")
        # Ax one-hot encodes unordered choice parameters before the model sees them (its OneHot
        # transform names the columns <parameter>_OH_PARAM_<k>): 0/1 columns the NP would read as
        # smooth inputs of a box, one input of the checkpoint per level
        one_hot = sorted({name.split(ONE_HOT_INFIX)[0] for name in getattr(training_data, "feature_names", [])
                          if ONE_HOT_INFIX in name})
        if one_hot:
            raise ValueError(f"NPModel models continuous (range) parameters only; this search space has "
                             f"categorical parameters {one_hot} (Ax one-hot encodes them); use ordered choice or "
                             "range parameters, or one NPModel per category")
        inputs: dict[str, Any] = dict(super().construct_inputs(training_data))
        _check_matrix("training_data.X", inputs["train_X"])
        if isinstance(checkpoint, NeuralProcess):
            if network_dtype is not None:
                raise ValueError("network_dtype applies to a checkpoint name or path, not to a loaded surrogate")
            surrogate = checkpoint
        else:
            surrogate = shared_surrogate(checkpoint, dtype=network_dtype or torch.float32)
        inputs["surrogate"] = surrogate
        inputs.update(_pretrained_defaults(surrogate, inputs["train_X"], inputs["train_Y"], "construct_inputs"))
        inputs.update(options)
        return inputs

    @property
    def surrogate(self) -> NeuralProcess:
        """The wrapped neural process (shared by every model conditioned from this one)."""
        return self._held.surrogate

    @property
    def train_X(self) -> Tensor:
        """Training inputs, ``batch_shape x N x d`` (raw, before any ``input_transform``)."""
        if self._pending is not None:
            self._materialise()
        return self._train_X

    @train_X.setter
    def train_X(self, value: Tensor) -> None:
        self._train_X = value

    @property
    def train_Y(self) -> Tensor:
        """Training outputs, ``batch_shape x N x m`` (raw, before any ``outcome_transform``)."""
        if self._pending is not None:
            self._materialise()
        return self._train_Y

    @train_Y.setter
    def train_Y(self, value: Tensor) -> None:
        self._train_Y = value

    def _materialise(self) -> None:
        parent, X, Y = self._pending
        batch, n = self._batch_shape, X.shape[-2]
        old_X, old_Y = parent.train_X, parent.train_Y
        self._train_X = torch.cat([old_X.expand(*batch, *old_X.shape[-2:]),
                                   X.detach().expand(*batch, n, self._d).to(old_X)], dim=-2)
        self._train_Y = torch.cat([old_Y.expand(*batch, *old_Y.shape[-2:]),
                                   Y.detach().expand(*batch, n, Y.shape[-1]).to(old_Y)], dim=-2)
        self._pending = None

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

    @property
    def batch_shape(self) -> torch.Size:
        return self._batch_shape

    # -- modes and fitting --------------------------------------------------------

    def train(self, mode: bool = True) -> "NPModel":
        """Set ``training`` here and in the transforms; returns the model.

        A BoTorch ``Model`` would also swap GPyTorch ``train_inputs`` for transformed
        ones (and warn that it has none); the NP keeps its transformed context in its
        state instead, so only the modes change."""
        return torch.nn.Module.train(self, mode)

    def eval(self) -> "NPModel":
        """``train(False)``."""
        return self.train(False)

    def custom_fit(self, mll: MarginalLogLikelihood, **kwargs: Any) -> MarginalLogLikelihood:
        """Nothing to fit: the surrogate is pretrained. Returns ``mll`` in eval mode.

        ``botorch.fit.fit_gpytorch_mll`` calls this (BoTorch >= 0.18; on 0.17 the same
        function is registered with its dispatcher), so a GP script's fitting line is
        accepted unchanged; the network's weights and the model's data stay as they are.
        Any other keyword (closure, optimizer, ...) is accepted and not used."""
        if not isinstance(mll, MarginalLogLikelihood):
            raise TypeError(f"mll must be a gpytorch MarginalLogLikelihood, got {type(mll).__name__}")
        if mll.model is not self:
            raise ValueError("mll must be built on this model (mll.model is another model)")
        return mll.eval()

    # -- state dict ----------------------------------------------------------------
    #
    # A GP's state dict is its hyperparameters; Ax loads it into a model built on other
    # data (cross-validation folds, warm starts) and expects the same model on that data.
    # The NP's counterpart of hyperparameters is its network, which the model holds
    # outside its parameters (see the module docstring). So the state dict carries the
    # network's fingerprint (``_extra_state``: the sha256 of its weights) next to the
    # transforms' buffers: loading it checks that both models run the same network and
    # refuses otherwise, loads the transforms and re-conditions on this model's own data
    # through them -- nothing of the other model's data comes along.

    def get_extra_state(self) -> Tensor:
        """The network's fingerprint: the sha256 of its weights, 32 ``uint8`` values."""
        return _fingerprint(self.surrogate)

    def set_extra_state(self, state: Any) -> None:
        """Check that ``state`` (from :meth:`get_extra_state`) names this model's network."""
        if not isinstance(state, Tensor) or state.dtype != torch.uint8 or state.shape != (32,):
            raise ValueError("state_dict['_extra_state'] is not an NPModel's network fingerprint "
                             "(32 uint8 values, the sha256 of its weights)")
        own = _fingerprint(self.surrogate)
        if not torch.equal(state.cpu(), own):
            raise ValueError(f"state_dict comes from an NPModel on another network (weights sha256 "
                             f"{bytes(state.tolist()).hex()[:12]}…, this model's {bytes(own.tolist()).hex()[:12]}…); "
                             "loading it cannot change the network: build the model on that checkpoint instead")

    def load_state_dict(self, state_dict: Any, strict: bool = True, assign: bool = False) -> Any:
        """Load another NPModel's state: same network (checked), its transforms' buffers,
        then re-condition on this model's data through them.

        Raises ``ValueError`` for a state dict from a model on another network, and for a
        batched (fantasy) model."""
        if self.batch_shape:
            raise ValueError("load_state_dict is not supported on a batched (fantasy) NPModel")
        result = super().load_state_dict(state_dict, strict=strict, assign=assign)
        if hasattr(self, "input_transform") or hasattr(self, "outcome_transform"):
            self.eval()
            self._set_data(self.train_X, self.train_Y)
        return result

    # -- scaling -------------------------------------------------------------------

    def _to_surrogate_inputs(self, X: Tensor, check: str | None = None) -> Tensor:
        """Raw ``... x d`` inputs -> the surrogate's inputs ``... x x_dim`` in its dtype/device.

        ``check``: the name of the argument ``X`` came from, when it must lie in ``bounds``
        (or, without them, in the box the surrogate was trained on): ``train_X`` at
        construction, where data far outside is most likely unscaled."""
        X = self.transform_inputs(X)
        outside = check is not None and X.numel() > 0
        if self._bounds is not None:
            lo, hi = self._bounds.to(X)
            X = (X - lo) / (hi - lo)
            if outside and (X.min() < -1e-6 or X.max() > 1 + 1e-6):
                raise ValueError(f"{check} (after any input_transform) lies outside bounds, which are mapped onto "
                                 "the box the surrogate was trained on; pass bounds that contain the data")
            low, high = self._input_domain
            X = low + X * (high - low)
        elif outside:
            low, high = self._input_domain
            if X.min() < low - 1e-6 or X.max() > high + 1e-6:
                raise ValueError(f"{check} (after any input_transform) lies outside [{low}, {high}]^d, the box the "
                                 "surrogate was trained on; pass bounds=<2 x d tensor> or a Normalize input_transform")
        ref = next(self.surrogate.parameters())
        X = X.to(device=ref.device, dtype=ref.dtype)
        pad = self.surrogate.x_dim - X.shape[-1]
        if pad:
            X = torch.cat([X, X.new_zeros(X.shape[:-1] + (pad,))], dim=-1)
        return X

    def _set_statistics(self, Y_t: Tensor) -> None:
        if self._standardize:
            mean, std = standardization(Y_t.detach().to(torch.float64))
            self._y_mean, self._y_std = mean.squeeze(-2), std.squeeze(-2)
        else:
            self._y_mean = torch.zeros(Y_t.shape[-1], dtype=torch.float64)
            self._y_std = torch.ones(Y_t.shape[-1], dtype=torch.float64)

    def _normalise_outputs(self, Y_t: Tensor) -> Tensor:
        ref = next(self.surrogate.parameters())
        Y = (Y_t.to(torch.float64) - self._y_mean.to(Y_t.device)) / self._y_std.to(Y_t.device)
        return Y.to(device=ref.device, dtype=ref.dtype)

    def _condition(self, X_in: Tensor, Y_t: Tensor) -> NPState:
        with torch.no_grad():
            return self._absorb(None, X_in.unsqueeze(0), self._normalise_outputs(Y_t).unsqueeze(0))

    def _absorb(self, state: NPState | None, X_in: Tensor, Y_n: Tensor) -> NPState:
        """The network's state after conditioning on (``state is None``) or adding
        ``X_in [b, n, x_dim]``, ``Y_n [b, n, m]`` (network units), in every view."""
        if self._views is not None:
            X_in, Y_n = self._views.inputs(X_in), self._views.outputs(Y_n)
        if state is None:
            return self.surrogate.condition(X_in, Y_n)
        return self.surrogate.update(state, X_in, Y_n)

    def _predict(self, X_in: Tensor) -> tuple[Tensor, Tensor]:
        """The network's predictive mean and variance at ``X_in [b, M, x_dim]`` (``[b, M, m]``
        each): with views, the moments of the mixture over them."""
        if self._views is None:
            dist = self.surrogate.predict(self._state, X_in)
            return dist.loc, dist.variance
        dist = self.surrogate.predict(self._state, self._views.inputs(X_in))
        return self._views.combine(dist.loc, dist.variance)

    def noise_variance(self) -> Tensor:
        """The observation-noise estimate, per output, in standardised units: the smallest
        predictive variance of the NP at the observed points, at most ``noise_points`` of
        them (see the module docstring)."""
        if self._noise_var is None:  # fantasy models inherit it, so this model is not batched
            X = self.train_X
            with torch.no_grad():
                X_in = self._to_surrogate_inputs(X[_evenly_spaced(X.shape[-2], self._noise_points)])
                var = self._predict(X_in.unsqueeze(0))[1]
                self._noise_var = var.reshape(-1, var.shape[-1]).amin(dim=0).to(torch.float64).cpu()
        return self._noise_var

    def _observation_noise(self) -> Tensor:
        """The noise of a new observation, per output, in standardised units: the known
        noise (``train_Yvar``) when given, else the estimate."""
        if self._known_noise is None:
            return self.noise_variance()
        return self._known_noise / self._y_std.to(torch.float64) ** 2

    # -- posterior -----------------------------------------------------------------

    def _marginals(self, X: Tensor) -> tuple[Tensor, Tensor]:
        """The NP's predictive mean and variance at ``X`` (``batch_shape x q x d``), in
        standardised units: ``broadcast(batch_shape, model.batch_shape) x q x m`` each, in
        ``X``'s dtype."""
        out_batch = torch.broadcast_shapes(X.shape[:-2], self.batch_shape)
        q, m = X.shape[-2], self.surrogate.y_dim
        X = X.expand(*out_batch, q, self._d)
        if q == 0:
            empty = X.new_zeros((*out_batch, 0, m))
            return empty, empty
        n_model = math.prod(self.batch_shape)
        n_extra = math.prod(out_batch) // n_model
        if n_model == 1:
            # Rows equal in every t-batch -- the observed points qNEI appends to each
            # candidate, pending points -- are predicted once (the marginals are per point,
            # so this is exact) and kept for the next call (_SharedRows). A gradient then
            # needs each t-batch's own share: the shared rows' Jacobian carries it (first
            # order; see posterior).
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
        m = self.surrogate.y_dim
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

    def _shared_moments(self, flat: Tensor, needs_grad: bool) -> "_SharedRows | None":
        """The moments at the rows of ``flat`` (``b x q x d``) equal in every t-batch, with
        their Jacobians when ``needs_grad``; ``None`` when no row is shared or predicting
        them once would not pay.

        The last shared rows and their moments are kept (:class:`_SharedRows`), so qNEI's
        observed points are predicted once per model rather than once per acquisition
        evaluation; a single t-batch holding the kept rows at their positions uses them
        too (the last restarts of a batched L-BFGS-B)."""
        entry = self._shared_rows
        if entry is not None and entry.matches(flat):
            # the rows came back: predicting them apart (with their Jacobian) pays from now on
            entry = self._shared_rows = entry.complete(self, needs_grad)
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
            self._shared_rows = _SharedRows.seen(mask, flat[0, mask])
            return None
        # the local name, not the attribute: another thread may keep other rows meanwhile
        entry = self._shared_rows = _SharedRows.predict(self, mask, flat[0, mask], needs_grad)
        return entry

    def _predict_rows(self, rows: Tensor, dtype: torch.dtype) -> tuple[Tensor, Tensor]:
        """Mean and variance (``n x m`` each, ``dtype``) at raw inputs ``rows`` (``n x d``)."""
        m = self.surrogate.y_dim
        if not rows.shape[0]:
            empty = rows.new_zeros((0, m), dtype=dtype)
            return empty, empty
        mean, var = self._predict(self._to_surrogate_inputs(rows).unsqueeze(0))
        return mean.reshape(-1, m).to(dtype), var.reshape(-1, m).to(dtype)

    def posterior(self, X: Tensor, output_indices: list[int] | None = None,
                  observation_noise: bool | Tensor = False,
                  posterior_transform: PosteriorTransform | None = None) -> GPyTorchPosterior:
        """Gaussian posterior at ``X`` (``batch_shape x q x d``): diagonal across ``q`` for a
        diagonal surrogate, the surrogate's joint across ``q`` for a joint-predictive one
        (``surrogate.joint_predictive``, ``q > 1``: :meth:`_joint_posterior`).

        Returns a ``GPyTorchPosterior`` over ``broadcast(batch_shape, model.batch_shape) x q x m``
        in ``X``'s dtype; differentiable in ``X``."""
        if not isinstance(X, Tensor) or not X.is_floating_point():
            raise TypeError(f"X must be a floating-point torch.Tensor, got {type(X).__name__}")
        if X.dim() < 2 or X.shape[-1] != self._d:
            raise ValueError(f"X must have shape batch_shape x q x {self._d}, got {tuple(X.shape)}")
        if not torch.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        if output_indices is not None:
            _check_output_indices("output_indices", output_indices, self.surrogate.y_dim)
        self.eval()
        if self.surrogate.joint_predictive and X.shape[-2] > 1:
            return self._joint_posterior(X, output_indices, observation_noise, posterior_transform)
        mean, var = self._marginals(X)
        noise = self.noise_variance().to(var)
        var = (var - noise).clamp_min(MIN_LATENT_VAR)
        obs_var = self._observation_variance(observation_noise, var)
        scale = self._y_std.to(var) ** 2
        mean = mean * self._y_std.to(mean) + self._y_mean.to(mean)
        var = var * scale
        obs_var = None if obs_var is None else obs_var * scale
        indices = output_indices if output_indices is not None else self._output_indices
        if indices is not None:
            mean, var = mean[..., indices], var[..., indices]
            obs_var = None if obs_var is None else obs_var[..., indices]
        same = _first_equal_rows(X.expand(*mean.shape[:-2], *X.shape[-2:])) if X.shape[-2] > 1 else None
        posterior = _gaussian_posterior(mean, var, obs_var, same)
        if hasattr(self, "outcome_transform"):
            posterior = self.outcome_transform.untransform_posterior(posterior, X=X)
        if posterior_transform is not None:
            posterior = posterior_transform(posterior)
        return posterior

    def _observation_variance(self, observation_noise: bool | Tensor, like: Tensor) -> Tensor | None:
        """The variance ``observation_noise`` adds, in standardised units, shaped like
        ``like`` (``... x q x m``); ``None`` for the latent posterior."""
        if isinstance(observation_noise, Tensor):
            return (observation_noise.to(like) / self._y_std.to(like) ** 2).expand_as(like)
        if observation_noise:
            return self._observation_noise().to(like).expand_as(like)
        return None

    # -- the joint posterior of a joint-predictive surrogate -------------------------
    #
    # Kept apart from the marginal path above, which diagonal surrogates (and q = 1)
    # take unchanged.

    def _joint_parts(self, X: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        """The surrogate's one-shot joint at ``X`` (``batch_shape x q x d``), each t-batch's
        ``q`` points together, in standardised units and ``X``'s dtype: mean
        ``out_batch x q x m``, covariance factors ``out_batch x q x m x r`` and diagonal
        ``out_batch x q x m`` (``out_batch = broadcast(batch_shape, model.batch_shape)``)."""
        joint = getattr(self.surrogate, "joint", None)
        if not callable(joint):
            raise TypeError(f"{type(self.surrogate).__name__} says joint_predictive but has no joint(state, xt) "
                            "method returning its low-rank-plus-diagonal joint")
        out_batch = torch.broadcast_shapes(X.shape[:-2], self.batch_shape)
        flat, unflatten = self._as_targets(X.expand(*out_batch, *X.shape[-2:]))
        dist = joint(self._state, flat)
        r = dist.cov_factor.shape[-1]
        return unflatten(dist.loc), unflatten(dist.cov_factor, r), unflatten(dist.cov_diag)

    def _joint_posterior(self, X: Tensor, output_indices: list[int] | None, observation_noise: bool | Tensor,
                         posterior_transform: PosteriorTransform | None) -> GPyTorchPosterior:
        """The posterior of a joint-predictive surrogate at ``X`` (``batch_shape x q x d``,
        ``q > 1``), joint across each t-batch's ``q`` points.

        It is the surrogate's *one-shot* joint -- the low-rank-plus-diagonal Gaussian
        ``N(mu, Phi Phi^T + diag(s^2))`` its head gives the ``q`` points together, the
        joint CMANP-AND is trained on -- with the noise estimate held out as on the
        marginal path (:func:`~npbandit.surrogates.base.hold_out_noise`: its marginals are
        the ``q = 1`` posterior's, and it is ``Cov(y) - noise I`` wherever the diagonal
        carries the noise), put in the user's units, and returned as a
        ``GPyTorchPosterior`` over a multivariate normal whose covariance is a root
        ``R R^T`` with ``R`` square (``q m x q m``).

        Why a Gaussian posterior and not draws through the surrogate's autoregressive
        ``sample``: BoTorch's MC acquisition functions draw ``mu + R z`` from fixed
        quasi-MC base samples ``z`` of the posterior's ``base_sample_shape`` (here ``q m``
        values, as for a GP), so an acquisition value is a smooth deterministic function of
        ``X`` that L-BFGS-B can optimise, and posterior and outcome transforms, fantasies
        and ``covariance_matrix`` work as for any GP. The autoregressive draw is not
        Gaussian (no transform or scalarisation could act on it), depends on the order of
        the points, and costs one ``update`` per block, per MC sample and per t-batch --
        on the ``N + q`` points qNEI scores per t-batch that is far too slow for an
        acquisition optimiser. For ``q`` up to ``block_size`` (5) the two are the same
        distribution; beyond it the one-shot joint is what the head was trained on. The
        autoregressive draw is for thousands of points at once: :meth:`joint_sample`.

        Equal points within a t-batch share one latent draw, as on the marginal path;
        observation noise stays independent. The root is dense, ``q m x q m`` per t-batch
        (like a GP's posterior), and rows the t-batches share are predicted in each."""
        loc, factor, diag = self._joint_parts(X)
        noise = self.noise_variance().to(diag)
        y_mean, y_std = self._y_mean.to(loc), self._y_std.to(loc)
        obs_var = self._observation_variance(observation_noise, diag)
        indices = output_indices if output_indices is not None else self._output_indices
        if indices is not None:
            loc, diag, factor = loc[..., indices], diag[..., indices], factor[..., indices, :]
            noise, y_mean, y_std = noise[indices], y_mean[indices], y_std[indices]
            obs_var = None if obs_var is None else obs_var[..., indices]
        factor, diag = hold_out_noise(factor, diag, noise)
        same = _first_equal_rows(X.expand(*loc.shape[:-2], *X.shape[-2:]))
        if same is not None:  # equal points take the first one's moments (as _gaussian_posterior)
            loc, diag = (t.gather(-2, same.unsqueeze(-1).expand_as(t)) for t in (loc, diag))
            factor = factor.gather(-3, same[..., None, None].expand_as(factor))
        mean = loc * y_std + y_mean
        root = _low_rank_root(factor * y_std.unsqueeze(-1), diag * y_std**2, same)
        covar = RootLinearOperator(root)
        if obs_var is not None:
            covar = covar + DiagLinearOperator((obs_var * y_std**2).flatten(-2))
        if mean.shape[-1] == 1:
            posterior = GPyTorchPosterior(MultivariateNormal(mean.squeeze(-1), covar))
        else:
            posterior = GPyTorchPosterior(MultitaskMultivariateNormal(mean, covar, interleaved=True))
        if hasattr(self, "outcome_transform"):
            posterior = self.outcome_transform.untransform_posterior(posterior, X=X)
        if posterior_transform is not None:
            posterior = posterior_transform(posterior)
        return posterior

    def joint_sample(self, X: Tensor, num_samples: int = 1, generator: torch.Generator | None = None, *,
                     block_size: int | None = None) -> Tensor:
        """Joint draws of the latent objective at ``X`` (``n x d``, raw inputs): ``num_samples
        x n x m``, in ``X``'s dtype and the user's units (any outcome transform undone).

        Through the surrogate's ``sample`` with the noise estimate held out
        (``noise=``, as the posterior holds it out): a joint-predictive surrogate draws
        the points autoregressively in blocks (CMANP-AND: ``block_size`` points per block,
        folded into its state with the constant-cost ``update``), so ``n`` may be thousands
        and memory does not grow with the number of observations; a diagonal surrogate's
        draws are independent across points -- its own joint, which is what makes an argmax
        over many of them optimistic. ``generator`` lives on the network's device (CPU for
        the shipped checkpoints); ``None`` uses torch's global generator. ``block_size``:
        points per autoregressive block of a joint-predictive surrogate (``None``: its
        ``config.block_size``); refused for a diagonal one, which has no blocks. Over many
        points prefer one block (``block_size=n``), as ``BOPolicy``'s Thompson draw does:
        the shipped ``cmanp-and-bo`` barely narrows its spread at the values folded in, so
        draws in many blocks drift away from the marginals (docs/results.md, "Why, and the
        fix: one block").

        The model must not be batched (a fantasy model) and ``X`` must be 2-D.
        """
        if not isinstance(X, Tensor) or not X.is_floating_point():
            raise TypeError(f"X must be a floating-point torch.Tensor, got {type(X).__name__}")
        if X.dim() != 2 or X.shape[-1] != self._d or X.shape[0] == 0:
            raise ValueError(f"X must have shape n x {self._d} with n >= 1, got {tuple(X.shape)}")
        if not torch.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        if self.batch_shape:
            raise ValueError(f"joint_sample needs a model without batch shape, got {tuple(self.batch_shape)}")
        blocks = {}
        if block_size is not None:
            if not self.surrogate.joint_predictive:
                raise ValueError(f"block_size is for a joint-predictive surrogate (cmanp-and); "
                                 f"{type(self.surrogate).__name__} draws every point independently")
            blocks["block_size"] = block_size
        self.eval()
        X_in = self._to_surrogate_inputs(X).unsqueeze(0)
        noise = self.noise_variance().to(X_in)
        if self._views is None:
            draws = self.surrogate.sample(self._state, X_in, num_samples, generator, noise=noise, **blocks)
        else:  # a diagonal surrogate's draw, from the mixture's moments (as the posterior's)
            mean, var = self._predict(X_in)
            std = (var - noise).clamp_min(MIN_LATENT_VAR).sqrt()
            draws = mean + std * torch.randn((num_samples, *mean.shape), generator=generator, dtype=mean.dtype,
                                             device=mean.device)
        draws = draws.squeeze(1).to(X.dtype) * self._y_std.to(X) + self._y_mean.to(X)
        if hasattr(self, "outcome_transform"):
            draws, _ = self.outcome_transform.untransform(draws)
        if self._output_indices is not None:
            draws = draws[..., self._output_indices]
        return draws

    # -- new data ------------------------------------------------------------------

    def condition_on_observations(self, X: Tensor, Y: Tensor, **kwargs: Any) -> "NPModel":
        """A new model with ``(X, Y)`` added through the surrogate's ``update``.

        ``X``: ``batch_shape x n' x d``; ``Y``: ``batch_shape' x n' x m`` (fantasies
        carry extra leading batch dimensions). The network is shared, not copied. Unlike
        ``train_X``, ``X`` may leave the box a little: a ``Normalize`` transform learned
        on ``train_X`` maps new points beyond the observed range outside it.

        A batched (fantasy) model's predictions are differentiable in ``X`` and ``Y``, as
        a GP's are: qKnowledgeGradient, qNegIntegratedPosteriorVariance and
        qMultiStepLookahead depend on their candidates through them. A non-batched update
        (new real data) keeps no graph: its data are stored detached."""
        if not isinstance(X, Tensor) or not isinstance(Y, Tensor):
            raise TypeError("X and Y must be torch.Tensors")
        if X.dim() < 2 or X.shape[-1] != self._d:
            raise ValueError(f"X must have shape batch_shape x n x {self._d}, got {tuple(X.shape)}")
        if Y.dim() < 2 or Y.shape[-1] != self.surrogate.y_dim or Y.shape[-2] != X.shape[-2]:
            raise ValueError(f"Y must have shape batch_shape x {X.shape[-2]} x {self.surrogate.y_dim}, "
                             f"got {tuple(Y.shape)}")
        if not (torch.isfinite(X).all() and torch.isfinite(Y).all()):
            raise ValueError("X and Y must be finite")
        # a ``noise`` keyword (fixed-noise fantasies) is accepted and not used: the NP
        # infers the noise level from the data it conditions on
        Y_t = Y
        if hasattr(self, "outcome_transform"):
            Y_t, _ = self.outcome_transform(Y, X=X)
        new_batch = torch.broadcast_shapes(X.shape[:-2], Y.shape[:-2], self.batch_shape)
        if not new_batch:
            if X.shape[-2] == 0:  # nothing to add (the running moments of no points are NaN)
                return self._child()
            return self._stream(X, Y, Y_t)
        return self._fantasy(X, Y, Y_t, new_batch)

    # The model's own state, all of which a conditioned model starts from (shared
    # references, never written in place). Everything else in the instance dict is
    # torch/GPyTorch bookkeeping that each model gets fresh from the constructor chain.
    _FIELDS = ("_held", "_d", "_input_domain", "_standardize", "_tol", "_noise_points", "_bounds",
               "_batch_shape", "_num_outputs", "_output_indices", "_pending", "_train_X", "_train_Y",
               "_train_Y_t", "_rows", "_moments", "_y_mean", "_y_std", "_state", "_noise_var",
               "_train_Yvar", "_known_noise", "_views")

    def _child(self) -> "NPModel":
        """A model with this one's data and state, for the caller to modify; O(1)."""
        child = NPModel.__new__(NPModel)
        super(NPModel, child).__init__()
        for name in self._FIELDS:
            setattr(child, name, getattr(self, name))
        for name in ("input_transform", "outcome_transform"):
            if hasattr(self, name):
                setattr(child, name, getattr(self, name))  # in eval mode; shared like the network
        child._shared_rows = None  # another state: the parent's kept moments do not apply
        child.likelihood = NPLikelihood(child)
        child.train(self.training)
        return child

    def _stream(self, X: Tensor, Y: Tensor, Y_t: Tensor) -> "NPModel":
        """Non-batched update; its work does not grow with N (see "Streaming" in the module docstring)."""
        X_in = self._to_surrogate_inputs(X)
        child = self._child()
        n = self.train_X.shape[-2]
        rows_X, child.train_X = self._rows[0].append(n, X)
        rows_Y, child.train_Y = self._rows[1].append(n, Y)
        if self._rows[2] is None:
            rows_Y_t, child._train_Y_t = None, child.train_Y
        else:
            rows_Y_t, child._train_Y_t = self._rows[2].append(n, Y_t)
        child._rows = (rows_X, rows_Y, rows_Y_t)
        child._moments = _merge_moments(self._moments, _moments(Y_t))
        child._noise_var = None  # re-estimated for the new state, from at most noise_points points
        if self._standardize and self._drifted(*_moment_statistics(child._moments)):
            child._set_statistics(child._train_Y_t)
            child._state = child._condition(child._to_surrogate_inputs(child.train_X), child._train_Y_t)
        else:
            with torch.no_grad():
                child._state = self._absorb(self._state, X_in.unsqueeze(0),
                                            self._normalise_outputs(Y_t).unsqueeze(0))
        return child

    def _drifted(self, mean: Tensor, std: Tensor) -> bool:
        moved = ((mean - self._y_mean).abs() > self._tol * self._y_std).any()
        rescaled = ((std / self._y_std).log().abs() > math.log1p(self._tol)).any()
        return bool(moved or rescaled)

    def _fantasy(self, X: Tensor, Y: Tensor, Y_t: Tensor, new_batch: torch.Size) -> "NPModel":
        """The batched model ``new_batch`` with ``(X, Y)`` added. Not under ``no_grad``: its
        predictions are differentiable in ``X`` and ``Y``, as a GP's fantasy model is, which
        is all qKnowledgeGradient's value depends on its candidate through."""
        n = X.shape[-2]
        n_new = math.prod(new_batch)
        self.noise_variance()  # computed on the real data, inherited by the fantasies
        child = self._child()
        rows = self._element_index(new_batch)  # each new element starts from the model element it broadcasts
        if self._views is not None:  # the state holds each element once per view, element-major
            k = self._views.n_views
            rows = (rows.unsqueeze(-1) * k + torch.arange(k)).reshape(-1)
        child._state = self._state.select(rows)
        if n:
            X_in = self._to_surrogate_inputs(X.expand(*new_batch, n, self._d))
            Y_n = self._normalise_outputs(Y_t.expand(*new_batch, n, Y_t.shape[-1]))
            child._state = self._absorb(child._state, X_in.reshape(n_new, n, X_in.shape[-1]),
                                        Y_n.reshape(n_new, n, Y_n.shape[-1]))
        child._batch_shape = new_batch
        # train_X / train_Y (batch x (N + n) x d) are built only if read: a fantasy per
        # acquisition evaluation (qKG) would otherwise copy all N points every time
        child._pending, child._train_X, child._train_Y = (self, X, Y), None, None
        child._train_Y_t = child._rows = child._moments = None
        return child

    def subset_output(self, idcs: list[int]) -> "NPModel":
        """The same model restricted to outputs ``idcs``."""
        _check_output_indices("idcs", idcs, self.surrogate.y_dim)
        child = self._child()
        child._output_indices = list(idcs)
        child._num_outputs = len(idcs)
        return child


class _NoiseEstimate(Noise):
    """The model's noise estimate as a GPyTorch noise model: no parameters, read on use."""

    def __init__(self, model: NPModel) -> None:
        super().__init__()
        # a plain reference: as a registered submodule the model would contain itself
        object.__setattr__(self, "_model", model)

    @property
    def noise(self) -> Tensor:
        model = self._model
        return model._observation_noise() * model._y_std.to(torch.float64) ** 2

    def forward(self, *params: Any, shape: torch.Size | None = None, **kwargs: Any) -> DiagLinearOperator:
        if "noise" in kwargs:  # GPyTorch's convention: a given noise overrides the model's
            return DiagLinearOperator(kwargs["noise"])
        if shape is None:
            raise ValueError("shape (batch_shape x n) is required")
        noise = self.noise
        if noise.shape[-1] != 1:
            raise NotImplementedError("NPLikelihood adds noise to single-output distributions only; for "
                                      "several outputs use model.posterior(X, observation_noise=True)")
        return DiagLinearOperator(noise.expand(shape))


class NPLikelihood(_GaussianLikelihoodBase):
    """``NPModel.likelihood``: Gaussian observation noise of the NP's own estimate.

    It lets GP code run on an :class:`NPModel`: ``ExactMarginalLogLikelihood(model.likelihood,
    model)`` constructs, and BoTorch's ``fantasize`` sees an inferred-noise (not a
    fixed-noise) likelihood. It has no parameters and nothing to fit.

    ``noise``: ``m`` values (one per output, float64), the model's
    :meth:`~NPModel.noise_variance` -- or, for a model given ``train_Yvar``, the mean
    known noise -- in the units of the outcome-transformed training outputs: what a
    GP's ``likelihood.noise`` reports. Applied to the latent
    posterior's distribution (single output, before any outcome transform is undone)
    it gives the distribution of a new observation, as
    ``posterior(X, observation_noise=True)`` does.
    """

    def __init__(self, model: NPModel) -> None:
        if not isinstance(model, NPModel):
            raise TypeError(f"model must be an NPModel, got {type(model).__name__}")
        super().__init__(noise_covar=_NoiseEstimate(model))

    @property
    def noise(self) -> Tensor:
        """The noise variance per output, ``m`` values (see the class docstring)."""
        return self.noise_covar.noise


def _fit_pretrained(mll: MarginalLogLikelihood, _: type, __: type, **kwargs: Any) -> MarginalLogLikelihood:
    return mll.model.custom_fit(mll, **kwargs)


try:  # BoTorch 0.17 dispatches fit_gpytorch_mll on (mll, likelihood, model) types;
    from botorch.fit import FitGPyTorchMLL  # 0.18 calls the model's custom_fit instead
except ImportError:
    FitGPyTorchMLL = None
if FitGPyTorchMLL is not None:
    from gpytorch.mlls._approximate_mll import _ApproximateMarginalLogLikelihood

    # BoTorch registers its own fallback for approximate MLLs too; without the second
    # signature the two would tie for (approximate MLL, NPModel) and the dispatcher warns
    for _mll_type in (MarginalLogLikelihood, _ApproximateMarginalLogLikelihood):
        FitGPyTorchMLL.register(_mll_type, object, NPModel)(_fit_pretrained)


def _pretrained_defaults(surrogate: NeuralProcess, train_X: Tensor, train_Y: Tensor, caller: str) -> dict[str, Any]:
    """``input_domain`` / ``standardize`` of the prior a checkpoint was trained on, after
    checking that it fits data of this shape (``CheckpointError`` naming the ones that do)."""
    from npbandit.surrogates.pretrained import check_checkpoint_kind, checkpoint_use

    card = getattr(surrogate, "card", None)
    if card is None:
        raise ValueError(f"{caller} needs a checkpoint name/path or a surrogate from load_surrogate")
    _check_matrix("train_X", train_X)
    _check_matrix("train_Y", train_Y)
    check_checkpoint_kind(card, prior=tuple(PRIORS), x_dim=train_X.shape[-1], y_dim=train_Y.shape[-1],
                          purpose="NPModel")
    prior = PRIORS.get(card["prior"]["name"])
    if prior is None:
        return {}
    defaults = {"input_domain": prior.input_domain, "standardize": prior.standardizes_outputs}
    views = checkpoint_use(card).get("n_views", 1)
    if views > 1 and prior.input_symmetric and not surrogate.joint_predictive:
        defaults["n_views"] = min(views, symmetry_count(train_X.shape[-1]))
    return defaults


def _input_symmetric(surrogate: NeuralProcess) -> bool:
    """Whether ``surrogate``'s prior is unchanged by permuting and reflecting its inputs:
    what its card says; a surrogate without a card (built, not loaded) is taken at the
    caller's word."""
    card = getattr(surrogate, "card", None)
    if card is None:
        return True
    spec = card.get("prior", {})
    prior = PRIORS.get(spec.get("name"))
    return prior is not None and prior.symmetric_in(spec)


_SHARED: dict[tuple[str, str, int, int, torch.dtype], NeuralProcess] = {}
_SHARED_LOCK = threading.Lock()


def shared_surrogate(name_or_path: str | Path, *, dtype: torch.dtype = torch.float32) -> NeuralProcess:
    """A checkpoint's network, loaded once per process and shared by every caller.

    Ax builds a new model for every trial (and for every cross-validation fold); with
    this cache that costs no reload. The key is the card's path and the weights'
    sha256 as the card states it, plus the weights file's size and modification time,
    so a replaced checkpoint is loaded (and verified) afresh; one copy per ``dtype``
    (CPU). The network is shared:
    treat it as read-only (``NPModel`` never changes it); for a network of your own,
    use :func:`~npbandit.surrogates.pretrained.load_surrogate`.
    """
    from npbandit.surrogates import pretrained

    card = pretrained.read_card(name_or_path)
    card_path = Path(card["_path"])
    if not isinstance(dtype, torch.dtype) or not dtype.is_floating_point:
        raise TypeError(f"dtype must be a floating-point torch.dtype, got {dtype!r}")
    try:
        stat = card_path.with_name(card["weights"]).stat()
    except FileNotFoundError:
        return pretrained.load_surrogate(card_path)  # raises its own message for the missing weights
    key = (str(card_path), card["sha256"], stat.st_size, stat.st_mtime_ns, dtype)
    with _SHARED_LOCK:
        surrogate = _SHARED.get(key)
        if surrogate is None:
            surrogate = pretrained.load_surrogate(card_path, dtype=dtype)  # checks the hash
            _SHARED[key] = surrogate
    return surrogate


def _fingerprint(surrogate: NeuralProcess) -> Tensor:
    """sha256 of the network's state (names, dtypes, shapes, bytes) as 32 ``uint8``
    values; computed on each call (a few ms for the shipped checkpoints), so weights
    changed in place are noticed."""
    digest = hashlib.sha256()
    for name, tensor in surrogate.state_dict().items():
        digest.update(f"{name}|{tensor.dtype}|{tuple(tensor.shape)}|".encode())
        digest.update(tensor.detach().cpu().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes())
    return torch.tensor(list(digest.digest()), dtype=torch.uint8)


def _register_with_ax() -> None:
    """Register NPModel's (empty) fit with Ax when Ax is in use (it is never imported here)."""
    if "ax.generators.torch.botorch_modular.utils" in sys.modules:
        import npbandit.integrations.ax  # noqa: F401  (registers on import)


def _first_equal_rows(X: Tensor) -> Tensor | None:
    """For ``X`` (``batch x q x d``): the index of the first row equal to each row within its
    t-batch (``batch x q``), or ``None`` when no t-batch holds two equal rows."""
    q, d = X.shape[-2:]
    X = X.detach()
    if X.numel() * q <= PAIRWISE_MAX:
        # an acquisition's t-batches (a few candidates plus the observed points): comparing
        # every pair is a handful of elementwise ops, where torch.unique(dim=0) sorts rows
        # with one comparison call per pair (a tenth of a qNEI evaluation, measured)
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


def _gaussian_posterior(mean: Tensor, var: Tensor, obs_var: Tensor | None = None,
                        same: Tensor | None = None) -> GPyTorchPosterior:
    """Gaussian posterior from ``mean`` / latent ``var`` (``... x q x m``), plus independent
    observation noise ``obs_var`` (same shape) when given.

    Diagonal across the ``q`` points, except that equal points (``same``: ``... x q``, the
    index of the first equal point in the t-batch) share one latent draw: ``f`` at one
    input is one random variable. Without that, qNEI, which appends the observed points
    to each candidate, scores a candidate placed exactly on an observed point as a fresh
    independent draw, and proposes observed points again and again (Ax then re-runs its
    generation and falls back to a random point)."""
    m = mean.shape[-1]
    if same is None:
        total = var if obs_var is None else var + obs_var
        if m == 1:
            return GPyTorchPosterior(MultivariateNormal(mean.squeeze(-1), DiagLinearOperator(total.squeeze(-1))))
        covar = DiagLinearOperator(total.reshape(*total.shape[:-2], -1))  # interleaved (q, m) order
        return GPyTorchPosterior(MultitaskMultivariateNormal(mean, covar, interleaved=True))
    q = mean.shape[-2]
    # equal points take the first one's moments: bit-identical draws, whatever the rounding of
    # the network's batched predictions (a float32 network differs by ~1e-7 across positions)
    first = same.unsqueeze(-1).expand_as(mean)
    mean, var = mean.gather(-2, first), var.gather(-2, first)
    # root R with R[(j, i), (same[j], i)] = std[j, i]: R R^T correlates equal points fully
    pick = torch.nn.functional.one_hot(same, q).to(var)  # ... x q x q
    eye = torch.eye(m, dtype=var.dtype, device=var.device)
    root = pick[..., :, None, :, None] * eye[:, None, :] * var.sqrt()[..., :, :, None, None]
    covar = RootLinearOperator(root.reshape(*var.shape[:-2], q * m, q * m))
    if obs_var is not None:
        covar = covar + DiagLinearOperator(obs_var.reshape(*obs_var.shape[:-2], q * m))
    if m == 1:
        return GPyTorchPosterior(MultivariateNormal(mean.squeeze(-1), covar))
    return GPyTorchPosterior(MultitaskMultivariateNormal(mean, covar, interleaved=True))


def _low_rank_root(factor: Tensor, diag: Tensor, same: Tensor | None) -> Tensor:
    """A square root ``R`` (``... x q m x q m``) of ``Phi Phi^T + diag(d)``, the variables in
    interleaved ``(q, m)`` order: ``factor`` ``... x q x m x r``, ``diag`` ``... x q x m``
    (positive), ``same`` (``... x q`` or ``None``) the first equal point of each point.

    Equal points share one draw: the Cholesky factor is taken with the later copies
    decoupled (their factors zeroed), whose columns then meet no first copy's row, and
    every copy takes its first copy's row of it, so ``R R^T`` is the covariance of the
    distinct points, repeated, with ``q m`` base samples per draw whatever the repeats."""
    q, m = diag.shape[-2:]
    phi, d = factor.flatten(-3, -2), diag.flatten(-2)
    first = None
    if same is not None:
        first = (same.unsqueeze(-1) * m + torch.arange(m, device=same.device)).flatten(-2)
        later = first != torch.arange(q * m, device=same.device)
        phi = phi.masked_fill(later.unsqueeze(-1), 0.0)
    root = psd_safe_cholesky(phi @ phi.transpose(-1, -2) + torch.diag_embed(d))
    if first is not None:
        root = root.gather(-2, first.unsqueeze(-1).expand_as(root))
    return root


def _check_matrix(name: str, value: Any) -> None:
    if not isinstance(value, Tensor) or not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point torch.Tensor, got {type(value).__name__}")
    if value.dim() != 2:
        raise ValueError(f"{name} must be a 2-D tensor (n x columns), got shape {tuple(value.shape)}")
    if not torch.isfinite(value).all():
        raise ValueError(f"{name} contains NaN or infinite values")


def _check_output_indices(name: str, indices: Any, m: int) -> None:
    if (not isinstance(indices, (list, tuple)) or not indices
            or any(isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < m for i in indices)):
        raise ValueError(f"{name} must be a non-empty list of output indices below {m}, got {indices!r}")


def _check_bounds(bounds: Any, d: int) -> Tensor:
    if not isinstance(bounds, Tensor):
        bounds = torch.as_tensor(bounds, dtype=torch.float64)
    if bounds.shape != (2, d):
        raise ValueError(f"bounds must be a 2 x {d} tensor (lower row, upper row), got shape {tuple(bounds.shape)}")
    if not torch.isfinite(bounds).all():
        raise ValueError("bounds must be finite")
    if not (bounds[1] > bounds[0]).all():
        raise ValueError("bounds must have every upper bound above its lower bound")
    return bounds
