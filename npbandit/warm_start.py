"""Earlier evaluations a search starts from (``optimize(initial=...)``): what forms they may
take, how they are checked, and the policy wrapper that shows them to the policy first.

The forms a user brings (each point as the objective receives it, in the user's units):

- ``(x, value)`` pairs (``(x, value, constraints)`` triples for a constrained search);
- the ``history`` of an earlier :class:`~npbandit.optimize_result.OptimizeResult`;
- the steps of a run in the database, :func:`npbandit.storage.run_steps` ``(db, run_id)``:
  each step's ``params`` (a box's point by name, ``{"x0": ..., ...}``) and ``value``: the way
  to continue an interrupted run;
- BoTorch's habit, a pair of arrays ``(X [n, d], Y [n])`` (or ``Y [n, 1]``), for a box;
- a run in the database to continue, by its id (``optimize(initial=7, db=...)``, ``npbandit
  optimize --initial-from 7``) or its :class:`~npbandit.storage.RunRow`: every evaluation
  that run saw, :func:`continued_run` (:func:`npbandit.storage.run_evaluations`).

What a continued run conditions on: everything the run it continues saw, in that order:
the points that run was given (when it continued a run in turn, everything *that* run saw,
and so on back to the first run of the chain), then that run's own evaluations. The new run
records which run it continues (``initial_from`` in its policy settings, beside ``initial``,
how many points it was given), so a continuation of it follows the chain in turn. A run given
its points in another form (pairs, a history, arrays, a list of steps) records no source: a
continuation of it sees its own evaluations and those after it but not those points (a
warning says how many are missing).

A failed entry of a history or a run (``failed`` true) is carried as a failure: the policy
is told of it as of a failure in its own run (:meth:`~npbandit.policies.base.Policy.observe_failure`,
the point never proposed again, a BO model seeing it at the worst value), and it counts
among the initial evaluations. No given point, evaluated or failed, is evaluated again by
the initial design: the design passes over a point of its Sobol sequence that lies on a
given one (:mod:`npbandit.policies.design`), so a run continued from an earlier run of the
same seed that stopped inside its design goes on with the design's next points.

Nothing outside the box or the space is clipped in: such a point is refused, naming it.

Whether the evaluations come from the same problem is checked as far as the entries can
say (a setting that differs through :func:`check_same_problem`, the comparison ``npbandit
optimize --initial-from`` makes of the run's record too):

- a run's step (a record with ``action``, ``params`` and ``reward``, as ``run_steps`` and
  ``RunInterrupted.records`` hold them) says its run's direction, its ``reward`` being its
  ``value`` negated when minimising (unknown when the value is 0), and where its run's cube
  lay: its ``action`` must decode, in this box or space, to the ``params`` it recorded
  (other bounds, another space or other parameter names do not);
- a ``history`` entry says its run's direction through ``best_value``, the best value so far
  including its own (below the value when minimising, above when maximising; unknown when
  they are equal, for a failed entry and for an infeasible one), but not its bounds or space;
- either (one that did not fail) says whether its run had constraints: its ``constraints``
  values, or none; given with constraints, or without, the other kind is refused;
- with constraints, every evaluation given (in any form) carries the same number of constraint
  values, and it must be the number this run's ``constraints`` returns: that is known only once
  they have been called, so a different count is refused at this run's first evaluation
  (:class:`WarmStart`; the evaluation is saved, and the run ends failed);
- ``(x, value)`` pairs and arrays say neither: only that each point lies in the box or space.

Which objective the evaluations are of, and which constraints, is in no entry: a run given by
its id or :class:`~npbandit.storage.RunRow` (``initial=RUN_ID``, ``npbandit optimize
--initial-from RUN_ID``) is checked from the run's record (with its direction, bounds or space
and constraints: none, or their name). A mismatch is refused (``ValueError`` naming
``initial[i]``, or ``initial`` for a run, and what differs); a run whose objective was a lambda
is refused once the lambda's line moves (its label holds the line), saying how to go on. To
start from another problem's evaluations on purpose (a wider box, the objective maximised
before, a constrained run's points without its constraints), give them as ``(x, value)``
pairs, the value in this objective's units.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import torch

from npbandit.envs.blackbox import ObjectiveError, constraint_values, named_point, objective_values
from npbandit.envs.directions import maximised
from npbandit.envs.outcomes import objective_value
from npbandit.exceptions import ObjectiveReturnError
from npbandit.feasibility import check_constraint_count
from npbandit.objective_names import recorded_names
from npbandit.policies.base import Policy, PolicyWrapper
from npbandit.space import SearchSpace
from npbandit.storage import INITIAL, INITIAL_FROM, RunEvaluations, RunRow, run_evaluations
from npbandit.validation import face_slack, is_real

__all__ = ["initial_points", "check_same_problem", "continued_run", "point_action", "WarmStart"]

#: ``(action [d] in the unit cube, reward, constraint values or None, error)``: ``error`` the
#: failure's text for a failed evaluation (its reward and constraint values then ``None``),
#: else ``None``; the reward ``[m]`` for ``m`` objectives
Observation = tuple[np.ndarray, "float | np.ndarray | None", "list[float] | None", "str | None"]


def _as_array(value: Any) -> np.ndarray | None:
    """``value`` as a float64 array if it is a numpy array or a tensor, else ``None``."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy().astype(np.float64)
    if isinstance(value, np.ndarray):
        return value.astype(np.float64)
    return None


