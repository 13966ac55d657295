"""Earlier evaluations a search starts from (``optimize(initial=...)``): what forms they may
take, how they are checked, and the policy wrapper that shows them to the policy first.

The forms a user brings (each point as the objective receives it, in the user's units):

- ``(x, value)`` pairs (``(x, value, constraints)`` triples for a constrained search);
- the ``history`` of an earlier :class:`~npbandit.api.OptimizeResult` (failed entries skipped);
- the steps of a run in the database, :func:`npbandit.storage.run_steps` ``(db, run_id)``:
  each step's ``params`` (a box's point by name, ``{"x0": ..., ...}``) and ``value``, failed
  steps skipped: the way to continue an interrupted run;
- BoTorch's habit, a pair of arrays ``(X [n, d], Y [n])`` (or ``Y [n, 1]``), for a box.

Nothing outside the box or the space is clipped in: such a point is refused, naming it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch

from npbandit.envs.blackbox import ObjectiveError, constraint_values
from npbandit.policies.base import Policy, PolicyWrapper
from npbandit.space import SearchSpace

__all__ = ["initial_points", "WarmStart"]

#: ``(action [d] in the unit cube, reward, constraint values or None)``
Observation = tuple[np.ndarray, float, "list[float] | None"]


def _as_array(value: Any) -> np.ndarray | None:
    """``value`` as a float64 array if it is a numpy array or a tensor, else ``None``."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().astype(np.float64)
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    return None


def _array_pairs(initial: Any) -> list[tuple[Any, float]] | None:
    """``(X [n, d], Y [n] or [n, 1])`` as ``(x, value)`` pairs; ``None`` if ``initial`` is not
    a pair of arrays with a 2-D ``X``."""
    if not (isinstance(initial, tuple) and len(initial) == 2):
        return None
    X, Y = _as_array(initial[0]), _as_array(initial[1])
    if X is None or Y is None or X.ndim != 2:
        return None
    if Y.ndim == 2 and Y.shape[1] == 1:
        Y = Y[:, 0]
    if Y.shape != (len(X),):
        raise ValueError(f"initial=(X, Y): Y must have shape [{len(X)}] or [{len(X)}, 1] (one value per row of X "
                         f"[{len(X)}, {X.shape[1]}]), got {list(Y.shape)}")
    return [(x, float(y)) for x, y in zip(X, Y)]


def _box_point(x: Any, box: np.ndarray) -> Any:
    """A box's point given by name, ``{"x0": ..., "x{d-1}": ...}`` as a run's steps record it,
    as an array in that order; anything else as it is."""
    if isinstance(x, Mapping):
        names = list(SearchSpace.from_bounds(box))  # x0 .. x{d-1}, as a run names a box's inputs
        if sorted(x, key=str) != sorted(names):
            raise ValueError(f"a point of the bounds given by name needs exactly the keys {names[0]} .. {names[-1]}, "
                             f"got {sorted(x, key=str)}")
        return np.array([x[n] for n in names], dtype=np.float64)
    return x


