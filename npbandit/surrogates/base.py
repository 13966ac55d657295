"""The neural-process protocol every npbandit surrogate implements.

Four operations, the same names for every model, so that the BoTorch adapter, the
policies and the trainer never need to know which NP they hold:

- ``condition(xc, yc) -> state`` -- encode a context set;
- ``update(state, xu, yu) -> state`` -- add points to it;
- ``predict(state, xt) -> Normal`` -- factorised Gaussian at target inputs (in data
  units on a model with an outcome transform: see below);
- ``log_likelihood(xc, yc, xt, yt) -> Tensor`` -- the meta-training objective.

and the joint side of the same predictive, for Thompson sampling and q-batch
acquisitions (``joint_predictive`` says whether a model correlates its targets):

- ``sample(state, xt, num_samples, generator) -> Tensor`` -- joint draws ``[S, B, M, dy]``;
- ``joint_log_prob(state, xt, yt) -> Tensor`` -- ``log p(yt | state)`` of all targets
  together, ``[B]``; ``joint_log_likelihood(xc, yc, xt, yt)`` -- its mean per target.

A diagonal model's joint is the product of its marginals, so for it these are
independent draws from ``predict`` and the sum of the marginal log-densities. A
not-diagonal model whose joint is Gaussian also exposes ``joint(state, xt)``, the
one-shot joint of its targets as a low-rank-plus-diagonal
``torch.distributions.LowRankMultivariateNormal``; the BoTorch adapter's q-batch
posterior reads it (:mod:`npbandit.models`).

``sample(..., noise=v)`` draws the latent values under observations: the predictive of a
new observation with the noise variance ``v`` held out (:func:`hold_out_noise`).

Data units and model units. A model may carry an ``outcome_transform`` (an
:class:`~npbandit.transforms.OutcomeTransform`): how the values a caller observes become
what its network reads. A loaded checkpoint gets the one its card declares (the
``*-wheel`` checkpoints: ``symlog`` of the rewards, as a
:class:`~npbandit.transforms.RewardEncoding`); a model from ``build`` has none, and then
the two unit systems are the same. With a transform:

- ``condition`` / ``update`` take outputs in data units (complete rows: a caller whose
  rows are partly observed fills them first, as the model's prior did; the wheel
  bandit's fill is :class:`npbandit.priors.wheel.RewardFill`) and hand the network
  ``transform.forward`` of them;
- ``predict`` returns ``transform.untransform_predictive`` of the network's Gaussian, an
  :class:`~npbandit.transforms.OutcomePredictive` (exact quantiles, density and draws;
  exact mean and variance where the transform has them; the Gaussian itself as
  ``.encoded``); ``sample`` draws and ``joint_log_prob`` scores in data units;
- ``log_likelihood``, ``joint_log_likelihood`` and ``training_loss`` score a prior's
  batches, which hold model units (the meta-training objective, as the trainer and the
  evaluation use it).

No input transform exists: every prior hands its networks inputs as observed (the box
they were drawn from is in the card's ``use``; ``NPModel`` maps a BO problem's bounds
onto it).

Shapes: ``xc [B, N, dx]``, ``yc [B, N, dy]``, ``xt [B, M, dx]``. ``N = 0`` is legal
and gives the prior predictive. A state is an immutable value: ``update`` returns a
new one and leaves its argument usable, so a policy can branch (fantasies, lookahead)
without copying.

This module holds the protocol (:class:`NeuralProcess`, its argument checks and the
outcome transform's units) and :class:`NPConfig`. The states live in
:mod:`npbandit.surrogates.states`, the Gaussian arithmetic the predictives share
(:func:`target_log_prob`, :func:`hold_out_noise`) in :mod:`npbandit.surrogates.gaussian`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any, ClassVar

import torch
from torch import Tensor, nn
from torch.distributions import Normal

from npbandit.surrogates.gaussian import MIN_LATENT_VAR, hold_out_noise, target_log_prob
from npbandit.surrogates.layers import ACTIVATIONS
from npbandit.surrogates.states import ContextSetState, NPState
from npbandit.transforms.base import OutcomePredictive, OutcomeTransform

# NPState, ContextSetState (npbandit.surrogates.states), target_log_prob, hold_out_noise and
# MIN_LATENT_VAR (npbandit.surrogates.gaussian) are re-exported: this module was their home
__all__ = ["NPState", "ContextSetState", "NeuralProcess", "NPConfig", "target_log_prob", "hold_out_noise",
           "config_differences", "MIN_LATENT_VAR"]


@dataclass(frozen=True)
class NPConfig:
    """Hyperparameters shared by the transformer-family surrogates.

    Defaults follow the papers' 1-D GP setting (d_model 64, 4 heads, feed-forward
    128, 6 layers, 4-layer embedders). ``activation`` is the nonlinearity of the
    embedders and heads (:data:`~npbandit.surrogates.layers.ACTIVATIONS`; the attention
    blocks' feed-forward is GELU whatever it is).
    """

    d_model: int = 64
    n_heads: int = 4
    d_ff: int = 128
    n_layers: int = 6
    emb_depth: int = 4
    min_std: float = 1e-3
    activation: str = "relu"

    def __post_init__(self) -> None:
        for name in ("d_model", "n_heads", "d_ff", "n_layers", "emb_depth"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.d_model % self.n_heads != 0:
            raise ValueError(f"n_heads={self.n_heads} must divide d_model={self.d_model}")
        if self.emb_depth < 2:
            raise ValueError(f"emb_depth must be at least 2 (input and output layer), got {self.emb_depth}")
        if not (isinstance(self.min_std, (int, float)) and self.min_std > 0):
            raise ValueError(f"min_std must be a positive float, got {self.min_std!r}")
        if self.activation not in ACTIVATIONS:
            raise ValueError(f"activation must be one of {sorted(ACTIVATIONS)}, got {self.activation!r}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _check_tensor(name: str, value: Any, last: int | None, ref: Tensor | None, finite: bool = True) -> None:
    """``value [batch, points, last]`` (``last=None``: any positive width) on ``ref``'s dtype
    and device, finite unless ``finite`` is false."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(value).__name__}")
    if value.dim() != 3:
        raise ValueError(f"{name} must have shape [batch, points, {'width' if last is None else last}] (3 dims), "
                         f"got shape {tuple(value.shape)}")
    if last is None and value.shape[-1] < 1:
        raise ValueError(f"{name} must have at least one column, got shape {tuple(value.shape)}")
    if last is not None and value.shape[-1] != last:
        raise ValueError(f"{name} must have last dimension {last}, got shape {tuple(value.shape)}")
    if not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point tensor, got dtype {value.dtype}")
    if ref is not None and value.dtype != ref.dtype:
        raise TypeError(
            f"{name} has dtype {value.dtype} but the model's parameters are {ref.dtype}; "
            f"cast the input or the model (model.to({value.dtype}))"
        )
    if ref is not None and value.device != ref.device:
        raise ValueError(f"{name} is on {value.device} but the model is on {ref.device}")
    if finite and value.numel() and not _all_finite(value):
        raise ValueError(f"{name} contains NaN or infinite values")


