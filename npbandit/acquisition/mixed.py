"""Acquisition maximisation over a mixed search space: the acquisition judged where the
objective would be evaluated.

A :class:`~npbandit.space.SearchSpace` with integer, stepped or choice parameters has a
unit cube most of whose points are not evaluated as they stand: an int column is read as
the grid value whose interval holds it, a one-hot choice as its largest column
(:meth:`SearchSpace.snap` moves a point to the encoding of what it decodes to). Maximising
the acquisition over the continuous relaxation and rounding afterwards judges the wrong
points: the relaxed optimum may lie between grid values, or on a one-hot point no value
encodes, and the value it rounds to need not be the best grid point near it. So
:func:`~npbandit.acquisition.proposal.propose`, given the space, keeps the relaxation as
its first step (the acquisition optimiser's: BoTorch's gradient ascent from its restarts,
or :class:`~npbandit.acquisition.optimizers.CandidateSearch`'s walkers) and then

1. snaps every restart's (walker's) end point and scores the acquisition *there*;
2. improves each by a short discrete local search (:func:`local_search`): every move that
   changes one discrete parameter to a neighbouring value (the next grid value either side,
   another choice: :meth:`~npbandit.space.Parameter.neighbours`) is scored, each point takes
   its best improving move, for at most :data:`LOCAL_SEARCH_ROUNDS` rounds;
3. re-optimises the continuous columns of the point it keeps with the discrete ones fixed
   (one short L-BFGS run from that point, whichever optimiser made the first step;
   :func:`polish`).

Points already evaluated are never the result (the repeat check, on snapped points): a walk
that stands on one steps on to its best neighbour, so the search finds the best grid point
not yet evaluated near each restart, also behind evaluated ones. The point
returned is a fixed point of ``snap``.

:class:`TypedCube` is what the optimiser needs of the space: which columns are discrete,
their snap, the moves; seen through an affine map when the model's cube is a trust
region's box inside the space's cube (:meth:`TypedCube.through`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.space import SearchSpace

__all__ = ["TypedCube", "typed_cube", "space_of", "mixed_candidates", "local_search", "polish", "LOCAL_SEARCH_ROUNDS",
           "POLISH_ITERATIONS", "SNAP_TOLERANCE"]

#: rounds of the discrete local search (each: every walk's best single move)
LOCAL_SEARCH_ROUNDS = 4
#: L-BFGS iterations of the continuous columns' re-optimisation (it starts near their optimum)
POLISH_ITERATIONS = 20
#: a neighbour is reachable from the box searched when the box's point nearest to it snaps back
#: to it, to this tolerance (snap is exact up to the float arithmetic of the encodings)
SNAP_TOLERANCE = 1e-9


class TypedCube:
    """The unit cube of a :class:`~npbandit.space.SearchSpace` as an acquisition optimiser
    sees it, in the coordinates of a model's cube ``u`` related to the space's cube by
    ``offset + scale * u`` (the identity unless :meth:`through` a trust region's box).

    Args:
        space: the search space (``space.dim`` columns).
        offset, scale: ``[D]`` the affine map from the model's cube onto the space's
            (default 0 and 1).
    """

    def __init__(self, space: SearchSpace, offset: torch.Tensor | None = None,
                 scale: torch.Tensor | None = None) -> None:
        if not isinstance(space, SearchSpace):
            raise TypeError(f"space must be a SearchSpace, got {type(space).__name__}")
        self.space = space
        self.dim = space.dim
        self.offset = torch.zeros(self.dim, dtype=torch.float64) if offset is None else offset.to(torch.float64)
        self.scale = torch.ones(self.dim, dtype=torch.float64) if scale is None else scale.to(torch.float64)
        #: the discrete parameters and their columns
        self.discrete = [(name, parameter, space.columns(name)) for name, parameter in space.items()
                         if not parameter.continuous and parameter.columns]
        mask = torch.ones(self.dim, dtype=torch.bool)
        for _, _, columns in self.discrete:
            mask[columns] = False
        #: ``[D]`` True for the columns of continuous parameters
        self.continuous_columns = mask

    @property
    def continuous(self) -> bool:
        """Whether every point of the cube is evaluated as it stands (nothing to snap)."""
        return not self.discrete

    def through(self, lower: torch.Tensor, span: torch.Tensor) -> TypedCube:
        """This cube seen from a model whose unit cube is the box ``lower + span * u`` of it."""
        return TypedCube(self.space, self.offset + self.scale * lower, self.scale * span)

    def to_space(self, u: torch.Tensor) -> torch.Tensor:
        return self.offset.to(u) + self.scale.to(u) * u

    def from_space(self, x: torch.Tensor) -> torch.Tensor:
        return (x - self.offset.to(x)) / self.scale.to(x)

    def snap(self, u: torch.Tensor) -> torch.Tensor:
        """Points ``u`` ``[..., D]`` of the model's cube moved to where they would be evaluated."""
        if self.continuous:
            return u
        return self.from_space(self.space.snap(self.to_space(u)))

    def reaching_one_move(self, lower: torch.Tensor, upper: torch.Tensor,
                          center: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The box ``[lower, upper]`` (``[D]`` each, in the space's cube) widened on each
        discrete parameter's columns until it holds the encodings of ``center``'s value and of
        every value one move from it (:meth:`~npbandit.space.Parameter.neighbours`).

        A trust region's box is a cube around the incumbent; on a one-hot choice, or an int
        whose grid step is wider than the box, it would hold the incumbent's value alone, so
        the region could never change that parameter however long it ran. Widened, it is a
        box on the continuous columns and a Hamming ball of radius one on the discrete
        parameters (every choice, the next grid value either side)."""
        lower, upper = lower.clone(), upper.clone()
        x = self.to_space(center.detach().to(torch.float64).cpu())
        for _, parameter, columns in self.discrete:
            value = parameter.decode(x[columns].numpy())
            for other in (value, *parameter.neighbours(value)):
                code = self.from_space(self._encoded(parameter, other, columns))[columns].to(lower)
                lower[columns] = torch.minimum(lower[columns], code)
                upper[columns] = torch.maximum(upper[columns], code)
        return lower, upper

    def _encoded(self, parameter: Any, value: Any, columns: Any) -> torch.Tensor:
        """A point ``[D]`` of the space's cube, zero but ``parameter``'s ``columns``, which encode ``value``."""
        point = torch.zeros(self.dim, dtype=torch.float64)
        point[columns] = torch.as_tensor(parameter.encode(value), dtype=torch.float64)
        return point

    def neighbours(self, points: torch.Tensor, bounds: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Every point one move from each of the snapped ``points`` ``[m, D]``: one discrete
        parameter changed to a neighbouring value that the box ``bounds`` ``[2, D]`` can reach
        (the box's point nearest to the value's encoding decodes to it). Returns the moved
        points ``[k, D]`` and, for each, the row of ``points`` it moved from ``[k]`` (long)."""
        whole = self.to_space(points).detach().cpu()
        box = self.to_space(bounds).detach().cpu()
        inactive = self.space.inactive_columns(whole)
        moved, rows = [], []
        for row, x in enumerate(whole):
            for _, parameter, columns in self.discrete:
                if inactive[row, columns].any():  # a parameter this point does not have: no move of its own
                    continue
                value = parameter.decode(x[columns].numpy())
                for other in parameter.neighbours(value):
                    code = torch.as_tensor(parameter.encode(other), dtype=torch.float64)
                    nearest = torch.minimum(torch.maximum(code, box[0, columns]), box[1, columns])
                    if (parameter.snap(nearest) - code).abs().max() > SNAP_TOLERANCE:
                        continue  # no point of the box decodes to it
                    y = x.clone()
                    y[columns] = code
                    moved.append(y)
                    rows.append(row)
        if not moved:
            return points.new_zeros(0, self.dim), torch.zeros(0, dtype=torch.long)
        moved = torch.stack(moved)
        if self.space.conditional:  # a choice moved: the parameters it leaves or brings in, pinned or freed
            moved = self.space.snap(moved)
        return self.from_space(moved.to(points)), torch.tensor(rows, dtype=torch.long)


def space_of(snap: Any) -> SearchSpace | None:
    """The :class:`SearchSpace` whose own ``snap`` method ``snap`` is, else ``None``."""
    owner = getattr(snap, "__self__", None)
    if isinstance(owner, SearchSpace) and getattr(snap, "__func__", None) is SearchSpace.snap:
        return owner
    return None


def typed_cube(space: Any, snap: Callable[[torch.Tensor], torch.Tensor] | None,
               dim: int) -> TypedCube | None:
    """The :class:`TypedCube` a proposal searches: of ``space`` (a :class:`SearchSpace` or a
    :class:`TypedCube`), or of the space whose own ``snap`` method ``snap`` is; ``None`` for
    a plain ``snap`` function (only the repeat check uses it) or none.

    Raises:
        TypeError / ValueError: ``space`` is neither, or its cube is not ``dim`` wide, or a
            ``snap`` other than the space's is given beside it."""
    owner = space_of(snap)
    if owner is not None:
        if space is not None and space is not owner and not (isinstance(space, TypedCube) and space.space is owner):
            raise ValueError("snap is another search space's snap than space's; give space alone")
        space = owner if space is None else space
    elif space is not None and snap is not None:
        raise ValueError("give space (whose snap is used) or snap, not both")
    if space is None:
        return None
    cube = space if isinstance(space, TypedCube) else TypedCube(space) if isinstance(space, SearchSpace) else None
    if cube is None:
        raise TypeError(f"space must be a SearchSpace (npbandit.space) or None, got {type(space).__name__}")
    if cube.dim != dim:
        raise ValueError(f"space's unit cube has {cube.dim} columns, the proposal's dim is {dim}")
    return cube


def _scores(acq, points: torch.Tensor) -> torch.Tensor:
    """The acquisition at ``points`` ``[m, D]``, ``[m]``."""
    if not len(points):
        return points.new_zeros(0)
    with torch.no_grad():
        return acq(points.unsqueeze(-2)).reshape(-1)


def _repeats(points: torch.Tensor, avoid: torch.Tensor | None, distance: float) -> torch.Tensor:
    """``[m]``: whether each of ``points`` ``[m, D]`` lies closer than ``distance`` to a point
    of ``avoid`` ``[n, D]`` (both snapped; ``None``: no point is a repeat)."""
    if avoid is None or not len(avoid) or not len(points):
        return torch.zeros(len(points), dtype=torch.bool)
    return torch.cdist(points, avoid.to(points)).amin(dim=-1) < distance


def local_search(acq, cube: TypedCube, points: torch.Tensor, bounds: torch.Tensor, avoid: torch.Tensor | None,
                 distance: float, rounds: int = LOCAL_SEARCH_ROUNDS,
                 pinned: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
    """The best points not yet evaluated that a discrete local search on ``acq`` finds from
    each of ``points`` ``[m, D]`` (snapped first).

    Each round scores every single move of every walk (:meth:`TypedCube.neighbours`, points
    a walk has visited left out) and moves the walk to its best move when that scores higher,
    or, while the walk stands on a repeat (closer than ``distance`` to a point of ``avoid``
    ``[n, D]``, snapped; ``None``: no repeats), to its best move whatever its score: the walk
    climbs the acquisition, and steps through evaluated points instead of stopping at their
    edge. A walk's result is the best point that is no repeat among all it scored. ``pinned``
    (a :class:`~npbandit.acquisition.pinned.Pinned`, whose columns ``points`` hold): no move
    changes its columns.

    Returns the distinct results ``[m', D]`` and their scores ``[m']`` (``-inf`` for a walk
    that scored no point but repeats)."""
    current = torch.unique(cube.snap(points.detach()), dim=0)
    value = _scores(acq, current)
    on_repeat = _repeats(current, avoid, distance)
    best, best_value = current.clone(), torch.where(on_repeat, -torch.inf, value)
    visited = [{tuple(p.tolist())} for p in current]
    active = torch.ones(len(current), dtype=torch.bool)
    for _ in range(rounds):
        walks = torch.nonzero(active).reshape(-1)
        if not len(walks):
            break
        moved, rows = cube.neighbours(current[walks], bounds)
        if pinned is not None:  # a move along a pinned column leaves the trial's fixed values
            keep = (moved[:, pinned.columns] == current[walks][rows][:, pinned.columns]).all(-1)
            moved, rows = moved[keep], rows[keep]
        scores, repeat = _scores(acq, moved), _repeats(moved, avoid, distance)
        keys = [tuple(p.tolist()) for p in moved]
        for r, i in enumerate(walks.tolist()):
            mine = [k for k in torch.nonzero(rows == r).reshape(-1).tolist() if keys[k] not in visited[i]]
            if not mine:
                active[i] = False
                continue
            new = [k for k in mine if not repeat[k]]
            if new:
                k = max(new, key=lambda k: float(scores[k]))
                if scores[k] > best_value[i]:
                    best[i], best_value[i] = moved[k], scores[k]
            k = max(mine, key=lambda k: float(scores[k]))
            if on_repeat[i] or scores[k] > value[i]:
                current[i], value[i], on_repeat[i] = moved[k], scores[k], repeat[k]
                visited[i].add(keys[k])
            else:
                active[i] = False
    points, which = torch.unique(best, dim=0, return_inverse=True)
    values = torch.full((len(points),), -torch.inf, dtype=best_value.dtype).scatter_reduce(
        0, which, best_value, "amax", include_self=True)
    return points, values


def polish(acq, cube: TypedCube, point: torch.Tensor, value: torch.Tensor, bounds: torch.Tensor,
           avoid: torch.Tensor | None, distance: float, polytope: Any = None,
           pinned: Any = None) -> tuple[torch.Tensor, torch.Tensor]:
    """``point`` ``[D]`` (snapped, acquisition ``value``) with its continuous columns
    re-optimised while the discrete ones stay fixed: one L-BFGS run of ``optimize_acqf`` from
    the point itself (at most :data:`POLISH_ITERATIONS` iterations, no retry: the relaxation
    already put those columns near their optimum for neighbouring discrete values), kept
    when it scores higher and is no repeat of ``avoid``. It takes gradients of the
    acquisition whatever optimiser made the relaxation's step; after
    :class:`~npbandit.acquisition.optimizers.CandidateSearch` on an NP it is most of a mixed
    proposal's time. A space without continuous columns, or a point whose continuous
    columns are not inside ``bounds``, is returned as it is. With ``polytope`` (linear input
    constraints, :class:`~npbandit.space.linear_constraints.Polytope`, which ``point`` satisfies)
    the run keeps to them (``inequality_constraints``) and its end is kept only inside them.
    ``pinned``' columns stay as they are, as the discrete ones do."""
    from botorch.optim import optimize_acqf

    # the continuous columns of the parameters the point has (a conditional space's others stay pinned)
    free = cube.continuous_columns.to(point.device) & ~cube.space.inactive_columns(cube.to_space(point))
    if pinned is not None:
        free[pinned.columns] = False
    inside = ((point >= bounds[0]) & (point <= bounds[1]))[free].all()
    if not free.any() or not bool(inside):
        return point, value
    fixed = {int(j): float(point[j]) for j in torch.nonzero(~free).reshape(-1)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an L-BFGS run that stops early is normal here
        candidate, _ = optimize_acqf(acq, bounds, q=1, num_restarts=1, raw_samples=None,
                                     batch_initial_conditions=point.reshape(1, 1, -1).clone(), fixed_features=fixed,
                                     options={"maxiter": POLISH_ITERATIONS}, retry_on_optimization_warning=False,
                                     inequality_constraints=None if polytope is None
                                     else polytope.inequality_constraints(point.dtype))
    candidate = cube.snap(candidate.detach().reshape(1, -1))
    score = _scores(acq, candidate)[0]
    inside = polytope is None or bool(polytope.holds(candidate)[0])
    if score > value and inside and not _repeats(candidate, avoid, distance)[0]:
        return candidate[0], score
    return point, value


def mixed_candidates(acq, cube: TypedCube, candidates: torch.Tensor, bounds: torch.Tensor,
                     avoid: torch.Tensor | None, distance: float, polytope: Any = None,
                     pinned: Any = None) -> np.ndarray | None:
    """The proposal among the relaxation's ``candidates`` ``[r, D]`` (its restarts' end
    points): snapped, improved by :func:`local_search`, the best then :func:`polish` ed; a
    point ``[D]`` that ``cube.snap`` leaves where it is. ``None`` when every point reached
    is a repeat of ``avoid`` (closer than ``distance``; the caller's fallback then applies).
    ``polytope``: linear input constraints on continuous columns, which ``candidates`` satisfy
    and the discrete moves leave as they are (:func:`polish` keeps to them). ``pinned``: columns
    ``candidates`` hold at given values, which no move or polish changes."""
    points, values = local_search(acq, cube, candidates, bounds, avoid, distance, pinned=pinned)
    best = int(torch.argmax(values))
    if not torch.isfinite(values[best]):
        return None
    point, _ = polish(acq, cube, points[best], values[best], bounds, avoid, distance, polytope, pinned)
    return point.numpy()
