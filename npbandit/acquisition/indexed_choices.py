"""A mixed search space wider than the model: its unordered choices seen as one column each.

A :class:`~npbandit.space.SearchSpace` gives an unordered choice of ``k >= 3`` values ``k``
one-hot columns, so that no value lies "between" two others. That is the right geometry
when the model takes every column, but it spends the width of a ``bo`` NP (its checkpoint's
``x_dim``) fast: five parameters, one of them a choice among three, already make seven
columns. A count sketch (:class:`~npbandit.acquisition.subspace.CountSketch`) of those
columns is no remedy: it puts one-hot columns of one choice in a bin together (or beside
a float), so that a value can only be had together with another column's value and, with
equal signs in a bin, some values can never be proposed at all.

:class:`IndexedChoices` gives the model a narrower view instead. Each unordered choice it
indexes is one column, in which value ``i`` of ``k`` owns the interval
``[i / k, (i + 1) / k)`` and is seen at its centre (as an ordered choice is encoded);
every other parameter keeps its columns. Choices are indexed largest first, only until
the space fits the model's width, so a choice keeps its one-hot columns where the width
allows. What the model sees:

- each evaluated point exactly, in the view's coordinates (its indexed choices at their
  values' centres, everything else as the space encodes it): the points of the space that
  can be evaluated and the snapped points of the view's cube correspond one to one (when
  the view is searched through a further count sketch, a point whose rounded columns share
  a bin reaches the model at its nearest point of the sketch, as with any count sketch of a
  space with ints);
- the indexed values in the order the user gave them. This is the price of the view: the
  model takes values next to each other in that order as more alike than values far apart,
  which an unordered choice does not promise. The acquisition is still judged only at
  values (the view's cube is a mixed space of its own: :mod:`npbandit.acquisition.mixed`
  snaps each candidate there), and a discrete move reaches every other value of an indexed
  choice, not only its neighbours in the order.

When the view is still wider than the model (more floats and ints than its width), the
view's cube is searched through a further strategy (``then``; by default a
:class:`~npbandit.acquisition.subspace.CountSketch` of the view's columns, so one-hot
columns never share a bin).

:func:`~npbandit.acquisition.wide_spaces.default_subspace` gives a space with an unordered
choice of three or more values this view.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.pending import DEFAULT_LIAR
from npbandit.acquisition.recommend import recommend_in_box
from npbandit.acquisition.subspace import (
    CountSketch,
    SubspaceSearch,
    SubspaceStrategy,
    check_bind,
    check_subspace,
    propose_embedded,
)
from npbandit.space import Choice, SearchSpace, as_search_space

__all__ = ["IndexedChoices", "IndexedChoicesSearch", "indexed_view"]


class _IndexedChoice(Choice):
    """An unordered choice on one column: value ``i`` of ``k`` at ``(i + 0.5) / k`` (decoded
    from the interval ``[i / k, (i + 1) / k)``); every other value is one move away."""

    def __init__(self, choice: Choice) -> None:
        # its dependents kept: a view of a conditional space pins what the space pins
        super().__init__(choice.values, dependents=choice.dependents)
        self.one_hot, self.columns = False, 1

    def __repr__(self) -> str:
        return f"IndexedChoice({list(self.values)!r})"


def indexed_view(space: SearchSpace, width: int) -> tuple[SearchSpace, list[str]]:
    """The view of ``space`` with its unordered choices of three or more values on one column
    each, largest first (ties: in the space's order), only until the view is at most
    ``width`` columns wide (or every such choice is indexed); and the names indexed."""
    if not isinstance(space, SearchSpace):
        raise TypeError(f"space must be a SearchSpace, got {type(space).__name__}")
    candidates = sorted((n for n, p in space.items() if isinstance(p, Choice) and p.one_hot),
                        key=lambda n: -space[n].columns)
    dim, indexed = space.dim, []
    for name in candidates:
        if dim <= width:
            break
        dim -= space[name].columns - 1
        indexed.append(name)
    view = SearchSpace({n: _IndexedChoice(p) if n in indexed else p for n, p in space.items()})
    return view, indexed


class IndexedChoicesSearch(SubspaceSearch):
    """One run's search of ``space``'s cube through its indexed view (see the module).

    Args:
        space: the search space (``dim = space.dim`` columns).
        view: :func:`indexed_view`'s view of it.
        then: the search of the view's cube when the view is wider than the model, else ``None``.
    """

    def __init__(self, space: SearchSpace, view: SearchSpace, then: SubspaceSearch | None = None) -> None:
        if list(view) != list(space):
            raise ValueError("view must name the space's parameters, in order")
        self.space, self.view, self.then = space, view, then
        self.dim = space.dim
        self.search_dim = view.dim if then is None else then.search_dim
        self.active_dim = view.dim if then is None else then.active_dim
        self.indexed = [n for n in space if view[n] is not space[n]]
        # the columns each parameter holds in the space's cube and in the view's
        self._copied = [(space.columns(n), view.columns(n)) for n in space if n not in self.indexed]
        self._choices = [(space.columns(n), view.columns(n), len(space[n].values)) for n in self.indexed]

    def _to_view(self, X: torch.Tensor) -> torch.Tensor:
        """Points ``[n, dim]`` of the space's cube -> ``[n, view.dim]``: an indexed choice's
        one-hot columns as the centre of its value's interval (the largest column's value)."""
        X = torch.as_tensor(X, dtype=torch.float64)
        if X.ndim != 2 or X.shape[-1] != self.dim:
            raise ValueError(f"X must have shape [n, {self.dim}], got {tuple(X.shape)}")
        U = X.new_zeros(len(X), self.view.dim)
        for whole, seen in self._copied:
            U[:, seen] = X[:, whole]
        for whole, seen, k in self._choices:
            U[:, seen.start] = (X[:, whole].argmax(dim=-1).to(torch.float64) + 0.5) / k
        return U

    def _from_view(self, U: torch.Tensor) -> torch.Tensor:
        """Points ``[n, view.dim]`` of the view's cube -> ``[n, dim]``: an indexed column as
        the one-hot encoding of the value whose interval holds it."""
        U = torch.as_tensor(U, dtype=torch.float64)
        if U.ndim != 2 or U.shape[-1] != self.view.dim:
            raise ValueError(f"U must have shape [n, {self.view.dim}], got {tuple(U.shape)}")
        X = U.new_zeros(len(U), self.dim)
        for whole, seen in self._copied:
            X[:, whole] = U[:, seen]
        for whole, seen, k in self._choices:
            index = (U[:, seen.start] * k).floor().clamp(0, k - 1).long()
            X[:, whole] = torch.nn.functional.one_hot(index, k).to(torch.float64)
        return X

    def lift(self, Z: torch.Tensor) -> torch.Tensor:
        Z = torch.as_tensor(Z, dtype=torch.float64)
        return self._from_view(Z if self.then is None else self.then.lift(Z))

    def project(self, X: torch.Tensor) -> torch.Tensor:
        U = self._to_view(X)
        return U if self.then is None else self.then.project(U)

    def propose(self, region, X, Y, build_model, acquisition, *, seed, pending=None, avoid_repeats=True,
                liar=DEFAULT_LIAR, snap=None, max_context=None, constraints=0, **settings):
        # ``snap`` (the space's) is the view's own snap seen through the bijection: the view's
        # typed cube judges the acquisition at values and moves between them
        U = self._to_view(X)
        pending = None if pending is None else self._to_view(pending)
        if self.then is None:  # the view itself is the embedding searched
            return propose_embedded(self, region, U, Y, build_model, acquisition, seed=seed, pending=pending,
                                    avoid_repeats=avoid_repeats, liar=liar, space=self.view, max_context=max_context,
                                    constraints=constraints, **settings)
        u = self.then.propose(region, U, Y, build_model, acquisition, seed=seed, pending=pending,
                              avoid_repeats=avoid_repeats, liar=liar, snap=self.view.snap,
                              max_context=max_context, constraints=constraints, **settings)
        points = self._from_view(torch.as_tensor(u).reshape(-1, self.view.dim)).numpy()
        return points[0] if np.ndim(u) == 1 else points

    def recommend(self, region, X, Y, build_model, *, n_observed, seed, max_context=None, constraints=0, snap=None):
        """In the view, as :meth:`propose` sees the observations."""
        U = self._to_view(X)
        if self.then is not None:
            return self.then.recommend(region, U, Y, build_model, n_observed=n_observed, seed=seed,
                                       max_context=max_context, constraints=constraints, snap=self.view.snap)
        return recommend_in_box(region, U, Y, build_model, n_observed=n_observed, max_context=max_context,
                                constraints=constraints)

    def params(self) -> dict[str, Any]:
        out: dict[str, Any] = {"subspace": "indexed-choices", "subspace_d_e": self.search_dim,
                               "subspace_indexed": list(self.indexed)}
        if self.then is not None:
            out["subspace_then"] = self.then.params()
        return out


class IndexedChoices(SubspaceStrategy):
    """Search ``space`` through its indexed view (see the module).

    Args:
        space: the search space whose cube is searched (a ``SearchSpace`` or a dict of names
            to parameters, as ``optimize`` takes it).
        then: the strategy for the view's cube when the view is still wider than the model;
            ``None`` (default): :class:`~npbandit.acquisition.subspace.CountSketch`.

    Raises:
        TypeError: ``space`` is not a SearchSpace, or ``then`` not a strategy.
    """

    name = "indexed-choices"

    def __init__(self, space: SearchSpace | Mapping[str, Any], then: SubspaceStrategy | None = None) -> None:
        if not isinstance(space, Mapping):
            raise TypeError(f"space must be a SearchSpace or a dict of names to Float / Int / Choice, got "
                            f"{type(space).__name__}")
        self.space, self.then = as_search_space(space), check_subspace(then)

    def bind(self, dim: int, width: int, seed: int) -> IndexedChoicesSearch:
        check_bind(dim, width, seed)
        if dim != self.space.dim:
            raise ValueError(f"dim must be the space's {self.space.dim} columns, got {dim}")
        view, _ = indexed_view(self.space, width)
        then = None
        if view.dim > width:
            then = (self.then or CountSketch()).bind(view.dim, width, seed)
        return IndexedChoicesSearch(self.space, view, then)

    def n_init(self, dim: int, width: int) -> int:
        """``2 d + 1`` points, ``d`` the dimension of the cube the design lives in."""
        return 2 * self.bind(dim, width, 0).search_dim + 1

    def __repr__(self) -> str:
        return f"IndexedChoices({self.space!r}, then={self.then!r})"
