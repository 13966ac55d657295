"""A count sketch re-dealt around the incumbent: a width-``d_e`` search of ``D`` inputs whose
slice moves through the best point found.

:class:`~npbandit.acquisition.subspace.CountSketch` fixes one random ``d_e``-dimensional slice
of ``[0, 1]^D`` for the whole run; when the optimum is not on it (two active inputs dealt to
one bin), no amount of search on it reaches the optimum. :class:`RedealtSketch` searches in
phases, a phase being a function of the history (by default, of the number of observations
``n`` alone):

- phase 0 (``n < phase_start``) is exactly ``CountSketch(d_e)``'s search with the same seed:
  input ``i`` is ``z[bin i]`` or ``1 - z[bin i]`` (its sign);
- phase ``k >= 1`` (from ``n = phase_start + (k - 1) phase_length`` on, one phase per
  ``phase_length`` observations) deals the inputs into new balanced bins with new signs
  (drawn from the run's seed and ``k``), anchored at ``x*``, the best of the first
  ``phase_start + (k - 1) phase_length`` observations (the incumbent when the phase began):
  input ``i`` follows its bin's ``z`` through the monotone piecewise-linear map of ``[0, 1]``
  onto ``[0, 1]`` with ``0 -> 0``, ``0.5 -> x*_i``, ``1 -> 1`` (``1 - z`` for sign ``-1``).
  The phase's slice passes through ``x*`` (at ``z = 0.5`` in every coordinate), reaches
  every input's whole range, and the inputs of one bin move together, each monotonically.

When phases begin is an injected :class:`PhaseSchedule` (``RedealtSketch(schedule=...)``, a
callable ``(phase_start, phase_length) -> PhaseSchedule``): from the rows ``Y`` it says the
numbers of observations at which the phases so far began, and whether a phase may be led (by
the relevance, below). The default, :class:`FixedPhases`, is the schedule above: a phase at
``phase_start`` and every ``phase_length`` observations after, each one led. Another schedule
(one that keeps a slice while it still yields gains, or that adds phases before
``phase_start``) changes only where phases begin: phase ``k`` is the ``k``-th start the
schedule names, dealt from ``(seed, D, d_e, k)`` and anchored at the incumbent of the
observations before that start (in what follows, "the first ``phase_start + (k - 1)
phase_length`` observations" reads "the observations before that start").

Relevance-dealt phases (``RedealtSketch(relevance=...)``): a function ``(X [n, D], Y [n, 1])
-> [D]`` scores ``>= 0`` is handed the first ``phase_start + (k - 1) phase_length`` rows of
``X`` and of ``Y``'s objective column (every observation before the phase began, whatever
slice it lay on); the ``d_e`` inputs of highest positive score (ties: the lower index) each
lead a different bin of phase ``k``, the other inputs dealt at random as without one
(:func:`~npbandit.acquisition.subspace.deal` with ``leaders``; bins and signs still drawn from
``(seed, D, d_e, k)``). Inputs scored 0 lead no bin; with no positive score, or in a phase
the schedule does not lead (:meth:`PhaseSchedule.led`), the phase is dealt as without a
relevance. Phase 0 is unchanged. The scores are a function of those rows, so the
search stays a function of its seed and its history; the search keeps the last phase's leaders
to hand back while the same rows begin the phase (one call of the function per phase in a run
that binds once).

What the model sees: in phase ``k >= 1``, only the evaluated points on that phase's slice, as
exact ``(z, y)`` pairs (a point ``x`` whose ``lift(project(x))`` is ``x`` within
:data:`SLICE_TOLERANCE`; with a ``snap``, also one that is the snap of its slice point):
the anchor (at ``z = 0.5``) and the points the phase proposed. Points of earlier phases lie
off the slice and are not shown to it (a projection of them would pair a ``y`` with a point
it was not measured at); neither are pending points off the slice. A phase therefore starts
from one point, the anchor.

The trust region (``BOPolicy``'s, or the one ``NPSampler`` replays) lives in the embedded
cube ``[0, 1]^d_e`` and is not told of phases: its side carries over a phase change
(TuRBO's counters count proposals whichever slice they lie on), and its centre, the best
point the model sees, is the anchor at ``z = 0.5`` when a phase begins (by construction), then
the best point found on the phase's slice. So a new phase searches new directions through
the incumbent at the scale the region had reached, instead of starting a global search
again. The initial design lives in the embedded cube and reaches the problem through
:meth:`RedealtSketchSearch.lift`, phase 0's map (``phase_start`` should be at least the
design's size, or design points after it lie off the later slice).

The search is a function of its seed and of the history it is handed, never of what it did
before: the phase is read from the rows of ``Y`` (by :class:`FixedPhases`, from their number:
every evaluation so far, failed ones included), the anchor from ``X`` and ``Y``; a schedule
must be such a function too. ``BOPolicy`` and ``NPSampler`` hand the rows
in the order they were evaluated, so the rows before a phase began stay the first ones.
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.constrained import incumbent
from npbandit.acquisition.pending import DEFAULT_LIAR
from npbandit.acquisition.recommend import recommend_in_box
from npbandit.acquisition.subspace import (
    CountSketch,
    CountSketchSearch,
    SubspaceSearch,
    SubspaceStrategy,
    as_rows,
    check_bind,
    check_d_e,
    checked_scores,
    deal,
    propose_embedded,
)
from npbandit.validation import check_int

__all__ = ["RedealtSketch", "RedealtSketchSearch", "AnchoredSketch", "PhaseSchedule", "FixedPhases",
           "SLICE_TOLERANCE"]

#: the largest difference in any input between a point and its slice point
#: (``lift(project(x))``) for the point to count as on the slice
SLICE_TOLERANCE = 1e-9


class PhaseSchedule(abc.ABC):
    """When the phases of a :class:`RedealtSketch` run begin (see the module): what a schedule
    passed as ``RedealtSketch(schedule=...)`` implements. It must be a function of the rows it
    is handed (the search keeps no state between proposals), and the start of a phase must not
    depend on rows after it (``starts(Y[:m])`` is the part of ``starts(Y)`` that is ``<= m``),
    so that a phase keeps its slice as observations arrive."""

    @abc.abstractmethod
    def starts(self, Y: torch.Tensor, constraints: int = 0) -> list[int]:
        """The numbers of observations at which the phases so far began, phase ``k`` at entry
        ``k - 1``: ascending ints in ``1 .. n``, given the rows ``Y [n, 1 + constraints]``
        (maximised, feasible at constraint values ``<= 0``) in evaluation order. Empty: the
        run is still in phase 0."""

    def led(self, start: int) -> bool:
        """Whether the phase that began at ``start`` observations has its bins led by the
        search's relevance (when it has one); every phase by default."""
        return True

    @abc.abstractmethod
    def params(self) -> dict[str, Any]:
        """The values this schedule runs with, as flat ``subspace_<setting>`` keys (JSON
        values; logged with the run)."""


