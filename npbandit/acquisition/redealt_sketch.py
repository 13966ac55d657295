"""A count sketch re-dealt around the incumbent: a width-``d_e`` search of ``D`` inputs whose
slice moves through the best point found.

:class:`~npbandit.acquisition.subspace.CountSketch` fixes one random ``d_e``-dimensional slice
of ``[0, 1]^D`` for the whole run; when the optimum is not on it (two active inputs dealt to
one bin), no amount of search on it reaches the optimum. :class:`RedealtSketch` searches in
phases, a phase being a function of the number of observations ``n``:

- phase 0 (``n < phase_start``; with early phases, below, ``n < early_start``) is exactly
  ``CountSketch(d_e)``'s search with the same seed:
  input ``i`` is ``z[bin i]`` or ``1 - z[bin i]`` (its sign);
- phase ``k >= 1`` (from ``n = phase_start + (k - 1) phase_length`` on, one phase per
  ``phase_length`` observations) deals the inputs into new balanced bins with new signs
  (drawn from the run's seed and ``k``), anchored at ``x*``, the best of the first
  ``phase_start + (k - 1) phase_length`` observations (the incumbent when the phase began):
  input ``i`` follows its bin's ``z`` through the monotone piecewise-linear map of ``[0, 1]``
  onto ``[0, 1]`` with ``0 -> 0``, ``0.5 -> x*_i``, ``1 -> 1`` (``1 - z`` for sign ``-1``).
  The phase's slice passes through ``x*`` (at ``z = 0.5`` in every coordinate), reaches
  every input's whole range, and the inputs of one bin move together, each monotonically.

Early phases (``RedealtSketch(early_start=s, early_length=m)``): phases also begin at the
boundaries ``s + j m`` below ``phase_start``, each dealt at random (no leaders, whatever the
relevance) and anchored at the incumbent as above; the later boundaries are unchanged, and the
phases are numbered over all boundaries in order. Why: on one count-sketch slice the inputs
sharing a bin are exact copies (or mirror images) of each other, so a relevance fit on points of
one slice can tell only which bins matter, never which of a bin's inputs; every further random
slice splits most such pairs (two inputs of one bin share a bin again with probability about
``1 / d_e``), so a fit at ``phase_start`` sees the inputs move apart. ``s`` should be at least
the initial design's size, for the design to lie on phase 0's slice.

Re-dealing only a stalled slice (``RedealtSketch(only_when_stalled=True)``): a boundary
``phase_start + j phase_length`` starts the next phase only if the ``phase_length``
observations before it left the incumbent unimproved (:func:`stalled`: unchanged, or better
by at most :data:`STALL_TOLERANCE` of its value); otherwise the current slice is kept until a
later boundary finds it stalled (early boundaries always re-deal). A slice that still yields
gains is not given up, and the phase ``k``, its anchor and its leaders are those of the
``k``-th boundary that re-dealt (in what follows, as with early phases, "the first
``phase_start + (k - 1) phase_length`` observations" reads "the observations before that
boundary").

Relevance-dealt phases (``RedealtSketch(relevance=...)``): a function ``(X [n, D], Y [n, 1])
-> [D]`` scores ``>= 0`` is handed the first ``phase_start + (k - 1) phase_length`` rows of
``X`` and of ``Y``'s objective column (every observation before the phase began, whatever
slice it lay on); the ``d_e`` inputs of highest positive score (ties: the lower index) each
lead a different bin of phase ``k``, the other inputs dealt at random as without one
(:func:`~npbandit.acquisition.subspace.deal` with ``leaders``; bins and signs still drawn from
``(seed, D, d_e, k)``). Inputs scored 0 lead no bin; with no positive score the phase is dealt
as without a relevance. Phase 0 is unchanged. The scores are a function of those rows, so the
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
before: the phase is read from the number of rows of ``X`` (every evaluation so far, failed
ones included), the anchor from ``X`` and ``Y``. ``BOPolicy`` and ``NPSampler`` hand the rows
in the order they were evaluated, so the rows before a phase began stay the first ones.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.acquisition.constrained import feasible, incumbent
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
    deal,
    propose_embedded,
)
from npbandit.validation import check_int

__all__ = ["RedealtSketch", "RedealtSketchSearch", "AnchoredSketch", "SLICE_TOLERANCE", "STALL_TOLERANCE", "stalled"]

#: the largest difference in any input between a point and its slice point
#: (``lift(project(x))``) for the point to count as on the slice
SLICE_TOLERANCE = 1e-9

#: the smallest gain of the incumbent's value, relative to its size, that counts as an
#: improvement for :func:`stalled` (TuRBO's success threshold)
STALL_TOLERANCE = 1e-3


def stalled(Y: torch.Tensor, last: int, constraints: int = 0) -> bool:
    """Whether the last ``last`` rows of ``Y [n, 1 + constraints]`` (maximised, feasible at
    constraint values ``<= 0``) left the incumbent where it was: the incumbent of all ``n``
    rows is that of the first ``n - last``, or both are feasible and its value rose by at most
    ``STALL_TOLERANCE * |value before|``. With no rows before the last ``last``, not stalled."""
    Y = torch.as_tensor(Y, dtype=torch.float64)
    before = len(Y) - int(last)
    if before < 1:
        return False
    old, new = incumbent(Y[:before], constraints), incumbent(Y, constraints)
    if old == new:
        return True
    if not (feasible(Y[old:old + 1], constraints).item() and feasible(Y[new:new + 1], constraints).item()):
        return False
    old_value, new_value = float(Y[old, 0]), float(Y[new, 0])
    return new_value - old_value <= STALL_TOLERANCE * abs(old_value)


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
        phase_start: observations before phase 1.
        phase_length: observations per later phase.
        relevance: ``None`` (random deals) or a function ``(X [n, D], Y [n, 1]) -> [D]``
            scores ``>= 0`` whose highest-scoring inputs lead the bins (see the module).
        only_when_stalled: a boundary starts a phase only if the phase before it stalled.
        early_start: ``None`` or the first early boundary (see the module).
        early_length: observations per early phase (with ``early_start``).
    """

    def __init__(self, first: CountSketchSearch, seed: int, phase_start: int, phase_length: int,
                 relevance: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
                 only_when_stalled: bool = False, early_start: int | None = None,
                 early_length: int | None = None) -> None:
        self.first, self.seed = first, int(seed)
        self.phase_start, self.phase_length = phase_start, phase_length
        self.relevance, self.only_when_stalled = relevance, bool(only_when_stalled)
        self.early_start, self.early_length = early_start, early_length
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
        ``k - 1`` (``Y [n, 1 + constraints]``, maximised, in evaluation order): the early
        boundaries ``early_start + j early_length < phase_start`` that are ``<= n`` (each starts
        a phase), then the boundaries ``phase_start + j phase_length <= n``; every one of these
        starts a phase, or, with :attr:`only_when_stalled`, only one at which the last
        ``phase_length`` observations did not improve the incumbent (:func:`stalled`)."""
        n = len(Y)
        early = self.early_boundaries(n)
        boundaries = range(self.phase_start, n + 1, self.phase_length)
        if not self.only_when_stalled:
            return early + list(boundaries)
        Y = torch.as_tensor(Y, dtype=torch.float64)
        return early + [c for c in boundaries if stalled(Y[:c], self.phase_length, constraints)]

    def early_boundaries(self, n: int) -> list[int]:
        """The early boundaries ``early_start + j early_length`` below ``phase_start`` and
        at most ``n`` (none without :attr:`early_start`)."""
        if self.early_start is None:
            return []
        return list(range(self.early_start, min(self.phase_start, n + 1), self.early_length))

    def leaders(self, X: torch.Tensor, Y: torch.Tensor) -> np.ndarray:
        """The inputs that lead a bin given the rows before a phase (``X [n, D]``, ``Y [n, 1]``,
        the objective, maximised): up to ``d_e`` inputs, those of highest positive
        :attr:`relevance` score, highest first (ties: the lower index); empty without a
        relevance.

        Raises:
            ValueError: a relevance that returns other than ``[D]`` finite scores ``>= 0``.
        """
        if self.relevance is None:
            return np.zeros(0, dtype=np.int64)
        X, Y = as_rows(X, self.dim, "X"), torch.as_tensor(Y, dtype=torch.float64)
        key = X.numpy().tobytes() + b"|" + Y.numpy().tobytes()
        if self._kept is not None and self._kept[0] == key:
            return self._kept[1].copy()
        score = torch.as_tensor(self.relevance(X.clone(), Y.clone()), dtype=torch.float64)
        if score.shape != (self.dim,) or not (torch.isfinite(score).all() and (score >= 0).all()):
            raise ValueError(f"relevance must return [{self.dim}] finite scores >= 0, got shape "
                             f"{tuple(score.shape)}")
        score = score.numpy()
        order = np.argsort(-score, kind="stable")[:self.search_dim]
        found = order[score[order] > 0].astype(np.int64)
        self._kept = (key, found)
        return found.copy()

    def phase_sketch(self, X: torch.Tensor, Y: torch.Tensor, constraints: int = 0) -> AnchoredSketch | None:
        """The slice of the phase ``len(X)`` observations are in (``X [n, D]``, ``Y [n, 1 +
        constraints]``, maximised): ``None`` in phase 0 (:attr:`first`'s), else its
        :class:`AnchoredSketch`, anchored at the best (feasible) of the rows before its
        boundary, its bins led by their :meth:`leaders` (an early phase's: none)."""
        X = as_rows(X, self.dim, "X")
        Y = torch.as_tensor(Y, dtype=torch.float64)
        starts = self.phase_starts(Y, constraints)
        if not starts:
            return None
        k, began = len(starts), starts[-1]
        anchor = X[incumbent(Y[:began], constraints)]
        led = self.relevance is not None and began >= self.phase_start
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
        out = {"subspace": "redealt-sketch", "subspace_d_e": self.search_dim,
               "subspace_phase_start": self.phase_start, "subspace_phase_length": self.phase_length}
        if self.relevance is not None:
            out["subspace_relevance"] = _relevance_name(self.relevance)
        if self.only_when_stalled:
            out["subspace_redeal"] = "when-stalled"
        if self.early_start is not None:
            out["subspace_early_start"], out["subspace_early_length"] = self.early_start, self.early_length
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
        only_when_stalled: ``False`` (default): every boundary re-deals; ``True``: a boundary
            re-deals only if the ``phase_length`` observations before it did not improve the
            incumbent (:func:`stalled`), so a slice that still yields gains is kept.
        early_start: ``None`` (default): no phase before ``phase_start``; or the number of
            observations at which the first early phase begins (at least the initial design's
            size, below ``phase_start``): from there, every ``early_length`` observations
            until ``phase_start``, a new slice dealt at random through the incumbent, so
            that the relevance fit at ``phase_start`` sees the inputs of phase 0's bins move
            apart (see the module).
        early_length: observations per early phase; given exactly when ``early_start`` is.

    Raises:
        ValueError: ``d_e``, ``phase_start`` or ``phase_length`` not a positive int, or
            ``relevance`` neither ``None`` nor callable, or ``only_when_stalled`` not a bool,
            or ``early_start`` / ``early_length`` not both ``None`` or both positive ints
            with ``early_start < phase_start``.
    """

    name = "redealt-sketch"

    def __init__(self, d_e: int | None = None, phase_start: int = 40, phase_length: int = 20,
                 relevance: Callable[[torch.Tensor, torch.Tensor], torch.Tensor] | None = None,
                 only_when_stalled: bool = False, early_start: int | None = None,
                 early_length: int | None = None) -> None:
        self.d_e = check_d_e(d_e)
        self.phase_start = check_int("phase_start", phase_start, minimum=1)
        self.phase_length = check_int("phase_length", phase_length, minimum=1)
        if (early_start is None) != (early_length is None):
            raise ValueError(f"early_start and early_length must be given together, got early_start={early_start!r}, "
                             f"early_length={early_length!r}")
        self.early_start = None if early_start is None else check_int("early_start", early_start, minimum=1)
        self.early_length = None if early_length is None else check_int("early_length", early_length, minimum=1)
        if self.early_start is not None and self.early_start >= self.phase_start:
            raise ValueError(f"early_start must be below phase_start ({self.phase_start}), got {early_start!r}")
        if relevance is not None and not callable(relevance):
            raise ValueError(f"relevance must be None or a function (X, Y) -> [D] scores, got {relevance!r}")
        if not isinstance(only_when_stalled, (bool, np.bool_)):
            raise ValueError(f"only_when_stalled must be a bool, got {only_when_stalled!r}")
        self.relevance, self.only_when_stalled = relevance, bool(only_when_stalled)

    def bind(self, dim: int, width: int, seed: int) -> RedealtSketchSearch:
        check_bind(dim, width, seed)
        first = CountSketch(self.d_e).bind(dim, width, seed)
        return RedealtSketchSearch(first, int(seed), self.phase_start, self.phase_length, self.relevance,
                                   self.only_when_stalled, self.early_start, self.early_length)

    def __repr__(self) -> str:
        relevance = "" if self.relevance is None else f", relevance={_relevance_name(self.relevance)}"
        stall = ", only_when_stalled=True" if self.only_when_stalled else ""
        early = ("" if self.early_start is None else
                 f", early_start={self.early_start}, early_length={self.early_length}")
        return (f"RedealtSketch(d_e={self.d_e}, phase_start={self.phase_start}, "
                f"phase_length={self.phase_length}{relevance}{stall}{early})")
