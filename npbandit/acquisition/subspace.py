"""Searching ``D`` inputs with a model that takes at most ``width`` (``d_e <= width < D``).

A pretrained ``bo`` NP takes at most as many inputs as it was trained on (its checkpoint's
``x_dim``). A :class:`SubspaceStrategy` lets it serve any ``D``: the proposal step sees a
low-dimensional view of the observations and proposes in it, and the point is mapped back
to the ``D`` inputs. Two families, each a small injectable object:

- :class:`CountSketch` (HeSBO's embedding, as BAxUS's): each of the ``D`` inputs is assigned
  to one of ``d_e`` target coordinates with a random sign, fixed per run (balanced bins,
  from the run's seed). The whole search (initial design, trust region, model,
  acquisition) runs in the embedded cube ``[0, 1]^d_e`` and every point is lifted to
  ``D``: input ``i`` of bin ``j`` takes ``z_j`` (sign ``+``) or ``1 - z_j`` (sign ``-``).
  Every point such a run evaluates lies in the embedding, so the model sees exact
  ``(z, y)`` pairs: it models the objective restricted to a ``d_e``-dimensional slice.
- :class:`CoordinateSubspace` (dropout / TuRBO's perturbation mask): the initial design and
  the trust region live in the full cube around the incumbent; each proposal picks
  ``d_e`` coordinates (uniformly, or weighted by a cheap relevance estimate), the model
  sees the observations in the region's context box projected onto those coordinates
  (mapped onto its unit cube), and the acquisition is maximised over them with every
  other input held at the incumbent's value. What the other inputs did among the seen
  points is variation the model cannot attribute; the points a region proposes differ
  from the incumbent only in their chosen coordinates, so near the incumbent it is small.
  The relevance estimate is local (a trend or a bowl around the incumbent among the
  region's points, ``scores="bowl"``) or an injected function of every observation;
  only the choice of coordinates uses it, never the proposal's model.

A strategy is configuration; :meth:`SubspaceStrategy.bind` makes the run-level
:class:`SubspaceSearch` for ``(D, width, seed)``. A search is a function of its seed and of
the history it is handed, never of what it did before, so a sampler that keeps no state
between trials (Optuna's) gets the same proposals as a policy that does.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.constrained import incumbent
from npbandit.acquisition.maximise import REPEAT_DISTANCE
from npbandit.acquisition.mixed import typed_cube
from npbandit.acquisition.pending import DEFAULT_LIAR, PendingStrategy, pending_strategy
from npbandit.acquisition.proposal import (
    SearchRegion,
    propose,
    propose_in_region,
    region_view,
    searched_box,
)
from npbandit.acquisition.recommend import best_mean, recommend_in_box
from npbandit.models.columns import relevance

__all__ = ["SubspaceStrategy", "SubspaceSearch", "CountSketch", "CountSketchSearch", "CoordinateSubspace",
           "CoordinateSearch", "check_subspace", "COORDINATE_SCORES", "deal", "propose_embedded", "check_bind",
           "check_d_e", "as_rows", "checked_scores", "bind_search"]

#: the named relevance estimates of :class:`CoordinateSubspace` (``scores``): ``"bowl"``,
#: :func:`~npbandit.models.columns.relevance` of the region's points around the incumbent
COORDINATE_SCORES = ("bowl",)


def check_d_e(d_e: Any) -> int | None:
    """``d_e`` if it is ``None`` or a positive int (a strategy's embedding size), else ``ValueError``."""
    if d_e is not None and (not isinstance(d_e, (int, np.integer)) or isinstance(d_e, bool) or d_e < 1):
        raise ValueError(f"d_e must be None or a positive int, got {d_e!r}")
    return None if d_e is None else int(d_e)


def check_bind(dim: Any, width: Any, seed: Any) -> None:
    """The arguments of :meth:`SubspaceStrategy.bind`: positive ints ``dim`` and ``width``, an
    int ``seed >= 0``; else ``ValueError`` naming the argument."""
    for name, value in (("dim", dim), ("width", width)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if not isinstance(seed, (int, np.integer)) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"seed must be an int >= 0, got {seed!r}")


def as_rows(X: torch.Tensor, dim: int, name: str) -> torch.Tensor:
    """``X`` as float64 rows ``[n, dim]``; else ``ValueError`` naming ``name`` and the shape expected."""
    X = torch.as_tensor(X, dtype=torch.float64)
    if X.ndim != 2 or X.shape[-1] != dim:
        raise ValueError(f"{name} must have shape [n, {dim}], got {tuple(X.shape)}")
    return X


def checked_scores(name: str, value: Any, dim: int) -> torch.Tensor:
    """``value``, what an injected relevance function named ``name`` returned, as float64
    scores ``[dim]``: one finite score ``>= 0`` per input.

    Raises:
        TypeError: ``value`` is not numbers (a tensor, an array or a sequence of them).
        ValueError: another shape, or a score that is negative or not finite (how many, and
            the first).
    """
    try:
        score = torch.as_tensor(value, dtype=torch.float64)
    except (TypeError, ValueError, RuntimeError):
        raise TypeError(f"{name} must return [{dim}] finite scores >= 0 (a tensor or an array), got "
                        f"{type(value).__name__}") from None
    if score.shape != (dim,):
        raise ValueError(f"{name} must return [{dim}] finite scores >= 0, got shape {tuple(score.shape)}")
    bad = torch.nonzero(~(torch.isfinite(score) & (score >= 0))).reshape(-1)
    if len(bad):
        first = int(bad[0])
        raise ValueError(f"{name} must return [{dim}] finite scores >= 0, got {len(bad)} negative or not finite: "
                         f"score[{first}] = {float(score[first])}")
    return score


class SubspaceSearch(abc.ABC):
    """One run's search of ``dim`` inputs with a model of at most ``width``.

    Attributes:
        dim: ``D``, the inputs of the problem.
        search_dim: the dimension of the cube the initial design and the trust region live
            in (``d_e`` for an embedding, ``D`` for a coordinate subspace); design points
            ``[k, search_dim]`` reach the problem through :meth:`lift`.
        active_dim: the inputs one proposal moves, which the trust region's failure
            tolerance counts (TuRBO's ``max(4, d)``, ``d`` these).
    """

    dim: int
    search_dim: int
    active_dim: int

    @abc.abstractmethod
    def lift(self, Z: torch.Tensor) -> torch.Tensor:
        """Points ``[k, search_dim]`` of the search cube -> ``[k, dim]`` in the unit cube."""

    @abc.abstractmethod
    def project(self, X: torch.Tensor) -> torch.Tensor:
        """Points ``[n, dim]`` -> ``[n, search_dim]``, the inverse of :meth:`lift` on its image."""

    @abc.abstractmethod
    def propose(self, region: SearchRegion | None, X: torch.Tensor, Y: torch.Tensor, build_model, acquisition: str,
                *, seed: int, pending: torch.Tensor | None = None, avoid_repeats: bool = True,
                liar: str | PendingStrategy = DEFAULT_LIAR,
                snap: Callable[[torch.Tensor], torch.Tensor] | None = None, max_context: int | None = None,
                constraints: int = 0, **settings: Any) -> np.ndarray:
        """The next point ``[dim]`` (``[q, dim]`` for ``"qlognei"``) in the unit cube from the
        observations ``X [n, dim]``, ``Y [n, 1]`` (maximised), as :func:`propose_in_region`
        makes it: ``region`` (of dimension :attr:`search_dim`, or ``None``: the whole cube),
        ``build_model(X_seen [m, <= width], Y_seen [m, 1])``, ``pending [p, dim]``, ``snap``
        (on ``[k, dim]`` points), ``max_context`` (with a region: at most that many seen
        observations, those nearest the incumbent), ``constraints`` (``Y`` then
        ``[n, 1 + constraints]``, the incumbent the best feasible observation) and ``settings``
        as there."""

    def recommend(self, region: SearchRegion | None, X: torch.Tensor, Y: torch.Tensor, build_model, *,
                  n_observed: int, seed: int, max_context: int | None = None,
                  constraints: int = 0,
                  snap: Callable[[torch.Tensor], torch.Tensor] | None = None) -> tuple[int, float] | None:
        """The model's recommendation (:mod:`npbandit.acquisition.recommend`): of the first
        ``n_observed`` rows of ``X [n, dim]`` (the evaluated points; ``Y [n, 1 + constraints]``
        maximised, as :meth:`propose`'s), among those the model of a proposal made with
        ``seed`` (and ``snap``, as :meth:`propose`'s) sees (as :meth:`propose` builds it), the
        row where its posterior mean is highest (of those it predicts feasible, with ``constraints``), and that mean;
        ``None``: this search makes no recommendation (the default), or there is none."""
        return None

    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """The values this search runs with (JSON-serialisable; logged with the run)."""


class SubspaceStrategy(abc.ABC):
    """How to search ``D`` inputs with a model narrower than ``D`` (see the module)."""

    name: str

    @abc.abstractmethod
    def bind(self, dim: int, width: int, seed: int) -> SubspaceSearch:
        """The search of ``dim`` inputs with a model of at most ``width`` inputs, its random
        choices fixed by ``seed`` (an int >= 0)."""

    def n_init(self, dim: int, width: int) -> int:
        """The default initial design: ``2 d_e + 1`` points (``d_e`` the subspace's size), so
        that a budget of 100 is not spent on a design of ``2 D + 1`` points at ``D = 60``."""
        return 2 * self._d_e(dim, width) + 1

    def _d_e(self, dim: int, width: int) -> int:
        d_e = getattr(self, "d_e", None)
        return min(dim, width if d_e is None else min(d_e, width))


class CountSketchSearch(SubspaceSearch):
    """A count-sketch embedding of ``[0, 1]^d_e`` in ``[0, 1]^D``.

    Args:
        bins: ``[D]`` the target coordinate (``0 .. d_e - 1``) of each input.
        signs: ``[D]`` ``+1`` or ``-1``: input ``i`` is ``z[bins[i]]`` or ``1 - z[bins[i]]``.
        d_e: the embedding's dimension (every bin non-empty).
    """

    def __init__(self, bins: torch.Tensor, signs: torch.Tensor, d_e: int) -> None:
        self.bins, self.signs = torch.as_tensor(bins, dtype=torch.long), torch.as_tensor(signs, dtype=torch.float64)
        if self.bins.ndim != 1 or self.signs.shape != self.bins.shape:
            raise ValueError("bins and signs must be [D] each")
        if not ((self.signs == 1) | (self.signs == -1)).all():
            raise ValueError("signs must be +1 or -1")
        if self.bins.min() < 0 or self.bins.max() >= d_e or len(set(self.bins.tolist())) != d_e:
            raise ValueError(f"bins must use every target coordinate 0..{d_e - 1}")
        self.dim, self.search_dim = len(self.bins), d_e
        self.active_dim = d_e
        self._counts = torch.bincount(self.bins, minlength=d_e).to(torch.float64)

    def lift(self, Z: torch.Tensor) -> torch.Tensor:
        Z = as_rows(Z, self.search_dim, "Z")
        z = Z[:, self.bins]  # [k, D]
        return torch.where(self.signs > 0, z, 1.0 - z)

    def project(self, X: torch.Tensor) -> torch.Tensor:
        """The least-squares ``z`` of ``X [n, D]`` (each bin's sign-corrected inputs averaged):
        exact for points in the embedding, the nearest embedded point's ``z`` for others."""
        X = as_rows(X, self.dim, "X")
        signed = torch.where(self.signs > 0, X, 1.0 - X)  # [n, D]
        Z = torch.zeros(len(X), self.search_dim, dtype=torch.float64).index_add_(1, self.bins, signed)
        return Z / self._counts

    def propose(self, region, X, Y, build_model, acquisition, *, seed, pending=None, avoid_repeats=True,
                liar=DEFAULT_LIAR, snap=None, max_context=None, constraints=0, **settings):
        return propose_embedded(self, region, self.project(X), Y, build_model, acquisition, seed=seed,
                                pending=None if pending is None else self.project(pending),
                                avoid_repeats=avoid_repeats, liar=liar, snap=snap, max_context=max_context,
                                constraints=constraints, **settings)

    def recommend(self, region, X, Y, build_model, *, n_observed, seed, max_context=None, constraints=0, snap=None):
        """In the embedding, as :meth:`propose` sees the observations: exact ``(z, y)`` pairs."""
        return recommend_in_box(region, self.project(X), Y, build_model, n_observed=n_observed,
                                max_context=max_context, constraints=constraints)

    def params(self) -> dict[str, Any]:
        return {"subspace": "count-sketch", "subspace_d_e": self.search_dim}


def deal(dim: int, d_e: int, rng: np.random.Generator,
         leaders: np.ndarray | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A count sketch's random assignment of ``dim`` inputs to ``d_e`` balanced bins (sizes
    differ by at most one): the bins ``[dim]`` (long, ``0 .. d_e - 1``) and the signs ``[dim]``
    (float64, ``+1`` or ``-1``), drawn from ``rng``.

    ``leaders`` (at most ``d_e`` distinct inputs) each lead a different bin (which bin, drawn);
    the other inputs fill the bins at random, balanced as without leaders. ``None`` or empty:
    every input dealt at random.

    Raises:
        ValueError: ``leaders`` more than ``d_e``, repeated, or not inputs ``0 .. dim - 1``.
    """
    bins = np.empty(dim, dtype=np.int64)
    if leaders is None or len(leaders) == 0:
        bins[rng.permutation(dim)] = np.arange(dim) % d_e
    else:
        leaders = np.asarray(leaders, dtype=np.int64).reshape(-1)
        if (len(leaders) > d_e or len(np.unique(leaders)) != len(leaders)
                or leaders.min() < 0 or leaders.max() >= dim):
            raise ValueError(f"leaders must be at most {d_e} distinct inputs in 0 .. {dim - 1}, got {leaders.tolist()}")
        others = np.setdiff1d(np.arange(dim), leaders)
        bins[np.concatenate([rng.permutation(leaders), rng.permutation(others)])] = np.arange(dim) % d_e
    signs = rng.choice([-1.0, 1.0], size=dim)
    return torch.from_numpy(bins), torch.from_numpy(signs)


def propose_embedded(embedding, region: SearchRegion | None, Z: torch.Tensor, Y: torch.Tensor, build_model,
                     acquisition: str, *, seed: int, pending: torch.Tensor | None = None,
                     avoid_repeats: bool = True, liar: str | PendingStrategy = DEFAULT_LIAR,
                     snap: Callable[[torch.Tensor], torch.Tensor] | None = None, max_context: int | None = None,
                     constraints: int = 0, space: Any = None, **settings: Any) -> np.ndarray:
    """The next point ``[D]`` (``[q, D]`` for ``"qlognei"``) of a search in an embedding of
    ``[0, 1]^d_e`` in ``[0, 1]^D``: ``embedding`` has ``lift`` (``[k, d_e] -> [k, D]``),
    ``project`` (``[k, D] -> [k, d_e]``) and ``search_dim`` (``d_e``); the model sees the
    observations ``Z [n, d_e]``, ``Y [n, 1 + constraints]`` (and ``pending [p, d_e]``) in the
    embedded cube, where the proposal is made (in ``region``, :func:`propose_in_region`;
    ``None``: :func:`propose` on the whole cube) and lifted. ``snap`` (on ``[k, D]`` points) is
    seen in the embedding as ``project(snap(lift(z)))``; or ``space``, a
    :class:`~npbandit.space.SearchSpace` whose cube the embedded cube is (its own snap and
    discrete moves, :func:`propose`'s ``space``), instead of ``snap``; the other arguments as
    :meth:`SubspaceSearch.propose`'s. What :class:`CountSketchSearch` proposes with."""
    embedded_snap = None
    if snap is not None:  # the grid in D, seen in the embedding
        def embedded_snap(points: torch.Tensor) -> torch.Tensor:
            return embedding.project(snap(embedding.lift(points)))

    if region is not None:
        z = propose_in_region(region, Z, Y, build_model, acquisition, seed=seed, pending=pending,
                              avoid_repeats=avoid_repeats, liar=liar, snap=embedded_snap, space=space,
                              max_context=max_context, constraints=constraints, **settings)
    else:
        strategy = pending_strategy(liar)
        z = propose(build_model(Z, Y), acquisition, dim=embedding.search_dim,
                    best_f=None if constraints else Y.max(), seed=seed, pending=pending,
                    pending_strategy=strategy, outputs=Y, observed=Z if avoid_repeats else None,
                    snap=embedded_snap, space=space, constraints=constraints, **settings)
    points = embedding.lift(torch.as_tensor(z).reshape(-1, embedding.search_dim)).numpy()
    return points[0] if np.ndim(z) == 1 else points


class CountSketch(SubspaceStrategy):
    """HeSBO's count-sketch embedding (BAxUS's, without its growth): ``D`` inputs in
    ``d_e`` balanced bins (sizes differ by at most one), each input with a random sign;
    the search runs in ``[0, 1]^d_e`` (see the module).

    Args:
        d_e: the embedding's dimension; ``None`` (default): the model's width (capped at ``D``).
    """

    name = "count-sketch"

    def __init__(self, d_e: int | None = None) -> None:
        self.d_e = check_d_e(d_e)

    def bind(self, dim: int, width: int, seed: int) -> CountSketchSearch:
        check_bind(dim, width, seed)
        d_e = self._d_e(dim, width)
        bins, signs = deal(dim, d_e, np.random.default_rng([int(seed), dim, d_e]))
        return CountSketchSearch(bins, signs, d_e)

    def __repr__(self) -> str:
        return f"CountSketch(d_e={self.d_e})"


@dataclass(frozen=True)
class _CoordinateView:
    """What the model of one :class:`CoordinateSearch` proposal sees: the observations ``X``
    ``[m, D]`` (``Y`` ``[m, 1]``; ``rows`` ``[m]`` their rows among those given) inside the
    box ``seen_lower .. seen_upper`` around ``center``, reduced to the chosen ``coords``; the
    box searched is ``lower .. upper``, the other (``held``) inputs stay at ``center``'s."""

    center: torch.Tensor
    lower: torch.Tensor
    upper: torch.Tensor
    seen_lower: torch.Tensor
    seen_upper: torch.Tensor
    coords: torch.Tensor
    held: torch.Tensor
    X: torch.Tensor
    Y: torch.Tensor
    rows: torch.Tensor

    @property
    def span(self) -> torch.Tensor:
        return (self.seen_upper - self.seen_lower)[self.coords]

    def to_model(self, points: torch.Tensor) -> torch.Tensor:
        """``[k, D]`` -> the model's inputs ``[k, d_e]``."""
        return (points[:, self.coords] - self.seen_lower[self.coords]) / self.span

    def to_full(self, points: torch.Tensor) -> torch.Tensor:
        """The model's inputs ``[k, d_e]`` -> ``[k, D]``, the held inputs at the incumbent's."""
        full = self.center.expand(len(points), len(self.center)).clone()
        full[:, self.coords] = self.seen_lower[self.coords] + points * self.span
        return full

    def at_center(self) -> torch.Tensor:
        """``[m]`` whether each seen point's held inputs are the incumbent's: only those can
        coincide with a proposal (a repeat is a point equal in every input)."""
        return (self.X[:, self.held] - self.center[self.held]).norm(dim=-1) < REPEAT_DISTANCE


class CoordinateSearch(SubspaceSearch):
    """A full-space trust region whose proposals move ``d_e`` chosen coordinates.

    Args:
        dim: ``D``.
        d_e: coordinates per proposal (at most the model's width).
        relevance: the share of the choice made by relevance (0: uniform, 1: by the
            estimate alone; see :meth:`coordinate_weights`).
        seed: the run's seed; a proposal's coordinates are drawn from ``(seed, proposal seed)``.
        scores: the relevance estimate, one of :data:`COORDINATE_SCORES` or a function
            ``(X [n, D], Y [n, 1]) -> [D]`` scores ``>= 0`` of every observation.
    """

    def __init__(self, dim: int, d_e: int, relevance: float, seed: int,
                 scores: str | Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = "bowl") -> None:
        self.dim, self.search_dim, self.active_dim = dim, dim, d_e
        self.relevance, self.seed, self.scores = relevance, int(seed), scores

    def lift(self, Z: torch.Tensor) -> torch.Tensor:
        return as_rows(Z, self.dim, "Z")

    def project(self, X: torch.Tensor) -> torch.Tensor:
        return as_rows(X, self.dim, "X")

    def coordinate_weights(self, X: torch.Tensor, Y: torch.Tensor, center: torch.Tensor) -> torch.Tensor:
        """Probabilities ``[D]`` of choosing each coordinate: ``relevance`` times a relevance
        estimate plus ``1 - relevance`` uniform. The estimate, normalised to sum 1, is for
        ``scores="bowl"`` :func:`npbandit.models.columns.relevance` of ``X [m, D]``, ``Y [m, 1]``
        with the bowl around the incumbent ``center`` (a proposal hands it the seen points),
        for a function its scores of ``X``, ``Y`` (a proposal hands it every observation);
        uniform with fewer than three points or no signal.

        Raises:
            TypeError / ValueError: a scores function that returns other than ``[D]`` finite
                scores ``>= 0`` (:func:`checked_scores`).
        """
        uniform = torch.full((self.dim,), 1.0 / self.dim, dtype=torch.float64)
        if self.relevance == 0:
            return uniform
        Y = Y[:, :1]  # the objective's column (constraint values follow it)
        if self.scores == "bowl":
            score = relevance(X, Y, center)
        else:
            score = checked_scores("scores", self.scores(X, Y), self.dim)
        if not float(score.sum()) > 0:
            return uniform
        return self.relevance * score / score.sum() + (1.0 - self.relevance) * uniform

    def coordinates(self, X: torch.Tensor, Y: torch.Tensor, center: torch.Tensor, seed: int) -> torch.Tensor:
        """The ``d_e`` coordinates ``[d_e]`` (sorted) one proposal moves: drawn without
        replacement with :meth:`coordinate_weights` (Gumbel top-k), from ``(run seed, seed)``."""
        weights = self.coordinate_weights(X, Y, center)
        rng = np.random.default_rng([self.seed, int(seed)])
        gumbel = -np.log(-np.log(rng.random(self.dim)))
        keys = np.log(np.maximum(weights.numpy(), 1e-300)) + gumbel
        return torch.from_numpy(np.sort(np.argsort(-keys, kind="stable")[:self.active_dim]))

    def _view(self, region: SearchRegion | None, X: torch.Tensor, Y: torch.Tensor, max_context: int | None,
              seed: int, constraints: int = 0, snap: Callable[[torch.Tensor], torch.Tensor] | None = None
              ) -> _CoordinateView:
        """What the model of a proposal made with ``seed`` sees of ``X [n, D]``, ``Y [n, 1 + constraints]``:
        in a ``region``, the box and the observations :func:`~npbandit.acquisition.proposal.region_view`
        shows a plain proposal's model (the observations kept in their ``D`` inputs); with a mixed
        space's ``snap``, both boxes widened on its discrete parameters' columns to reach every
        value one move from the incumbent's, as :func:`propose_in_region` widens them
        (:meth:`~npbandit.acquisition.mixed.TypedCube.reaching_one_move`)."""
        X = as_rows(X, self.dim, "X")
        if region is None:
            center = X[incumbent(Y, constraints)]
            lower = seen_lower = torch.zeros(self.dim, dtype=torch.float64)
            upper = seen_upper = torch.ones(self.dim, dtype=torch.float64)
            rows = torch.nonzero(((X >= seen_lower) & (X <= seen_upper)).all(dim=-1)).reshape(-1)
        else:  # the model's cube and the observations in it: a plain proposal's (region_view)
            cube = typed_cube(None, snap, self.dim)
            cube = None if cube is None or cube.continuous else cube
            seen = region_view(region, X, Y, max_context, cube=cube, constraints=constraints)
            center, seen_lower, seen_upper, rows = seen.center, seen.lower, seen.upper, seen.rows
            lower, upper = searched_box(region, center, cube)
        X_seen, Y_seen = X[rows], Y[rows]
        if self.scores == "bowl":  # local: the region's points, around the incumbent
            coords = self.coordinates(X_seen, Y_seen, center, seed)
        else:  # global: every observation
            coords = self.coordinates(X, Y, center, seed)
        held = torch.ones(self.dim, dtype=torch.bool)
        held[coords] = False
        view = _CoordinateView(center, lower, upper, seen_lower, seen_upper, coords, held, X_seen, Y_seen, rows)
        return view

    def propose(self, region, X, Y, build_model, acquisition, *, seed, pending=None, avoid_repeats=True,
                liar=DEFAULT_LIAR, snap=None, max_context=None, constraints=0, **settings):
        strategy = pending_strategy(liar)
        view = self._view(region, X, Y, max_context, seed, constraints, snap)
        Z = view.to_model(view.X)
        observed = Z[view.at_center()] if avoid_repeats else None
        if pending is not None:
            pending = as_rows(pending, self.dim, "pending")
            pending = view.to_model(pending[((pending >= view.seen_lower) & (pending <= view.seen_upper)).all(dim=-1)])
        coords, span = view.coords, view.span
        bounds = torch.stack([(view.lower[coords] - view.seen_lower[coords]) / span,
                              (view.upper[coords] - view.seen_lower[coords]) / span]).clamp(0.0, 1.0)
        local_snap = None
        if snap is not None:
            def local_snap(points: torch.Tensor) -> torch.Tensor:
                return view.to_model(snap(view.to_full(points)))

        z = propose(build_model(Z, view.Y), acquisition, dim=self.active_dim,
                    best_f=None if constraints else view.Y.max(), seed=seed, pending=pending,
                    pending_strategy=strategy, outputs=view.Y, observed=observed, bounds=bounds,
                    snap=local_snap, constraints=constraints, **settings)
        points = torch.minimum(torch.maximum(view.to_full(torch.as_tensor(z).reshape(-1, self.active_dim)),
                                             view.lower), view.upper)
        return points[0].numpy() if np.ndim(z) == 1 else points.numpy()

    def recommend(self, region, X, Y, build_model, *, n_observed, seed, max_context=None, constraints=0, snap=None):
        """Of the evaluated points the model of a proposal made with ``seed`` sees, those whose
        held inputs are the incumbent's: the only ones its ``d_e`` inputs tell apart from the
        point the model's input stands for (the others differ in inputs it does not see)."""
        view = self._view(region, X, Y, max_context, seed, constraints, snap)
        Z = view.to_model(view.X)
        among = torch.nonzero(view.at_center() & (view.rows < n_observed)).reshape(-1)
        return best_mean(build_model(Z, view.Y), Z, among, view.rows[among], constraints)

    def params(self) -> dict[str, Any]:
        scores = self.scores if isinstance(self.scores, str) else getattr(self.scores, "__name__", repr(self.scores))
        return {"subspace": "coordinates", "subspace_d_e": self.active_dim, "subspace_relevance": self.relevance,
                "subspace_scores": scores}


class CoordinateSubspace(SubspaceStrategy):
    """A trust region in the full cube whose proposals move ``d_e`` coordinates, the model
    fitted on those (see the module and :class:`CoordinateSearch`).

    Args:
        d_e: coordinates per proposal; ``None`` (default): the model's width (capped at ``D``).
        relevance: in ``[0, 1]``, the share of the choice of coordinates made by a relevance
            estimate (:meth:`CoordinateSearch.coordinate_weights`); 0 (default): uniformly
            at random.
        scores: the relevance estimate: ``"bowl"`` (default; a trend or a bowl around the
            incumbent among the region's points) or a function ``(X [n, D], Y [n, 1]) -> [D]``
            scores ``>= 0`` of every observation (the objective maximised in ``Y``), called
            at each proposal; a function needs ``relevance > 0``, the share of the choice it
            makes (at 0 it would never be called).

    Raises:
        ValueError: ``relevance`` not in ``[0, 1]``, ``scores`` neither a name nor a
            function, or a ``scores`` function with ``relevance=0``.
    """

    name = "coordinates"

    def __init__(self, d_e: int | None = None, relevance: float = 0.0,
                 scores: str | Callable[[torch.Tensor, torch.Tensor], torch.Tensor] = "bowl") -> None:
        self.d_e = check_d_e(d_e)
        if isinstance(relevance, bool) or not isinstance(relevance, (int, float)) or not 0 <= relevance <= 1:
            raise ValueError(f"relevance must be a number in [0, 1], got {relevance!r}")
        if not (callable(scores) or (isinstance(scores, str) and scores in COORDINATE_SCORES)):
            raise ValueError(f"scores must be one of {list(COORDINATE_SCORES)} or a function (X, Y) -> [D] scores, "
                             f"got {scores!r}")
        if callable(scores) and relevance == 0:  # the estimate would never be read, yet logged as the run's
            raise ValueError(f"scores={getattr(scores, '__name__', scores)!r} is read only with relevance > 0 (the "
                             f"share of the choice of coordinates it makes); with relevance=0 the coordinates are "
                             f"drawn uniformly and it is never called: give relevance in (0, 1]")
        self.relevance, self.scores = float(relevance), scores

    def bind(self, dim: int, width: int, seed: int) -> CoordinateSearch:
        check_bind(dim, width, seed)
        return CoordinateSearch(dim, self._d_e(dim, width), self.relevance, seed, self.scores)

    def __repr__(self) -> str:
        return f"CoordinateSubspace(d_e={self.d_e}, relevance={self.relevance}, scores={self.scores!r})"


def check_subspace(subspace: Any) -> SubspaceStrategy | None:
    """``subspace`` if it is ``None`` or a :class:`SubspaceStrategy`; else ``TypeError``."""
    if subspace is not None and not isinstance(subspace, SubspaceStrategy):
        raise TypeError(f"subspace must be a SubspaceStrategy (RedealtSketch(), CountSketch(), IndexedChoices(space), "
                        f"CoordinateSubspace()) or None, got "
                        f"{type(subspace).__name__}")
    return subspace


def bind_search(strategy: SubspaceStrategy, dim: int, width: int, seed: int) -> SubspaceSearch:
    """``strategy.bind(dim, width, seed)``, checked: a :class:`SubspaceSearch` of ``dim``
    inputs whose ``search_dim`` and ``active_dim`` are positive ints. What every caller of
    ``bind`` uses, so that a strategy of one's own returning something else is refused where
    it is bound, naming it, not later on a missing attribute.

    Raises:
        TypeError: ``bind`` returned no :class:`SubspaceSearch`.
        ValueError: its ``dim`` is not ``dim``, or ``search_dim`` / ``active_dim`` no positive int.
    """
    search = strategy.bind(dim, width, seed)
    who = f"subspace: {type(strategy).__name__}.bind({dim}, {width}, seed)"
    if not isinstance(search, SubspaceSearch):
        raise TypeError(f"{who} must return a SubspaceSearch (npbandit.acquisition.subspace), got "
                        f"{type(search).__name__}")
    for attr in ("dim", "search_dim", "active_dim"):
        value = getattr(search, attr, None)
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1 or (
                attr == "dim" and value != dim):
            wanted = f"{dim}, the problem's inputs" if attr == "dim" else "a positive int"
            raise ValueError(f"{who} returned a {type(search).__name__} whose {attr} is {value!r}, not {wanted} "
                             "(a search sets dim, search_dim and active_dim)")
    return search