class FixedPhases(PhaseSchedule):
    """The default schedule: a phase begins at ``phase_start`` observations and every
    ``phase_length`` after, whatever the values; every phase led.

    Raises:
        ValueError: ``phase_start`` or ``phase_length`` not a positive int.
    """

    def __init__(self, phase_start: int, phase_length: int) -> None:
        self.phase_start = check_int("phase_start", phase_start, minimum=1)
        self.phase_length = check_int("phase_length", phase_length, minimum=1)

    def starts(self, Y: torch.Tensor, constraints: int = 0) -> list[int]:
        """``phase_start + j phase_length`` for every ``j >= 0`` at most ``n = len(Y)``."""
        return list(range(self.phase_start, len(Y) + 1, self.phase_length))

    def params(self) -> dict[str, Any]:
        return {"subspace_phase_start": self.phase_start, "subspace_phase_length": self.phase_length}

    def __repr__(self) -> str:
        return f"FixedPhases(phase_start={self.phase_start}, phase_length={self.phase_length})"


def build_schedule(schedule: Callable[[int, int], PhaseSchedule], phase_start: int, phase_length: int) -> PhaseSchedule:
    """``schedule(phase_start, phase_length)``, checked to be a :class:`PhaseSchedule`.

    Raises:
        TypeError: ``schedule`` not callable, or what it returns not a :class:`PhaseSchedule`.
    """
    if not callable(schedule):
        raise TypeError(f"schedule must be a callable (phase_start, phase_length) -> PhaseSchedule, got {schedule!r}")
    built = schedule(phase_start, phase_length)
    if not isinstance(built, PhaseSchedule):
        raise TypeError(f"schedule must return a PhaseSchedule (starts, led, params), got {built!r}")
    return built