def _array_pairs(initial: Any, objectives: int = 1) -> list[tuple[Any, Any]] | None:
    """``(X [n, d], Y [n] or [n, 1])`` as ``(x, value)`` pairs (``Y [n, m]`` as ``(x, values)``
    pairs for ``m = objectives >= 2``); ``None`` if ``initial`` is not a pair of arrays with a
    2-D ``X``."""
    if not (isinstance(initial, tuple) and len(initial) == 2):
        return None
    X, Y = _as_array(initial[0]), _as_array(initial[1])
    rows, values = initial
    if (X is None and isinstance(rows, (list, tuple)) and isinstance(values, (list, tuple)) and rows
            and len(rows) == len(values) and all(isinstance(r, (list, tuple)) for r in rows)
            and all(is_real(v) for v in values)):  # pairs have a point first in their second entry, never a number
        raise ValueError("initial=(X, Y) reads X and Y as arrays: give numpy arrays or tensors (X [n, d], Y [n]); "
                         "lists are read as (x, value) pairs, and these lists are X's rows and Y's values")
    if X is None or Y is None or X.ndim != 2:
        return None
    if objectives > 1:
        if Y.shape != (len(X), objectives):
            raise ValueError(f"initial=(X, Y): Y must have shape [{len(X)}, {objectives}] (one row of values per row "
                             f"of X [{len(X)}, {X.shape[1]}], one column per objective), got {list(Y.shape)}")
        return [(x, y.tolist()) for x, y in zip(_rows(initial[0]), Y)]
    if Y.ndim == 2 and Y.shape[1] == 1:
        Y = Y[:, 0]
    if Y.shape != (len(X),):
        raise ValueError(f"initial=(X, Y): Y must have shape [{len(X)}] or [{len(X)}, 1] (one value per row of X "
                         f"[{len(X)}, {X.shape[1]}]), got {list(Y.shape)}")
    return [(x, float(y)) for x, y in zip(_rows(initial[0]), Y)]


def _rows(X: Any) -> Any:
    """``X``'s rows in its own float type (a float32 point on a face lies a float32 rounding
    past it: :func:`point_action` allows for that)."""
    return X.detach().cpu().numpy() if isinstance(X, torch.Tensor) else X


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


