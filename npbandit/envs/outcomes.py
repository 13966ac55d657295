"""What an evaluation returned, read as numbers: :func:`objective_value` (one objective's
value), :func:`objective_values` (the ``m`` values of an objective of several), and
:func:`constraint_values` (the outcome constraints'); and the callable that evaluates an
objective and its constraints together (:class:`WithConstraints`). Each reader refuses what is
no real number with an :class:`~npbandit.exceptions.ObjectiveReturnError` naming what came back
and where, and passes NaN / inf on (objective) or reports them (constraints) as a failed
evaluation, so that nothing non-finite reaches a policy."""

from __future__ import annotations

import numbers
import sys
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from npbandit.exceptions import ObjectiveError, ObjectiveReturnError
from npbandit.feasibility import check_constraint_count
from npbandit.text import printable, shorten
from npbandit.validation import is_real, is_tensor, real_as_float

__all__ = ["SEVERAL_OBJECTIVES_HINT", "objective_value", "objective_values", "constraint_values", "WithConstraints",
           "Evaluated", "shown", "copied"]


def shown(x: Any) -> Any:
    """A point as an error message shows it: a list for an array, the dict of a space."""
    return x.tolist() if isinstance(x, np.ndarray) else x


#: said when an objective of one value returns several numbers: how several objectives are searched
SEVERAL_OBJECTIVES_HINT = ("; for several objectives give one direction per value, "
                           "optimize(f, ..., minimize=[True, False]) (or an Optuna study with directions=[...] and "
                           "npbandit.integrations.optuna.NPSampler), or return one number that weighs them")


def objective_value(out: Any, x: Any, *, held: bool = False) -> float:
    """An objective's return value as a float: a real number, a NumPy scalar, or a
    1-element array / tensor (``np.array([v])`` is common) or list / tuple (``[v]``: one
    number, as Optuna takes it for one objective; several in a list are several objectives,
    refused with a pointer to ``minimize=[...]``). NaN / inf pass through (the
    caller reports them as failed evaluations). ``held``: the messages speak of a value given
    (told to an :class:`~npbandit.ask_tell.Optimizer`), not of what an objective returned.

    Raises:
        ObjectiveReturnError: (a ``TypeError`` and an ``ObjectiveError``) anything else --
            a string (``"1.5"``), a bool, several numbers, a complex number -- naming what
            was returned and at which point.
    """
    must = "the value must be" if held else "objective must return"
    value = out[0] if isinstance(out, (list, tuple)) and len(out) == 1 else out  # [v] is v, as np.array([v]) is
    if is_tensor(value):
        if value.numel() != 1:
            raise ObjectiveReturnError(f"{must} a float (or a 1-element array), got a tensor of "
                                       f"shape {tuple(value.shape)} at x={shown(x)}"
                                       f"{SEVERAL_OBJECTIVES_HINT if value.numel() > 1 else ''}", x)
        if value.dtype == sys.modules["torch"].bool or value.is_complex():
            raise ObjectiveReturnError(f"{must} a float, got a {value.dtype} tensor at "
                                       f"x={shown(x)}", x)
        return float(value.detach().reshape(()).item())
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise ObjectiveReturnError(f"{must} a float (or a 1-element array), got an array of "
                                       f"shape {value.shape} at x={shown(x)}"
                                       f"{SEVERAL_OBJECTIVES_HINT if value.size > 1 else ''}", x)
        value = value.reshape(())[()]  # a NumPy scalar (or the object an object array holds)
    if isinstance(value, np.generic) and not isinstance(value, (np.bool_, np.complexfloating)):
        value = value.item()
    # bool is an int, and float("1.5") parses strings: both would pass float() silently
    if not is_real(value):
        several = (isinstance(out, (tuple, list)) and len(out) > 1
                   and all(is_real(v) for v in out))
        raise ObjectiveReturnError(f"{must} a float, got {type(out).__name__} {out!r} at "
                                   f"x={shown(x)}{SEVERAL_OBJECTIVES_HINT if several else ''}", x)
    return real_as_float(value)  # an int past float64's range is inf: a failed evaluation, not an OverflowError