class AnchoredSketch:
    """A count sketch of ``[0, 1]^d_e`` in ``[0, 1]^D`` through ``anchor``: input ``i`` is
    ``m_i(z[bins[i]])`` (sign ``+1``) or ``m_i(1 - z[bins[i]])`` (sign ``-1``), where ``m_i``
    maps ``[0, 0.5]`` linearly onto ``[0, anchor_i]`` and ``[0.5, 1]`` onto ``[anchor_i, 1]``.

    Args:
        bins: ``[D]`` the target coordinate (``0 .. d_e - 1``) of each input.
        signs: ``[D]`` ``+1`` or ``-1``.
        anchor: ``[D]`` in ``[0, 1]``, the point at ``z = 0.5``.
        d_e: the embedding's dimension (every bin non-empty).
    """

    def __init__(self, bins: torch.Tensor, signs: torch.Tensor, anchor: torch.Tensor, d_e: int) -> None:
        self._sketch = CountSketchSearch(bins, signs, d_e)  # checks bins and signs
        self.bins, self.signs = self._sketch.bins, self._sketch.signs
        self.anchor = torch.as_tensor(anchor, dtype=torch.float64)
        if self.anchor.shape != self.bins.shape or not ((self.anchor >= 0) & (self.anchor <= 1)).all():
            raise ValueError(f"anchor must be [{len(self.bins)}] in [0, 1], got shape {tuple(self.anchor.shape)}")
        self.dim, self.search_dim = len(self.bins), d_e

    def lift(self, Z: torch.Tensor) -> torch.Tensor:
        """Points ``[k, d_e]`` -> ``[k, D]``."""
        U = self._sketch.lift(Z)  # z or 1 - z per input: where in [0, 1] its map is read
        a = self.anchor
        return torch.where(U <= 0.5, 2.0 * U * a, a + (2.0 * U - 1.0) * (1.0 - a))

    def project(self, X: torch.Tensor) -> torch.Tensor:
        """Points ``[n, D]`` -> ``[n, d_e]``: per bin, the mean of its inputs' ``z`` (each
        input's map inverted, the sign undone); an input at a flat end of its map (anchor 0
        and ``x = 0``, or anchor 1 and ``x = 1``) says nothing and is left out, a bin of such
        inputs only at ``0.5``. Exact for points on the slice; for others a point whose lift
        need not be near them (see :meth:`on_slice`)."""
        X = as_rows(X, self.dim, "X")
        a = self.anchor.expand_as(X)
        flat = ((a == 0) & (X <= 0)) | ((a == 1) & (X >= 1))
        lower = X <= a
        U = torch.where(lower, X / torch.where(lower & (a > 0), 2.0 * a, 1.0),
                        0.5 + (X - a) / torch.where(~lower & (a < 1), 2.0 * (1.0 - a), 1.0))
        U = torch.where(flat, 0.5, U).clamp(0.0, 1.0)
        z = torch.where(self.signs > 0, U, 1.0 - U)
        weight = (~flat).to(torch.float64)
        total = torch.zeros(len(X), self.search_dim, dtype=torch.float64).index_add_(1, self.bins, z * weight)
        count = torch.zeros(len(X), self.search_dim, dtype=torch.float64).index_add_(1, self.bins, weight)
        return torch.where(count > 0, total / count.clamp_min(1.0), 0.5)

    def on_slice(self, X: torch.Tensor,
                 snap: Callable[[torch.Tensor], torch.Tensor] | None = None) -> torch.Tensor:
        """``[n]`` whether each row of ``X [n, D]`` is on the slice (its slice point
        ``lift(project(x))`` equal to it within :data:`SLICE_TOLERANCE` in every input), or,
        with ``snap`` (on ``[k, D]`` points), the snap of its slice point."""
        X = as_rows(X, self.dim, "X")
        if len(X) == 0:
            return torch.zeros(0, dtype=torch.bool)
        lifted = self.lift(self.project(X))
        on = (lifted - X).abs().amax(dim=-1) <= SLICE_TOLERANCE
        if snap is not None:
            on |= (torch.as_tensor(snap(lifted), dtype=torch.float64) - X).abs().amax(dim=-1) <= SLICE_TOLERANCE
        return on


