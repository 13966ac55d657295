"""Outcome constraints' convention: when one evaluation's constraint values make it feasible.

An objective with ``k`` outcome constraints returns, beside its value, ``k`` constraint
values; the evaluation is *feasible* when every one of them is ``<= 0`` (Optuna's
``constraints_func`` convention, and BoTorch's constraint callables'). :func:`is_feasible` is
that judgement for one evaluation, on a plain sequence, array or tensor of its values: the
environment's ``info["feasible"]``, ``BOPolicy``'s and ``NPSampler``'s trust-region
bookkeeping, ``optimize``'s history and ``npbandit report``'s counts all ask it;
:func:`best_step` picks the best feasible one of a run's stored steps.
:func:`npbandit.acquisition.constrained.feasible` asks the same of every row of a tensor
of outputs at once, and :func:`~npbandit.acquisition.constrained.incumbent` picks the best
feasible row, or the least violating one while none is.

Every evaluation of one run carries the same number ``k`` of constraint values, one per
constraint: :func:`check_constraint_count` is that rule, asked where the environment reads what
a run's ``constraints`` return, where evaluations given as earlier ones (``optimize(initial=...)``)
are read and where they meet the run's own, where ``BOPolicy`` observes, and where
``NPSampler`` reads a study's trials.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["is_feasible", "best_step", "check_constraint_count"]


def is_feasible(values: Any) -> bool:
    """Whether one evaluation's constraint values ``[k]`` (a sequence, array or tensor of
    real numbers) are all ``<= 0``; ``True`` for none (``k = 0``), ``False`` when one is NaN.

    Raises:
        ValueError: ``values`` not one-dimensional.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 1:
        raise ValueError(f"values must be one evaluation's constraint values, shape [k], got shape "
                         f"{tuple(values.shape)}")
    return bool((values <= 0).all())


def best_step(steps: list[dict[str, Any]], minimize: bool, constrained: bool) -> dict[str, Any] | None:
    """The best of a run's stored ``steps`` (dicts with ``"failed"``, ``"value"`` and, with
    constraints, ``"constraints"``) in its direction: of the successful ones with a value,
    with ``constrained`` of the feasible ones (a step without constraint values is not);
    ``None`` when none is."""
    ok = [s for s in steps if not s["failed"] and s["value"] is not None
          and (not constrained or is_feasible(s.get("constraints") or [np.inf]))]
    return (min if minimize else max)(ok, key=lambda s: s["value"]) if ok else None


def check_constraint_count(count: int, earlier: int | None, name: str, this: str, *, unit: str = "evaluation",
                           why: str = "", error: Callable[[str], Exception] = ValueError) -> None:
    """Every evaluation of one run carries the same number of constraint values: an error
    (``error``'s, a ``ValueError`` by default) when ``count``, the number a new one carries,
    is not ``earlier``, the number each earlier ``unit`` carries (``None``: no earlier one
    carries any, so there is nothing to compare yet). Values of another count would not be of
    the same constraints, so the new ones cannot be read beside the earlier ones.

    The message reads ``"{name}: each earlier {unit} carries {earlier} constraint value(s),
    but {this} {count}{why}"``: ``name`` what the values were given as (the argument, or
    ``info['constraints']``), ``this`` what carries the new ones (``"this run's constraints
    returned"``), ``why`` what to do instead, if anything. ``error`` makes the exception from
    the message: ``ValueError`` for values given to a function, the environment's
    :class:`~npbandit.exceptions.ObjectiveReturnError` for a ``constraints`` callable's return
    (a failed evaluation, recorded like any other).
    """
    if earlier is not None and count != earlier:
        values = "value" if earlier == 1 else "values"
        raise error(f"{name}: each earlier {unit} carries {earlier} constraint {values}, but {this} {count}{why}")
