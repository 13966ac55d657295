"""Outcome transforms in checkpoint cards: the ``"outcome"`` entry of a card's ``"transforms"``.

A card stores transforms that do not depend on the data a model is conditioned on:

- ``null`` -- none;
- ``{"type": "reward", "reward_scale", "reward_transform", "reward_fill"}`` -- a
  :class:`~npbandit.transforms.reward.RewardEncoding` (every shipped ``*-wheel`` card);
- ``{"type": "bilog", "scale"}`` -- :class:`~npbandit.transforms.bilog.Bilog`;
- ``{"type": "scale", "scale"}`` -- :class:`~npbandit.transforms.scale.Scale`;
- ``{"type": "chain", "transforms": [...]}`` -- :class:`~npbandit.transforms.chain.Chain`.

``Standardize`` and ``YeoJohnson`` are fitted to the data at hand and have no card form.
"""

from __future__ import annotations

from typing import Any

from npbandit.transforms.base import OutcomeTransform
from npbandit.transforms.bilog import Bilog
from npbandit.transforms.chain import Chain
from npbandit.transforms.reward import REWARD_TYPE, RewardEncoding
from npbandit.transforms.scale import Scale

__all__ = ["transform_spec", "transform_from_spec", "SPEC_TYPES"]

#: the ``"type"`` of each card form, with its fields besides ``"type"``
SPEC_TYPES = {REWARD_TYPE: ("reward_fill", "reward_scale", "reward_transform"), "bilog": ("scale",),
              "scale": ("scale",), "chain": ("transforms",)}


def transform_spec(transform: OutcomeTransform | None) -> dict[str, Any] | None:
    """A checkpoint card's ``"outcome"`` entry for ``transform`` (``None``: none).

    Raises:
        TypeError: a transform without a card form (fitted to data, or not one of these)."""
    if transform is None:
        return None
    if isinstance(transform, RewardEncoding):
        return {"type": REWARD_TYPE, **transform.spec()}
    if type(transform) in (Bilog, Scale):
        return {"type": type(transform).__name__.lower(), "scale": transform.scale}
    if type(transform) is Chain:
        return {"type": "chain", "transforms": [transform_spec(t) for t in transform.transforms]}
    raise TypeError(f"outcome transform must be None, a RewardEncoding, Bilog, Scale or a Chain of them (the "
                    f"transforms a card can store), got {type(transform).__name__}")


def transform_from_spec(spec: dict[str, Any] | None) -> OutcomeTransform | None:
    """The outcome transform a card entry describes (the inverse of :func:`transform_spec`).

    Raises:
        ValueError: an entry of an unknown ``type``, or with missing, unknown or invalid fields."""
    if spec is None:
        return None
    if not isinstance(spec, dict) or spec.get("type") not in SPEC_TYPES:
        raise ValueError(f"outcome transform must be null or {{'type': one of {sorted(SPEC_TYPES)}, ...}}, "
                         f"got {spec!r}")
    kind = spec["type"]
    given = set(spec) - {"type"}
    if given != set(SPEC_TYPES[kind]):
        raise ValueError(f"a {kind!r} outcome transform has exactly the fields {list(SPEC_TYPES[kind])}, "
                         f"got {sorted(given)}")
    if kind == REWARD_TYPE:
        return RewardEncoding(spec["reward_scale"], spec["reward_transform"], spec["reward_fill"])
    if kind == "chain":
        if not isinstance(spec["transforms"], list) or not spec["transforms"] or None in spec["transforms"]:
            raise ValueError(f"a 'chain' outcome transform lists one or more transforms, got {spec['transforms']!r}")
        return Chain(*(transform_from_spec(s) for s in spec["transforms"]))
    return (Bilog if kind == "bilog" else Scale)(spec["scale"])