class RedealtSketchSearch(SubspaceSearch):
    """One run's search of :class:`RedealtSketch` (see the module).

    Args:
        first: phase 0's count sketch (``CountSketch(d_e).bind(D, width, seed)``).
        seed: the run's seed; phase ``k``'s bins and signs are drawn from ``(seed, D, d_e, k)``.
        phase_start: observations before phase 1 (of :class:`FixedPhases`).
        phase_length: observations per later phase (of :class:`FixedPhases`).
        relevance: ``None`` (random deals) or a function ``(X [n, D], Y [n, 1]) -> [D]``
            scores ``>= 0`` whose highest-scoring inputs lead the bins (see the module).
        schedule: when phases begin: a callable ``(phase_start, phase_length) ->``
            :class:`PhaseSchedule`, kept built as :attr:`schedule` (default :class:`FixedPhases`).
    """

    def __init__(self, first: CountSketchSearch, seed: int, phase_start: int, phase_length: int,
                 relevance: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
                 schedule: Callable[[int, int], PhaseSchedule] = FixedPhases) -> None:
        self.first, self.seed = first, int(seed)
        self.phase_start, self.phase_length = phase_start, phase_length
        self.relevance = relevance
        self.schedule = build_schedule(schedule, phase_start, phase_length)
        self.dim = self.first.dim
        self.search_dim = self.active_dim = self.first.search_dim
        self._kept: tuple[bytes, np.ndarray] | None = None  # (the rows' bytes, their leaders)

    def lift(self, Z: torch.Tensor) -> torch.Tensor:
        """Phase 0's lift (the initial design's): ``[k, d_e] -> [k, D]``."""
        return self.first.lift(Z)

    def project(self, X: torch.Tensor) -> torch.Tensor:
        """Phase 0's projection: ``[n, D] -> [n, d_e]``."""
        return self.first.project(X)

    def phase_starts(self, Y: torch.Tensor, constraints: int = 0) -> list[int]:
        """The numbers of observations at which the phases so far began, phase ``k`` at entry
        ``k - 1`` (``Y [n, 1 + constraints]``, maximised, in evaluation order): what
        :attr:`schedule` says (:class:`FixedPhases`: the boundaries ``phase_start + j
        phase_length <= n``).

        Raises:
            ValueError: a schedule that names other than ascending ints in ``1 .. n``.
        """
        starts, n = list(self.schedule.starts(Y, constraints)), len(Y)
        if not (all(isinstance(c, int) and not isinstance(c, bool) and 1 <= c <= n for c in starts)
                and all(a < b for a, b in zip(starts, starts[1:]))):
            raise ValueError(f"schedule.starts must return ascending ints in 1 .. {n} (the rows handed), "
                             f"got {starts!r}")
        return starts

    def leaders(self, X: torch.Tensor, Y: torch.Tensor) -> np.ndarray:
        """The inputs that lead a bin given the rows before a phase (``X [n, D]``, ``Y [n, 1]``,
        the objective, maximised): up to ``d_e`` inputs, those of highest positive
        :attr:`relevance` score, highest first (ties: the lower index); empty without a
        relevance.

        Raises:
            TypeError / ValueError: a relevance that returns other than ``[D]`` finite scores
                ``>= 0`` (:func:`~npbandit.acquisition.subspace.checked_scores`).
        """
        if self.relevance is None:
            return np.zeros(0, dtype=np.int64)
        X, Y = as_rows(X, self.dim, "X"), torch.as_tensor(Y, dtype=torch.float64)
        key = X.numpy().tobytes() + b"|" + Y.numpy().tobytes()
        if self._kept is not None and self._kept[0] == key:
            return self._kept[1].copy()
        score = checked_scores("relevance", self.relevance(X.clone(), Y.clone()), self.dim)
        score = score.numpy()
        order = np.argsort(-score, kind="stable")[:self.search_dim]
        found = order[score[order] > 0].astype(np.int64)
        self._kept = (key, found)
        return found.copy()

    def phase_sketch(self, X: torch.Tensor, Y: torch.Tensor, constraints: int = 0) -> AnchoredSketch | None:
        """The slice of the phase ``len(X)`` observations are in (``X [n, D]``, ``Y [n, 1 +
        constraints]``, maximised): ``None`` in phase 0 (:attr:`first`'s), else its
        :class:`AnchoredSketch`, anchored at the best (feasible) of the rows before its
        start, its bins led by their :meth:`leaders` (none in a phase :attr:`schedule` does not
        lead)."""
        X = as_rows(X, self.dim, "X")
        Y = torch.as_tensor(Y, dtype=torch.float64)
        starts = self.phase_starts(Y, constraints)
        if not starts:
            return None
        k, began = len(starts), starts[-1]
        anchor = X[incumbent(Y[:began], constraints)]
        led = self.relevance is not None and self.schedule.led(began)
        leaders = self.leaders(X[:began], Y[:began, :1]) if led else None
        bins, signs = deal(self.dim, self.search_dim, np.random.default_rng([self.seed, self.dim, self.search_dim, k]),
                           leaders)
        return AnchoredSketch(bins, signs, anchor, self.search_dim)

    def propose(self, region, X, Y, build_model, acquisition, *, seed, pending=None, avoid_repeats=True,
                liar=DEFAULT_LIAR, snap=None, max_context=None, constraints=0, **settings):
        """Phase 0: :attr:`first`'s proposal. Later: the proposal in the phase's slice, the
        model seeing only the observations (and pending points) on it (see the module)."""
        sketch = self.phase_sketch(X, Y, constraints)
        if sketch is None:
            return self.first.propose(region, X, Y, build_model, acquisition, seed=seed, pending=pending,
                                      avoid_repeats=avoid_repeats, liar=liar, snap=snap, max_context=max_context,
                                      constraints=constraints, **settings)
        X = as_rows(X, self.dim, "X")
        on = sketch.on_slice(X, snap)
        if pending is not None:
            pending = as_rows(pending, self.dim, "pending")
            pending = pending[sketch.on_slice(pending, snap)]
            pending = sketch.project(pending) if len(pending) else None
        return propose_embedded(sketch, region, sketch.project(X[on]), Y[on], build_model, acquisition, seed=seed,
                                pending=pending, avoid_repeats=avoid_repeats, liar=liar, snap=snap,
                                max_context=max_context, constraints=constraints, **settings)

    def recommend(self, region, X, Y, build_model, *, n_observed, seed, max_context=None, constraints=0, snap=None):
        """As :meth:`propose` sees the observations: in phase 0 :attr:`first`'s, later of the
        evaluated points on the phase's slice."""
        sketch = self.phase_sketch(X, Y, constraints)
        if sketch is None:
            return self.first.recommend(region, X, Y, build_model, n_observed=n_observed, seed=seed,
                                        max_context=max_context, constraints=constraints, snap=snap)
        X = as_rows(X, self.dim, "X")
        rows = torch.nonzero(sketch.on_slice(X, snap)).reshape(-1)
        found = recommend_in_box(region, sketch.project(X[rows]), Y[rows], build_model,
                                 n_observed=int((rows < n_observed).sum()), max_context=max_context,
                                 constraints=constraints)
        return None if found is None else (int(rows[found[0]]), found[1])

    def params(self) -> dict[str, Any]:
        out = {"subspace": "redealt-sketch", "subspace_d_e": self.search_dim, **self.schedule.params()}
        if self.relevance is not None:
            out["subspace_relevance"] = _relevance_name(self.relevance)
        return out


