"""What :func:`npbandit.optimize` returns: :class:`OptimizeResult` (one objective) or
:class:`ParetoResult` (several), and the history each holds, read from
a run's step records (:func:`run_history`; also what ``optimize``'s callbacks see and, by
:func:`carry_history`, what an error that ends a run carries)."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from npbandit.exceptions import ObjectiveError
from npbandit.feasibility import is_feasible
from npbandit.stopping import RunInterrupted
from npbandit.validation import is_real, is_tensor

if TYPE_CHECKING:
    from npbandit.envs.blackbox import BlackBoxEnv

__all__ = ["OptimizeResult", "ParetoResult", "run_history", "carry_history", "with_fixed"]


@dataclass(frozen=True)
class OptimizeResult:
    """Outcome of :func:`npbandit.optimize`.

    In both ``best_x`` and ``history``, ``x`` is the point the objective was evaluated at,
    in its units: with ``bounds``, a numpy array ``[d]`` in the original bounds (also with
    ``point_type="torch"``, whose objective received the same values as a float64 tensor);
    with a search space, the dict ``{name: value}`` (ints as ``int``, choices as their values).

    Attributes:
        best_x: the best evaluated point: where the best value was observed; with
            ``constraints``, the best *feasible* one (see ``feasible``).
        best_value: its objective value. On a noisy objective, the luckiest draw.
        history: one dict per evaluation: ``t``, ``x``, ``value``, ``best_value``,
            ``failed`` (in order of evaluation), and for a failed one ``error`` (why it
            failed, as the database records it) and ``error_kind`` (how:
            ``"raised"``, ``"returned"`` (something other than a number), ``"nonfinite"``
            (NaN or inf) or ``"timeout"``; :attr:`ObjectiveError.kind
            <npbandit.exceptions.ObjectiveError.kind>`); with ``constraints`` also
            ``constraints`` (the values returned) and ``feasible`` for each evaluation
            that did not fail (``best_value`` is then the best feasible value so far,
            ``None`` before the first). A failed evaluation's ``best_value`` is the best so
            far (``None`` before any evaluation succeeded). The result of an
            :class:`~npbandit.Optimizer` (ask and tell) also has ``fixed`` in each entry: the
            parameters the trial held at the caller's values, ``{name: value}``
            (:meth:`Optimizer.ask(fixed=...) <npbandit.Optimizer.ask>`; ``x`` holds each
            exactly), as the database's ``steps.fixed`` records them; ``{}`` for a trial
            asked in full or attached.
        run_id: the run's id in the database (``None`` when ``db=None``).
        db: the database the run was recorded in, as ``optimize`` was given it (``None``
            when ``db=None``); with ``run_id``, what ``optimize(initial=result, db=...)``
            continues. Not in the ``repr`` (a URL can hold a password).
        feasible: whether ``best_x`` satisfies the constraints: always ``True`` without
            them; ``False`` when no evaluation was feasible, and ``best_x`` is then the one
            whose constraint values exceed 0 by the least in total (with a warning).
        recommended_x: the model's recommendation, as Ax makes it: of the evaluated points,
            the one where the surrogate, conditioned on every observation (at most the
            checkpoint's context limit, those nearest the best), has the best posterior mean,
            de-noised for an NP (same form as ``best_x``;
            see :mod:`npbandit.acquisition.recommend`); with ``constraints``, of those whose
            constraints' posterior means are all ``<= 0``. Without one (``surrogate="random"``,
            fewer than two values observed, no point the model predicts feasible, a subspace
            strategy that makes none, or a model that failed to predict, with a warning):
            ``best_x``.
        recommended_value: the posterior mean there, in the objective's units (with
            ``output_warp``, the posterior median); ``best_value`` without a recommendation.
        recommended_by: ``"model"``, or ``"observed"`` when the best observed point stands in.
        stopped_early: ``None`` for a run that spent its budget (or failed); for one a
            callback ended (``optimize(callbacks=...)``), how: ``"by its stop rule after 13
            of 30 evaluations"`` (with an executor, and evaluations in flight then, which are kept:
            ``"...; 1 evaluation in flight then, written too"``); for an ask-and-tell run closed
            before its budget, ``"by close() after 4 of 20 evaluations"``; as the database
            records it (``RunRow.stopped_early``).
        seed: the seed the run used: ``optimize``'s, or the one it drew for ``seed=None``
            (``optimize(..., seed=result.seed)`` repeats the run).
    """

    best_x: np.ndarray | dict[str, Any]
    best_value: float
    history: list[dict[str, Any]]
    run_id: int | None
    feasible: bool = True
    recommended_x: np.ndarray | dict[str, Any] | None = None
    recommended_value: float | None = None
    recommended_by: str | None = None
    stopped_early: str | None = None
    db: str | None = None
    seed: int | None = None

    def __repr__(self) -> str:  # the history's length, not its rows: a print stays a few lines
        failed = sum(bool(h.get("failed")) for h in self.history)
        return (f"OptimizeResult(best_x={self.best_x!r}, best_value={self.best_value!r}, "
                f"recommended_x={self.recommended_x!r}, recommended_value={self.recommended_value!r}, "
                f"recommended_by={self.recommended_by!r}, feasible={self.feasible}, run_id={self.run_id}, "
                + (f"stopped_early={self.stopped_early!r}, " if self.stopped_early else "") +
                f"history=<{len(self.history)} evaluations, {failed} failed>)")


@dataclass(frozen=True)
class ParetoResult:
    """Outcome of :func:`npbandit.optimize` with several objectives (``minimize=[...]``).

    ``x`` is as in :class:`OptimizeResult` (a numpy array ``[d]`` in the bounds, or the dict
    of a search space).

    Attributes:
        front: the evaluations on the Pareto front, in order of evaluation: each successful
            (and, with ``constraints``, feasible) evaluation that no other such evaluation
            beats in one objective while matching or beating it in all (evaluations with
            equal values are all kept, as in Optuna's ``study.best_trials``). Each is its
            ``history`` entry: of this call's evaluations, so points given by ``optimize``'s
            ``initial`` are not on it and take none of these off it.
        history: one dict per evaluation: ``t``, ``x``, ``values`` (the ``m`` values the
            objective returned, in order; ``None`` for a failed evaluation), ``failed``, and as
            in :class:`OptimizeResult` ``error`` / ``error_kind`` for a failed one,
            ``constraints`` / ``feasible`` with constraints, and an ``Optimizer``'s ``fixed``.
        minimize: the directions, one per objective, in the objectives' order.
        run_id, db, stopped_early, seed: as in :class:`OptimizeResult`.
        feasible: whether any evaluation satisfied the constraints (always ``True``
            without them); ``False`` leaves ``front`` empty.
        objective_names: each objective's name, in their order (the order of ``values`` and of
            :attr:`front_values`' columns): the keys of ``optimize``'s ``minimize`` given as a
            mapping (``{"cost": True, "accuracy": False}``), else the names of their positions,
            ``("f0", "f1", ...)`` (:func:`~npbandit.objective_names.positional_names`, also the
            default when none are given here).

    There is no ``best_x``: several objectives have a front of best points, not one (reading
    it raises an ``AttributeError`` that says so).
    """

    front: list[dict[str, Any]]
    history: list[dict[str, Any]]
    minimize: tuple[bool, ...]
    run_id: int | None
    feasible: bool = True
    stopped_early: str | None = None
    db: str | None = field(default=None, repr=False)
    seed: int | None = None
    objective_names: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        from npbandit.objective_names import check_objective_names, positional_names

        names = tuple(self.objective_names) or positional_names(len(self.minimize))
        check_objective_names(names, "objective_names")
        if len(names) != len(self.minimize):
            raise ValueError(f"objective_names names {len(names)} objectives, minimize gives {len(self.minimize)} "
                             "directions (one name per objective, in their order)")
        object.__setattr__(self, "objective_names", names)

    def values_by_name(self, entry: dict[str, Any]) -> dict[str, float]:
        """An evaluation's values by objective name, ``{"cost": 0.12, "accuracy": 0.91}``:
        ``entry`` an entry of :attr:`front` or :attr:`history` (its ``values``, in the order of
        :attr:`objective_names`).

        Raises:
            ValueError: ``entry`` holds no values (a failed evaluation) or not one per objective.
        """
        values = entry.get("values") if isinstance(entry, dict) else None
        if values is None or len(values) != len(self.objective_names):
            raise ValueError(f"entry must be an evaluation of this result that did not fail (its 'values' one per "
                             f"objective, {len(self.objective_names)}), got values {values!r}")
        return dict(zip(self.objective_names, (float(v) for v in values)))

    @property
    def front_x(self) -> list[Any]:
        """The points of :attr:`front`, in its order: a list of ``p`` points, each as ``x``
        is (a numpy array ``[d]`` in the bounds, or a search space's dict) -- a list, not one
        array, as a space's points are dicts; ``np.stack(result.front_x)`` gives the array
        ``[p, d]`` of points in the bounds (the rows of :attr:`front_values`)."""
        return [h["x"] for h in self.front]

    @property
    def front_values(self) -> np.ndarray:
        """``[p, m]``: the values of :attr:`front`'s evaluations, in the objective's units."""
        return np.array([h["values"] for h in self.front], dtype=np.float64).reshape(len(self.front),
                                                                                    len(self.minimize))

    def hypervolume(self, reference_point: Any) -> float:
        """The volume :attr:`front` dominates up to ``reference_point`` (``[m]``, in the
        objectives' units: a point worse than every point of interest in each objective,
        above it where that objective is minimised and below it where maximised); 0 for an
        empty front. ``reference_point`` may also be a mapping of exactly the
        :attr:`objective_names` to values, in any order (``{"cost": 0.7, "accuracy": 0.0}``).

        Raises:
            ValueError: ``reference_point`` is not ``m`` finite numbers, or a mapping whose keys
                are not the objective names (naming them).
        """
        from npbandit.acquisition.multi_objective import dominated_volume
        from npbandit.envs.directions import maximised

        m = len(self.minimize)
        given = reference_point.detach().cpu().numpy() if is_tensor(reference_point) else reference_point
        if isinstance(given, Mapping):  # by name: read in the order of the objectives
            if set(given) != set(self.objective_names):
                raise ValueError(f"reference_point as a mapping needs exactly the objective names "
                                 f"({', '.join(map(repr, self.objective_names))}) as keys, got "
                                 f"{list(given)!r}")
            given = [given[name] for name in self.objective_names]
        # each element a real number: np.asarray(..., float) would read "4" or True as one
        items = given if isinstance(given, np.ndarray) else np.asarray(given, dtype=object)
        real = items.shape == (m,) and all(is_real(v) for v in items.tolist())
        ref = items.astype(np.float64) if real else None
        if ref is None or not np.isfinite(ref).all():
            raise ValueError(f"reference_point must be {m} finite numbers (one per objective), got {reference_point!r}")
        return dominated_volume(torch.from_numpy(maximised(self.front_values, self.minimize)),
                                torch.from_numpy(maximised(ref, self.minimize)))

    def __getattr__(self, name: str) -> Any:
        if name in ("best_x", "best_value", "recommended_x", "recommended_value", "recommended_by"):
            raise AttributeError(f"a ParetoResult has no {name}: several objectives have a front of best points, "
                                 f"not one (see .front, .front_x, .front_values)")
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __repr__(self) -> str:  # the directions by name where the objectives have names of their own
        from npbandit.objective_names import positional_names

        failed = sum(bool(h.get("failed")) for h in self.history)
        directions = (self.minimize if self.objective_names == positional_names(len(self.minimize))
                      else dict(zip(self.objective_names, self.minimize)))
        return (f"ParetoResult(front=<{len(self.front)} evaluations>, minimize={directions}, "
                f"feasible={self.feasible}, run_id={self.run_id}, "
                + (f"stopped_early={self.stopped_early!r}, " if self.stopped_early else "") +
                f"history=<{len(self.history)} evaluations, {failed} failed>)")

    @classmethod
    def of_history(cls, history: list[dict[str, Any]], minimize: Sequence[bool] | Mapping[str, bool],
                   run_id: int | None, **kwargs: Any) -> ParetoResult:
        """The result of a run whose evaluations are ``history`` (:func:`run_history`'s form),
        its front taken from the successful, feasible ones; ``minimize`` as ``optimize`` takes it
        (a mapping also gives :attr:`objective_names`).

        Raises:
            TypeError / ValueError: ``minimize`` is not a sequence of ``m >= 2`` bools or a
                mapping of ``m >= 2`` names to bools, or a successful entry of ``history`` does
                not hold ``m`` values (naming it)."""
        from botorch.utils.multi_objective.pareto import is_non_dominated

        from npbandit.envs.directions import maximised, named_directions

        minimize, m, names = named_directions(minimize)
        if m < 2:
            raise TypeError(f"minimize must be a sequence of m >= 2 bools (one direction per objective), got "
                            f"{minimize!r}")
        for i, h in enumerate(history):
            if not h["failed"] and len(h["values"]) != m:
                raise ValueError(f"history[{i}] holds {len(h['values'])} values, minimize gives {m} directions (one "
                                 "value per objective, in their order)")
        good = [h for h in history if not h["failed"] and h.get("feasible", True)]
        front: list[dict[str, Any]] = []
        if good:
            values = torch.from_numpy(maximised(np.array([h["values"] for h in good], dtype=np.float64), minimize))
            front = [h for h, keep in zip(good, is_non_dominated(values, deduplicate=False).tolist()) if keep]
        return cls(front, history, tuple(minimize), run_id, feasible=bool(good), **{"objective_names": names, **kwargs})


def run_history(env: BlackBoxEnv, steps: list[dict[str, Any]], constrained: bool,
                before: list[dict[str, Any]] | None = None, *, fixed: bool = False) -> list[dict[str, Any]]:
    """:attr:`OptimizeResult.history` from ``run_episode``'s step records of a run of
    ``env``: each point in the objective's form, its value, the best so far (a failed step
    keeps the one before); with ``constrained``, each successful step's ``feasible``; with
    ``fixed`` (an :class:`~npbandit.Optimizer`'s history, whose trials may hold values of the
    caller's), each step's ``fixed`` (``{}`` when it records none). A step's fixed values are
    set exactly in its point (:func:`with_fixed`). For an ``env`` of several objectives, each
    step's ``values`` (``None`` for a failed one) instead of ``value`` and ``best_value``.
    ``before``: the history of the steps before ``steps``, to read on from (the entries of
    ``steps`` alone are returned), so a history kept during a run costs each step once."""
    extras = ("error", "error_kind", "worker", "submitted_at", "finished_at", "constraints")
    if env.objectives > 1:  # several objectives: each step's values, and no best value (a front has many)
        return [{"t": r["t"], "x": with_fixed(env.point(r["action"]), r.get("fixed")), "values": r.get("values"),
                 "failed": r["failed"], **{k: r[k] for k in extras if k in r}, **_fixed_entry(r, fixed),
                 **({} if r["failed"] or not constrained else {"feasible": is_feasible(r["constraints"])})}
                for r in steps]
    history = [{"t": r["t"], "x": with_fixed(env.point(r["action"]), r.get("fixed")), "value": r["value"],
                "best_value": r.get("best_value"), "failed": r["failed"], **{k: r[k] for k in extras if k in r},
                **_fixed_entry(r, fixed)} for r in steps]
    if constrained:
        for h in history:
            if not h["failed"]:
                h["feasible"] = is_feasible(h["constraints"])
    last = before[-1] if before else None
    for h in history:  # a failed evaluation leaves the best so far as it was
        if h["failed"] and h["best_value"] is None and last is not None:
            h["best_value"] = last["best_value"]
        last = h
    return history


def _fixed_entry(step: dict[str, Any], fixed: bool) -> dict[str, Any]:
    """A history entry's ``fixed`` of the step record ``step``: ``{"fixed": {...}}`` (empty when
    it records none) where the history holds them (``fixed``), else nothing."""
    return {"fixed": dict(step.get("fixed") or {})} if fixed else {}


def with_fixed(point: Any, fixed: Mapping[str, Any] | None) -> Any:
    """``point`` (an env's point: a dict by name, or an array ``[d]`` for a box, whose names are
    ``x0 .. x{d-1}``) with the values ``fixed`` (``{name: value}``, held by the caller) set
    exactly as given, not read back through the unit cube; ``point`` itself when ``fixed`` is
    empty or ``None``, else a copy (an array as float64)."""
    if not fixed:
        return point
    point = dict(point) if isinstance(point, Mapping) else np.array(point, dtype=np.float64)
    for name, value in fixed.items():
        point[name if isinstance(point, dict) else int(name[1:])] = value
    return point


def carry_history(err: BaseException, history: list[dict[str, Any]], run_id: int | None) -> None:
    """Give an error that ends a run the run's ``history`` (``OptimizeResult.history``'s
    form) and ``run_id``, unless it has them (RunInterrupted and ObjectiveError declare
    both; another exception, once the run has started, gets them where it takes attributes
    and has no such own)."""
    if isinstance(err, (RunInterrupted, ObjectiveError)):
        err.history = list(history)
        err.run_id = err.run_id if err.run_id is not None else run_id
    elif (history or run_id is not None) and not hasattr(err, "history") and not hasattr(err, "run_id"):
        with contextlib.suppress(AttributeError):  # e.g. an exception type with __slots__
            err.history, err.run_id = list(history), run_id
