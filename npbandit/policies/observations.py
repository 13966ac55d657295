"""What a BO policy keeps of its run since its reset: the points it handed out and has not seen
come back, and the evaluations its budget counts (:class:`HandOuts`); and what it has seen
(:class:`Observations`): each observed point with its reward and constraint values, and the
points whose evaluation failed, kept as lists and as arrays grown in place (a proposal late in
a long run restacks nothing), with the running best and worst rewards and each output's smallest
and largest values; and, from them, the data its model is built on, each output scaled by the power
of two that keeps values of extreme size standardisable in float64 and a tiny range clear of
absolute variance floors (:func:`~npbandit.transforms.standardize.output_scale`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from npbandit.feasibility import check_constraint_count, is_feasible
from npbandit.policies.base import seeded_by
from npbandit.rows import RowBuffer
from npbandit.threads import torch_threads
from npbandit.transforms.standardize import output_scale
from npbandit.transforms.yeo_johnson import YeoJohnson

__all__ = ["HandOuts", "Observations", "hand_out", "pending_points"]


def pending_points(pending: Any, dim: int) -> torch.Tensor | None:
    """Points in flight as ``act(pending=...)`` receives them (``[p, d]``, or ``None``) as a
    float64 tensor ``[p, dim]``, ``None`` when there are none."""
    if pending is None or len(pending) == 0:
        return None
    return torch.as_tensor(np.asarray(pending, dtype=np.float64).reshape(-1, dim))


class HandOuts:
    """The points a BO policy handed out and has not seen come back: ``handed``, for each (by
    its bytes) the best reward known at each of its hand-outs, earliest first (``None``: a
    design point's); ``spent``, the evaluations started (handed out, or observed without), which
    a budget counts; ``given``, the points observed or failed without being handed out here."""

    def __init__(self) -> None:
        self.handed: dict[bytes, list[float | None]] = {}
        self.spent = 0
        self.given = RowBuffer()

    def add(self, point: np.ndarray, best_then: float | None) -> None:
        """``point [d]`` handed out while ``best_then`` was the best reward (``None``: from the design)."""
        self.handed.setdefault(np.asarray(point, dtype=np.float64).tobytes(), []).append(best_then)

    def withdraw(self, point: np.ndarray) -> None:
        """``point [d]``, handed out last, will not be evaluated: its latest hand-out is
        forgotten and the evaluation it would have spent is not counted.

        Raises:
            ValueError: ``point`` is not in flight from here."""
        key = np.asarray(point, dtype=np.float64).tobytes()
        handed = self.handed.get(key)
        if not handed:
            raise ValueError("point was not handed out by this policy, or has been observed since")
        handed.pop()
        if not handed:
            del self.handed[key]
        self.spent -= 1

    def design_in_flight(self, pending: np.ndarray | None, dim: int) -> int:
        """How many of the points in flight ``pending [p, d]`` (``None``: none) are design points."""
        if pending is None:
            return 0
        design = {key for key, handed in self.handed.items() if None in handed}
        return sum(x.tobytes() in design for x in np.asarray(pending, dtype=np.float64).reshape(-1, dim))

    def settle(self, x: np.ndarray, otherwise: Callable[[], float | None]) -> float | None:
        """The best reward known when ``x`` was handed out (``None``: a design point), its
        earliest hand-out settled; for a point not handed out here (given to ``observe``
        directly), ``otherwise()``, and the point counts as spent now."""
        key = x.tobytes()
        handed = self.handed.get(key)
        if not handed:  # given, not handed out: the design passes over it (policies.design)
            self.spent += 1
            self.given.append(x)
            return otherwise()
        best_then = handed.pop(0)
        if not handed:
            del self.handed[key]
        return best_then

    def design_point(self, design: Any, snap: Callable | None, evaluated: Any, lift: Callable | None = None,
                     ) -> np.ndarray:
        """The next point of ``design`` (a :class:`~npbandit.policies.design.SobolDesign`) that
        lies on none of the points ``evaluated`` (observed or failed, ``[d]`` each), handed out
        or given (``snap`` and ``lift``: as :meth:`SobolDesign.next_new`), handed out as a design point."""
        seen = {np.asarray(x, dtype=np.float64).tobytes() for x in evaluated}
        point = design.next_new(snap, seen | set(self.handed), lift,
                                given=self.given.array if len(self.given) else None)
        self.add(point, None)
        return point

    def remaining(self, budget: int | None) -> int | None:
        """The proposals still to come under ``budget`` (``None``: no budget, none counted):
        neither those in flight nor failed ones can be proposed again."""
        return None if budget is None else max(budget - self.spent, 0)


def hand_out(hand_outs: HandOuts, pending: np.ndarray | None, *, dim: int, n_init: int, observed: int, failed: int,
             design: Callable[[], np.ndarray], propose: Callable[[torch.Tensor | None], np.ndarray],
             seed_from: np.random.Generator | None, threads: int | str | None,
             queued: list[np.ndarray] | None = None) -> np.ndarray:
    """The next point ``[d]`` a BO policy hands out (its ``act``), counted in ``hand_outs.spent``.

    A design point, ``design()``, while fewer than ``n_init`` points are ``observed``, ``failed``
    or in flight as design points (of ``pending [p, d]``, points handed out and not yet
    observed: counting observations alone, ``q`` evaluations in flight would get ``q - 1``
    design points too many; failed ones count, so a run whose evaluations fail still leaves the
    design), or fewer than two are observed (what a model needs). Then the first of ``queued``
    (the rest of a batch proposal, taken from the list) while any is left, else
    ``propose(pending)`` with the points in flight as a float64 tensor ``[p, d]`` (``None``:
    none), run with torch's global generator seeded from ``seed_from`` (:func:`seeded_by`; a GP's
    fit and ``optimize_acqf`` draw from it) or, with ``None`` (an NP checkpoint, whose
    proposals seed their own draws), as it is. All of it on ``threads`` torch threads
    (:class:`~npbandit.threads.torch_threads`)."""
    with torch_threads(threads):
        in_flight = hand_outs.design_in_flight(pending, dim)
        if observed + failed + in_flight < n_init or observed < min(n_init, 2):
            point = design()
        elif queued:
            point = queued.pop(0)
        elif seed_from is None:
            point = propose(pending_points(pending, dim))
        else:
            pending = pending_points(pending, dim)
            with seeded_by(seed_from):
                point = propose(pending)
    hand_outs.spent += 1
    return point


class Observations:
    """A BO policy's observations, rewards maximised: ``X`` the observed points ``[d]`` in
    the order observed, ``Y`` their rewards, ``C`` their constraint values ``[k]`` (empty
    without constraints), ``failed`` the points whose evaluation failed and ``failed_after``
    how many observations came before each; ``best`` the best reward (of a feasible
    observation with constraints; ``-inf`` while there is none) and ``worst`` the worst;
    ``scale`` what the model's outputs are multiplied by."""

    def __init__(self) -> None:
        self.X: list[np.ndarray] = []
        self.Y: list[float] = []
        self.C: list[np.ndarray] = []
        self.failed: list[np.ndarray] = []
        self.failed_after: list[int] = []
        # as arrays grown in place ("observed": x then y), nothing restacked
        self._rows = {k: RowBuffer() for k in ("observed", "C", "failed")}
        self.best, self.worst = -np.inf, np.inf
        self._extremes: np.ndarray | None = None  # [2, 1 + k]: per output, the smallest and largest value observed

    @property
    def scale(self) -> torch.Tensor:
        """``[1 + k]``: per output (the reward, then the ``k`` constraints), the power of two the
        model's outputs are multiplied by (:meth:`data`): 1 unless the largest magnitude observed
        is past ``2 ** MAX_MAGNITUDE_EXPONENT`` or the values observed span a range below
        ``2 ** MIN_RANGE_EXPONENT`` (:func:`~npbandit.transforms.standardize.output_scale`, of the
        smallest and largest value observed, which decide it). It changes only when an observation
        widens that range or brings a larger magnitude; a failure, seen at values observed, never does."""
        extremes = np.zeros((1, 1 + self.constraint_count)) if self._extremes is None else self._extremes
        return output_scale(torch.from_numpy(extremes))

    @property
    def spread(self) -> float:
        """The range of the rewards observed (largest minus smallest, feasible or not; 0 before
        two): what a trust region's ``margin_scale="range"`` measures its margin in."""
        return 0.0 if self._extremes is None else float(self._extremes[1, 0] - self._extremes[0, 0])

    @property
    def constraint_count(self) -> int:
        """``k``: the constraint values each observation carries (0 before the first, or unconstrained)."""
        return len(self.C[0]) if self.C else 0

    def constraint_values(self, info: dict[str, Any]) -> np.ndarray:
        """``info["constraints"]`` checked: ``k`` finite floats, ``k`` the same as before."""
        values = info.get("constraints") if isinstance(info, dict) else None
        if values is None:
            raise ValueError("BOPolicy(constrained=True) observes each point's constraint values in "
                             "info['constraints'] (a sequence of floats, feasible when all are <= 0); this "
                             "observation has none")
        try:
            c = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(f"info['constraints'] must be a sequence of floats, got {values!r}") from None
        if c.ndim != 1 or c.size == 0 or not np.isfinite(c).all():
            raise ValueError(f"info['constraints'] must be a non-empty sequence of finite floats, got {values!r}")
        check_constraint_count(c.size, self.constraint_count if self.C else None, "info['constraints']",
                               "this one holds", unit="observation")
        return c

    def add(self, x: np.ndarray, reward: float, c: np.ndarray | None) -> None:
        """Observation ``x [d]`` with its reward and its constraint values ``c [k]`` (``None``
        without constraints; an infeasible reward is no best)."""
        self.X.append(x)
        self.Y.append(reward)
        self._rows["observed"].append(np.append(x, reward))
        self.worst = min(self.worst, reward)
        values = np.append(reward, [] if c is None else c)
        self._extremes = (np.stack([values, values]) if self._extremes is None else
                          np.stack([np.minimum(self._extremes[0], values), np.maximum(self._extremes[1], values)]))
        if c is None or is_feasible(c):
            self.best = max(self.best, reward)
        if c is not None:
            self.C.append(c)
            self._rows["C"].append(c)

    def add_failure(self, x: np.ndarray) -> None:
        """A point ``x [d]`` whose evaluation failed."""
        self.failed.append(x)
        self._rows["failed"].append(x)
        self.failed_after.append(len(self.Y))

    def failure_outputs(self) -> list[float]:
        """The outputs a failure is seen at now: the worst reward, then each constraint's worst value."""
        return [self.worst] + (self._rows["C"].array.max(axis=0).tolist() if self.C else [])

    def data(self, output_warp: str | None) -> tuple[torch.Tensor, torch.Tensor, YeoJohnson | None]:
        """``X [n, d]`` and the outputs ``[n, 1 + k]`` a model sees (the reward warped with
        ``output_warp``, then the ``k`` constraint values; each output first multiplied by its
        :attr:`scale`): the observations, then the failed points at the worst reward observed
        (and the worst value of each constraint; none before a reward is); and the warp fitted
        (``None`` without one). Read from the arrays (a copy of each)."""
        failed, observed = len(self.failed) if self.Y else 0, self._rows["observed"].array
        X, values = observed[:, :-1], observed[:, -1]
        if failed:
            X, values = np.concatenate([X, self._rows["failed"].array]), np.append(values, [self.worst] * failed)
        scale = self.scale
        Y = torch.tensor(values, dtype=torch.float64).unsqueeze(-1) * scale[0]
        warp = None if output_warp is None else YeoJohnson.fit(Y)
        if warp is not None:
            Y = warp.forward(Y)
        if self.C:
            C = torch.tensor(self._rows["C"].array, dtype=torch.float64) * scale[1:]
            Y = torch.cat([Y, torch.cat([C, C.amax(dim=0).expand(failed, -1)])], dim=-1)
        return torch.tensor(X, dtype=torch.float64), Y, warp
