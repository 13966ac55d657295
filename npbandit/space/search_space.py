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
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

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
        if self.dim == 0:
            raise ValueError("space must hold a parameter with more than one value (every parameter given is a "
                             "one-value Choice, so there is nothing to search)")

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
        point of its own)."""
        return all(p.continuous for p in self._parameters.values())

    def check(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``params`` as the space holds them (ints as ``int``, ...), every name present once.

        Raises:
            ValueError / TypeError: a missing or unknown name, or a value outside its parameter."""
        if not isinstance(params, Mapping):
            raise TypeError(f"params must be a mapping of parameter names to values, got {type(params).__name__}")
        missing = [n for n in self._parameters if n not in params]
        unknown = [n for n in params if n not in self._parameters]
        if missing or unknown:
            raise ValueError(f"params must name exactly the space's parameters {self.names}; missing {missing}, "
                             f"unknown {unknown}")
        out = {}
        for name, parameter in self._parameters.items():
            try:
                out[name] = parameter.check(params[name])
            except (TypeError, ValueError) as err:
                raise type(err)(f"params[{name!r}]: {err}") from None
        return out

    def encode(self, params: Mapping[str, Any]) -> np.ndarray:
        """The point ``[D]`` of the cube at which ``params`` (checked) lie."""
        checked = self.check(params)
        return np.concatenate([self._parameters[n].encode(v) for n, v in checked.items()]).astype(np.float64)

    def decode(self, u: Any) -> dict[str, Any]:
        """The parameters ``{name: value}`` at the point ``u`` ``[D]`` of the cube."""
        u = self._point(u)
        return {name: parameter.decode(u[self._slices[name]]) for name, parameter in self._parameters.items()}

    def snap(self, u: torch.Tensor) -> torch.Tensor:
        """Points ``u`` ``[..., D]`` moved to the encoding of what they decode to: where the
        objective would be evaluated, in the cube (the identity for a continuous space)."""
        if u.shape[-1] != self.dim:
            raise ValueError(f"u must have last dimension {self.dim}, got shape {tuple(u.shape)}")
        if self.continuous:
            return u
        import torch

        parts = [self._parameters[n].snap(u[..., self._slices[n]]) for n in self._parameters]
        return torch.cat(parts, dim=-1)

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
             "choice": (Choice, ("values",), ("ordered",))}
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
    return cls(*positional, **settings)


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
