"""NPModel: a pretrained neural process as a first-class BoTorch ``Model``.

Swap one line of a BoTorch pipeline::

    model = SingleTaskGP(train_X, train_Y)                              # before
    model = NPModel.from_pretrained("cmanp-bo", train_X, train_Y)       # after
    fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))  # may stay

and keep the acquisition functions, ``optimize_acqf``, transforms and fantasies.
The fitting line fits nothing (the surrogate is pretrained; see
:meth:`NPModel.custom_fit` and :mod:`npbandit.models.likelihood`).

This module holds the model's data, scaling and state; the posterior
(:mod:`~npbandit.models.posterior`, :mod:`~npbandit.models.joint`) and new data
(:mod:`~npbandit.models.conditioning`) come from mixins named for them.

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
* **New data** is folded in through the surrogate's ``update`` at a cost that does not
  grow with N (:mod:`npbandit.models.conditioning`, "Streaming").

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
symmetries): views raise the held-out log-likelihood on the ``bo`` prior for some more
network time per call, so a card recommends them where a search improved with them.
The noise estimate works view by view. Joint-predictive surrogates take no views (a
mixture of their joints is not the Gaussian joint the posterior gives BoTorch).

State dict
----------
A GP's state dict holds its hyperparameters; the NP's counterpart is its network, which
the model holds outside its parameters. ``state_dict()`` holds the transforms' buffers
and the network's fingerprint (``_extra_state``, the sha256 of its weights,
:func:`~npbandit.models.checkpoint.fingerprint`); ``load_state_dict`` refuses a state
from another network with a ``ValueError`` and otherwise loads the transforms and
re-conditions on the model's own data through them, so a cross-validation fold (Ax: the
full model's state loaded into a model on the fold's data) sees only its own data.

dtype and device
----------------
The network stays in its own dtype (float32 from ``load_surrogate``) and is held
outside this module's parameters (:class:`~npbandit.models.cache.HeldNetwork`), so
``model.to(X)`` -- which analytic acquisition functions call -- cannot silently upcast
it. Inputs of any floating dtype are accepted; posteriors come back in ``X``'s dtype.
``construct_inputs`` loads a named checkpoint in float32 too unless told otherwise
(``network_dtype``). In float32 the acquisition value is smooth only to about 1e-7, so
BoTorch's L-BFGS-B ends a few more restarts "ABNORMAL" and ``optimize_acqf`` starts again
more often than in float64; a float64 network call costs more than those retries.

Inside Ax
---------
``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})``:
Ax builds the model through :meth:`NPModel.construct_inputs` (the checkpoint is loaded
once per process, :func:`~npbandit.models.checkpoint.shared_surrogate`), passes the
transforms as arguments (positional-or-keyword: Ax reads ``getfullargspec``) and
``train_Yvar`` when the noise is known, fits it through ``npbandit.integrations.ax``
(nothing to fit) and loads state dicts for cross-validation (see "State dict").
What is Ax's own (its dataset encodings, its fit dispatcher and storage) lives in
``npbandit.integrations.ax``, which reaches this class through
:mod:`npbandit.models.hooks`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch
from botorch.models.model import FantasizeMixin, Model
from botorch.models.transforms.input import InputTransform
from botorch.models.transforms.outcome import OutcomeTransform
from botorch.utils.datasets import MultiTaskDataset, SupervisedDataset
from gpytorch.mlls import MarginalLogLikelihood
from gpytorch.models import GP
from torch import Tensor

from npbandit.models.cache import HeldNetwork, RowBuffer, SharedRows
from npbandit.models.checkpoint import fingerprint, input_symmetric, pretrained_defaults, shared_surrogate
from npbandit.models.checks import check_bounds, check_matrix, check_model_arguments
from npbandit.models.conditioning import ConditioningMixin
from npbandit.models.hooks import construct_inputs_hook
from npbandit.models.joint import JointPosteriorMixin
from npbandit.models.likelihood import NOISE_POINTS, NPLikelihood, evenly_spaced, register_pretrained_fit
from npbandit.models.moments import moments
from npbandit.models.posterior import MarginalPosteriorMixin
from npbandit.scaling import standardization
from npbandit.surrogates import pretrained
from npbandit.surrogates.base import NeuralProcess, NPState
from npbandit.surrogates.views import InputViews

__all__ = ["NPModel"]


class NPModel(MarginalPosteriorMixin, JointPosteriorMixin, ConditioningMixin, Model, FantasizeMixin, GP):
    """A neural-process surrogate plus its training data, as a BoTorch ``Model``.

    It is also a GPyTorch ``GP`` with a Gaussian
    :class:`~npbandit.models.likelihood.NPLikelihood`, so a GP
    script's ``fit_gpytorch_mll(ExactMarginalLogLikelihood(model.likelihood, model))``
    runs unchanged; it fits nothing (see :meth:`custom_fit`).

    Args:
        surrogate: any :class:`~npbandit.surrogates.NeuralProcess` without an
            ``outcome_transform`` (the ``*-wheel`` checkpoints carry one: refused).
        train_X: ``n x d`` training inputs (``d`` at most the surrogate's input width).
        train_Y: ``n x m`` training outputs (``m`` = the surrogate's output width).
        train_Yvar: optional ``n x m`` known observation-noise variances (see "Known
            noise" in :mod:`npbandit.models.likelihood`).
        bounds: optional ``2 x d`` search-space box (lower row, upper row) mapped onto
            ``input_domain``.
        input_transform, outcome_transform: BoTorch transforms, applied as for any
            BoTorch model.
        input_domain: the box the surrogate's inputs were drawn from in training.
        standardize: standardise outputs by the training data (as the ``bo`` prior does).
        restandardize_tol: see "Streaming" in :mod:`npbandit.models.conditioning`.
        noise_points: at most this many observed points (evenly spaced in order of
            arrival) give the noise estimate; see :mod:`npbandit.models.likelihood`.
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
        check_model_arguments(surrogate, train_X, train_Y, train_Yvar, input_domain, restandardize_tol,
                              noise_points, n_views)
        if n_views > 1 and not input_symmetric(surrogate):
            raise ValueError(f"n_views > 1 needs a surrogate trained on a prior that permuting and reflecting the "
                             f"inputs leaves unchanged (the bo prior); this one's card names the "
                             f"{surrogate.card['prior']['name']!r} prior")
        self._held = HeldNetwork(surrogate)
        self._d = train_X.shape[-1]
        self._input_domain = (float(input_domain[0]), float(input_domain[1]))
        self._standardize = bool(standardize)
        self._tol = float(restandardize_tol)
        self._noise_points = noise_points
        self._bounds = None if bounds is None else check_bounds(bounds, self._d)
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
        self._rows = (RowBuffer(self.train_X), RowBuffer(self.train_Y),
                      None if train_Y_t is train_Y else RowBuffer(self._train_Y_t))
        self._moments = moments(train_Y_t)
        X_in = self._to_surrogate_inputs(train_X, check="train_X" if check else None)
        self._set_statistics(train_Y_t)
        self._state = self._condition(X_in, train_Y_t)
        self._noise_var: Tensor | None = None
        self._shared_rows: SharedRows | None = None  # moments at the conditioning just made are not kept

    # -- construction --------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, name: str | NeuralProcess, train_X: Tensor, train_Y: Tensor, **kwargs: Any) -> "NPModel":
        """Build from a shipped checkpoint (e.g. ``"cmanp-bo"``), a checkpoint path, or a
        surrogate already returned by ``load_surrogate`` (to load it once for many models).

        The input box and output standardisation follow the prior the checkpoint was
        trained on; any keyword of the constructor can override them."""
        surrogate = name if isinstance(name, NeuralProcess) else pretrained.load_surrogate(name)
        for key, value in pretrained_defaults(surrogate, train_X, train_Y, "from_pretrained").items():
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
                see :func:`~npbandit.models.checkpoint.shared_surrogate`), or a loaded surrogate.
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
                for search spaces NPModel cannot model), or one the installed
                :class:`~npbandit.models.hooks.ConstructInputsHook` refuses (with Ax: its
                one-hot encoded categorical parameters).
            TypeError: an option the constructor does not take.
        """
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
        # a framework's own encodings of the dataset (Ax's one-hot columns: npbandit.integrations.ax)
        construct_inputs_hook().check_dataset(training_data)
        inputs: dict[str, Any] = dict(super().construct_inputs(training_data))
        check_matrix("training_data.X", inputs["train_X"])
        if isinstance(checkpoint, NeuralProcess):
            if network_dtype is not None:
                raise ValueError("network_dtype applies to a checkpoint name or path, not to a loaded surrogate")
            surrogate = checkpoint
        else:
            surrogate = shared_surrogate(checkpoint, dtype=network_dtype or torch.float32)
        inputs["surrogate"] = surrogate
        inputs.update(pretrained_defaults(surrogate, inputs["train_X"], inputs["train_Y"], "construct_inputs"))
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
        them (see :mod:`npbandit.models.likelihood`)."""
        if self._noise_var is None:  # fantasy models inherit it, so this model is not batched
            X = self.train_X
            with torch.no_grad():
                X_in = self._to_surrogate_inputs(X[evenly_spaced(X.shape[-2], self._noise_points)])
                var = self._predict(X_in.unsqueeze(0))[1]
                self._noise_var = var.reshape(-1, var.shape[-1]).amin(dim=0).to(torch.float64).cpu()
        return self._noise_var

    def _observation_noise(self) -> Tensor:
        """The noise of a new observation, per output, in standardised units: the known
        noise (``train_Yvar``) when given, else the estimate."""
        if self._known_noise is None:
            return self.noise_variance()
        return self._known_noise / self._y_std.to(torch.float64) ** 2

    # -- conditioned models --------------------------------------------------------
    #
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


# fit_gpytorch_mll on an NPModel's marginal log-likelihood fits nothing, on every supported BoTorch
register_pretrained_fit(NPModel)
