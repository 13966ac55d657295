"""The kinds of parameter a search space holds: :class:`Float`, :class:`Int` and :class:`Choice`.

They read as Optuna's distributions and Ax's parameters do (``Float(1e-4, 1e-1, log=True)``
is ``FloatDistribution(1e-4, 1e-1, log=True)`` and a ``RangeParameter`` with
``log_scale=True``; ``Choice(["rbf", "linear"])`` is a ``CategoricalDistribution`` and an
unordered ``ChoiceParameter``).

Each parameter owns ``columns`` coordinates of the unit cube the surrogate works in:

* ``Float``: one column, affine in the value (in its logarithm with ``log=True``).
* ``Int`` and a ``Float`` with ``step``: one column in which every grid value owns an
  interval of equal width (half a step either side of it), so the end values of the range
  get as much of the cube as the inner ones; a point of the column decodes to the grid
  value whose interval holds it. An ``Int`` with ``log=True`` (``step`` 1) maps those
  intervals through the logarithm, so a small value owns more of the column than a large
  one; a ``Float`` takes ``step`` or ``log=True``, not both (as Optuna's distributions).
* ``Choice``: ``ordered=True`` or two values: one column split into equal intervals, one
  per value, in order; three or more unordered values: one column per value (one-hot), a
  point decoding to the value of its largest column, so that no value is placed "between"
  two others; one value: no column at all (a constant).
* A range with ``low == high`` (``Float(1.0, 1.0)``, ``Int(3, 3)``): a fixed parameter, as
  Optuna's distributions and Ax's ``FixedParameter`` take it: no column, always its value.

``snap`` maps any point of a parameter's columns to the encoding of the value it decodes
to: where the objective would be evaluated, in the cube. Proposals and repeat checks use
it to compare points the way the objective sees them.
"""

from __future__ import annotations

import math
import numbers
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from npbandit.validation import face_slack, is_real, real_as_float

if TYPE_CHECKING:  # torch loads where a point is snapped, not with the space
    import torch

__all__ = ["Parameter", "Float", "Int", "Choice"]


def _real(owner: str, name: str, value: Any) -> float:
    if not is_real(value) or not math.isfinite(real_as_float(value)):  # an int past float64's range is not finite
        raise ValueError(f"{owner}: {name} must be a finite real number, got {value!r}")
    return float(value)


#: the largest magnitude at which float64, the unit cube's type, holds every integer
MAX_EXACT_INT = 2**53


class Parameter(ABC):
    """One input of a :class:`~npbandit.space.SearchSpace`: its values, and their place in the
    unit cube (``columns`` coordinates)."""

    #: unit-cube coordinates the parameter occupies
    columns: int

    @abstractmethod
    def check(self, value: Any) -> Any:
        """``value`` as this parameter holds it (an ``int`` for :class:`Int`, ...), or
        ``ValueError`` / ``TypeError`` saying what was expected."""

    @abstractmethod
    def encode(self, value: Any) -> np.ndarray:
        """The unit-cube coordinates ``[columns]`` of a valid value (checked first)."""

    @abstractmethod
    def decode(self, u: np.ndarray) -> Any:
        """The value at coordinates ``u`` ``[columns]`` of the unit cube (values outside
        ``[0, 1]`` count as the nearest face)."""

    def snap(self, u: torch.Tensor) -> torch.Tensor:
        """``u`` ``[..., columns]`` moved to the encoding of the value each point decodes
        to (the identity for a continuous parameter)."""
        return u

    def neighbours(self, value: Any) -> list[Any]:
        """The values one move away from the valid ``value``: the next grid value either
        side for a stepped range, the next value either side for an ordered choice, every
        other value for an unordered one; none for a continuous parameter. A discrete
        local search (:mod:`npbandit.acquisition.mixed`) moves along them."""
        return []

    @abstractmethod
    def describe(self) -> dict[str, Any]:
        """The parameter as JSON (``type`` and its settings), as a run records it."""

    @property
    def continuous(self) -> bool:
        """Whether every point of its columns is a value of its own (no grid, no choices)."""
        return False

    @property
    def count(self) -> float:
        """How many distinct values it takes: ``math.inf`` for a continuous one."""
        return math.inf