#: inputs up to this many entries are checked with one isfinite mask (two tensor calls, as
#: fast as it gets for the one-point inputs of a streaming step); larger ones with two
#: reductions, so no temporary grows with the input
_SMALL_CHECK = 1024


def _all_finite(value: Tensor) -> bool:
    """Whether every entry of ``value`` is finite (amax/amin propagate NaN and surface +-inf)."""
    if value.numel() <= _SMALL_CHECK:
        return bool(torch.isfinite(value).all())
    return bool(torch.isfinite(value.amax()) & torch.isfinite(value.amin()))


def config_differences(source: dict[str, Any], ours: dict[str, Any]) -> str:
    """``"; they differ in n_latents (the source's 32, this one's 128), ..."``: the fields of two
    configs that differ, for a refused ``initialise_from`` (``""`` when none does)."""
    names = [k for k in {**source, **ours} if source.get(k) != ours.get(k)]
    said = ", ".join(f"{k} (the source's {source.get(k)!r}, this one's {ours.get(k)!r})" for k in names)
    return f"; they differ in {said}" if said else ""


class NeuralProcess(nn.Module, ABC):
    """Abstract neural process: validates inputs, then defers to the model.

    Subclasses implement ``_condition``, ``_predict`` and (optionally) ``_update``;
    they never need to re-check shapes. The default ``_update`` re-conditions on the
    union of the old and new points, which requires a :class:`ContextSetState`.

    Args:
        x_dim: input dimension ``dx``.
        y_dim: output dimension ``dy``.
        config: the model's hyperparameters, an instance of ``config_class``
            (its defaults when omitted; kept for checkpoint cards).
    """

    name: ClassVar[str] = "np"
    config_class: ClassVar[type[NPConfig]] = NPConfig
    #: ``True`` when ``sample`` / ``joint_log_prob`` correlate targets (a not-diagonal
    #: head); ``False``: the joint is the product of ``predict``'s marginals.
    joint_predictive: ClassVar[bool] = False
    #: ``True`` when the model reads inputs of any width (a token per input dimension, its
    #: weights independent of the count): ``x_dim`` is then the width it was built for, a
    #: context may have any number of columns, and targets and updates must have the
    #: context's. ``False``: every input is ``x_dim`` wide.
    any_x_dim: ClassVar[bool] = False

    def __init__(self, x_dim: int, y_dim: int, config: NPConfig | None = None) -> None:
        super().__init__()
        for arg, value in (("x_dim", x_dim), ("y_dim", y_dim)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"{arg} must be a positive int, got {value!r}")
        config = self.config_class() if config is None else config
        if type(config) is not self.config_class:
            raise TypeError(f"config must be a {self.config_class.__name__}, got {type(config).__name__}")
        self.x_dim = x_dim
        self.y_dim = y_dim
        self.config = config
        self._outcome_transform: OutcomeTransform | None = None

    @property
    def outcome_transform(self) -> OutcomeTransform | None:
        """How outputs in data units become what the network reads (``None``: as they
        are); see the module docstring. ``load_surrogate`` sets the one the card declares."""
        return self._outcome_transform

    @outcome_transform.setter
    def outcome_transform(self, transform: OutcomeTransform | None) -> None:
        if transform is not None and not isinstance(transform, OutcomeTransform):
            raise TypeError("outcome_transform must be an npbandit.transforms.OutcomeTransform or None, "
                            f"got {type(transform).__name__}")
        self._outcome_transform = transform

    # -- the protocol --------------------------------------------------------------

    def condition(self, xc: Tensor, yc: Tensor) -> NPState:
        """Encode a context set ``xc [B, N, dx]``, ``yc [B, N, dy]`` (``N`` may be 0;
        ``yc`` in data units, every entry observed: see the module docstring)."""
        yc = self._model_outputs("xc", xc, "yc", yc)
        return self._condition(xc, yc)

    def update(self, state: NPState, xu: Tensor, yu: Tensor, *, check: bool = True) -> NPState:
        """Return the state after adding ``xu [B, n, dx]``, ``yu [B, n, dy]`` (data units)
        to ``state``.

        ``check=False`` skips the checks of ``state``, ``xu`` and ``yu`` (type, shape, dtype,
        device, finite values, batch size), for a caller that built them itself from inputs
        it checked, at every step of a stream (a bandit policy's ``observe``); arguments that
        would fail them give undefined results. What the outcome transform makes of ``yu`` is
        checked either way (a transform may overflow on finite data)."""
        if not check:
            return self._update(state, xu, self._encoded_outputs("yu", yu))
        self._check_state(state)
        yu = self._model_outputs("xu", xu, "yu", yu)
        if xu.shape[0] != state.batch_size:
            raise ValueError(f"xu has batch size {xu.shape[0]} but the state has batch size {state.batch_size}")
        self._check_width("xu", xu, state)
        return self._update(state, xu, yu)

    def predict(self, state: NPState, xt: Tensor, *, check: bool = True) -> Normal | OutcomePredictive:
        """Factorised predictive at ``xt [B, M, dx]``, batch shape ``[B, M, dy]``: the
        network's Gaussian, or, on a model with an ``outcome_transform``, that Gaussian in
        data units (``outcome_transform.untransform_predictive``: an
        :class:`~npbandit.transforms.OutcomePredictive`, the Gaussian itself as ``.encoded``).

        Differentiable in ``xt``. Targets are conditionally independent: predicting
        them one at a time gives the same result as predicting them together.

        ``check=False`` skips the checks of ``state`` and ``xt`` (type, shape, dtype,
        device, finite values), for a caller that built ``xt`` itself from inputs it
        checked, many times over (``NPModel``'s posterior inside an acquisition
        optimiser); arguments that would fail them give undefined results.
        """
        if check:
            self._check_targets(state, xt)
        return self._data_predictive(self._predict(state, xt))

    def log_likelihood(self, xc: Tensor, yc: Tensor, xt: Tensor, yt: Tensor) -> Tensor:
        """Mean target log-likelihood: ``log p(yt | xt, xc, yc)`` summed over outputs,
        averaged over batch and targets. A scalar; the meta-training objective, on a
        prior's batch: ``yc``, ``yt`` in model units (see the module docstring)."""
        self._check_task(xc, yc, xt, yt)
        dist = self._predict(self._condition(xc, yc), xt)
        return dist.log_prob(yt).sum(-1).mean()

    def training_loss(self, xc: Tensor, yc: Tensor, xt: Tensor, yt: Tensor, yt_var: Tensor | None = None) -> Tensor:
        """The scalar the trainer minimises; by default ``-log_likelihood``. Models with
        auxiliary objectives (ReTreever's policy and full-attention losses) override it.

        With ``yt_var`` (``[B, M, dy]``), ``yt`` is the targets' predictive mean given the
        context and the loss is the expected negative log-likelihood under
        ``N(yt, yt_var)`` (:func:`target_log_prob`)."""
        if yt_var is None:
            return -self.log_likelihood(xc, yc, xt, yt)
        self._check_task(xc, yc, xt, yt)
        dist = self._predict(self._condition(xc, yc), xt)
        return -target_log_prob(dist, yt, yt_var).sum(-1).mean()

    def initialise_from(self, source: NeuralProcess) -> None:
        """Start from a trained model's weights (``npbandit train --init-from``): by default
        ``source`` must be the same model with the same config, and every weight is copied.
        Models that can start from another (CMANP-AND from CMANP) override this. A model of
        any width (``any_x_dim``) may start from one built for another width, and any model
        from one with another ``activation``: no weight depends on either (a swapped
        nonlinearity is then fine-tuned under the new one).

        Raises:
            ValueError: ``source`` is another model or has another config.
        """
        width = not self.any_x_dim  # the built width matters only where weights depend on it

        def shape(config: NPConfig) -> dict:
            return {k: v for k, v in asdict(config).items() if k != "activation"}

        ours = (self.name, self.x_dim if width else None, self.y_dim, shape(self.config))
        theirs = (source.name, source.x_dim if width else None, source.y_dim, shape(source.config))
        if theirs != ours:
            raise ValueError(f"the source is a {source.name} ({source.x_dim} -> {source.y_dim}) with config "
                             f"{theirs[-1]}; this is a {self.name} ({self.x_dim} -> {self.y_dim}) with config "
                             f"{ours[-1]}{config_differences(theirs[-1], ours[-1])}")
        self.load_state_dict(source.state_dict())

    # -- the joint predictive ---------------------------------------------------------

    def sample(self, state: NPState, xt: Tensor, num_samples: int,
               generator: torch.Generator | None = None, *, noise: Tensor | float | None = None) -> Tensor:
        """Draws from the model's joint predictive at ``xt [B, M, dx]``: ``[num_samples, B, M, dy]``.

        For a diagonal model (``joint_predictive`` false) the draws are independent across
        targets and outputs, as its joint is the product of ``predict``'s marginals; a
        not-diagonal model overrides this with correlated draws. ``generator`` (on ``xt``'s
        device) makes the draws reproducible; ``None`` uses torch's global generator.

        ``noise`` (a variance, a float or one per output ``[dy]``, in the model's output
        units): draw the latent values instead of new observations, the predictive with
        that noise held out (:func:`hold_out_noise`; here, variance
        ``max(var - noise, MIN_LATENT_VAR)``).
        """
        self._check_targets(state, xt)
        self._check_sampling(num_samples, generator)
        dist = self._predict(state, xt)
        scale = dist.scale
        if noise is not None:
            scale = (dist.variance - self._check_noise(noise, dist.loc)).clamp_min(MIN_LATENT_VAR).sqrt()
        eps = torch.randn((num_samples, *dist.loc.shape), generator=generator, dtype=dist.loc.dtype,
                          device=dist.loc.device)
        return self._data_draws(dist.loc + scale * eps)

    def joint_log_prob(self, state: NPState, xt: Tensor, yt: Tensor) -> Tensor:
        """``log p(yt | state)`` of all ``M`` targets and ``dy`` outputs together, ``[B]``.

        ``xt [B, M, dx]``, ``yt [B, M, dy]`` (data units, every entry observed). A diagonal
        model's is the sum of the marginal log-densities; a not-diagonal model overrides
        :meth:`_joint_log_prob` with its joint density."""
        self._check_targets(state, xt)
        yt, log_det = self._model_targets(xt, yt)
        return self._joint_log_prob(state, xt, yt) + log_det

    def joint_log_likelihood(self, xc: Tensor, yc: Tensor, xt: Tensor, yt: Tensor) -> Tensor:
        """The papers' joint metric: each task's joint target log-density divided by its
        ``M`` targets, averaged over tasks. A scalar. For a diagonal model it equals
        :meth:`log_likelihood`, so joint and diagonal models compare on one scale. Like
        it, it scores a prior's batch (model units)."""
        self._check_task(xc, yc, xt, yt)
        return (self._joint_log_prob(self._condition(xc, yc), xt, yt) / xt.shape[1]).mean()

    # -- model hooks ----------------------------------------------------------------

    @abstractmethod
    def _condition(self, xc: Tensor, yc: Tensor) -> NPState: ...

    @abstractmethod
    def _predict(self, state: NPState, xt: Tensor) -> Normal: ...

    def _update(self, state: NPState, xu: Tensor, yu: Tensor) -> NPState:
        if not isinstance(state, ContextSetState):
            raise TypeError(f"{type(self).__name__} cannot re-condition a {type(state).__name__}")
        return self._condition(torch.cat([state.xc, xu], dim=1), torch.cat([state.yc, yu], dim=1))

    def _joint_log_prob(self, state: NPState, xt: Tensor, yt: Tensor) -> Tensor:
        """``log p(yt | state)`` in model units, ``[B]`` (inputs already checked)."""
        return self._predict(state, xt).log_prob(yt).sum((-2, -1))

    # -- the outcome transform: data units <-> model units --------------------------------

    def _model_outputs(self, x_name: str, x: Tensor, y_name: str, y: Tensor) -> Tensor:
        """Check a context pair given in data units; ``y`` in model units."""
        self._check_pair(x_name, x, y_name, y)
        return self._encoded_outputs(y_name, y)

    def _encoded_outputs(self, y_name: str, y: Tensor) -> Tensor:
        """Outputs ``y`` in data units (checked) in model units; ``ValueError`` where the
        outcome transform makes NaN or infinite values of them."""
        transform = self.outcome_transform
        if transform is None:
            return y
        encoded = transform.forward(y)
        if encoded.numel() and not _all_finite(encoded):
            raise ValueError(f"{y_name} is finite but its outcome transform ({transform.describe()}) makes NaN or "
                             "infinite values of it")
        return encoded

    def _model_targets(self, xt: Tensor, yt: Tensor) -> tuple[Tensor, Tensor | float]:
        """Check complete target rows in data units: ``yt`` in model units and, per task
        (``[B]``), the log-Jacobian that turns a model-unit log-density into a data-unit one."""
        self._check_pair("xt", xt, "yt", yt)
        transform = self.outcome_transform
        if transform is None:
            return yt, 0.0
        return transform.forward(yt), transform.log_abs_det_jacobian(yt).sum((-2, -1))

    def _data_predictive(self, dist: Normal) -> Normal | OutcomePredictive:
        transform = self.outcome_transform
        return dist if transform is None else transform.untransform_predictive(dist)

    def _data_draws(self, draws: Tensor) -> Tensor:
        transform = self.outcome_transform
        return draws if transform is None else transform.untransform(draws)

    # -- helpers ----------------------------------------------------------------------

    def _reference_parameter(self) -> Tensor | None:
        return next(self.parameters(), None)

    @property
    def _fixed_x_dim(self) -> int | None:
        """The width every input must have (``None``: any, for an ``any_x_dim`` model)."""
        return None if self.any_x_dim else self.x_dim

    def input_width(self, d: int) -> int:
        """How wide this network's inputs are for a problem of ``d`` columns (``d <= x_dim`` for a
        fixed-width network): ``d`` for one of any width (``any_x_dim``), else ``x_dim`` (the
        columns past ``d`` zero padding)."""
        return d if self.any_x_dim else self.x_dim

    def _check_task(self, xc: Tensor, yc: Tensor, xt: Tensor, yt: Tensor) -> None:
        """A context and targets to score: each pair well formed, one batch size (and one width for
        an ``any_x_dim`` model), some targets."""
        self._check_pair("xc", xc, "yc", yc)
        self._check_pair("xt", xt, "yt", yt)
        if xt.shape[0] != xc.shape[0]:
            raise ValueError(f"xt has batch size {xt.shape[0]} but xc has batch size {xc.shape[0]}")
        if self.any_x_dim and xt.shape[-1] != xc.shape[-1]:
            raise ValueError(f"xt has {xt.shape[-1]} input column(s) but xc has {xc.shape[-1]}")
        if xt.shape[1] == 0:
            raise ValueError("xt must hold at least one target point")

    def _check_pair(self, x_name: str, x: Tensor, y_name: str, y: Tensor) -> None:
        ref = self._reference_parameter()
        _check_tensor(x_name, x, self._fixed_x_dim, ref)
        _check_tensor(y_name, y, self.y_dim, ref)
        if x.shape[:2] != y.shape[:2]:
            raise ValueError(
                f"{x_name} and {y_name} must agree in batch and number of points, "
                f"got {tuple(x.shape)} and {tuple(y.shape)}"
            )

    def _check_targets(self, state: Any, xt: Tensor) -> None:
        """``state`` is a state and ``xt [B, M, dx]`` fits the model and the state's batch."""
        self._check_state(state)
        _check_tensor("xt", xt, self._fixed_x_dim, self._reference_parameter())
        if xt.shape[0] != state.batch_size:
            raise ValueError(f"xt has batch size {xt.shape[0]} but the state has batch size {state.batch_size}")
        self._check_width("xt", xt, state)

    def _check_width(self, name: str, x: Tensor, state: Any) -> None:
        """An ``any_x_dim`` model's ``x`` must be as wide as the context ``state`` holds."""
        if self.any_x_dim and isinstance(state, ContextSetState) and x.shape[-1] != state.xc.shape[-1]:
            raise ValueError(f"{name} has {x.shape[-1]} input column(s) but the context has {state.xc.shape[-1]}")

    @staticmethod
    def _check_sampling(num_samples: Any, generator: Any) -> None:
        if not isinstance(num_samples, int) or isinstance(num_samples, bool) or num_samples < 1:
            raise ValueError(f"num_samples must be a positive int, got {num_samples!r}")
        if generator is not None and not isinstance(generator, torch.Generator):
            raise TypeError(f"generator must be a torch.Generator or None, got {type(generator).__name__}")

    def _check_noise(self, noise: Any, like: Tensor) -> Tensor:
        """``noise`` (a float or a tensor of shape ``[]``, ``[1]`` or ``[dy]``) as a non-negative
        finite tensor in ``like``'s dtype and device."""
        if isinstance(noise, (int, float)) and not isinstance(noise, bool):
            noise = torch.tensor(float(noise))
        if not isinstance(noise, Tensor) or not noise.is_floating_point():
            raise TypeError(f"noise must be a float or a floating-point tensor, got {type(noise).__name__}")
        if noise.dim() > 1 or noise.numel() not in (1, self.y_dim):
            raise ValueError(f"noise must be a scalar or hold one variance per output ({self.y_dim}), "
                             f"got shape {tuple(noise.shape)}")
        if not bool(torch.isfinite(noise).all()) or bool((noise < 0).any()):
            raise ValueError("noise must hold finite non-negative variances")
        return noise.to(dtype=like.dtype, device=like.device)

    def _check_state(self, state: Any) -> None:
        if not isinstance(state, NPState):
            raise TypeError(f"state must be an NPState returned by condition/update, got {type(state).__name__}")

    def extra_repr(self) -> str:
        transform = "" if self.outcome_transform is None else f", outcome_transform={self.outcome_transform.describe()}"
        return f"x_dim={self.x_dim}, y_dim={self.y_dim}, config={self.config}{transform}"
