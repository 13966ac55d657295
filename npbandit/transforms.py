"""Outcome transforms: how the values a caller observes become what a network sees.

A prior may hand its networks encoded outputs (the ``wheel`` prior: ``symlog`` of the
rewards, and a fill standing in for the rewards of arms that were not observed). The
encoding is part of the model: the prior uses it to make training batches, the
checkpoint card declares it (``"transforms"``), :func:`~npbandit.surrogates.pretrained.load_surrogate`
attaches it as ``model.outcome_transform``, and the model applies it on the way in and
out of its protocol (:mod:`npbandit.surrogates.base`). One object, used by all three, so
the encoding exists once (as :mod:`npbandit.scaling` does for the ``bo`` prior's
standardisation).

Two unit systems:

- *data units*: rewards as observed (``50.0``); what ``condition`` / ``update`` take and
  ``predict`` / ``sample`` / ``joint_log_prob`` answer in, on a model that carries a transform;
- *model units*: what the network reads and its Gaussian head describes (``symlog(50) = 3.93``);
  what a prior's batches hold, so what ``log_likelihood`` and the trainer score.

Predictions in data units. The network's predictive is a Gaussian ``N(m, s²)`` in model
units; in data units it is that Gaussian pushed through the inverse transform
(:class:`OutcomePredictive`). The encodings here are strictly increasing, so its
quantiles are the transformed Gaussian quantiles exactly (median ``decode(m)``; the upper
``Φ(β)`` quantile ``decode(m + β s)``), and its density, CDF and draws follow by change of
variables. Its mean and variance are not the transformed ``m`` and ``s``: for
``y = c · symexp(z)`` (``symexp(z) = sign(z)(e^|z| - 1)``, the inverse of symlog) they are
closed-form sums of truncated log-normal moments (see :func:`symexp_moments`); for
``y = c · z``, ``c m`` and ``c² s²``. Decisions that need only an order between arms (UCB on
a quantile, Thompson draws) can be made in either unit system; the bandit policy makes
them on ``OutcomePredictive.encoded``, the network's own Gaussian.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import Tensor
from torch.distributions import Normal, TransformedDistribution, constraints
from torch.distributions.transforms import Transform

__all__ = ["RewardEncoding", "OutcomePredictive", "encode_rewards", "decode_rewards", "symexp_moments",
           "transform_spec", "transform_from_spec", "REWARD_TRANSFORMS", "REWARD_FILLS"]

REWARD_TRANSFORMS = ("identity", "symlog")
REWARD_FILLS = ("noise", "zeros")
#: the ``"type"`` of a :class:`RewardEncoding` in a checkpoint card's ``"transforms"``
REWARD_TYPE = "reward"


def encode_rewards(y: Tensor, scale: float = 1.0, transform: str = "identity") -> Tensor:
    """What a network sees for rewards ``y``: ``T(y / scale)``, ``T`` = identity or
    ``symlog(y) = sign(y) log(1 + |y|)``. Elementwise, any shape."""
    if transform not in REWARD_TRANSFORMS:
        raise ValueError(f"transform must be one of {REWARD_TRANSFORMS}, got {transform!r}")
    y = y / scale
    return torch.sign(y) * torch.log1p(y.abs()) if transform == "symlog" else y


def decode_rewards(z: Tensor, scale: float = 1.0, transform: str = "identity") -> Tensor:
    """The inverse of :func:`encode_rewards`: model units ``z`` back to rewards."""
    if transform not in REWARD_TRANSFORMS:
        raise ValueError(f"transform must be one of {REWARD_TRANSFORMS}, got {transform!r}")
    y = torch.sign(z) * torch.expm1(z.abs()) if transform == "symlog" else z
    return y * scale


def symexp_moments(loc: Tensor, scale: Tensor) -> tuple[Tensor, Tensor]:
    """Mean and variance of ``symexp(Z)``, ``Z ~ N(loc, scale²)`` (elementwise, any shape).

    With ``A_k = E[e^{kZ}; Z > 0] = exp(k m + k² s²/2) Φ((m + k s²)/s)`` and
    ``B_k = E[e^{-kZ}; Z < 0] = exp(-k m + k² s²/2) Φ((k s² - m)/s)``:
    ``E[symexp Z] = A_1 - B_1 - Φ(m/s) + Φ(-m/s)`` and
    ``E[symexp(Z)²] = A_2 + B_2 - 2 (A_1 + B_1) + 1``. Computed in float64 (the variance
    is a difference of two large numbers when ``s`` is small) and returned in ``loc``'s
    dtype (``scale > 0``); a moment too large for float64 or for that dtype is ``inf``
    (float64: variance beyond ``|m| ≈ 350``; float32: the mean beyond ``|m| ≈ 88``).
    """
    m, s = loc.double(), scale.double()

    def truncated(k: int, sign: int) -> Tensor:  # E[e^{sign k Z}; sign Z > 0], via log Φ: no inf * 0
        return torch.exp(sign * k * m + k * k * s * s / 2 + torch.special.log_ndtr((sign * m + k * s * s) / s))

    a1, b1, a2, b2 = truncated(1, 1), truncated(1, -1), truncated(2, 1), truncated(2, -1)
    mean = a1 - b1 - torch.special.ndtr(m / s) + torch.special.ndtr(-m / s)
    second = a2 + b2 - 2 * (a1 + b1) + 1  # inf - inf = NaN once A_2 or B_2 overflows: then it is inf
    overflow = torch.isinf(a2) | torch.isinf(b2)
    variance = torch.where(overflow, torch.inf, (second - mean * mean).clamp_min(0))
    return mean.to(loc.dtype), variance.to(loc.dtype)


class _Decode(Transform):
    """Model units -> data units for a :class:`RewardEncoding` (strictly increasing)."""

    domain = constraints.real
    codomain = constraints.real
    bijective = True
    sign = +1

    def __init__(self, encoding: "RewardEncoding") -> None:
        super().__init__()
        self.encoding = encoding

    def _call(self, z: Tensor) -> Tensor:
        return self.encoding.decode(z)

    def _inverse(self, y: Tensor) -> Tensor:
        return self.encoding.encode(y)

    def log_abs_det_jacobian(self, z: Tensor, y: Tensor) -> Tensor:
        # d/dz [c symexp(z)] = c e^|z|;  d/dz [c z] = c
        log_scale = math.log(self.encoding.scale)
        return z.abs() + log_scale if self.encoding.transform == "symlog" else torch.full_like(z, log_scale)


class OutcomePredictive(TransformedDistribution):
    """A model's predictive in data units: its Gaussian in model units (:attr:`encoded`)
    pushed through the inverse of its outcome transform (see the module docstring).

    ``icdf`` / ``cdf`` / ``log_prob`` / ``sample`` / ``rsample`` are exact (change of
    variables through a strictly increasing map); :attr:`mean` and :attr:`variance` are
    the exact moments of the pushed-forward distribution (:func:`symexp_moments` for
    symlog), not the decoded Gaussian's ``loc``; :attr:`median` is ``decode(loc)``.
    Shapes are those of the Gaussian (``[B, M, dy]`` from ``predict``).
    """

    arg_constraints: dict[str, constraints.Constraint] = {}

    def __init__(self, encoded: Normal, encoding: "RewardEncoding", validate_args: bool | None = None) -> None:
        if not isinstance(encoded, Normal):
            raise TypeError(f"encoded must be a torch.distributions.Normal, got {type(encoded).__name__}")
        if not isinstance(encoding, RewardEncoding):
            raise TypeError(f"encoding must be a RewardEncoding, got {type(encoding).__name__}")
        super().__init__(encoded, [_Decode(encoding)], validate_args=validate_args)
        self.encoding = encoding

    @property
    def encoded(self) -> Normal:
        """The network's Gaussian, in model units."""
        return self.base_dist

    def expand(self, batch_shape: torch.Size, _instance: Any = None) -> "OutcomePredictive":
        return OutcomePredictive(self.encoded.expand(batch_shape), self.encoding)

    @property
    def median(self) -> Tensor:
        return self.encoding.decode(self.encoded.loc)

    @property
    def mean(self) -> Tensor:
        return self._moments()[0]

    @property
    def variance(self) -> Tensor:
        return self._moments()[1]

    @property
    def stddev(self) -> Tensor:
        return self.variance.sqrt()

    def _moments(self) -> tuple[Tensor, Tensor]:
        loc, scale, c = self.encoded.loc, self.encoded.scale, self.encoding.scale
        if self.encoding.transform == "identity":
            return c * loc, (c * scale).pow(2)
        mean, variance = symexp_moments(loc, scale)
        return c * mean, c * c * variance