def initial_points(initial: Any, box: np.ndarray | None, space: SearchSpace | None, minimize: bool,
                   constrained: bool = False) -> list[Observation]:
    """``initial`` (any form of the module) as ``(action [d] in the unit cube, reward,
    constraint values)`` triples (``reward`` the value, negated when minimising; the values
    ``None`` without constraints), each point checked against ``box`` (``2 x d``) or ``space``.

    Raises:
        TypeError: ``initial`` not one of the forms.
        ValueError: an entry that is not ``(x, value)`` (``(x, value, constraints)`` when
            ``constrained``), a value that is not a finite real number, a point outside the
            box or the space (naming the entry), or constraint values of different lengths.
    """
    pairs = _array_pairs(initial)
    if pairs is not None:
        if space is not None:
            raise ValueError("initial=(X, Y) arrays are for a box (bounds); for a search space give (params, value) "
                             "pairs, params a dict {name: value}, or a run's steps")
        initial = pairs
    if isinstance(initial, (str, bytes, Mapping)) or not isinstance(initial, Sequence):
        raise TypeError(f"initial must be (x, value) pairs, an earlier result's history, a run's steps "
                        f"(npbandit.storage.run_steps) or a pair of arrays (X [n, d], Y [n]), got "
                        f"{type(initial).__name__}")
    out = []
    width = 3 if constrained else 2
    what = "an (x, value, constraints) triple" if constrained else "an (x, value) pair"
    for i, entry in enumerate(initial):
        limits = None
        if isinstance(entry, Mapping):  # an entry of OptimizeResult.history, or a run's step
            key = "x" if "x" in entry else "params"
            if key not in entry or "value" not in entry or (constrained and "constraints" not in entry
                                                            and not entry.get("failed")):
                needs = ("'x' (or 'params'), 'value' and 'constraints'" if constrained
                         else "'x' (or 'params') and 'value'")
                raise ValueError(f"initial[{i}] must be {what}, a history entry or a run's step with {needs}, got "
                                 f"{_short(entry)}")
            if entry.get("failed"):
                continue
            x, value = entry[key], entry["value"]
            limits = entry.get("constraints") if constrained else None
        elif isinstance(entry, (tuple, list)) and len(entry) == width:
            x, value, *rest = entry
            limits = rest[0] if constrained else None
        else:
            hint = " (with constraints, each earlier evaluation needs its constraint values)" if constrained else ""
            raise ValueError(f"initial[{i}] must be {what}, got {_short(entry)}{hint}")
        if constrained:
            try:
                limits = constraint_values(limits, x).tolist()
            except ObjectiveError as err:
                raise ValueError(f"initial[{i}]: {err}") from None
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)) \
                or not np.isfinite(value):
            raise ValueError(f"initial[{i}]: the value must be a finite real number, got {value!r}")
        if space is not None:
            try:
                action = space.encode(x)
            except (TypeError, ValueError) as err:
                raise type(err)(f"initial[{i}]: {err}") from None
        else:
            try:
                x = _box_point(x, box)
            except ValueError as err:
                raise ValueError(f"initial[{i}]: {err}") from None
            point = np.asarray(x.detach().cpu() if isinstance(x, torch.Tensor) else x, dtype=np.float64)
            if point.shape != (box.shape[1],) or not np.isfinite(point).all():
                raise ValueError(f"initial[{i}]: x must be a finite point of shape [{box.shape[1]}], got "
                                 f"{_short(point.tolist())}")
            outside = np.nonzero((point < box[0]) | (point > box[1]))[0]
            if len(outside):
                j = int(outside[0])
                raise ValueError(f"initial[{i}]: x is outside the bounds: x[{j}] = {float(point[j])!r} is not in "
                                 f"[{float(box[0, j])!r}, {float(box[1, j])!r}]")
            action = (point - box[0]) / (box[1] - box[0])
        out.append((action, -float(value) if minimize else float(value), limits))
    if constrained and len({len(c) for _, _, c in out}) > 1:
        raise ValueError(f"initial: every evaluation needs the same number of constraint values, got "
                         f"{sorted({len(c) for _, _, c in out})}")
    return out


def _short(value: Any, limit: int = 120) -> str:
    """``repr(value)``, cut to ``limit`` characters (an array of many points stays readable)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + " ..."


class WarmStart(PolicyWrapper):
    """A policy that observes earlier evaluations (:func:`initial_points`' triples) right
    after each ``reset``, before it proposes anything (``optimize(initial=...)``)."""

    def __init__(self, inner: Policy, observations: list[Observation]) -> None:
        super().__init__(inner)
        self.observations = observations

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for action, reward, limits in self.observations:
            obs = np.concatenate([action, [reward]])
            self.inner.observe(obs, action.copy(), reward, {} if limits is None else {"constraints": list(limits)})

    def params(self) -> dict[str, Any]:
        return {**self.inner.params(), "initial": len(self.observations)}