def check_same_problem(earlier: Mapping[str, Any], here: Mapping[str, Any], source: str, whose: str,
                       hint: str = "", same: Mapping[str, Callable[[Any, Any], bool]] | None = None,
                       said: Mapping[str, tuple[str, Callable[[Any], str]]] | None = None) -> None:
    """Refuse earlier evaluations of another problem: every setting in ``here`` (keys of a
    black-box run's ``env_params``: ``objective``, ``objective_names``, ``minimize``, ``bounds`` or
    ``space``, ``constraints``) must hold the same value in ``earlier`` (a setting ``earlier`` lacks
    is ``None`` there: ``constraints`` ``None`` in ``here`` matches a run without constraints; its
    ``objective_names`` are :func:`~npbandit.objective_names.recorded_names`, the positional names of
    a run of several objectives that recorded none).

    Args:
        earlier: what the evaluations' run was (its ``env_params``, or what its records say).
        here: this run's settings, those to compare.
        source: what the evaluations were given as, first in the message (``"initial[3]"``,
            ``"--initial-from 7"``).
        whose: who ``earlier`` describes, in the message (``"that run's"``).
        hint: appended to the message.
        same: per key, how two values are judged the same (``same[key](earlier's, here's)``)
            where equality is too strict (linear constraints written two ways); ``==`` otherwise.
        said: per key, how the message says a setting that differs, where the caller's user
            gave it in other words than the key (the command line's flags): ``(the setting with
            its verb, how a value is said)``, ``("direction is", lambda m: ...)`` for
            ``minimize``; the key, ``is`` / ``are`` and the value's repr otherwise.

    Raises:
        ValueError: ``"{source}: {whose} {key} is {earlier's!r}, this one's {here's!r} (a run
            continues only a run of the same problem){hint}"`` (``are`` for ``bounds`` and the other plurals; a
            value ``None`` said as ``none``; two search spaces shown by the parameters that differ alone, and said so),
            for the first setting that differs.
    """
    for key, value in here.items():
        had = earlier.get(key)
        if key == "objective_names":  # a record without names: its objectives' positional names (f0, f1, ...)
            names = recorded_names(earlier)
            had = None if names is None else list(names)
        if not (same[key](had, value) if same and key in same else had == value):
            verb = "are" if key in ("bounds", "constraints", "objective_names", "parameter_constraints") else "is"
            subject, say = said[key] if said and key in said else (f"{key} {verb}", _said)
            had, value, only = _differing(had, value) if key == "space" else (had, value, "")
            raise ValueError(f"{source}: {whose} {subject} {say(had)}, this one's {say(value)} "
                             f"{only}{_SAME_PROBLEM}{hint}")


def _differing(had: Any, value: Any) -> tuple[Any, Any, str]:
    """Two search spaces' descriptions (``describe()``'s mappings) cut to the parameters that
    differ, and what the message then says of them: a space of many parameters, one bound
    changed, is read at a glance. Anything else is returned as it is."""
    if not isinstance(had, Mapping) or not isinstance(value, Mapping):
        return had, value, ""
    names = [n for n in (*had, *(n for n in value if n not in had)) if had.get(n) != value.get(n)]
    if len(names) == len(set(had) | set(value)):
        return had, value, ""
    return ({n: had[n] for n in names if n in had}, {n: value[n] for n in names if n in value},
            "(the parameters that differ; the others alike) ")


def _said(value: Any) -> str:
    """A setting as a message says it: ``none`` for ``None`` (no constraints), else its repr."""
    return "none" if value is None else repr(value)


#: why earlier evaluations of another problem are refused
_SAME_PROBLEM = "(a run continues only a run of the same problem)"
#: how to start from another problem's evaluations on purpose, said when a record's problem differs
_ON_PURPOSE = ("; to start from another problem's evaluations on purpose, give them as (x, value) pairs, "
               "each value in this objective's units")
#: the same, for a search of several objectives
_ON_PURPOSE_SEVERAL = ("; to start from another problem's evaluations on purpose, give them as (x, values) pairs, "
                       "each in its objective's units")


