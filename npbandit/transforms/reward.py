"""The wheel checkpoints' reward encoding, as their cards record it.

A ``wheel`` checkpoint's network read rewards through an outcome transform --
:class:`~npbandit.transforms.bilog.Bilog` (``symlog(y / scale)``) or
:class:`~npbandit.transforms.scale.Scale` (``y / scale``, the card's ``"identity"``) -- with
the entries of unplayed arms filled in before it (``"zeros"`` or ``"noise"``). The card
records the three together (``{"type": "reward", "reward_scale", "reward_transform",
"reward_fill"}``); :class:`RewardEncoding` is that record. It is an
:class:`~npbandit.transforms.base.OutcomeTransform` (its transform's arithmetic exactly),
so a loaded wheel checkpoint carries it as ``outcome_transform``; the fill is only
named here: the bandit side applies it (:class:`npbandit.priors.wheel.RewardFill`), before
the rows reach a model.

``encode_rewards`` / ``decode_rewards`` and :meth:`RewardEncoding.encode` / ``decode`` /
``predictive`` are the earlier functional forms, deprecated in favour of the transforms.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

from torch import Tensor
from torch.distributions import Normal

from npbandit.transforms.base import OutcomePredictive, OutcomeTransform
from npbandit.transforms.bilog import Bilog
from npbandit.transforms.scale import Scale

__all__ = ["RewardEncoding", "encode_rewards", "decode_rewards", "REWARD_TRANSFORMS", "REWARD_FILLS", "REWARD_TYPE"]

REWARD_TRANSFORMS = ("identity", "symlog")
REWARD_FILLS = ("noise", "zeros")
#: the ``"type"`` of a :class:`RewardEncoding` in a checkpoint card's ``"transforms"``
REWARD_TYPE = "reward"


def _deprecated(old: str, new: str) -> None:
    warnings.warn(f"{old} is deprecated; use {new}", DeprecationWarning, stacklevel=3)


def _reward_transform(scale: float, transform: str) -> OutcomeTransform:
    if transform not in REWARD_TRANSFORMS:
        raise ValueError(f"transform must be one of {REWARD_TRANSFORMS}, got {transform!r}")
    return Bilog(scale) if transform == "symlog" else Scale(scale)


def encode_rewards(y: Tensor, scale: float = 1.0, transform: str = "identity") -> Tensor:
    """Deprecated: ``Bilog(scale).forward(y)`` (``"symlog"``) or ``Scale(scale).forward(y)``."""
    _deprecated("encode_rewards", "npbandit.transforms.Bilog(scale).forward (or Scale for 'identity')")
    return _reward_transform(scale, transform).forward(y)


def decode_rewards(z: Tensor, scale: float = 1.0, transform: str = "identity") -> Tensor:
    """Deprecated: ``Bilog(scale).untransform(z)`` (``"symlog"``) or ``Scale(scale).untransform(z)``."""
    _deprecated("decode_rewards", "npbandit.transforms.Bilog(scale).untransform (or Scale for 'identity')")
    return _reward_transform(scale, transform).untransform(z)


@dataclass(frozen=True, eq=True)
class RewardEncoding(OutcomeTransform):
    """How a wheel network reads reward rows (the reasons for the defaults:
    :mod:`npbandit.priors.wheel`); an outcome transform with the arithmetic of
    :attr:`outcome_transform`.

    Attributes:
        scale: rewards are divided by it first.
        transform: ``"identity"`` or ``"symlog"`` (``sign(y) log(1 + |y|)``), applied after scaling.
        fill: what stood in the entries of arms that were not observed (dropped in
            training, not played at decision time), in data units: ``"noise"`` =
            ``N(0, 1)`` draws (the papers), ``"zeros"`` = exactly ``0``, a value no wheel
            reward comes near, so it acts as an observation mask. Applied by
            :class:`npbandit.priors.wheel.RewardFill`, not by this transform.
    """

    scale: float = 1.0
    transform: str = "symlog"
    fill: str = "zeros"

    def __post_init__(self) -> None:
        try:
            _reward_transform(self.scale, "symlog")
        except ValueError:
            raise ValueError(f"reward_scale must be a positive finite number, got {self.scale!r}") from None
        if self.transform not in REWARD_TRANSFORMS:
            raise ValueError(f"reward_transform must be one of {REWARD_TRANSFORMS}, got {self.transform!r}")
        if self.fill not in REWARD_FILLS:
            raise ValueError(f"reward_fill must be one of {REWARD_FILLS}, got {self.fill!r}")
        object.__setattr__(self, "scale", float(self.scale))
        object.__setattr__(self, "_outcome", _reward_transform(self.scale, self.transform))

    @property
    def outcome_transform(self) -> OutcomeTransform:
        """The transform alone: ``Bilog(scale)`` for ``"symlog"``, ``Scale(scale)`` for ``"identity"``."""
        return self._outcome  # type: ignore[attr-defined]

    @classmethod
    def of(cls, transform: OutcomeTransform, fill: str) -> RewardEncoding:
        """The record of a ``Bilog`` or ``Scale`` (or a ``RewardEncoding``) with the fill ``fill``."""
        if isinstance(transform, RewardEncoding):
            transform = transform.outcome_transform
        if type(transform) not in (Bilog, Scale):
            raise TypeError(f"a reward encoding is a Bilog or Scale transform with a fill, got {transform!r}")
        return cls(transform.scale, "symlog" if isinstance(transform, Bilog) else "identity", fill)

    @classmethod
    def from_prior_spec(cls, prior_spec: dict[str, Any]) -> RewardEncoding:
        """The encoding recorded in a checkpoint card's prior spec. Cards written before a
        field existed trained with its old behaviour: raw rewards (``1.0``, ``"identity"``),
        ``"noise"`` fill."""
        return cls(prior_spec.get("reward_scale", 1.0), prior_spec.get("reward_transform", "identity"),
                   prior_spec.get("reward_fill", "noise"))

    def spec(self) -> dict[str, Any]:
        return {"reward_scale": self.scale, "reward_transform": self.transform, "reward_fill": self.fill}

    def describe(self) -> str:
        """A short human-readable form, e.g. ``symlog(y / 1), zeros fill``."""
        return f"{self.transform}(y / {self.scale:g}), {self.fill} fill"

    # -- the outcome transform: its transform's arithmetic --------------------------------

    def forward(self, Y: Tensor) -> Tensor:
        return self.outcome_transform.forward(Y)

    def untransform(self, Y: Tensor) -> Tensor:
        return self.outcome_transform.untransform(Y)

    def untransform_log_abs_det_jacobian(self, Y: Tensor) -> Tensor:
        return self.outcome_transform.untransform_log_abs_det_jacobian(Y)

    def untransform_moments(self, loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
        return self.outcome_transform.untransform_moments(loc, scale)

    def untransform_mean_variance(self, mean: Tensor, variance: Tensor) -> tuple[Tensor, Tensor]:
        return self.outcome_transform.untransform_mean_variance(mean, variance)

    def __repr__(self) -> str:
        return f"RewardEncoding(scale={self.scale!r}, transform={self.transform!r}, fill={self.fill!r})"

    # -- deprecated names ------------------------------------------------------------------

    def encode(self, y: Tensor) -> Tensor:
        """Deprecated: :meth:`forward`."""
        _deprecated("RewardEncoding.encode", "RewardEncoding.forward")
        return self.forward(y)

    def decode(self, z: Tensor) -> Tensor:
        """Deprecated: :meth:`untransform`."""
        _deprecated("RewardEncoding.decode", "RewardEncoding.untransform")
        return self.untransform(z)

    def predictive(self, encoded: Normal) -> OutcomePredictive:
        """Deprecated: :meth:`untransform_predictive`."""
        _deprecated("RewardEncoding.predictive", "RewardEncoding.untransform_predictive")
        return self.untransform_predictive(encoded)