#: how a message speaks of the values it reads -- what ``m`` values must be, what each named
#: objective needs, what was read: an objective's return, or (``held``) the values an
#: evaluation given to ``optimize`` holds (a warm start's)
_PHRASES = {False: ("objective must return", "objective must return", "it returned"),
            True: ("the values must be", "the values must hold", "they hold")}


def objective_values(out: Any, x: Any, count: int, names: tuple[str, ...] | None = None, *,
                     held: bool = False) -> np.ndarray:
    """The return value of an objective of ``count >= 2`` values as ``[count]`` floats: a
    tuple, list, 1-D array or tensor of exactly ``count`` real numbers (NumPy scalars and 0-d
    arrays or tensors too, as ``(x[0], x[1])`` of a tensor point is), in the order the
    directions were given; with ``names`` (the objectives named, ``minimize`` a mapping), also a
    mapping with exactly those keys, in any order, read in the order of ``names``. NaN / inf pass
    through (the caller reports them as failed evaluations). ``held``: the messages speak of
    values an evaluation holds (a warm start's), not of what an objective returned.

    Raises:
        ObjectiveReturnError: (a ``TypeError`` and an ``ObjectiveError``) anything else -- one
            number, another count, a string, a bool, a nested or complex value, a mapping
            without ``names`` or with a key missing or extra (naming the key) -- naming what
            was returned, how many values were expected and at which point.
    """
    if names is not None and isinstance(out, Mapping):
        out = _by_name(out, x, names, held)
    values = out.detach().cpu().numpy() if is_tensor(out) else out
    if isinstance(values, (tuple, list)):
        values = [_scalar_of(v) for v in values]
    expected = (f"{_PHRASES[held][0]} {count} real numbers (one per objective, in the order of minimize's "
                f"directions), got")
    try:
        flat = np.ndim(values) == 1
    except ValueError:  # a ragged nesting
        flat = False
    if isinstance(values, (str, bytes, Mapping)) or not hasattr(values, "__len__") or not flat:
        shape = f" of shape {tuple(np.shape(values))}" if isinstance(values, np.ndarray) else ""
        named = ", ".join(f"{key!r}: <direction>" for key in values) if isinstance(values, Mapping) else ""
        hint = f"; to return the values by name, name the objectives: minimize={{{named}}}" if named else ""
        raise ObjectiveReturnError(f"{expected} {type(out).__name__}{shape} {_shorten_repr(out)} at "
                                   f"x={shown(x)}{hint}", x)
    items = list(values)
    if len(items) != count or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating,
                                                                                         np.integer))
                                  for v in items):
        raise ObjectiveReturnError(f"{expected} {type(out).__name__} {_shorten_repr(out)} ({len(items)} "
                                   f"value{'' if len(items) == 1 else 's'}) at x={shown(x)}", x)
    return np.asarray([real_as_float(v) for v in items], dtype=np.float64)


def _by_name(out: Mapping[Any, Any], x: Any, names: tuple[str, ...], held: bool) -> list[Any]:
    """A mapping an objective of named objectives returned (``held``: an evaluation holds), as its
    values in the order of ``names``; an :class:`ObjectiveReturnError` naming the first key
    missing, or the first extra."""
    _, must, did = _PHRASES[held]
    missing = [name for name in names if name not in out]
    extra = [key for key in out if key not in names]
    expected = f"{must} a value for each objective named in minimize ({', '.join(map(repr, names))})"
    if missing:
        raise ObjectiveReturnError(f"{expected}; {did} none for {missing[0]!r}: {_shorten_repr(out)} at "
                                   f"x={shown(x)}", x)
    if extra:
        raise ObjectiveReturnError(f"{expected}; {did} {extra[0]!r}, which names no objective: "
                                   f"{_shorten_repr(out)} at x={shown(x)}", x)
    return [out[name] for name in names]