def _on_purpose(m: int) -> str:
    """How to start from another problem's evaluations on purpose, in the form of a search of ``m`` objectives."""
    return _ON_PURPOSE if m == 1 else _ON_PURPOSE_SEVERAL


def _recorded_minimize(entry: Mapping[str, Any], value: float) -> tuple[bool | None, str]:
    """Whether the run a record comes from minimised, as far as the record says (module
    docstring), and the field that says it: a step's ``reward`` or a history entry's
    ``best_value``; ``(None, "")`` when it cannot say."""
    reward = entry.get("reward")
    if is_real(reward) and value != 0:  # a run's step: reward = -value when minimising, value when maximising
        return (True if reward == -value else False if reward == value else None), "reward"
    best = entry.get("best_value")
    if is_real(best) and entry.get("feasible", True) is not False and best != value:
        return bool(best < value), "best_value"  # the best so far includes this (feasible) evaluation
    return None, ""


def _check_recorded_constraints(i: int, entry: Mapping[str, Any], constrained: bool, m: int) -> None:
    """A history entry or a run's step that did not fail says whether its run had constraints
    (its ``constraints``, the values, or ``None`` / absent without them): ``ValueError``
    naming ``initial[i]`` when that differs from this run (``constrained``, of ``m``
    objectives), since the constraint values given and those evaluated would not be of the
    same constraints."""
    held = entry.get("constraints")
    if constrained and held is None:
        raise ValueError(f"initial[{i}]: the entry holds no constraint values (its run had no constraints), this run "
                         f"has constraints {_SAME_PROBLEM}; give each earlier evaluation with its constraint values, "
                         f"as (x, {'value' if m == 1 else 'values'}, constraints) triples")
    if not constrained and held is not None:
        raise ValueError(f"initial[{i}]: the entry holds constraint values {_short(held)} (its run had constraints), "
                         f"this run has none {_SAME_PROBLEM}{_on_purpose(m)}")


def _check_recorded_cube(i: int, entry: Mapping[str, Any], box: np.ndarray | None,
                         space: SearchSpace | None, m: int) -> None:
    """A run's step (``action`` in its run's unit cube beside ``params``, the point by name
    in the user's units) must decode in this box or space to the point it recorded:
    ``ValueError`` naming ``initial[i]`` when its run searched other bounds or another space
    (the way out it names in the form of a search of ``m`` objectives)."""
    action, params = entry.get("action"), entry.get("params")
    if action is None or not isinstance(params, Mapping):
        return
    here = space if space is not None else SearchSpace.from_bounds(box)
    these, other = ("this space", "another space") if space is not None else ("these bounds", "other bounds")
    u = np.asarray(action.detach().cpu() if isinstance(action, torch.Tensor) else action, dtype=np.float64)
    if u.shape != (here.dim,) or not np.isfinite(u).all():
        raise ValueError(f"initial[{i}]: the step's action {_short(u.tolist())} is not a point of the unit cube "
                         f"[{here.dim}] of {these}: its run searched {other} {_SAME_PROBLEM}{_on_purpose(m)}")
    # a box's point as the run made it (the env's affine map, no clamping); a space's, decoded
    point = named_point(box[0] + u * (box[1] - box[0])) if space is None else here.decode(u)
    if not _same_point(point, params):
        raise ValueError(f"initial[{i}]: the step's action {_short(u.tolist())} is {_short(dict(params))} in its "
                         f"run but {_short(point)} in {these}: its run searched {other} "
                         f"{_SAME_PROBLEM}{_on_purpose(m)}")


def _same_point(point: Mapping[str, Any], params: Mapping[str, Any]) -> bool:
    """``point`` and ``params`` name the same values (reals within float64 rounding)."""
    if sorted(point, key=str) != sorted(params, key=str):
        return False
    for name, value in point.items():
        other = params[name]
        if is_real(value) and is_real(other):
            if not math.isclose(float(value), float(other), rel_tol=1e-9, abs_tol=1e-12):
                return False
        elif type(value) is not type(other) or value != other:  # a choice's values: True is not 1
            return False
    return True


