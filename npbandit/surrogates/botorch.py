"""NPModel: a pretrained neural process as a first-class BoTorch ``Model``.

Swap one line of a BoTorch pipeline::

    model = SingleTaskGP(train_X, train_Y); fit_gpytorch_mll(...)       # before
    model = NPModel.from_pretrained("cmanp-bo", train_X, train_Y)       # after

and keep the acquisition functions, ``optimize_acqf``, transforms and fantasies.

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
  arrives, so for non-batched updates the model recomputes them on all data and,
  when the mean moved by more than ``restandardize_tol`` old stds or the std by
  more than a factor ``1 + restandardize_tol``, re-conditions once from the raw
  data it keeps (one full conditioning, O(N) for CMANP). Fantasy (batched) updates
  never re-standardise.

What the NP's standard deviation means
--------------------------------------
The priors' targets are noisy observations, so the NP predicts a *new noisy
observation* ``y``. The model estimates the noise variance once per training set as
the median, over the training points, of the NP's predictive variance there (an
upper bound of the noise at each point, since it also holds the remaining
uncertainty about ``f``), and reports

* ``observation_noise=False`` (BoTorch's default, the latent ``f``):
  ``max(var_y - noise, 1e-6)`` in standardised units;
* ``observation_noise=True``: that plus the noise estimate, i.e. the NP's own
  predictive variance;
* ``observation_noise=<Tensor>``: the latent variance plus the given noise.

The posterior is Gaussian and diagonal across the ``q`` points (the NP's targets
are conditionally independent), so MC acquisition functions sample the ``q``
points independently; points in different t-batches never interact.

dtype and device
----------------
The network stays in its own dtype (float32) and is held outside this module's
parameters, so ``model.to(X)`` -- which analytic acquisition functions call --
cannot silently upcast it. Inputs of any floating dtype are accepted; posteriors
come back in ``X``'s dtype.
"""

from __future__ import annotations

import math
from typing import Any

import torch
from botorch.acquisition.objective import PosteriorTransform
from botorch.models.model import FantasizeMixin, Model
from botorch.models.transforms.input import InputTransform
from botorch.models.transforms.outcome import OutcomeTransform
from botorch.posteriors.gpytorch import GPyTorchPosterior
from gpytorch.distributions import MultitaskMultivariateNormal, MultivariateNormal
from linear_operator.operators import DiagLinearOperator
from torch import Tensor

from npbandit.priors import PRIORS
from npbandit.scaling import standardization
from npbandit.surrogates.base import NeuralProcess, NPState

__all__ = ["NPModel"]

MIN_LATENT_VAR = 1e-6


class _Held:
    """Keeps the network out of the ``nn.Module`` tree (see the module docstring)."""

    def __init__(self, surrogate: NeuralProcess) -> None:
        self.surrogate = surrogate


