"""The observation noise of an :class:`~npbandit.models.NPModel`: the NP's own estimate of
it, the GPyTorch likelihood that reports it, and the fit registration that lets a GP
script's ``fit_gpytorch_mll`` line run unchanged (a pretrained network has nothing to fit).

What the NP's standard deviation means
--------------------------------------
The priors' targets are noisy observations, so the NP predicts a *new noisy
observation* ``y``: its variance ``var_y(x)`` is the noise plus what the NP still
does not know about ``f(x)``. Read with homoscedastic noise, ``var_y(x_i) >= noise``
at every observed point ``x_i``, so the smallest of them is the tightest upper bound
of the noise the NP's own predictions give. The model takes that minimum as its
noise estimate -- over all observed points up to ``noise_points`` (:data:`NOISE_POINTS`),
beyond that over ``noise_points`` of them evenly spaced in order of arrival (first and
newest included, :func:`evenly_spaced`), so its cost does not grow with N. Like a GP's
noise, a hyperparameter that conditioning on new data leaves fixed, a streamed model
(``condition_on_observations`` with new real data) keeps the estimate it inherits until its
observed points outnumber those it was read at by more than a fraction
:data:`NOISE_REFRESH`, and reads it afresh then (and after every re-standardisation, which
changes its units); so one update costs ``O(1)`` reads amortised, not one read of up to
``noise_points`` points, and a long stream's cost per update stays flat. Fantasies inherit
the estimate of the real data. It reports

* ``observation_noise=False`` (BoTorch's default, the latent ``f``):
  ``max(var_y - noise, 1e-6)`` in standardised units;
* ``observation_noise=True``: that plus the noise estimate, i.e. the NP's own
  predictive variance wherever the latent variance is above the floor;
* ``observation_noise=<Tensor>``: the latent variance plus the given noise, a variance in the
  units of ``Y`` after the model's ``outcome_transform`` (``Y``'s own units without one), as
  BoTorch's models read it: with ``Standardize``, a noise variance ``s`` in ``Y``'s units is
  ``s / stdvs**2`` there.

So the latent variance is the NP's uncertainty *relative to its most confident
observed point*: about zero there and, since an NP is usually least uncertain at its
data, positive almost everywhere else. A larger estimate (the median over the observed
points, say) clamps part of the space at the floor, where LogEI is flat and degenerate:
the median clamps half of the observed points by construction. An estimate from one
point (N = 1) zeroes the latent variance there and clamps wherever the NP is more
confident than at that point.

This is not a GP's latent variance: at an observed point it falls only as far as the
NP's predictive variance does there, and a trained network can stay unsure at some
observed points, so LogEI can still propose a point it has seen. For a noisy
objective, ask for ``observation_noise=True`` where an acquisition needs a new
observation's distribution.

Known noise
-----------
``train_Yvar`` (Ax passes it when the noise is known) is the noise of a new
observation -- ``observation_noise=True`` and ``likelihood.noise`` use its mean per
output, in place of the estimate -- while the latent variance keeps the NP's own
estimate: the NP conditions on ``Y`` alone, and its predictive variance carries the
noise level it inferred, whatever the truth. Streamed models keep the level.
"""

from __future__ import annotations

from typing import Any

import torch
from botorch.models.model import Model
from gpytorch.likelihoods import _GaussianLikelihoodBase
from gpytorch.likelihoods.noise_models import Noise
from gpytorch.mlls import MarginalLogLikelihood
from linear_operator.operators import DiagLinearOperator
from torch import Tensor

__all__ = ["NPLikelihood", "NoiseEstimateMixin", "NOISE_POINTS", "NOISE_REFRESH", "evenly_spaced",
           "register_pretrained_fit"]

#: the default of ``NPModel(noise_points=...)``: at most this many observed points give the noise estimate
NOISE_POINTS = 256

#: a streamed model reads its noise estimate afresh once its observed points exceed ``1 + NOISE_REFRESH``
#: times the number the inherited estimate was read at (every update while that is under one point)
NOISE_REFRESH = 0.2


def evenly_spaced(n: int, k: int) -> Tensor | slice:
    """All of ``range(n)`` when ``n <= k``, else ``k`` indices evenly spaced over it, both ends included."""
    if n <= k:
        return slice(None)
    return torch.linspace(0, n - 1, k, dtype=torch.float64).round().long()