def initial_points(initial: Any, box: np.ndarray | None, space: SearchSpace | None,
                   minimize: bool | tuple[bool, ...], constrained: bool = False,
                   names: tuple[str, ...] | None = None) -> list[Observation]:
    """``initial`` (any form of the module) as ``(action [d] in the unit cube, reward,
    constraint values, error)`` (``reward`` the value, negated when minimising; the values
    ``None`` without constraints; ``error`` ``None``), in the order given, each point checked
    against ``box`` (``2 x d``) or ``space``. A failed entry (a history entry or run's step
    with ``failed`` true) is ``(action, None, None, error)``, ``error`` its ``error`` text.

    For several objectives (``minimize`` a tuple of ``m`` directions) every form holds each
    evaluation's ``m`` values where it holds one value: ``(x, values)`` pairs, ``(X [n, d],
    Y [n, m])``, and the ``values`` of a history entry or a run's step; the reward is then
    ``[m]``, each value negated where it is minimised. With ``names`` (the objectives named,
    ``optimize``'s ``minimize`` a mapping) each evaluation's values may also be a mapping with
    exactly those keys, in any order, as the objective may return them. Their entries say
    nothing of the directions (a run's steps of several objectives hold no reward, its history
    no best value): a run given by its id is checked from its record.

    Raises:
        TypeError: ``initial`` not one of the forms.
        ValueError: an entry that is not ``(x, value)`` (``(x, value, constraints)`` when
            ``constrained``), a value that is not a finite real number, a point outside the
            box or the space (naming the entry), values by name with a key missing or extra
            (naming it and the entry), constraint values of different lengths, or a
            run's step or history entry of another problem: of the other direction, with
            constraint values when not ``constrained`` or without them when it is, or (a
            step) of other bounds or another space, as far as it says (module docstring).
    """
    m = 1 if isinstance(minimize, bool) else len(minimize)
    pairs = _array_pairs(initial, m)
    if pairs is not None:
        if space is not None:
            raise ValueError("initial=(X, Y) arrays are for a box (bounds); for a search space give (params, value) "
                             "pairs, params a dict {name: value}, or a run's steps")
        if constrained:
            raise ValueError(f"initial=(X, Y) arrays carry no constraint values; with constraints give (x, "
                             f"{'value' if m == 1 else 'values'}, constraints) triples, or the history of an earlier "
                             "constrained run")
        initial = pairs
    if isinstance(initial, (str, bytes, Mapping)) or not isinstance(initial, Sequence):
        raise TypeError(f"initial must be (x, value) pairs, an earlier result's history, a run's steps "
                        f"(npbandit.storage.run_steps) or a pair of arrays (X [n, d], Y [n]), got "
                        f"{type(initial).__name__}")
    out = []
    width = 3 if constrained else 2
    value_key = "value" if m == 1 else "values"
    what = f"an (x, {value_key}, constraints) triple" if constrained else f"an (x, {value_key}) pair"
    for i, entry in enumerate(initial):
        limits = None
        if isinstance(entry, Mapping):  # an entry of OptimizeResult.history, or a run's step
            key = "x" if "x" in entry else "params"
            failed = bool(entry.get("failed"))
            _check_recorded_objectives(i, entry, m, failed)
            if key not in entry or (value_key not in entry and not failed):
                needs = (f"'x' (or 'params'), '{value_key}' and 'constraints'" if constrained
                         else f"'x' (or 'params') and '{value_key}'")
                raise ValueError(f"initial[{i}] must be {what}, a history entry or a run's step with {needs}, got "
                                 f"{_short(entry)}")
            if not failed:
                _check_recorded_constraints(i, entry, constrained, m)
            x, value = entry[key], entry.get(value_key)
            limits = entry.get("constraints") if constrained and not failed else None
            if failed:
                _check_recorded_cube(i, entry, box, space, m)
                error = entry.get("error")
                out.append((_action(i, x, box, space), None, None, str(error) if error else "failed earlier"))
                continue
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
        if m > 1:
            out.append((_action(i, x, box, space), _several_rewards(i, value, x, minimize, names), limits, None))
            if isinstance(entry, Mapping):
                _check_recorded_cube(i, entry, box, space, m)
            continue
        value = _one_value(i, value, x)
        if isinstance(entry, Mapping):  # a run's step or a history entry: of this problem, as far as it says
            came, field = _recorded_minimize(entry, float(value))
            if came is not None:
                check_same_problem({"minimize": came}, {"minimize": bool(minimize)}, f"initial[{i}]",
                                   f"its run's (as its {field} says)", _ON_PURPOSE)
            _check_recorded_cube(i, entry, box, space, m)
        out.append((_action(i, x, box, space), maximised(float(value), minimize), limits, None))
    earlier = None  # the constraint values each earlier evaluation carries (failed ones carry none)
    for i, (_, _, limits, error) in enumerate(out):
        if constrained and error is None:
            check_constraint_count(len(limits), earlier, "initial", f"initial[{i}] carries")
            earlier = len(limits)
    return out


