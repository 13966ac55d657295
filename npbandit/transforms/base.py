"""The outcome-transform interface and the predictive it induces in data units.

An :class:`OutcomeTransform` maps outputs as a caller observes them (*data units*) to what
a network reads and its Gaussian head describes (*model units*), elementwise and strictly
increasing:

- ``forward(Y) -> Y'`` (also ``transform(Y)``): data units -> model units;
- ``untransform(Y') -> Y``: its inverse;
- ``untransform_log_abs_det_jacobian(Y')``: ``log |d untransform / dY'|``, elementwise;
  :meth:`~OutcomeTransform.log_abs_det_jacobian` is the forward map's, what a
  model-unit log-density gains to become a data-unit one;
- ``untransform_moments(loc, scale) -> (mean, variance)``: the exact mean and variance, in
  data units, of ``untransform(Z)`` for ``Z ~ N(loc, scale²)`` where a closed form exists
  (``NotImplementedError`` otherwise);
- ``untransform_predictive(dist)``: a Gaussian in model units as a distribution in data
  units (:class:`OutcomePredictive`), exact for every transform (quantiles, CDF, density
  and draws follow by change of variables through a strictly increasing map).

Every shape is the caller's (``[..., n, m]`` for outputs, as in BoTorch); the transforms
are immutable values, compared by their parameters.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import torch
from torch import Tensor
from torch.distributions import Normal, TransformedDistribution, constraints
from torch.distributions.transforms import Transform

__all__ = ["OutcomeTransform", "OutcomePredictive"]


class OutcomeTransform(ABC):
    """A strictly increasing elementwise map from data units to model units (see the
    module docstring). Subclasses implement :meth:`forward`, :meth:`untransform`,
    :meth:`untransform_log_abs_det_jacobian` and :meth:`describe`, and, where exact,
    :meth:`untransform_moments` (an affine one also :meth:`untransform_mean_variance`)."""

    def __call__(self, Y: Tensor) -> Tensor:
        return self.forward(Y)

    @abstractmethod
    def forward(self, Y: Tensor) -> Tensor:
        """Data units -> model units, elementwise; ``Y`` any shape, same shape back."""

    def transform(self, Y: Tensor) -> Tensor:
        """The same as :meth:`forward`."""
        return self.forward(Y)

    @abstractmethod
    def untransform(self, Y: Tensor) -> Tensor:
        """Model units -> data units, elementwise (the inverse of :meth:`forward`)."""

    @abstractmethod
    def untransform_log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        """``log |d untransform(Y) / dY|`` at model-unit values ``Y``, elementwise."""

    def log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        """``log |d forward(Y) / dY|`` at data-unit values ``Y``, elementwise: what a
        log-density in model units gains to become one in data units."""
        return -self.untransform_log_abs_det_jacobian(self.forward(Y))

    def untransform_moments(self, loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
        """Mean and variance (data units) of ``untransform(Z)``, ``Z ~ N(loc, scale²)``,
        elementwise. Raises ``NotImplementedError`` where no exact closed form exists."""
        raise NotImplementedError(f"{type(self).__name__} has no exact predictive moments in data units")

    def untransform_mean_variance(self, mean: Tensor, variance: Tensor) -> tuple[Tensor, Tensor]:
        """Mean and variance of ``untransform(V)`` from those of any ``V``: exact for an
        affine transform only (what :class:`~npbandit.transforms.chain.Chain` composes);
        ``NotImplementedError`` otherwise."""
        raise NotImplementedError(f"{type(self).__name__} is not affine: its moments need the whole distribution")

    def untransform_predictive(self, dist: Normal) -> OutcomePredictive:
        """The Gaussian ``dist`` (model units) as a distribution in data units."""
        return OutcomePredictive(dist, self)

    @abstractmethod
    def describe(self) -> str:
        """A short human-readable form, e.g. ``symlog(y / 1)``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.describe()})"


class _Untransform(Transform):
    """Model units -> data units for an :class:`OutcomeTransform`, as a torch transform."""

    domain = constraints.real
    codomain = constraints.real
    bijective = True
    sign = +1

    def __init__(self, transform: OutcomeTransform) -> None:
        super().__init__()
        self.transform = transform

    def _call(self, z: Tensor) -> Tensor:
        return self.transform.untransform(z)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.transform.forward(y)

    def log_abs_det_jacobian(self, z: Tensor, y: Tensor) -> Tensor:
        return self.transform.untransform_log_abs_det_jacobian(z)


class OutcomePredictive(TransformedDistribution):
    """A model's predictive in data units: its Gaussian in model units (:attr:`encoded`)
    pushed through the inverse of its outcome transform.

    ``icdf`` / ``cdf`` / ``log_prob`` / ``sample`` / ``rsample`` are exact (change of
    variables through a strictly increasing map); :attr:`mean` and :attr:`variance` are
    the exact moments of the pushed-forward distribution
    (:meth:`OutcomeTransform.untransform_moments`; ``NotImplementedError`` for a transform
    without a closed form), not the untransformed Gaussian's ``loc``; :attr:`median` is
    ``untransform(loc)``. Shapes are those of the Gaussian (``[B, M, dy]`` from ``predict``).
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, encoded: Normal, transform: OutcomeTransform, validate_args: bool | None = None) -> None:
        if not isinstance(encoded, Normal):
            raise TypeError(f"encoded must be a torch.distributions.Normal, got {type(encoded).__name__}")
        if not isinstance(transform, OutcomeTransform):
            raise TypeError(f"transform must be an npbandit OutcomeTransform, got {type(transform).__name__}")
        super().__init__(encoded, [_Untransform(transform)], validate_args=validate_args)
        self.transform = transform

    @property
    def encoding(self) -> OutcomeTransform:
        """The transform (the name this attribute had when it held a reward encoding)."""
        return self.transform

    @property
    def encoded(self) -> Normal:
        """The network's Gaussian, in model units."""
        return self.base_dist

    def expand(self, batch_shape: torch.Size, _instance: Any = None) -> OutcomePredictive:
        return OutcomePredictive(self.encoded.expand(batch_shape), self.transform)

    @property
    def median(self) -> Tensor:
        return self.transform.untransform(self.encoded.loc)

    @property
    def mean(self) -> Tensor:
        return self.transform.untransform_moments(self.encoded.loc, self.encoded.scale)[0]

    @property
    def variance(self) -> Tensor:
        return self.transform.untransform_moments(self.encoded.loc, self.encoded.scale)[1]

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()
