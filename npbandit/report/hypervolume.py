"""How ``npbandit report`` measures runs of several objectives: by the hypervolume of each
run's feasible Pareto front, against one reference point shared by every run of the problem.

A run of several objectives (its ``env_params["minimize"]`` a list of directions, one per
objective; :class:`~npbandit.report.grouping.Problem` ``minimize`` a tuple) records each
evaluation's objective values in its step's ``values``, in the user's units and sense. No one
number is its best value; what it found is the front of its feasible evaluations (every
constraint value ``<= 0``; all successful ones without constraints): those that no other
dominates, being at least as good in every objective and better in one. The *hypervolume* of
that front is the volume of the region it dominates, bounded by a reference point that is
worse than it in every objective: one number, larger the better, that grows as the front
advances and spreads.

The reference point (:func:`group_reference`) is one for every run of a problem, so that
their hypervolumes are volumes of one region and compare: the nadir (the worst value in each
objective) of the Pareto front of all the problem's feasible evaluations together, from every
run, moved further by a tenth (:data:`~npbandit.acquisition.multi_objective.REFERENCE_MARGIN`)
of each objective's range over all those evaluations: up for an objective minimised, down
for one maximised (the rule :func:`~npbandit.acquisition.multi_objective.reference_point`
applies, and so what the acquisition measures from). An objective in which every feasible
evaluation is equal (no range) is moved by a tenth of one of its units (0.1), so that a
shift of its values moves the reference alike. So every front point of the problem adds
volume, also one at the nadir; a run's point worse than the reference in some objective adds
none. A problem with no feasible evaluation has no reference point and no hypervolume.
Hypervolumes are in the product of the objectives' units and, the reference being the
problem's runs', change when runs are added.

The volumes are computed by
:func:`~npbandit.acquisition.multi_objective.dominated_volume` (BoTorch's ``Hypervolume``), the
fronts by :func:`~npbandit.acquisition.multi_objective.pareto_front`; both load torch, which
this module imports only when it measures a run, so a report of runs of one objective never
loads it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from npbandit.envs.directions import maximised
from npbandit.feasibility import is_feasible
from npbandit.report.grouping import Problem

__all__ = ["objective_row", "readable_values", "group_reference", "hypervolume", "hypervolume_curve", "front_size"]


def _directions(problem: Problem) -> tuple[bool, ...]:
    """The directions of ``problem``'s ``m`` objectives (``True``: minimised): the values
    :func:`~npbandit.envs.directions.maximised` by them are what the Pareto front and hypervolume
    helpers take."""
    if not isinstance(problem.minimize, tuple):
        raise ValueError(f"problem must be of several objectives (its minimize a tuple of directions), got "
                         f"minimize={problem.minimize!r}")
    return problem.minimize


def readable_values(step: dict[str, Any], objectives: int) -> bool:
    """Whether a step's ``values`` are ``objectives`` finite numbers (a successful step of a
    run of that many objectives records them; one that does not cannot be measured)."""
    values = step.get("values")
    return (isinstance(values, list) and len(values) == objectives
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in values))


def objective_row(step: dict[str, Any], problem: Problem) -> np.ndarray | None:
    """A step's objective values, maximised (each minimised one negated), ``[m]``: for a
    successful step with readable values (:func:`readable_values`) that is feasible (with
    constraints, every recorded constraint value ``<= 0``; a step that recorded none is not);
    ``None`` for any other step."""
    minimize = _directions(problem)
    if step.get("failed") or not readable_values(step, len(minimize)):
        return None
    if problem.constraints is not None and not is_feasible(step.get("constraints") or [math.inf]):
        return None
    return maximised(np.asarray(step["values"], dtype=np.float64), minimize)


def group_reference(runs_steps: Iterable[Sequence[dict[str, Any]]], problem: Problem) -> tuple[float, ...] | None:
    """The reference point every run of ``problem`` is measured from (the module docstring),
    from the steps of all its runs (``runs_steps``: one list of steps per run), in the user's
    units and sense; ``None`` when no step is a feasible evaluation with readable values."""
    import torch

    from npbandit.acquisition.multi_objective import reference_point

    rows = [row for steps in runs_steps for s in steps if (row := objective_row(s, problem)) is not None]
    if not rows:
        return None
    minimize = _directions(problem)
    reference = reference_point(torch.tensor(np.stack(rows), dtype=torch.float64), len(minimize)).numpy()
    return tuple(float(v) for v in maximised(reference, minimize))  # back to the user's sense


def _volume(rows: list[np.ndarray], reference: np.ndarray) -> float:
    """The hypervolume of the front of ``rows`` (maximised) above ``reference`` (maximised)."""
    import torch

    from npbandit.acquisition.multi_objective import dominated_volume

    if not rows:
        return 0.0
    return dominated_volume(torch.tensor(np.stack(rows), dtype=torch.float64),
                            torch.tensor(reference, dtype=torch.float64))


def hypervolume(steps: Sequence[dict[str, Any]], problem: Problem, reference: Sequence[float]) -> float:
    """The hypervolume of the feasible front of ``steps`` (a run's, all of them) against
    ``reference`` (in the user's units and sense, :func:`group_reference`); 0 when no step
    dominates it."""
    rows = [row for s in steps if (row := objective_row(s, problem)) is not None]
    return _volume(rows, maximised(np.asarray(reference, dtype=np.float64), _directions(problem)))


def hypervolume_curve(steps: Sequence[dict[str, Any]], length: int, problem: Problem,
                      reference: Sequence[float], given: Sequence[dict[str, Any]] = ()) -> np.ndarray:
    """``[length]``: the hypervolume of a run's feasible front against ``reference`` (the
    problem's, :func:`group_reference`, in the user's units and sense) after each of its
    ``length`` evaluations, by their ``t`` (failed and infeasible ones spend budget and add
    nothing; 0 while no evaluation dominates the reference). ``given``: steps the run was
    given before its first evaluation, counted in its front from the start."""
    target = maximised(np.asarray(reference, dtype=np.float64), _directions(problem))
    rows = [row for s in given if (row := objective_row(s, problem)) is not None]
    volume = _volume(rows, target)
    by_t = {s["t"]: s for s in steps}
    curve = np.empty(length)
    for t in range(length):
        row = objective_row(by_t[t], problem) if t in by_t else None
        # a point another already dominates (or equals) adds nothing: the volume is computed only when the front moves
        if row is not None and not any(bool(np.all(old >= row)) for old in rows):
            rows.append(row)
            volume = _volume(rows, target)
        curve[t] = volume
    return curve


def front_size(steps: Sequence[dict[str, Any]], problem: Problem) -> int:
    """How many points a run's feasible Pareto front holds (equal points once)."""
    import torch

    from npbandit.acquisition.multi_objective import pareto_front

    rows = [row for s in steps if (row := objective_row(s, problem)) is not None]
    if not rows:
        return 0
    return int(len(pareto_front(torch.tensor(np.stack(rows), dtype=torch.float64), len(rows[0]))))