def _one_value(i: int, value: Any, x: Any) -> float:
    """Entry ``i``'s value of one objective as a float: a real number, or a 1-element array or
    tensor as the objective may return it and ``Optimizer.tell`` takes it; ``ValueError``
    naming ``initial[i]`` for anything else or a value that is not finite."""
    try:
        read = objective_value(value, x, held=True)
    except ObjectiveReturnError:
        read = math.nan
    if not math.isfinite(read):
        raise ValueError(f"initial[{i}]: the value must be a finite real number (or a 1-element array), got "
                         f"{_short(value)}")
    return read


def _check_recorded_objectives(i: int, entry: Mapping[str, Any], m: int, failed: bool) -> None:
    """A history entry or a run's step that did not fail holds one ``value`` (a run of one
    objective) or ``values`` (of several): ``ValueError`` naming ``initial[i]`` when that is not
    this run's kind (``m`` objectives)."""
    if failed:
        return
    several = entry.get("values") is not None
    if m == 1 and several and entry.get("value") is None:
        raise ValueError(f"initial[{i}]: the entry holds values {_short(entry['values'])} of several objectives, this "
                         f"run has one {_SAME_PROBLEM}{_on_purpose(m)}")
    if m > 1 and not several and entry.get("value") is not None:
        raise ValueError(f"initial[{i}]: the entry holds the value of one objective, this run has {m} "
                         f"{_SAME_PROBLEM}; give (x, values) pairs, one value per objective")


def _several_rewards(i: int, value: Any, x: Any, minimize: tuple[bool, ...],
                     names: tuple[str, ...] | None) -> np.ndarray:
    """Entry ``i``'s values of ``len(minimize)`` objectives as rewards ``[m]`` (each negated where
    it is minimised), read as the objective's return is (by name too, with ``names``);
    ``ValueError`` naming ``initial[i]`` for another count, a key missing or extra, or a
    non-finite value."""
    try:
        values = objective_values(value, x, len(minimize), names, held=True)
    except ObjectiveError as err:
        raise ValueError(f"initial[{i}]: {err}") from None
    if not np.isfinite(values).all():
        raise ValueError(f"initial[{i}]: the values must be finite real numbers, got {values.tolist()}")
    return maximised(values, minimize)


def _action(i: int, x: Any, box: np.ndarray | None, space: SearchSpace | None) -> np.ndarray:
    """Entry ``i``'s point ``x`` as :func:`point_action` reads it, its errors naming ``initial[i]``."""
    try:
        return point_action(x, box, space)
    except (TypeError, ValueError) as err:
        raise type(err)(f"initial[{i}]: {err}") from None