@dataclass(frozen=True)
class RewardEncoding:
    """How a network sees reward rows whose entries may be unobserved (the ``wheel``
    prior; the reasons for its defaults: :mod:`npbandit.priors.wheel`).

    Attributes:
        scale: rewards are divided by it first.
        transform: ``"identity"`` or ``"symlog"`` (``sign(y) log(1 + |y|)``), applied after scaling.
        fill: what stands in the entries of arms that were not observed (dropped in
            training, not played at decision time), before encoding: ``"noise"`` =
            ``N(0, 1)`` draws (the papers), ``"zeros"`` = exactly ``0``, a value no wheel
            reward comes near (the smallest mean is 1.0 with std 0.05), so it acts as an
            observation mask.
    """

    scale: float = 1.0
    transform: str = "symlog"
    fill: str = "zeros"

    def __post_init__(self) -> None:
        if isinstance(self.scale, bool) or not (isinstance(self.scale, (int, float)) and math.isfinite(self.scale)
                                                and self.scale > 0):
            raise ValueError(f"reward_scale must be a positive finite number, got {self.scale!r}")
        if self.transform not in REWARD_TRANSFORMS:
            raise ValueError(f"reward_transform must be one of {REWARD_TRANSFORMS}, got {self.transform!r}")
        if self.fill not in REWARD_FILLS:
            raise ValueError(f"reward_fill must be one of {REWARD_FILLS}, got {self.fill!r}")
        object.__setattr__(self, "scale", float(self.scale))

    @classmethod
    def from_prior_spec(cls, prior_spec: dict[str, Any]) -> "RewardEncoding":
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

    def encode(self, y: Tensor) -> Tensor:
        """Rewards (every entry observed) -> model units, elementwise."""
        return encode_rewards(y, self.scale, self.transform)

    def decode(self, z: Tensor) -> Tensor:
        """Model units -> rewards, elementwise (the inverse of :meth:`encode`)."""
        return decode_rewards(z, self.scale, self.transform)

    def unobserved(self, shape: tuple[int, ...], generator: torch.Generator | None,
                   dtype: torch.dtype = torch.float32, device: torch.device | str | None = None) -> Tensor:
        """Raw (unencoded) values for unobserved reward entries, ``shape``. Noise is drawn
        from ``generator`` on its device (``None``: torch's global generator) and moved to
        ``device``."""
        if self.fill == "zeros":
            return torch.zeros(shape, dtype=dtype, device=device)
        source = generator.device if generator is not None else device
        return torch.randn(shape, generator=generator, dtype=dtype, device=source).to(device)

    def encode_observed(self, y: Tensor, observed: Tensor, generator: torch.Generator | None = None) -> Tensor:
        """Reward rows -> model units: entries where ``observed`` is false take the fill
        (whatever ``y`` holds there, NaN included), then everything is encoded.

        Args:
            y: rewards ``[..., n_arms]``.
            observed: bool, ``y``'s shape: which entries were observed.
            generator: for ``"noise"`` fill (one ``N(0, 1)`` draw per entry of ``y``, in
                order, observed or not); ``None``: torch's global generator.
        """
        if not isinstance(observed, Tensor) or observed.dtype != torch.bool:
            raise TypeError(f"observed must be a bool tensor, got {type(observed).__name__}"
                            + (f" of dtype {observed.dtype}" if isinstance(observed, Tensor) else ""))
        if observed.shape != y.shape:
            raise ValueError(f"observed must have the shape of the rewards {tuple(y.shape)}, "
                             f"got {tuple(observed.shape)}")
        fill = self.unobserved(tuple(y.shape), generator, y.dtype, y.device)
        return self.encode(torch.where(observed, y, fill))

    def predictive(self, encoded: Normal) -> OutcomePredictive:
        """The network's Gaussian (model units) as a distribution over rewards."""
        return OutcomePredictive(encoded, self)

    def log_abs_det_jacobian(self, y: Tensor) -> Tensor:
        """``log |d encode(y) / dy|`` elementwise: what a log-density in model units gains
        to become one in data units."""
        z = self.encode(y)
        return -_Decode(self).log_abs_det_jacobian(z, y)