class NoiseEstimateMixin:
    """:class:`~npbandit.models.NPModel`'s noise estimate and the noise of a new observation.

    A mixin of ``NPModel`` only: it reads ``train_X``, ``_noise_points``, ``_known_noise``
    and ``_y_std``, predicts through ``_to_surrogate_inputs`` / ``_predict``, and keeps the
    estimate in ``_noise_var`` (``None`` until first asked for; fantasies inherit it). A
    streamed model's ``_noise_from`` is ``(source, n)``: the model (holding ``n`` observed
    points) whose estimate it reports, or ``None`` for its own. So the estimate depends on
    the data and the order they were streamed in, never on when it was first asked for."""

    def noise_variance(self) -> Tensor:
        """The observation-noise estimate, per output, in standardised units: the smallest
        predictive variance of the NP at the observed points, at most ``noise_points`` of
        them, read by this model or the streamed ancestor it keeps it from (see the module
        docstring)."""
        if self._noise_var is None:  # fantasy models inherit it, so this model is not batched
            if self._noise_from is not None:
                self._noise_var = self._noise_from[0].noise_variance()
                return self._noise_var
            X = self.train_X
            with torch.no_grad():
                X_in = self._to_surrogate_inputs(X[evenly_spaced(X.shape[-2], self._noise_points)])
                var = self._predict(X_in.unsqueeze(0))[1]
                self._noise_var = var.reshape(-1, var.shape[-1]).amin(dim=0).to(torch.float64).cpu()
        return self._noise_var

    def _streamed_noise_from(self, n: int) -> tuple[Any, int] | None:
        """``_noise_from`` of a model streamed from this one to ``n`` observed points: this
        one's source while ``n <= (1 + NOISE_REFRESH)`` times the points the source holds,
        else ``None`` (the streamed model reads its own)."""
        source = self._noise_from if self._noise_from is not None else (self, self.train_X.shape[-2])
        return source if n <= (1.0 + NOISE_REFRESH) * source[1] else None

    def _observation_noise(self) -> Tensor:
        """The noise of a new observation, per output, in standardised units: the known
        noise (``train_Yvar``) when given, else the estimate."""
        if self._known_noise is None:
            return self.noise_variance()
        return self._known_noise / self._y_std.to(torch.float64) ** 2


class NoiseEstimate(Noise):
    """The model's noise estimate as a GPyTorch noise model: no parameters, read on use."""

    def __init__(self, model: NoiseEstimateMixin) -> None:
        super().__init__()
        # a plain reference: as a registered submodule the model would contain itself
        object.__setattr__(self, "_model", model)

    @property
    def noise(self) -> Tensor:
        """The noise variance per output (``m`` values, float64), in the units of the
        outcome-transformed training outputs."""
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

    It lets GP code run on an :class:`~npbandit.models.NPModel`:
    ``ExactMarginalLogLikelihood(model.likelihood, model)`` constructs, and BoTorch's
    ``fantasize`` sees an inferred-noise (not a fixed-noise) likelihood. It has no
    parameters and nothing to fit.

    ``noise``: ``m`` values (one per output, float64), the model's
    :meth:`~npbandit.models.NPModel.noise_variance` -- or, for a model given
    ``train_Yvar``, the mean known noise -- in the units of the outcome-transformed
    training outputs: what a GP's ``likelihood.noise`` reports. Applied to the latent
    posterior's distribution (single output, before any outcome transform is undone)
    it gives the distribution of a new observation, as
    ``posterior(X, observation_noise=True)`` does.
    """

    def __init__(self, model: NoiseEstimateMixin) -> None:
        # what the likelihood reports is the model's noise of a new observation: an NPModel's
        # (this module sits below the model class, so it knows the model by that mixin)
        if not isinstance(model, NoiseEstimateMixin):
            raise TypeError(f"model must be an NPModel, got {type(model).__name__}")
        super().__init__(noise_covar=NoiseEstimate(model))

    @property
    def noise(self) -> Tensor:
        """The noise variance per output, ``m`` values (see the class docstring)."""
        return self.noise_covar.noise


def _fit_pretrained(mll: MarginalLogLikelihood, _: type, __: type, **kwargs: Any) -> MarginalLogLikelihood:
    return mll.model.custom_fit(mll, **kwargs)


def register_pretrained_fit(model_class: type[Model]) -> None:
    """Make ``botorch.fit.fit_gpytorch_mll`` call ``model_class.custom_fit`` (which fits
    nothing) for any marginal log-likelihood built on a ``model_class`` instance.

    BoTorch 0.18 calls a model's ``custom_fit`` by itself; 0.17 dispatches
    ``fit_gpytorch_mll`` on the (mll, likelihood, model) types instead, so there the
    function is registered with its dispatcher. Registering twice replaces the entry."""
    if not (isinstance(model_class, type) and issubclass(model_class, Model)):
        raise TypeError(f"model_class must be a BoTorch Model class, got {model_class!r}")
    try:
        from botorch.fit import FitGPyTorchMLL
    except ImportError:  # BoTorch 0.18: nothing to register
        return
    from gpytorch.mlls._approximate_mll import _ApproximateMarginalLogLikelihood

    # BoTorch registers its own fallback for approximate MLLs too; without the second
    # signature the two would tie for (approximate MLL, model_class) and the dispatcher warns
    for mll_type in (MarginalLogLikelihood, _ApproximateMarginalLogLikelihood):
        FitGPyTorchMLL.register(mll_type, object, model_class)(_fit_pretrained)