class _Range(Parameter):
    """A numeric range ``[low, high]``, optionally on a logarithmic scale and on a grid of
    ``step``; ``low == high`` fixes it to that value (no column)."""

    def __init__(self, low: Any, high: Any, log: bool, step: float | None) -> None:
        kind = type(self).__name__
        self.low, self.high = low, high
        if not low <= high:
            raise ValueError(f"{kind}: need low <= high, got low={low!r}, high={high!r}")
        self.columns = 0 if low == high else 1
        if not isinstance(log, (bool, np.bool_)):
            raise TypeError(f"{kind}: log must be a bool, got {type(log).__name__}")
        self.log = bool(log)
        self.step = step
        half = 0.0 if step is None else step / 2
        if self.log and not low - half > 0:
            need = "low >= 1" if kind == "Int" else "low > 0"
            raise ValueError(f"{kind}: log=True needs {need}, got low={low!r}")
        if step is not None:
            count = (high - low) / step
            if abs(count - round(count)) > 1e-9 * max(1.0, count):
                raise ValueError(f"{kind}: high - low must be a whole number of steps, got low={low!r}, "
                                 f"high={high!r}, step={step!r}")
        edge_low, edge_high = low - half, high + half
        self._span = (math.log(edge_low), math.log(edge_high)) if self.log else (edge_low, edge_high)

    def _unit(self, value: float) -> float:
        v = math.log(value) if self.log else value
        return (v - self._span[0]) / (self._span[1] - self._span[0])

    def _value(self, u: float) -> float:
        u = min(max(float(u), 0.0), 1.0)
        v = self._span[0] + u * (self._span[1] - self._span[0])
        x = math.exp(v) if self.log else v
        if self.step is not None:
            # low + k * step in float64 carries the step's binary error (0.1 * 3 = 0.30000000000000004):
            # the grid value is given to 14 significant digits, which any grid of sane size resolves
            x = float(f"{self.low + round((x - self.low) / self.step) * self.step:.14g}")
        return min(max(x, self.low), self.high)  # exp(log(.)) and half steps can land a rounding error outside

    def encode(self, value: Any) -> np.ndarray:
        value = self.check(value)
        return np.array([self._unit(value)]) if self.columns else np.zeros(0)

    def snap(self, u: torch.Tensor) -> torch.Tensor:
        if self.step is None or not self.columns:
            return u
        import torch

        flat = u.detach().reshape(-1).tolist()
        return torch.tensor([self._unit(self._value(v)) for v in flat], dtype=u.dtype, device=u.device).reshape(u.shape)

    @property
    def continuous(self) -> bool:
        return self.step is None

    @property
    def count(self) -> float:
        if not self.columns:  # low == high: one value
            return 1
        return math.inf if self.step is None else round((self.high - self.low) / self.step) + 1

    def neighbours(self, value: Any) -> list[Any]:
        if self.step is None or not self.columns:
            return []
        k = round((self.check(value) - self.low) / self.step)
        last = round((self.high - self.low) / self.step)
        return [self._grid(j) for j in (k - 1, k + 1) if 0 <= j <= last]

    def _grid(self, k: int) -> Any:
        """The ``k``-th grid value ``low + k * step`` (as :meth:`_value` gives it)."""
        return float(f"{self.low + k * self.step:.14g}")

    def _in_range(self, value: Any) -> None:
        if not self.low <= value <= self.high:
            raise ValueError(f"value must lie in [{self.low}, {self.high}], got {value!r}")
        if self.step is not None:
            count = (value - self.low) / self.step
            if abs(count - round(count)) > 1e-9 * max(1.0, abs(count)):
                raise ValueError(f"value must be low + k * step (low={self.low}, step={self.step}), got {value!r}")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.describe() == self.describe()

    def __hash__(self) -> int:
        return hash(repr(self))