def _scalar_of(value: Any) -> Any:
    """A 0-d tensor or array as the scalar it holds (a bool stays a bool, a complex number a
    complex, for the caller to refuse); anything else as it is."""
    if is_tensor(value) and value.dim() == 0:
        return value.detach().item()
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return value[()]
    return value


def _shorten_repr(value: Any) -> str:
    """``repr(value)``, at most 200 characters, printable (an error message's view of a return value)."""
    return shorten(printable(repr(value)), 200)


def constraint_values(out: Any, x: Any, count: int | None = None) -> np.ndarray:
    """A constraints function's return value as ``k`` floats (``[k]``, float64): one real
    number, or a 1-D sequence, array or tensor of them (a sequence's elements may be 0-d
    arrays or tensors, as ``[x[0] - 0.5]`` of a tensor point is). ``count``: the ``k``
    expected (the earlier evaluations'), ``None`` for any ``k >= 1``.

    Raises:
        ObjectiveReturnError: anything else -- a string, a bool, a nested sequence, no value,
            another number of values than ``count`` (the rule of
            :func:`~npbandit.feasibility.check_constraint_count`) -- naming ``constraints``,
            what was returned and at which point.
        ObjectiveError: a NaN or infinite value.
    """
    values = out.detach().cpu().numpy() if is_tensor(out) else out
    if isinstance(values, (tuple, list)):
        values = [_scalar_of(v) for v in values]
    if isinstance(values, (numbers.Real, np.generic)) and not isinstance(values, (np.ndarray,)):
        values = [values]
    wrong = ObjectiveReturnError(f"constraints must return a sequence of real numbers (one per constraint, "
                                 f"feasible when <= 0), got {type(out).__name__} {out!r} at x={shown(x)}", x)
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__len__"):
        raise wrong
    try:
        items = np.asarray(values, dtype=object).reshape(-1) if np.ndim(values) <= 1 else None
    except ValueError:  # a ragged nesting
        items = None
    if items is None or any(isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, np.floating,
                                                                                     np.integer)) for v in items):
        raise wrong
    c = np.asarray([real_as_float(v) for v in items], dtype=np.float64)
    if c.size == 0:
        raise ObjectiveReturnError(f"constraints returned no value at x={shown(x)} (one per constraint expected)",
                                   x)
    check_constraint_count(c.size, count, "constraints", f"at x={shown(x)} they returned",
                           error=lambda message: ObjectiveReturnError(message, x))
    if not np.isfinite(c).all():
        raise ObjectiveError(f"constraints returned {c.tolist()} at x={shown(x)} (NaN or infinite)", x,
                             kind="nonfinite")
    return c


class WithConstraints:
    """An objective and its constraints evaluated together (:attr:`BlackBoxEnv.objective` of
    an env with ``constraints``): returns an :class:`Evaluated`. A class instance, so a
    process pool can pickle it whenever it can pickle the two callables."""

    def __init__(self, objective: Callable[[Any], Any], constraints: Callable[[Any], Any]) -> None:
        self.objective, self.constraints = objective, constraints
        self.__name__ = getattr(objective, "__name__", "objective")

    def __call__(self, x: Any) -> Evaluated:
        value = self.objective(copied(x))
        try:
            constraints = self.constraints(copied(x))
        except Exception as err:  # noqa: BLE001 - the user's constraints: step reports them by name
            return Evaluated(value, err, failed=True)
        return Evaluated(value, constraints)


class Evaluated:
    """What :class:`WithConstraints` returns: the objective's return value and the
    constraints' (or, ``failed``, the exception they raised)."""

    def __init__(self, value: Any, constraints: Any, failed: bool = False) -> None:
        self.value, self.constraints, self.failed = value, constraints, failed


def copied(x: Any) -> Any:
    """A copy of a point for the objective (which may change what it is given)."""
    return dict(x) if isinstance(x, dict) else x.copy()