def point_action(x: Any, box: np.ndarray | None, space: SearchSpace | None) -> np.ndarray:
    """The point ``x`` in the objective's form (a box's array ``[d]`` or ``{"x0": ..}`` dict,
    a space's params dict) as ``[d]`` in the unit cube of ``box`` (``[2, d]``) or ``space``:
    the inverse of :meth:`~npbandit.envs.BlackBoxEnv.point`.

    Raises:
        ValueError: ``x`` lies outside them (a point within
            :data:`~npbandit.validation.FACE_ULPS` roundings of a face is on it), is not of
            their shape, or is not finite (``TypeError`` from the space for a value of the
            wrong type).
    """
    if space is not None:
        return space.encode(x)
    entries = x.items() if isinstance(x, Mapping) else enumerate(x) if isinstance(x, (list, tuple)) else []
    flags = [key for key, v in entries if isinstance(v, (bool, np.bool_))]
    if flags or (isinstance(x, np.ndarray) and x.dtype == np.bool_):
        raise ValueError(f"x must be a point of real numbers, got a bool at x[{flags[0] if flags else 0!r}] "
                         f"(True is no coordinate): {_short(x)}")
    x = _box_point(x, box)
    try:
        point = np.asarray(x.detach().cpu() if isinstance(x, torch.Tensor) else x, dtype=np.float64)
    except (TypeError, ValueError, OverflowError):  # a string, None or a ragged list among its inputs: no point
        point = None
    if point is None or point.shape != (box.shape[1],) or not np.isfinite(point).all():
        raise ValueError(f"x must be a finite point of shape [{box.shape[1]}], got "
                         f"{_short(x if point is None else point.tolist())}")
    # within a few roundings of a face is on it (0.1 + 0.2 for a bound of 0.3; 0.3 given in float32)
    slack = face_slack(x, box[0], box[1])
    outside = np.nonzero((point < box[0] - slack) | (point > box[1] + slack))[0]
    if len(outside):
        j = int(outside[0])
        raise ValueError(f"x is outside the bounds: x[{j}] = {float(point[j])!r} is not in "
                         f"[{float(box[0, j])!r}, {float(box[1, j])!r}]")
    return np.clip((np.clip(point, box[0], box[1]) - box[0]) / (box[1] - box[0]), 0.0, 1.0)


def _short(value: Any, limit: int = 120) -> str:
    """``repr(value)``, cut to ``limit`` characters (an array of many points stays readable)."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + " ..."


def continued_run(db: str, run: int | RunRow, name: str = "initial",
                  problem: Mapping[str, Any] | None = None, stacklevel: int = 2,
                  same: Mapping[str, Callable[[Any, Any], bool]] | None = None,
                  said: Mapping[str, tuple[str, Callable[[Any], str]]] | None = None) -> RunEvaluations:
    """The evaluations a run continuing ``run`` of ``db`` starts from:
    :func:`~npbandit.storage.run_evaluations` (everything that run saw, the chain of
    continued runs followed back), after checking ``run``'s record against ``problem``.

    Args:
        db: the database (SQLAlchemy URL or SQLite path).
        run: the run's id, or its :class:`~npbandit.storage.RunRow`.
        name: what the run was given as, first in every message (``"initial"``, ``"--initial-from"``).
        problem: this run's settings, checked against ``run``'s record by
            :func:`check_same_problem` (``None``: not checked).
        stacklevel: the warning's, as :func:`warnings.warn`'s (2: the line that called this).
        same, said: as :func:`check_same_problem`'s.

    Warns:
        UserWarning: the first run of the chain was given points in a form no run holds
            (pairs, a history, arrays, a list of steps): how many are not among the evaluations.

    Raises:
        TypeError, ValueError: as :func:`~npbandit.storage.run_evaluations`; ``ValueError``
            also when ``run``'s problem differs from ``problem`` (an objective named by a
            lambda's label, which holds its line: also how to go on when that line moved).
    """
    seen = run_evaluations(db, run, name)
    if problem is not None:
        hint = _lambda_hint(seen, problem.get("objective"), name)
        check_same_problem(seen.run.env_params, problem, seen.source, "that run's", hint, same, said)
    if seen.unheld:
        points = f"{seen.unheld} point{'' if seen.unheld == 1 else 's'}"
        warnings.warn(f"{seen.source}: run {seen.first} was given {points} in a form no run holds ((x, value) pairs, a "
                      f"history, arrays or a list of steps): they are not among the evaluations of run {seen.run_id}, "
                      f"which holds those of run {seen.first} and after", UserWarning, stacklevel=stacklevel)
    return seen


def _lambda_hint(seen: RunEvaluations, label: Any, name: str) -> str:
    """What a refusal adds when the objectives' labels differ and one is a lambda's
    (``module:<lambda>@file:line``, :func:`npbandit.objective_names.objective_label`): the label moves
    with the lambda's line, so say how to continue anyway."""
    earlier = seen.run.env_params.get("objective")
    if earlier == label or not any(isinstance(v, str) and "<lambda>@" in v for v in (earlier, label)):
        return ""
    if name.startswith("-"):  # the command line: its runs are named by --name
        return (f"; a lambda's label holds its file and line, so it changes when the line moves: to go on with run "
                f"{seen.run_id}, give --name {earlier!r} (and give runs of a lambda a --name from the first)")
    return (f"; a lambda's label holds its file and line, so it changes when the line moves: to go on with run "
            f"{seen.run_id}, pass name={earlier!r} (and pass the same name= to every run of a lambda from the first), "
            f"or give its evaluations instead of its id, {name}=run_evaluations(db, {seen.run_id}) (or the "
            "earlier result's history)")