class Float(_Range):
    """A real parameter in ``[low, high]``.

    Args:
        low, high: the range, ``low <= high``, both finite (``low == high``: fixed to that
            value, no column of the cube).
        log: searched on a logarithmic scale (needs ``low > 0``), as a learning rate or
            a regularisation weight usually is.
        step: ``None`` (default: any real value) or a grid spacing; the values are then
            ``low + k * step`` and ``high - low`` must be a whole number of steps. Not with
            ``log=True`` (as Optuna's ``FloatDistribution``): an evenly spaced grid on a log
            scale would give its values intervals of unequal width in the unit cube, the
            small values far more of it; a few values on a log scale are a
            ``Choice([...], ordered=True)``, an evenly spaced grid is ``step`` without ``log``.

    Raises:
        ValueError / TypeError: a bad setting, naming it.
    """

    def __init__(self, low: float, high: float, *, log: bool = False, step: float | None = None) -> None:
        low, high = _real("Float", "low", low), _real("Float", "high", high)
        if not math.isfinite(high - low):  # the unit cube's column would be NaN or 0 everywhere
            raise ValueError(f"Float: high - low must be a finite float64, got low={low!r}, high={high!r} (their "
                             "difference overflows)")
        if step is not None:
            step = _real("Float", "step", step)
            if step <= 0:
                raise ValueError(f"Float: step must be > 0 or None, got {step!r}")
            if isinstance(log, (bool, np.bool_)) and log:
                raise ValueError(f"Float: step={step!r} and log=True cannot go together (an evenly spaced grid has "
                                 "no place on a log scale); give step=None for a log-scale real, or log=False for a "
                                 "grid")
        super().__init__(low, high, log, step)

    def check(self, value: Any) -> float:
        if not is_real(value) or not math.isfinite(real_as_float(value)):
            raise TypeError(f"value must be a finite real number, got {value!r}")
        given, value = value, float(value)
        if not self.low <= value <= self.high:  # within a rounding (of the type it came in) of an end is on it
            slack = float(face_slack(given, self.low, self.high))
            if self.low - slack <= value < self.low or self.high < value <= self.high + slack:
                value = min(max(value, self.low), self.high)
        self._in_range(value)
        return value

    def decode(self, u: np.ndarray) -> float:
        return float(self._value(np.asarray(u, dtype=np.float64).reshape(-1)[0])) if self.columns else self.low

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "float", "low": self.low, "high": self.high}
        if self.log:
            out["log"] = True
        if self.step is not None:
            out["step"] = self.step
        return out

    def __repr__(self) -> str:
        extra = (", log=True" if self.log else "") + ("" if self.step is None else f", step={self.step!r}")
        return f"Float({self.low!r}, {self.high!r}{extra})"


class Int(_Range):
    """An integer parameter in ``[low, high]`` (both included).

    Args:
        low, high: ints, ``low <= high`` (``low == high``: fixed to that value).
        log: searched on a logarithmic scale (needs ``low >= 1``), as a layer width or a
            tree count usually is.
        step: the grid spacing (default 1); ``high - low`` must be a multiple of it.

    ``low``, ``high`` and ``step`` may also be floats that are whole numbers (``1.0`` is the
    int ``1``; a JSON space file, or a value computed in floats, often writes them so), as
    :meth:`check` takes a value; any other float (``1.5``), a bool or NaN is refused.

    Raises:
        ValueError / TypeError: a bad setting, naming it.
    """

    def __init__(self, low: int, high: int, *, log: bool = False, step: int = 1) -> None:
        low, high, step = (_whole("low", low), _whole("high", high), _whole("step", step))
        if step < 1:
            raise ValueError(f"Int: step must be a positive int, got {step!r}")
        if (high - low) % step:
            raise ValueError(f"Int: high - low must be a multiple of step, got low={low!r}, high={high!r}, "
                             f"step={step!r}")
        if log and step != 1:
            raise ValueError("Int: log=True needs step=1 (a logarithmic grid has no constant step)")
        for name, value in (("low", low), ("high", high)):
            if abs(int(value)) > MAX_EXACT_INT:
                raise ValueError(f"Int: {name} must lie within +-2**53 (the unit cube is float64, which holds every "
                                 f"integer only up to there), got {value!r}")
        super().__init__(int(low), int(high), log, int(step))

    def check(self, value: Any) -> int:
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (numbers.Integral, np.integer)):
            if isinstance(value, (float, np.floating)) and float(value).is_integer():
                value = int(value)  # 3.0 is the int 3, as Optuna and Ax accept it
            else:
                raise TypeError(f"value must be an int, got {value!r}")
        value = int(value)
        self._in_range(value)
        return value

    def decode(self, u: np.ndarray) -> int:
        return int(round(self._value(np.asarray(u, dtype=np.float64).reshape(-1)[0]))) if self.columns else self.low

    def _grid(self, k: int) -> int:
        return self.low + k * self.step

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "int", "low": self.low, "high": self.high}
        if self.log:
            out["log"] = True
        if self.step != 1:
            out["step"] = self.step
        return out

    def __repr__(self) -> str:
        extra = (", log=True" if self.log else "") + ("" if self.step == 1 else f", step={self.step!r}")
        return f"Int({self.low!r}, {self.high!r}{extra})"