def transform_spec(transform: RewardEncoding | None) -> dict[str, Any] | None:
    """A checkpoint card's ``"transforms"`` entry for an outcome transform (``None``: none)."""
    if transform is None:
        return None
    if not isinstance(transform, RewardEncoding):
        raise TypeError(f"outcome transform must be a RewardEncoding or None, got {type(transform).__name__}")
    return {"type": REWARD_TYPE, **transform.spec()}


def transform_from_spec(spec: dict[str, Any] | None) -> RewardEncoding | None:
    """The outcome transform a card entry describes (the inverse of :func:`transform_spec`).

    Raises:
        ValueError: an entry of an unknown ``type``, or with missing or unknown fields."""
    if spec is None:
        return None
    if not isinstance(spec, dict) or spec.get("type") != REWARD_TYPE:
        raise ValueError(f"outcome transform must be null or {{'type': {REWARD_TYPE!r}, ...}}, got {spec!r}")
    fields = {"reward_scale", "reward_transform", "reward_fill"}
    given = set(spec) - {"type"}
    if given != fields:
        raise ValueError(f"a {REWARD_TYPE!r} outcome transform has exactly the fields {sorted(fields)}, "
                         f"got {sorted(given)}")
    return RewardEncoding(spec["reward_scale"], spec["reward_transform"], spec["reward_fill"])