class NPModel(Model, FantasizeMixin):
    """A neural-process surrogate plus its training data, as a BoTorch ``Model``.

    Args:
        surrogate: any :class:`~npbandit.surrogates.NeuralProcess`.
        train_X: ``n x d`` training inputs (``d`` at most the surrogate's input width).
        train_Y: ``n x m`` training outputs (``m`` = the surrogate's output width).
        bounds: optional ``2 x d`` search-space box (lower row, upper row) mapped onto
            ``input_domain``.
        input_transform, outcome_transform: BoTorch transforms, applied as for any
            BoTorch model.
        input_domain: the box the surrogate's inputs were drawn from in training.
        standardize: standardise outputs by the training data (as the ``bo`` prior does).
        restandardize_tol: see "Streaming" in the module docstring.
    """

    _num_outputs: int

    def __init__(self, surrogate: NeuralProcess, train_X: Tensor, train_Y: Tensor, *, bounds: Tensor | None = None,
                 input_transform: InputTransform | None = None, outcome_transform: OutcomeTransform | None = None,
                 input_domain: tuple[float, float] = (0.0, 1.0), standardize: bool = True,
                 restandardize_tol: float = 0.2) -> None:
        super().__init__()
        if not isinstance(surrogate, NeuralProcess):
            raise TypeError(f"surrogate must be an npbandit NeuralProcess, got {type(surrogate).__name__}")
        _check_matrix("train_X", train_X)
        _check_matrix("train_Y", train_Y)
        if train_X.shape[0] != train_Y.shape[0]:
            raise ValueError(f"train_X and train_Y must have the same number of rows, "
                             f"got {train_X.shape[0]} and {train_Y.shape[0]}")
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
        self._held = _Held(surrogate)
        self._d = train_X.shape[-1]
        self._input_domain = (float(input_domain[0]), float(input_domain[1]))
        self._standardize = bool(standardize)
        self._tol = float(restandardize_tol)
        self._bounds = None if bounds is None else _check_bounds(bounds, self._d)
        if input_transform is not None:
            self.input_transform = input_transform
        if outcome_transform is not None:
            self.outcome_transform = outcome_transform
            train_Y_t, _ = outcome_transform(train_Y, X=train_X)
            outcome_transform.eval()
        else:
            train_Y_t = train_Y
        self.likelihood = None  # BoTorch's fantasize() reads it; the NP has no GPyTorch likelihood
        self._batch_shape = torch.Size()
        self._num_outputs = surrogate.y_dim
        self._output_indices: list[int] | None = None
        self.train_X = train_X
        self.train_Y = train_Y
        self._train_Y_t = train_Y_t
        X_in = self._to_surrogate_inputs(train_X, check_domain=True)
        self._set_statistics(train_Y_t)
        self._state = self._condition(X_in, train_Y_t)
        self._noise_var: Tensor | None = None
        self.eval()  # transforms learned their statistics on the training data above

    # -- construction --------------------------------------------------------------

    @classmethod
    def from_pretrained(cls, name: str | NeuralProcess, train_X: Tensor, train_Y: Tensor, **kwargs: Any) -> "NPModel":
        """Build from a shipped checkpoint (e.g. ``"cmanp-bo"``), a checkpoint path, or a
        surrogate already returned by ``load_surrogate`` (to load it once for many models).

        The input box and output standardisation follow the prior the checkpoint was
        trained on; any keyword of the constructor can override them."""
        from npbandit.surrogates.pretrained import load_surrogate

        surrogate = name if isinstance(name, NeuralProcess) else load_surrogate(name)
        card = getattr(surrogate, "card", None)
        if card is None:
            raise ValueError("from_pretrained needs a checkpoint name/path or a surrogate from load_surrogate")
        prior = PRIORS.get(card["prior"]["name"])
        if prior is not None:
            kwargs.setdefault("input_domain", prior.input_domain)
            kwargs.setdefault("standardize", prior.standardizes_outputs)
        return cls(surrogate, train_X, train_Y, **kwargs)

    @property
    def surrogate(self) -> NeuralProcess:
        """The wrapped neural process (shared by every model conditioned from this one)."""
        return self._held.surrogate

    @property
    def num_outputs(self) -> int:
        return self._num_outputs

    @property
    def batch_shape(self) -> torch.Size:
        return self._batch_shape

    # -- BoTorch hooks that assume GPyTorch training data ----------------------------

    def _set_transformed_inputs(self) -> None:
        """No-op: the NP keeps its (transformed) context in its state, not in ``train_inputs``."""

    def _revert_to_original_inputs(self) -> None:
        """No-op, see :meth:`_set_transformed_inputs`."""

    def custom_fit(self, *args: Any, **kwargs: Any) -> None:
        """Nothing to fit: the surrogate is pretrained (``fit_gpytorch_mll`` calls this)."""

    # -- scaling -------------------------------------------------------------------

    def _to_surrogate_inputs(self, X: Tensor, check_domain: bool = False) -> Tensor:
        """Raw ``... x d`` inputs -> the surrogate's inputs ``... x x_dim`` in its dtype/device."""
        X = self.transform_inputs(X)
        if self._bounds is not None:
            lo, hi = self._bounds.to(X)
            X = (X - lo) / (hi - lo)
            low, high = self._input_domain
            X = low + X * (high - low)
        elif check_domain:
            low, high = self._input_domain
            if X.min() < low - 1e-6 or X.max() > high + 1e-6:
                raise ValueError(f"train_X (after any input_transform) lies outside [{low}, {high}]^d, the box the "
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
            return self.surrogate.condition(X_in.unsqueeze(0), self._normalise_outputs(Y_t).unsqueeze(0))

    def noise_variance(self) -> Tensor:
        """The observation-noise estimate, per output, in standardised units (see module docstring)."""
        if self._noise_var is None:  # fantasy models inherit it, so this model is not batched
            with torch.no_grad():
                X_in = self._to_surrogate_inputs(self.train_X)
                var = self.surrogate.predict(self._state, X_in.unsqueeze(0)).variance
                self._noise_var = var.reshape(-1, var.shape[-1]).median(dim=0).values.to(torch.float64).cpu()
        return self._noise_var

    # -- posterior -----------------------------------------------------------------

    def posterior(self, X: Tensor, output_indices: list[int] | None = None,
                  observation_noise: bool | Tensor = False,
                  posterior_transform: PosteriorTransform | None = None) -> GPyTorchPosterior:
        """Gaussian posterior at ``X`` (``batch_shape x q x d``), diagonal across ``q``.

        Returns a ``GPyTorchPosterior`` over ``broadcast(batch_shape, model.batch_shape) x q x m``
        in ``X``'s dtype; differentiable in ``X``."""
        if not isinstance(X, Tensor) or not X.is_floating_point():
            raise TypeError(f"X must be a floating-point torch.Tensor, got {type(X).__name__}")
        if X.dim() < 2 or X.shape[-1] != self._d:
            raise ValueError(f"X must have shape batch_shape x q x {self._d}, got {tuple(X.shape)}")
        if not torch.isfinite(X).all():
            raise ValueError("X contains NaN or infinite values")
        self.eval()
        out_batch = torch.broadcast_shapes(X.shape[:-2], self.batch_shape)
        q = X.shape[-2]
        X_in = self._to_surrogate_inputs(X.expand(*out_batch, q, self._d))
        n_model = math.prod(self.batch_shape)
        n_extra = math.prod(out_batch) // n_model
        flat = X_in.reshape(n_extra, n_model, q, -1).transpose(0, 1).reshape(n_model, n_extra * q, -1)
        dist = self.surrogate.predict(self._state, flat)
        m = self.surrogate.y_dim

        def unflatten(t: Tensor) -> Tensor:
            t = t.reshape(n_model, n_extra, q, m).transpose(0, 1)
            return t.reshape(*out_batch, q, m).to(X.dtype)

        mean, var = unflatten(dist.loc), unflatten(dist.variance)
        noise = self.noise_variance().to(var)
        var = (var - noise).clamp_min(MIN_LATENT_VAR)
        if isinstance(observation_noise, Tensor):
            var = var + observation_noise.to(var) / self._y_std.to(var) ** 2
        elif observation_noise:
            var = var + noise
        mean = mean * self._y_std.to(mean) + self._y_mean.to(mean)
        var = var * self._y_std.to(var) ** 2
        indices = output_indices if output_indices is not None else self._output_indices
        if indices is not None:
            mean, var = mean[..., indices], var[..., indices]
        posterior = _gaussian_posterior(mean, var)
        if hasattr(self, "outcome_transform"):
            posterior = self.outcome_transform.untransform_posterior(posterior, X=X)
        if posterior_transform is not None:
            posterior = posterior_transform(posterior)
        return posterior

    # -- new data ------------------------------------------------------------------

    def condition_on_observations(self, X: Tensor, Y: Tensor, **kwargs: Any) -> "NPModel":
        """A new model with ``(X, Y)`` added through the surrogate's ``update``.

        ``X``: ``batch_shape x n' x d``; ``Y``: ``batch_shape' x n' x m`` (fantasies
        carry extra leading batch dimensions). The network is shared, not copied."""
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
            return self._stream(X, Y, Y_t)
        return self._fantasy(X, Y, Y_t, new_batch)

    def _child(self) -> "NPModel":
        child = NPModel.__new__(NPModel)
        Model.__init__(child)
        for key, value in self.__dict__.items():
            if key not in ("_parameters", "_buffers", "_modules", "training"):
                child.__dict__[key] = value
        for name, module in self._modules.items():
            child._modules[name] = module
        return child

    def _stream(self, X: Tensor, Y: Tensor, Y_t: Tensor) -> "NPModel":
        child = self._child()
        child.train_X = torch.cat([self.train_X, X.to(self.train_X)], dim=-2)
        child.train_Y = torch.cat([self.train_Y, Y.to(self.train_Y)], dim=-2)
        child._train_Y_t = torch.cat([self._train_Y_t, Y_t.to(self._train_Y_t)], dim=-2)
        if self._standardize and self._drifted(child._train_Y_t):
            child._set_statistics(child._train_Y_t)
            child._state = child._condition(child._to_surrogate_inputs(child.train_X), child._train_Y_t)
            child._noise_var = None
        else:
            with torch.no_grad():
                child._state = self.surrogate.update(self._state, self._to_surrogate_inputs(X).unsqueeze(0),
                                                     self._normalise_outputs(Y_t).unsqueeze(0))
        return child

    def _drifted(self, Y_t: Tensor) -> bool:
        mean, std = standardization(Y_t.detach().to(torch.float64))
        mean, std = mean.squeeze(-2), std.squeeze(-2)
        moved = ((mean - self._y_mean).abs() > self._tol * self._y_std).any()
        rescaled = ((std / self._y_std).log().abs() > math.log1p(self._tol)).any()
        return bool(moved or rescaled)

    def _fantasy(self, X: Tensor, Y: Tensor, Y_t: Tensor, new_batch: torch.Size) -> "NPModel":
        n = X.shape[-2]
        n_model = math.prod(self.batch_shape)
        n_new = math.prod(new_batch)
        X_in = self._to_surrogate_inputs(X.expand(*new_batch, n, self._d))
        Y_n = self._normalise_outputs(Y_t.expand(*new_batch, n, Y_t.shape[-1]))
        self.noise_variance()  # computed on the real data, inherited by the fantasies
        child = self._child()
        with torch.no_grad():
            state = self._state.repeat(n_new // n_model)
            child._state = self.surrogate.update(state, X_in.reshape(n_new, n, -1), Y_n.reshape(n_new, n, -1))
        child._batch_shape = new_batch
        child.train_X = torch.cat([self.train_X.expand(*new_batch, *self.train_X.shape[-2:]),
                                   X.expand(*new_batch, n, self._d).to(self.train_X)], dim=-2)
        child.train_Y = torch.cat([self.train_Y.expand(*new_batch, *self.train_Y.shape[-2:]),
                                   Y.expand(*new_batch, n, Y.shape[-1]).to(self.train_Y)], dim=-2)
        child._train_Y_t = None
        return child

    def subset_output(self, idcs: list[int]) -> "NPModel":
        """The same model restricted to outputs ``idcs``."""
        if not idcs or any(not 0 <= i < self.surrogate.y_dim for i in idcs):
            raise ValueError(f"idcs must be a non-empty list of output indices below {self.surrogate.y_dim}")
        child = self._child()
        child._output_indices = list(idcs)
        child._num_outputs = len(idcs)
        return child


def _gaussian_posterior(mean: Tensor, var: Tensor) -> GPyTorchPosterior:
    """``mean``/``var`` ``... x q x m`` -> diagonal (multi-task) Gaussian posterior."""
    if mean.shape[-1] == 1:
        return GPyTorchPosterior(MultivariateNormal(mean.squeeze(-1), DiagLinearOperator(var.squeeze(-1))))
    covar = DiagLinearOperator(var.reshape(*var.shape[:-2], -1))  # interleaved (q, m) order
    return GPyTorchPosterior(MultitaskMultivariateNormal(mean, covar, interleaved=True))


def _check_matrix(name: str, value: Any) -> None:
    if not isinstance(value, Tensor) or not value.is_floating_point():
        raise TypeError(f"{name} must be a floating-point torch.Tensor, got {type(value).__name__}")
    if value.dim() != 2:
        raise ValueError(f"{name} must be a 2-D tensor (n x columns), got shape {tuple(value.shape)}")
    if not torch.isfinite(value).all():
        raise ValueError(f"{name} contains NaN or infinite values")


def _check_bounds(bounds: Any, d: int) -> Tensor:
    if not isinstance(bounds, Tensor):
        bounds = torch.as_tensor(bounds, dtype=torch.float64)
    if bounds.shape != (2, d):
        raise ValueError(f"bounds must be a 2 x {d} tensor (lower row, upper row), got shape {tuple(bounds.shape)}")
    if not (bounds[1] > bounds[0]).all():
        raise ValueError("bounds must have every upper bound above its lower bound")
    return bounds