def _relevance_name(relevance: Callable[..., Any]) -> str:
    """A relevance function's name as params report it (its ``__name__``, else its repr)."""
    return getattr(relevance, "__name__", repr(relevance))


class RedealtSketch(SubspaceStrategy):
    """A count sketch searched in phases, each later phase's inputs re-dealt into new bins
    and signs on a slice through the incumbent (see the module).

    Args:
        d_e: the embedding's dimension; ``None`` (default): the model's width (capped at ``D``).
        phase_start: observations before the first re-deal (40); at least the initial design's
            size, for the design to lie on phase 0's slice.
        phase_length: observations per later phase (20).
        relevance: ``None`` (default): every phase dealt at random; or a function
            ``(X [n, D], Y [n, 1]) -> [D]`` scores ``>= 0`` of the observations before a
            phase, whose ``d_e`` highest-scoring inputs each lead a different bin of it
            (deterministic in its arguments for the search to be a function of the history).
        schedule: when phases begin: a callable ``(phase_start, phase_length) ->``
            :class:`PhaseSchedule`, called once here (its checks run then) and kept built as
            :attr:`schedule`; default :class:`FixedPhases`, a phase at ``phase_start`` and
            every ``phase_length`` observations after (see the module).

    Raises:
        ValueError: ``d_e``, ``phase_start`` or ``phase_length`` not a positive int, or
            ``relevance`` neither ``None`` nor callable.
        TypeError: ``schedule`` not callable, or not returning a :class:`PhaseSchedule`.
    """

    name = "redealt-sketch"

    def __init__(self, d_e: int | None = None, phase_start: int = 40, phase_length: int = 20,
                 relevance: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
                 *, schedule: Callable[[int, int], PhaseSchedule] = FixedPhases) -> None:
        self.d_e = check_d_e(d_e)
        self.phase_start = check_int("phase_start", phase_start, minimum=1)
        self.phase_length = check_int("phase_length", phase_length, minimum=1)
        if relevance is not None and not callable(relevance):
            raise ValueError(f"relevance must be None or a function (X, Y) -> [D] scores, got {relevance!r}")
        self.relevance = relevance
        self._make_schedule = schedule
        self.schedule = build_schedule(schedule, self.phase_start, self.phase_length)

    def bind(self, dim: int, width: int, seed: int) -> RedealtSketchSearch:
        check_bind(dim, width, seed)
        first = CountSketch(self.d_e).bind(dim, width, seed)
        return RedealtSketchSearch(first, int(seed), self.phase_start, self.phase_length, self.relevance,
                                   self._make_schedule)

    def __repr__(self) -> str:
        relevance = "" if self.relevance is None else f", relevance={_relevance_name(self.relevance)}"
        schedule = "" if type(self.schedule) is FixedPhases else f", schedule={self.schedule!r}"
        return (f"RedealtSketch(d_e={self.d_e}, phase_start={self.phase_start}, "
                f"phase_length={self.phase_length}{relevance}{schedule})")