class WarmStart(PolicyWrapper):
    """A policy that observes earlier evaluations (:func:`initial_points`' tuples), in their
    order, right after each ``reset``, before it proposes anything (``optimize(initial=...)``):
    each failed one through ``observe_failure``. ``source``: the run they are the evaluations
    of (:attr:`~npbandit.storage.RunEvaluations.run_id`), recorded as ``initial_from`` (``None``: none recorded).

    With constraint values among them, each evaluation of the run must carry as many
    (``info["constraints"]``): :meth:`observe` refuses another count with a ``ValueError``
    naming ``given_as`` (what the evaluations were given as: ``"initial"``, ``"--initial-from 7"``;
    kept apart from the policy's ``name``, which the run records) and both counts, before the
    policy sees it, since the values given and those evaluated would not be of the same
    constraints (:func:`npbandit.feasibility.check_constraint_count`, the rule ``BOPolicy``'s
    observations follow too)."""

    def __init__(self, inner: Policy, observations: list[Observation], source: int | None = None,
                 name: str = "initial") -> None:
        super().__init__(inner)
        self.observations = observations
        self.source = source
        self.given_as = name
        counts = {len(limits) for _, _, limits, error in observations if error is None and limits is not None}
        #: the constraint values each given evaluation carries (``None``: none carries any)
        self.constraint_count = max(counts) if counts else None

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        for action, reward, limits, error in self.observations:
            if error is not None:
                self.inner.observe_failure(np.concatenate([action, [np.nan]]), action.copy(), error)
                continue
            obs = np.concatenate([action, np.atleast_1d(reward)])
            self.inner.observe(obs, action.copy(), reward, {} if limits is None else {"constraints": list(limits)})

    def observe(self, obs: np.ndarray, action: Any, reward: float, info: dict[str, Any]) -> None:
        limits = info.get("constraints") if isinstance(info, dict) else None
        if limits is not None:
            check_constraint_count(len(limits), self.constraint_count, self.given_as, "this run's constraints returned",
                                   why=f" {_SAME_PROBLEM}; give earlier evaluations of these constraints")
        self.inner.observe(obs, action, reward, info)

    def params(self) -> dict[str, Any]:
        settings = {**self.inner.params(), INITIAL: len(self.observations)}
        if self.source is not None:
            settings[INITIAL_FROM] = self.source
        return settings