def _whole(name: str, value: Any) -> int:
    """An :class:`Int`'s setting ``name`` as an int: an int (a NumPy integer too) or a float
    that is a whole number (``1.0``); a ``TypeError`` naming it otherwise."""
    if isinstance(value, (float, np.floating)) and float(value).is_integer():
        return int(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        whole = " (a float only when it is a whole number, 1.0)" if isinstance(value, (float, np.floating)) else ""
        raise TypeError(f"Int: {name} must be an int{whole}, got {value!r}")
    return int(value)


#: what a choice's values may be: what JSON stores as itself, so a run's record reads back equal
_CHOICE_TYPES = (str, int, float, bool, type(None))


class Choice(Parameter):
    """A parameter taking one of a few values (a kernel, an activation, an optimiser).

    Args:
        values: the values, a non-empty sequence of distinct strings, numbers, bools or
            ``None`` (what a database records as itself).
        ordered: ``True`` when the order of ``values`` means something (``[16, 32, 64]``):
            one column, neighbours next to each other. ``False`` (default): each value is
            as far from every other (one-hot columns, for three or more values).
        dependents: the parameters of the space that exist only when this choice takes a
            value, by value (``{"svm": ["C", "gamma"], "rf": ["n_estimators"]}``, as Ax's
            ``ChoiceParameter(dependents=...)``): a point where the choice takes another value
            has no such parameter, and the objective is called without it. A name may be
            listed under several values. ``None`` (default): none. See
            :class:`~npbandit.space.SearchSpace` for a space with such parameters.

    Raises:
        ValueError / TypeError: no values, a repeated value, a value of another type, or
            ``dependents`` not a mapping of this choice's values to lists of names.
    """

    def __init__(self, values: Any, *, ordered: bool = False, dependents: Any = None) -> None:
        if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
            raise TypeError(f"Choice: values must be a sequence of values, got {values!r}")
        if isinstance(values, (set, frozenset, Mapping)):
            # a set's order changes between processes (str hashes are salted), and the order places
            # each value in the unit cube; a mapping would give its keys and drop its values
            raise TypeError(f"Choice: values must be a sequence in a fixed order (a list or tuple), got "
                            f"{type(values).__name__} {values!r}" + (": pass sorted(values)" if isinstance(
                                values, (set, frozenset)) else ": pass list(values) for its keys"))
        # numpy scalars (an array's elements) as the Python values they hold
        values = tuple(v.item() if isinstance(v, np.generic) else v for v in values)
        if not values:
            raise ValueError("Choice: values must not be empty")
        for value in values:
            if not isinstance(value, _CHOICE_TYPES) or (isinstance(value, float) and not math.isfinite(value)):
                raise TypeError(f"Choice: each value must be a str, int, finite float, bool or None, got {value!r}")
        keys = [(type(v).__name__, v) for v in values]  # True == 1 in Python; as choices they differ
        if len(set(keys)) != len(keys):
            raise ValueError(f"Choice: values must be distinct, got {list(values)!r}")
        if not isinstance(ordered, (bool, np.bool_)):
            raise TypeError(f"Choice: ordered must be a bool, got {type(ordered).__name__}")
        self.values, self.ordered = values, bool(ordered)
        self._keys = keys
        k = len(values)
        self.one_hot = not self.ordered and k >= 3
        self.columns = k if self.one_hot else (0 if k == 1 else 1)
        self.dependents = self._checked_dependents(dependents)

    @property
    def count(self) -> float:
        return len(self.values)

    def _checked_dependents(self, dependents: Any) -> dict[Any, tuple[str, ...]]:
        """``dependents`` as ``{value: (name, ...)}`` in the order of ``values`` (values with
        no dependents left out)."""
        if dependents is None:
            return {}
        if not isinstance(dependents, Mapping):
            raise TypeError(f"Choice: dependents must be a mapping of values to lists of parameter names, got "
                            f"{type(dependents).__name__}")
        by_index: dict[int, tuple[str, ...]] = {}
        for value, names in dependents.items():
            try:
                i = self._index(value)
            except ValueError:
                raise ValueError(f"Choice: dependents[{value!r}]: {value!r} is not one of the values "
                                 f"{list(self.values)!r}") from None
            if isinstance(names, str) or not isinstance(names, (list, tuple)):
                raise TypeError(f"Choice: dependents[{value!r}] must be a list of parameter names, got {names!r}")
            for name in names:
                if not isinstance(name, str) or not name.strip():
                    raise ValueError(f"Choice: dependents[{value!r}] must hold non-empty parameter names, got "
                                     f"{name!r}")
            if len(set(names)) != len(names):
                raise ValueError(f"Choice: dependents[{value!r}] names a parameter twice: {list(names)!r}")
            by_index[i] = tuple(names)
        return {self.values[i]: by_index[i] for i in sorted(by_index) if by_index[i]}

    def _index(self, value: Any) -> int:
        key = (type(value).__name__, value)
        if key in self._keys:
            return self._keys.index(key)
        if isinstance(value, np.generic):
            return self._index(value.item())
        raise ValueError(f"value must be one of {list(self.values)!r}, got {value!r}")

    def check(self, value: Any) -> Any:
        return self.values[self._index(value)]

    def encode(self, value: Any) -> np.ndarray:
        i, k = self._index(value), len(self.values)
        if self.one_hot:
            out = np.zeros(k)
            out[i] = 1.0
            return out
        return np.array([(i + 0.5) / k]) if self.columns else np.zeros(0)

    def _decode_index(self, u: np.ndarray) -> int:
        u = np.asarray(u, dtype=np.float64).reshape(-1)
        k = len(self.values)
        if self.one_hot:
            return int(np.argmax(u))  # ties: the first of them
        if not self.columns:
            return 0
        return min(max(int(math.floor(float(u[0]) * k)), 0), k - 1)

    def decode(self, u: np.ndarray) -> Any:
        return self.values[self._decode_index(u)]

    def decode_indices(self, u: torch.Tensor) -> torch.Tensor:
        """``[...]`` long: the index in ``values`` of the value each point of ``u``
        ``[..., columns]`` decodes to (as :meth:`decode` reads one point), on ``u``'s device.

        Raises:
            ValueError: ``u`` has another number of columns, or a coordinate that is not finite.
        """
        import torch

        if u.dim() < 1 or u.shape[-1] != self.columns:
            raise ValueError(f"u must have shape [..., {self.columns}], got {tuple(u.shape)}")
        if not bool(torch.isfinite(u).all()):
            raise ValueError("u must be finite to decode a choice")
        if self.one_hot:
            return u.argmax(dim=-1)  # ties: the first of them
        if not self.columns:
            return torch.zeros(u.shape[:-1], dtype=torch.long, device=u.device)
        k = len(self.values)
        return torch.floor(u[..., 0].to(torch.float64) * k).clamp(0, k - 1).long()

    def neighbours(self, value: Any) -> list[Any]:
        i = self._index(value)
        if self.ordered:
            return [self.values[j] for j in (i - 1, i + 1) if 0 <= j < len(self.values)]
        return [v for j, v in enumerate(self.values) if j != i]

    def snap(self, u: torch.Tensor) -> torch.Tensor:
        if not self.columns:
            return u
        import torch

        rows = u.detach().reshape(-1, self.columns).tolist()
        out = [self.encode(self.values[self._decode_index(np.array(row))]) for row in rows]
        return torch.tensor(np.array(out), dtype=u.dtype, device=u.device).reshape(u.shape)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "choice", "values": list(self.values)}
        if self.ordered:
            out["ordered"] = True
        if self.dependents:  # [value, names] pairs: JSON keys would turn every value into a string
            out["dependents"] = [[value, list(names)] for value, names in self.dependents.items()]
        return out

    def _dependents_key(self) -> tuple:
        return tuple(((type(v).__name__, v), names) for v, names in self.dependents.items())

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Choice) and other._keys == self._keys and other.ordered == self.ordered
                and other._dependents_key() == self._dependents_key())

    def __hash__(self) -> int:
        return hash((tuple(self._keys), self.ordered, self._dependents_key()))

    def __repr__(self) -> str:
        dependents = f", dependents={ {v: list(n) for v, n in self.dependents.items()}!r}" if self.dependents else ""
        return f"Choice({list(self.values)!r}{', ordered=True' if self.ordered else ''}{dependents})"
