"""NPModel: a pretrained neural process as a first-class BoTorch ``Model``.

Swap one line of a BoTorch pipeline::

    model = SingleTaskGP(train_X, train_Y)                              # before
    model = NPModel.from_pretrained("cmanp-bo", train_X, train_Y)       # after
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))  # may stay

and keep the acquisition functions, ``optimize_acqf``, transforms and fantasies.
The fitting line fits nothing (the surrogate is pretrained; see
:meth:`NPModel.custom_fit` and :mod:`npbandit.models.likelihood`).

Only BoTorch's public extension points are used (``Model.posterior``,
``condition_on_observations`` with ``FantasizeMixin.fantasize``, ``subset_output``,
``num_outputs`` / ``batch_shape``, transforms, ``Model.construct_inputs``,
``custom_fit`` on BoTorch 0.18 and the ``FitGPyTorchMLL`` dispatcher on 0.17); the
supported range is pinned in ``pyproject.toml`` and ``make botorch-compat`` tests both
ends of it.

This module holds the model's data, its constructor and its state dict. The rest comes from
mixins, one idea each: the other constructors, from a checkpoint name or a dataset
(:mod:`~npbandit.models.construction`), the network's inputs, outputs, views and dtype
(:mod:`~npbandit.models.network`), the noise estimate
(:mod:`~npbandit.models.likelihood`), the de-noised means at the observations
(:mod:`~npbandit.models.observed`), the marginal and the joint posterior
(:mod:`~npbandit.models.posterior`, :mod:`~npbandit.models.joint`), a diagonal surrogate's
q-batch correlations (:mod:`~npbandit.models.covariance`) and new data
(:mod:`~npbandit.models.conditioning`).

State dict
----------
A GP's state dict holds its hyperparameters; the NP's counterpart is its network, which
the model holds outside its parameters: ``model.parameters()`` yields one empty, frozen
parameter on the network's device and in its dtype
(:class:`~npbandit.models.cache.NetworkAnchor`, for code that reads a model's device from
its first parameter), which is in no state dict, and nothing to fit. ``state_dict()`` holds the transforms' buffers
and the network's fingerprint (``_extra_state``, the sha256 of its weights,
:func:`~npbandit.models.checkpoint.fingerprint`); ``load_state_dict`` refuses a state
from another network with a ``ValueError`` and otherwise loads the transforms and
re-conditions on the model's own data through them, so a cross-validation fold (Ax: the
full model's state loaded into a model on the fold's data) sees only its own data.

Inside Ax
---------
``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})``;
how Ax builds, fits and stores the model is :mod:`npbandit.models.construction`'s to say.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from botorch.models.model import FantasizeMixin, Model
from botorch.models.transforms.input import InputTransform
from botorch.models.transforms.outcome import OutcomeTransform
from gpytorch.distributions import MultivariateNormal
from gpytorch.mlls import MarginalLogLikelihood
from gpytorch.models import GP
from torch import Tensor

from npbandit.models.cache import HeldNetwork, NetworkAnchor, RowBuffer, SharedRows
from npbandit.models.checkpoint import fingerprint, input_symmetric
from npbandit.models.checks import (
    check_bounds,
    check_input_transform,
    check_model_arguments,
    warn_unstandardised_outputs,
)
from npbandit.models.columns import ColumnSelector, resolve_columns
from npbandit.models.conditioning import ConditioningMixin
from npbandit.models.construction import ConstructionMixin
from npbandit.models.covariance import COVARIANCES, ResponseCovarianceMixin
from npbandit.models.joint import JointPosteriorMixin
from npbandit.models.likelihood import NOISE_POINTS, NoiseEstimateMixin, NPLikelihood, register_pretrained_fit
from npbandit.models.network import NetworkMixin
from npbandit.models.observed import ObservedMeanMixin
from npbandit.models.posterior import MarginalPosteriorMixin
from npbandit.surrogates import pretrained
from npbandit.surrogates.base import NeuralProcess
from npbandit.surrogates.views import InputViews
from npbandit.transforms.moments import moments

__all__ = ["NPModel"]


class NPModel(ConstructionMixin, MarginalPosteriorMixin, JointPosteriorMixin, ResponseCovarianceMixin,
              ConditioningMixin, NoiseEstimateMixin, ObservedMeanMixin, NetworkMixin, Model, FantasizeMixin, GP):
    """A neural-process surrogate plus its training data, as a BoTorch ``Model``.

    It is also a GPyTorch ``GP`` with a Gaussian
    :class:`~npbandit.models.likelihood.NPLikelihood`, so a GP
    script's ``fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))``
    runs unchanged; it fits nothing (see :meth:`custom_fit`).

    Args:
        surrogate: any :class:`~npbandit.surrogates.NeuralProcess` without an
            ``outcome_transform`` (the ``*-wheel`` checkpoints carry one: refused).
        train_X: ``n x d`` training inputs (any ``d``; the network reads at most its input
            width of them, see ``columns``).
        train_Y: ``n x m`` training outputs: ``m`` = the surrogate's output width, or any
            ``m`` for a one-output surrogate (every ``*-bo`` checkpoint), which then models
            each column with an NP of its own (independent outputs, each standardised on its
            own, the network shared: see "Several outputs" in :mod:`npbandit.models.network`).
        train_Yvar: optional ``n x m`` known observation-noise variances (see "Known
            noise" in :mod:`npbandit.models.likelihood`).
        bounds: optional ``2 x d`` search-space box (lower row, upper row) mapped onto
            ``input_domain``.
        input_transform, outcome_transform: BoTorch transforms, applied as for any
            BoTorch model.
        input_domain: the box the surrogate's inputs were drawn from in training.
        standardize: standardise outputs (after any ``outcome_transform``) by the training
            data's mean and std, as the ``bo`` prior did in training. ``False`` hands the
            network the outputs as they are: right only for outputs already on that scale
            (through a ``Standardize`` outcome transform, say); on another (outputs of order
            1e4) the network is outside what it learned and its posterior means nothing:
            training outputs past 100 in magnitude, ten times
            :data:`~npbandit.models.checks.TRAINED_OUTPUT_MAGNITUDE` (the most any shipped
            network was conditioned on; the reasons for both in
            :mod:`~npbandit.models.checks`), give an ``InputDataWarning`` (data given later,
            streamed, are not checked).
        restandardize_tol: see "Streaming" in :mod:`npbandit.models.conditioning`.
        noise_points: at most this many observed points (evenly spaced in order of
            arrival) give the noise estimate; see :mod:`npbandit.models.likelihood`.
        n_views: average the predictive over this many symmetric views of the input
            box (see "Symmetric views" in :mod:`npbandit.models.network`); only for a
            surrogate whose prior is unchanged by permuting and reflecting the inputs
            (``from_pretrained`` takes the number the card recommends), and not for a
            joint-predictive one. 1: the network as it is.
        columns: which columns of ``train_X`` the network reads (see "Wider data" in
            :mod:`npbandit.models.network`): ``None`` (default) every column when ``d`` is at
            most the surrogate's input width, else ``"relevant"``; ``"all"`` (refused with a
            ``CheckpointError`` for ``d`` above the width); ``"relevant"``
            (:class:`~npbandit.models.columns.RelevantColumns`: the width's worth of columns
            with the largest effects in an additive quadratic fit to ``train_Y``); a
            :class:`~npbandit.models.columns.ColumnSelector`; or a list of at most
            the width's distinct column indices. Chosen once, from the training data;
            :attr:`columns` says which.
        covariance: how a diagonal surrogate's posterior correlates the ``q`` points of a
            t-batch (``q > 1``): ``"diagonal"`` (default) independently, ``"conditioning"``
            with the correlations the network's own conditioning implies (see
            :mod:`npbandit.models.covariance`). With ``"diagonal"`` two distinct points count
            as independent draws however close, so a joint q-batch acquisition (qLogNEI,
            qUCB, ... with ``q > 1`` in ``optimize_acqf``) returns near-duplicate points, and a
            candidate beside a pending one (``X_pending``, GIBBON's) is scored as unrelated to
            it; ``"conditioning"`` spreads such batches, at several times the cost per
            acquisition evaluation. ``"conditioning"`` correlates at most
            :data:`~npbandit.models.covariance.MAX_CORRELATED_POINTS` points per t-batch (the
            correlations cost ``q^2`` predictions): above that the posterior is the diagonal one,
            with a ``RuntimeWarning`` once per model (t-batches of one point, ``X.unsqueeze(-2)``,
            give those marginals without it). A joint-predictive surrogate (CMANP-AND) gives its
            own joint either way. A surrogate of several outputs of its own takes
            ``"diagonal"`` only (refused otherwise).

    Inputs are mapped onto the box the network was trained on and outputs standardised
    as in its training (see "Inputs and outputs" in :mod:`npbandit.models.network`); data
    outside that box is refused, queries outside it are answered with a warning ("Input
    domain" there).

    ``train_X`` / ``train_Y`` hold the raw data the model was given (detached), as a
    BoTorch user expects; after streamed updates they are views into a buffer shared
    with the parent models, so treat them as read-only.
    """

    _num_outputs: int

    # Ax reads this: Ax puts several outcomes in a ModelList of NPModels, one per outcome
    # (as an NPModel on m columns would model them: independently), instead of handing one
    # model a merged dataset
    _supports_batched_models = False

    # The transforms are positional-or-keyword (not keyword-only) because Ax decides
    # whether a model class "supports" a transform from ``getfullargspec(cls).args``.
    def __init__(self, surrogate: NeuralProcess, train_X: Tensor, train_Y: Tensor, train_Yvar: Tensor | None = None,
                 input_transform: InputTransform | None = None, outcome_transform: OutcomeTransform | None = None,
                 *, bounds: Tensor | None = None, input_domain: tuple[float, float] = (0.0, 1.0),
                 standardize: bool = True, restandardize_tol: float = 0.2, noise_points: int = NOISE_POINTS,
                 n_views: int = 1, columns: str | Sequence[int] | ColumnSelector | None = None,
                 covariance: str = "diagonal") -> None:
        super().__init__()
        check_model_arguments(surrogate, train_X, train_Y, train_Yvar, input_domain, restandardize_tol, noise_points,
                              n_views, standardize=standardize, input_transform=input_transform,
                              outcome_transform=outcome_transform)
        if covariance not in COVARIANCES:
            raise ValueError(f"covariance must be one of {list(COVARIANCES)}, got {covariance!r}")
        if covariance == "conditioning" and surrogate.y_dim != 1 and not surrogate.joint_predictive:
            raise ValueError(f"covariance='conditioning' reads correlations from a one-output surrogate's "
                             f"conditioning; this surrogate predicts {surrogate.y_dim} outputs at once: use "
                             f"covariance='diagonal', or one NPModel per output (a ModelListGP)")
        self._covariance = covariance
        self._warned: set[str] = set()  # what the model (and those conditioned from it) warned of once
        # as many as its card's prior trained it on (its x_dim without a card)
        self._columns = resolve_columns(columns, train_X, train_Y, pretrained.served_width(surrogate))
        if n_views > 1 and not input_symmetric(surrogate):
            raise ValueError(f"n_views > 1 needs a surrogate trained on a prior that permuting and reflecting the "
                             f"inputs leaves unchanged (the bo prior); this one's card names the "
                             f"{surrogate.card['prior']['name']!r} prior")
        self._held = HeldNetwork(surrogate)
        self._network_anchor = NetworkAnchor(surrogate)  # what model.parameters() yields (see "State dict")
        self._d = train_X.shape[-1]
        self._input_domain = (float(input_domain[0]), float(input_domain[1]))
        self._standardize = bool(standardize)
        self._tol = float(restandardize_tol)
        self._noise_points, n_views = int(noise_points), int(n_views)  # a NumPy integer too
        self._bounds = None if bounds is None else check_bounds(bounds, self._d)
        self._box_limits: dict[tuple[torch.dtype, torch.device], tuple[Tensor, Tensor]] = {}
        d = len(self.columns)
        self._views = None if n_views == 1 else InputViews(d, surrogate.input_width(d), n_views, self._input_domain)
        if input_transform is not None:
            check_input_transform(input_transform, bounds)
            self.input_transform = input_transform
        if outcome_transform is not None:
            self.outcome_transform = outcome_transform
        self.likelihood = NPLikelihood(self)
        self._batch_shape = torch.Size()
        self._num_outputs = train_Y.shape[-1]
        # a one-output network models each column with an NP of its own (see "Several outputs"
        # in npbandit.models.network): that many network tasks per model element
        self._tasks = train_Y.shape[-1] if surrogate.y_dim == 1 else 1
        self._output_indices: list[int] | None = None
        self._pending: tuple[NPModel, Tensor, Tensor] | None = None  # a fantasy's data, until read
        self._train_Yvar = None if train_Yvar is None else train_Yvar.detach()
        self._set_data(train_X.detach(), train_Y.detach(), check=True)
        if not self._standardize:
            warn_unstandardised_outputs(self._train_Y_t)
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
        self._rows = (RowBuffer(self.train_X), RowBuffer(self.train_Y),
                      None if train_Y_t is train_Y else RowBuffer(self._train_Y_t))
        self._moments = moments(train_Y_t)
        X_in = self._to_surrogate_inputs(train_X, check="train_X" if check else None)
        self._set_statistics(train_Y_t)
        self._state = self._condition(X_in, train_Y_t)
        self._noise_var: Tensor | None = None
        self._noise_from: tuple[NPModel, int] | None = None  # (the model whose estimate this one reports, its N)
        self._shared_rows: SharedRows | None = None  # moments at the conditioning just made are not kept
        self._shared_fantasy: tuple | None = None  # the fantasies at rows shared by t-batches (covariance)

    @property
    def columns(self) -> tuple[int, ...]:
        """The columns of ``train_X`` (and of every ``X`` the model predicts at) the network
        reads, in the order it reads them: ``(0, ..., d - 1)`` unless ``columns`` selected
        fewer (see "Wider data" in :mod:`npbandit.models.network`)."""
        return tuple(range(self._d)) if self._columns is None else self._columns

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

    def train(self, mode: bool = True) -> NPModel:
        """Set ``training`` here and in the transforms; returns the model.

        A BoTorch ``Model`` would also swap GPyTorch ``train_inputs`` for transformed
        ones (and warn that it has none); the NP keeps its transformed context in its
        state instead, so only the modes change."""
        return torch.nn.Module.train(self, mode)

    def eval(self) -> NPModel:
        """``train(False)``."""
        return self.train(False)

    def _set_transformed_inputs(self) -> None:
        """Nothing to swap (see :meth:`train`). BoTorch's ``ModelListGP`` calls this on each of
        its models directly, whose default warns that there are no ``train_inputs``."""

    def _revert_to_original_inputs(self) -> None:
        """Nothing to swap back (see :meth:`_set_transformed_inputs`)."""

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

    def forward(self, x: Tensor) -> MultivariateNormal:
        """``model(X)`` in eval mode: the latent posterior at ``X`` (``batch_shape x q x d``) as a
        ``MultivariateNormal``, :meth:`posterior`'s distribution (mean and covariance the same
        tensors), which is what a GPyTorch exact GP returns there: the posterior of ``f`` at
        ``X`` given the training data. BoTorch code calls it so (GIBBON,
        ``qLowerBoundMaxValueEntropy``, reads the covariance of a candidate with the pending
        points from it). The covariance across the ``q`` points is the posterior's, as
        ``covariance`` makes it: independent for ``"diagonal"`` (the default), where a
        candidate then counts as unrelated to a pending point beside it.

        Refused (``NotImplementedError``, naming what to use instead):

        - in training mode: there a GP's ``model(X)`` is its prior for a marginal log
          likelihood (``mll(model(X), y)``) to score, and an NP has neither prior nor
          anything to fit;
        - with an ``input_transform`` or ``outcome_transform``: a GP's ``model(X)`` reads
          ``X`` after the input transform and answers in the outcome transform's units, while
          ``posterior`` takes raw inputs and answers in the data's, so no one answer is right
          for both kinds of caller (``bounds=`` and the model's own standardisation do the
          transforms' work without the ambiguity);
        - for more than one output: a GP's ``model(X)`` is then a batch over outputs, not
          the posterior's multitask distribution."""
        if self.training:
            raise NotImplementedError(
                "NPModel has no GPyTorch forward in training mode and no marginal log likelihood (model(X) "
                "there is a GP's prior for mll(model(X), y) to score; an NP has no prior and nothing to fit: "
                "fit_gpytorch_mll(mll) runs and fits nothing); use model.posterior(X), or model.eval() and "
                "then model(X) for the latent posterior")
        transforms = [name for name in ("input_transform", "outcome_transform") if hasattr(self, name)]
        if transforms:
            raise NotImplementedError(
                f"model(X) is not answered for an NPModel with an {' and an '.join(transforms)}: a GPyTorch GP's "
                "model(X) reads X after the input transform and answers in the outcome transform's units, "
                "NPModel.posterior(X) in the raw inputs' and the data's, and BoTorch code calling model(X) "
                "(GIBBON, qLowerBoundMaxValueEntropy with pending points) mixes the two; use model.posterior(X), "
                "or build the model with bounds=bounds (instead of a Normalize input transform) and its own "
                "standardisation (instead of Standardize)")
        if self.num_outputs != 1:
            raise NotImplementedError(
                f"model(X) is answered for a one-output NPModel only (this one has {self.num_outputs}: a GP's "
                "model(X) is then a batch over outputs); use model.posterior(X), or model.subset_output([i])(X)")
        return self.posterior(x).distribution

    # -- state dict ----------------------------------------------------------------
    #
    # A GP's state dict is its hyperparameters; Ax loads it into a model built on other
    # data (cross-validation folds, warm starts) and expects the same model on that data.
    # The NP's counterpart of hyperparameters is its network, which the model holds
    # outside its parameters (HeldNetwork). So the state dict carries the
    # network's fingerprint (``_extra_state``: the sha256 of its weights) next to the
    # transforms' buffers: loading it checks that both models run the same network and
    # refuses otherwise, loads the transforms and re-conditions on this model's own data
    # through them -- nothing of the other model's data comes along.

    def get_extra_state(self) -> Tensor:
        """The network's fingerprint: the sha256 of its weights, 32 ``uint8`` values."""
        return fingerprint(self.surrogate)

    def set_extra_state(self, state: Any) -> None:
        """Check that ``state`` (from :meth:`get_extra_state`) names this model's network."""
        if not isinstance(state, Tensor) or state.dtype != torch.uint8 or state.shape != (32,):
            raise ValueError("state_dict['_extra_state'] is not an NPModel's network fingerprint "
                             "(32 uint8 values, the sha256 of its weights)")
        own = fingerprint(self.surrogate)
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

    # -- conditioned models --------------------------------------------------------
    #
    # The model's own state, all of which a conditioned model starts from (shared
    # references, never written in place). Everything else in the instance dict is
    # torch/GPyTorch bookkeeping that each model gets fresh from the constructor chain.
    _FIELDS = ("_held", "_d", "_columns", "_input_domain", "_standardize", "_tol", "_noise_points", "_bounds",
               "_box_limits", "_batch_shape", "_num_outputs", "_tasks", "_output_indices", "_pending", "_train_X",
               "_train_Y", "_train_Y_t", "_rows", "_moments", "_y_mean", "_y_std", "_state", "_noise_var",
               "_noise_from", "_train_Yvar", "_known_noise", "_views", "_covariance", "_warned")

    def _child(self) -> NPModel:
        """A model with this one's data and state, for the caller to modify; O(1)."""
        child = NPModel.__new__(NPModel)
        super(NPModel, child).__init__()
        for name in self._FIELDS:
            setattr(child, name, getattr(self, name))
        for name in ("input_transform", "outcome_transform"):
            if hasattr(self, name):
                setattr(child, name, getattr(self, name))  # in eval mode; shared like the network
        child._network_anchor = self._network_anchor  # a submodule: registered anew, shared like the network
        child._shared_rows = child._shared_fantasy = None  # another state: the parent's kept ones do not apply
        child.likelihood = NPLikelihood(child)
        child.train(self.training)
        return child


# fit_gpytorch_mll on an NPModel's marginal log-likelihood fits nothing, on every supported BoTorch
register_pretrained_fit(NPModel)
