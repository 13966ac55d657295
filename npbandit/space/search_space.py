""":class:`SearchSpace`: named parameters and the unit cube the surrogate searches.

A search space is an ordered mapping of names to parameters (:mod:`npbandit.space.parameters`).
Its cube ``[0, 1]^D`` is the parameters' columns side by side, in the order given, where ``D``
(:attr:`SearchSpace.dim`) counts one column per float / int / ordered or two-valued choice
and one per value of a larger unordered choice. Policies, models and acquisitions work in
that cube only; the space turns points of it into the ``{name: value}`` the objective is
called with (:meth:`SearchSpace.decode`), and evaluated parameters back into the cube
(:meth:`SearchSpace.encode`).

A plain box (``bounds``, ``2 x d``) is the space of ``d`` floats named ``x0 ... x{d-1}``
(:meth:`SearchSpace.from_bounds`), whose cube is the box mapped affinely.

A :class:`~npbandit.space.Choice` with ``dependents`` makes the parameters it lists exist only
under the values listing them (a conditional space, :mod:`npbandit.space.conditions`): a point
then holds its active parameters alone, and the cube pins the others' columns.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from npbandit.space.conditions import Conditions
from npbandit.space.parameters import Choice, Float, Int, Parameter
from npbandit.validation import is_tensor

if TYPE_CHECKING:  # torch loads where a point is snapped, not with the space
    import torch

__all__ = ["SearchSpace", "as_search_space", "parameter_from_description"]


class SearchSpace(Mapping[str, Parameter]):
    """Named parameters (a read-only mapping ``name -> Parameter``, in the order given).

    Args:
        parameters: a mapping of names (non-empty printable strings) to :class:`Float`,
            :class:`Int` or :class:`Choice`; at least one parameter.

    Raises:
        TypeError / ValueError: no parameters, a name that is not a printable string, or a
            value that is not a parameter.
    """

    def __init__(self, parameters: Mapping[str, Parameter]) -> None:
        if isinstance(parameters, SearchSpace):
            parameters = dict(parameters.items())
        if not isinstance(parameters, Mapping):
            raise TypeError(f"space must be a mapping of names to parameters (Float, Int, Choice), got "
                            f"{type(parameters).__name__}")
        if not parameters:
            raise ValueError("space must hold at least one parameter")
        for name, parameter in parameters.items():
            if not isinstance(name, str) or not name.strip() or not name.isprintable():
                raise ValueError(f"space: each name must be a non-empty printable string, got {name!r}")
            if not isinstance(parameter, Parameter):
                raise TypeError(f"space[{name!r}] must be a Float, Int or Choice, got {type(parameter).__name__} "
                                f"{parameter!r}")
        self._parameters = dict(parameters)
        self._slices: dict[str, slice] = {}
        start = 0
        for name, parameter in self._parameters.items():
            self._slices[name] = slice(start, start + parameter.columns)
            start += parameter.columns
        self.dim = start
        self._conditions = Conditions(self._parameters, self._slices)
        if self.dim == 0:
            raise ValueError("space must hold a parameter with more than one value (every parameter given is "
                             "fixed: a one-value Choice or a range with low == high, so there is nothing to search)")

    @classmethod
    def from_bounds(cls, bounds: Any) -> SearchSpace:
        """The space of a box ``bounds`` (``2 x d``, lower row then upper row, as in BoTorch):
        ``d`` :class:`Float` parameters named ``x0 ... x{d-1}``."""
        box = np.asarray(bounds, dtype=np.float64)
        if box.ndim != 2 or box.shape[0] != 2 or box.shape[1] < 1:
            raise ValueError(f"bounds must be 2 x d (lower row, upper row), got shape {box.shape}")
        return cls({f"x{i}": Float(float(lo), float(hi)) for i, (lo, hi) in enumerate(box.T)})

    # -- the mapping -------------------------------------------------------------------

    def __getitem__(self, name: str) -> Parameter:
        return self._parameters[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._parameters)

    def __len__(self) -> int:
        return len(self._parameters)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SearchSpace) and list(self.items()) == list(other.items())

    def __hash__(self) -> int:
        return hash(tuple(self.items()))

    def __repr__(self) -> str:
        return "SearchSpace({" + ", ".join(f"{n!r}: {p!r}" for n, p in self.items()) + "})"

    # -- the cube ----------------------------------------------------------------------

    @property
    def names(self) -> list[str]:
        """The parameters' names, in order."""
        return list(self._parameters)

    def columns(self, name: str) -> slice:
        """The cube's columns parameter ``name`` occupies."""
        return self._slices[name]

    @property
    def continuous(self) -> bool:
        """Whether every parameter is a float without a step (every point of the cube is a
        point of its own) and none is conditional."""
        return not self._conditions and all(p.continuous for p in self._parameters.values())

    @property
    def size(self) -> float:
        """How many distinct points the space holds: the product of its parameters' counts,
        ``math.inf`` when one is continuous (for a conditional space, an upper bound: a point
        takes only its active parameters' values)."""
        return math.prod(p.count for p in self._parameters.values())

    @property
    def conditional(self) -> bool:
        """Whether some parameter exists only under some values of a choice (its ``dependents``)."""
        return bool(self._conditions)

    def active(self, params: Mapping[str, Any]) -> list[str]:
        """The names of the parameters a point with ``params`` has (every name, unless the
        space is conditional: then those whose choices, in ``params``, take a value listing
        them), in the space's order."""
        return self._conditions.active(params) if self._conditions else self.names

    def check(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` as the space holds them (ints as ``int``, ...), every name present once:
        every parameter's, or in a conditional space every active one's (:meth:`active`).

        Raises:
            ValueError / TypeError: a missing or unknown name (in a conditional space also an
                inactive one, naming when it is active), or a value outside its parameter."""
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping of parameter names to values, got {type(params).__name__}")
        out = {}
        for name in self._conditions.gates:  # the choices that decide the rest, checked first
            if name in params:
                out[name] = self._checked(name, params[name])
        names = self._conditions.active(out) if self._conditions else self.names
        missing = [n for n in names if n not in params]
        unknown = [n for n in params if n not in self._parameters]
        inactive = [n for n in params if n in self._parameters and n not in names]
        if missing or unknown or inactive:
            if not self._conditions:
                raise ValueError(f"params must name exactly the space's parameters {self.names}; missing {missing}, "
                                 f"unknown {unknown}")
            why = "; ".join(f"{n} exists only when {self._conditions.condition(n)}" for n in missing + inactive
                            if n in self._conditions.parent)
            raise ValueError(f"params must name exactly the parameters active at its choices' values {names}; missing "
                             f"{missing}, unknown {unknown}, inactive {inactive}" + (f" ({why})" if why else ""))
        return {name: out[name] if name in out else self._checked(name, params[name]) for name in names}

    def _checked(self, name: str, value: Any) -> Any:
        try:
            return self._parameters[name].check(value)
        except (TypeError, ValueError) as err:
            raise type(err)(f"params[{name!r}]: {err}") from None

    def encode(self, params: Mapping[str, Any]) -> np.ndarray:
        """The point ``[D]`` of the cube at which ``params`` (checked) lie; in a conditional
        space an inactive parameter's columns at their pinned point."""
        checked = self.check(params)
        return np.concatenate([self._parameters[n].encode(checked[n]) if n in checked else self._conditions.pinned[n]
                               for n in self._parameters]).astype(np.float64)

    def decode(self, u: Any) -> dict[str, Any]:
        """The parameters ``{name: value}`` at the point ``u`` ``[D]`` of the cube (the active
        ones in a conditional space)."""
        u = self._point(u)
        values = {name: parameter.decode(u[self._slices[name]]) for name, parameter in self._parameters.items()}
        return values if not self._conditions else {name: values[name] for name in self._conditions.active(values)}

    def snap(self, u: torch.Tensor) -> torch.Tensor:
        """Points ``u`` ``[..., D]`` moved to the encoding of what they decode to: where the
        objective would be evaluated, in the cube (the identity for a continuous space)."""
        if u.shape[-1] != self.dim:
            raise ValueError(f"u must have last dimension {self.dim}, got shape {tuple(u.shape)}")
        if self.continuous:
            return u
        import torch

        parts = [self._parameters[n].snap(u[..., self._slices[n]]) for n in self._parameters]
        snapped = torch.cat(parts, dim=-1)
        return self._conditions.pin(snapped) if self._conditions else snapped

    def depends_on(self, name: str) -> tuple[str, tuple[Any, ...]] | None:
        """The choice ``name`` exists under and the values of it that bring it in (in the
        choice's order); ``None`` for a parameter in every point."""
        if name not in self._conditions.parent:
            if name not in self._parameters:
                raise KeyError(name)
            return None
        parent, _ = self._conditions.parent[name]
        return parent, tuple(v for v, names in self._parameters[parent].dependents.items() if name in names)

    def lacks(self, params: Any, name: Any) -> str | None:
        """Why a point ``params`` of this space has no parameter ``name``, for a message:
        ``"C exists only when model is 'svm'"`` when ``name`` is a conditional parameter the
        point lacks; ``None`` otherwise (the point has it, or ``name`` is no conditional
        parameter)."""
        if (not isinstance(name, str) or name not in self._conditions.parent or not isinstance(params, Mapping)
                or name in params):
            return None
        return f"{name} exists only when {self._conditions.condition(name)}"

    def inactive_columns(self, u: torch.Tensor) -> torch.Tensor:
        """``[..., D]`` bool: at each point of ``u`` ``[..., D]``, the columns of the parameters
        it does not have (none unless the space is conditional)."""
        import torch

        if not self._conditions:
            return torch.zeros(u.shape, dtype=torch.bool, device=u.device)
        return self._conditions.inactive_columns(u)

    def describe(self) -> dict[str, dict[str, Any]]:
        """The space as JSON, ``{name: {"type": ..., settings}}`` in order: what a run records
        (:func:`parameter_from_description` reads each entry back)."""
        return {name: parameter.describe() for name, parameter in self._parameters.items()}

    def _point(self, u: Any) -> np.ndarray:
        point = np.asarray(u.detach().cpu() if is_tensor(u) else u, dtype=np.float64)
        if point.shape != (self.dim,) or not np.isfinite(point).all():
            raise ValueError(f"u must be a finite point of shape [{self.dim}], got {point.tolist()}")
        return point


def parameter_from_description(description: Mapping[str, Any]) -> Parameter:
    """The parameter one entry of :meth:`SearchSpace.describe` records."""
    if not isinstance(description, Mapping) or "type" not in description:
        raise ValueError(f"description must be a mapping with a 'type', got {description!r}")
    settings = {k: v for k, v in description.items() if k != "type"}
    kind = description["type"]
    kinds = {"float": (Float, ("low", "high"), ("log", "step")), "int": (Int, ("low", "high"), ("log", "step")),
             "choice": (Choice, ("values",), ("ordered", "dependents"))}
    if kind not in kinds:
        raise ValueError(f"description's type must be 'float', 'int' or 'choice', got {kind!r}")
    cls, required, optional = kinds[kind]
    missing = [k for k in required if k not in settings]
    unknown = sorted(set(settings) - set(required) - set(optional))
    if missing or unknown:
        article = "an" if kind == "int" else "a"
        raise ValueError(f"{article} {kind} description needs {', '.join(required)} and may have "
                         f"{', '.join(optional)}; got {description!r}"
                         + (f" (missing {', '.join(missing)})" if missing else "")
                         + (f" (unknown {', '.join(unknown)})" if unknown else ""))
    positional = [settings.pop(k) for k in required]
    pairs = settings.get("dependents")
    if isinstance(pairs, list):  # as describe() writes them: [value, names] pairs
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise ValueError(f"a choice's dependents are [value, [names]] pairs, got {pairs!r}")
        settings["dependents"] = {value: names for value, names in pairs}
    try:
        return cls(*positional, **settings)
    except ValueError as err:
        values = positional[0] if kind == "choice" else ()
        if isinstance(pairs, Mapping) and isinstance(values, list) and any(not isinstance(v, str) for v in values):
            # JSON keys are strings: an object cannot name the value 16; the pairs describe() writes can
            example = next(([[v, n]] for k, n in pairs.items() for v in values if k in (str(v), json.dumps(v))),
                           [[values[0], ["name"]]])
            raise ValueError(f"{err} (a JSON object's keys are strings: give the dependents of a choice of other "
                             f"values as [value, [names]] pairs, e.g. {json.dumps(example, default=str)})") from None
        raise


def as_search_space(space: Any) -> SearchSpace:
    """``space`` as a :class:`SearchSpace`: one already, or a mapping of names to parameters,
    or a description (:meth:`SearchSpace.describe`) read back."""
    if isinstance(space, SearchSpace):
        return space
    if isinstance(space, Mapping) and space and all(isinstance(v, Mapping) for v in space.values()):
        return SearchSpace({name: _described(name, d) for name, d in space.items()})
    return SearchSpace(space)


def _described(name: Any, description: Mapping[str, Any]) -> Parameter:
    """The parameter ``description`` records, an error in it named by the parameter's
    ``name``: a description read from a file of twenty says which one is wrong."""
    try:
        return parameter_from_description(description)
    except (TypeError, ValueError) as err:
        raise type(err)(f"space[{name!r}]: {err}") from err
