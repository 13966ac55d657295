"""Which runs ``npbandit report`` compares with which: a black-box run's *problem*, a
bandit run's *setting* and its simple-regret window.

A bandit setting (:func:`bandit_setting`) is the environment a run played and the
parameters that define its task, as the run recorded them in its ``env_params``: for the
wheel bandit its ``delta``; for another of npbandit's environments those its class names
(``TASK_PARAMS``, :func:`npbandit.envs.task_param_names`: a classification data set's
name, a linear bandit's context width, arm count and noise); for an environment of one's
own, every parameter the run recorded but its length (``horizon``), its context width and
arm count among them (``context_dim``, ``n_arms``: ``run_episode`` records them from its
spaces; a run recorded before it did has neither, and is a setting apart). Runs of two
settings are never put in one row or one panel.

A black-box problem is the objective's name, input dimension, bounds (or, for a run over
a search space, the space: each parameter's name, type and range), direction (minimise
/ maximise; for a run of several objectives, each objective's, in order, with the objectives'
names: those the run recorded, else their positions' ``f0``, ``f1``, ...) and outcome
constraints (their callable's name, ``optimize(constraints=...)``), as each run recorded
them; two runs that differ in any of these are never put in one row or one panel. A bandit
run's simple regret is the mean per-round regret over the last :data:`SIMPLE_REGRET_SHARE`
of its rounds.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np

from npbandit.envs import task_param_names
from npbandit.envs.directions import maximised
from npbandit.objective_names import positional_names, recorded_names
from npbandit.storage import RunRow
from npbandit.text import printable

__all__ = ["BanditSetting", "Problem", "SIMPLE_REGRET_SHARE", "WHEEL_ENV_ID", "bandit_setting", "bo_groups",
           "problem", "problem_key", "space_text", "tail_rounds"]

#: the share of a bandit run's last rounds that simple regret averages over (the wheel
#: protocol's 500 of 2000 rounds)
SIMPLE_REGRET_SHARE = 0.25
#: the wheel bandit's environment id: the setting of its runs is their ``delta``
WHEEL_ENV_ID = "npbandit/WheelBandit-v0"
#: a bandit run's recorded parameter that is its length, not its task (runs are also grouped by length)
_LENGTH = "horizon"

_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_DIRECTIONS = {True: "minimise", False: "maximise", None: "direction ?"}


@dataclass(frozen=True)
class Problem:
    """What a black-box run optimised, as recorded with it. Fields a run did not record
    (runs logged before they were) are ``None`` and shown as ``?``.

    Attributes:
        name: the objective's name.
        dim: input dimension ``d`` (of a search space: its unit cube's columns).
        bounds: ``(lower, upper)``, each a tuple of ``d`` floats.
        minimize: the direction; for a problem of several objectives (a run that recorded
            ``minimize`` as a list), each objective's, a tuple in the objectives' order
            (:attr:`objectives` of them; :mod:`~npbandit.report.hypervolume` measures its runs).
        optimal_value: the optimum the runs recorded (``None``: unknown, or runs disagree).
        space: a run over a search space (``optimize(f, space)``): the space as :func:`space_text`
            writes it (``None`` for a box, whose ``bounds`` say it).
        constraints: the outcome constraints' name (``optimize(constraints=...)``), ``None``
            for an unconstrained problem.
        parameters: a search space's number of parameters (``None`` for a box), which
            differs from ``dim`` when a choice takes several columns.
        objective_names: a problem of several objectives: each objective's name, in their order
            (:func:`~npbandit.objective_names.recorded_names`: those the runs recorded, else
            ``f0``, ``f1``, ...); ``None`` for one objective (and where :attr:`objectives`
            gives none, the positional names stand in).
        parameter_constraints: linear input constraints (``optimize(parameter_constraints=...)``),
            joined by ``", "``; ``None`` without.
    """

    name: str
    dim: int | None
    bounds: tuple[tuple[float, ...], tuple[float, ...]] | None
    minimize: bool | tuple[bool, ...] | None
    optimal_value: float | None = None
    space: str | None = None
    constraints: str | None = None
    parameters: int | None = None
    objective_names: tuple[str, ...] | None = None
    parameter_constraints: str | None = None

    def dim_text(self) -> str:
        """``d=6``; for a search space whose parameters are fewer than its unit cube's
        columns, both: ``4 parameters (7 columns)``."""
        if self.parameters is not None and self.dim is not None and self.parameters != self.dim:
            return f"{self.parameters} parameters ({self.dim} columns)"
        return f"d={self.dim if self.dim is not None else '?'}"

    def bounds_text(self, superscript: bool = False) -> str:
        """``[0, 1]^6`` for a cube (``[0, 1]⁶`` with ``superscript``), else ``[a, b] x [c, d] ...``;
        a search space's text for a run over one."""
        if self.space is not None:
            return self.space
        if self.bounds is None:
            return "bounds ?"
        lower, upper = self.bounds
        if len(set(lower)) == 1 and len(set(upper)) == 1:
            power = str(len(lower)).translate(_SUPERSCRIPTS) if superscript else f"^{len(lower)}"
            return f"[{lower[0]:g}, {upper[0]:g}]{power}"
        return " x ".join(f"[{lo:g}, {hi:g}]" for lo, hi in zip(lower, upper))

    @property
    def objectives(self) -> int:
        """How many objectives: the length of a tuple :attr:`minimize`, else 1."""
        return len(self.minimize) if isinstance(self.minimize, tuple) else 1

    def names(self) -> tuple[str, ...]:
        """The objectives' names, in order: :attr:`objective_names`, else their positional names
        (``f0``, ``f1``, ...; a single objective's ``f0``)."""
        return self.objective_names or positional_names(self.objectives)

    def direction(self) -> str:
        """``minimise``, ``maximise`` or ``direction ?``; for several objectives each one's,
        named by its name (:meth:`names`): ``minimise cost, maximise accuracy``, ``minimise f0,
        maximise f1`` for objectives named by position."""
        if isinstance(self.minimize, tuple):
            return ", ".join(f"{_DIRECTIONS[m]} {name}" for name, m in zip(self.names(), self.minimize))
        return _DIRECTIONS[self.minimize]

    def label(self) -> str:
        """``hartmann  d=6  [0, 1]^6  minimise`` (``  where x0 + x1 <= 1`` with linear input
        constraints, ``  subject to <constraints>`` with outcome constraints)"""
        text = f"{self.name}  {self.dim_text()}  {self.bounds_text()}  {self.direction()}"
        if self.parameter_constraints is not None:
            text += f"  where {self.parameter_constraints}"
        return text if self.constraints is None else f"{text}  subject to {self.constraints}"

    def regret(self, best: Any) -> Any:
        """Simple regret of a best value (a float, or an array of them, elementwise): how far it
        is from the optimum, in the direction of optimisation (the optimum's lead over it, both
        :func:`~npbandit.envs.directions.maximised`). Negative when a run beat the recorded optimum
        (then noise; shown, not hidden). ``None`` when the optimum or the direction is unknown, and
        for several objectives (no one best value)."""
        if self.optimal_value is None or self.minimize is None or isinstance(self.minimize, tuple):
            return None
        return maximised(self.optimal_value - best, self.minimize)


@dataclass(frozen=True)
class BanditSetting:
    """What a bandit run played (see the module docstring): its environment and the
    parameters that define the task, as recorded with it.

    Attributes:
        env_id: the environment's id as the run recorded it.
        params: ``(name, value)`` of each parameter that defines the task and that the run
            recorded (a list or mapping as its JSON text): for the wheel, ``delta`` alone,
            ``None`` when the run did not record it.
    """

    env_id: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def wheel(self) -> bool:
        """Whether the runs played the wheel bandit."""
        return self.env_id == WHEEL_ENV_ID

    @property
    def delta(self) -> Any:
        """The wheel's ``delta`` as the runs recorded it; ``None`` for other environments."""
        return dict(self.params).get("delta") if self.wheel else None

    def label(self) -> str:
        """``wheel δ=0.9``, ``ClassificationBandit-v0 dataset=iris``, ``my-env p=1`` (npbandit's
        own ids without their ``npbandit/`` prefix; ``?`` for a wheel run's unrecorded delta)."""
        if self.wheel:
            return f"wheel δ={_param_text(self.delta)}"
        return printable(" ".join([self.env_id.removeprefix("npbandit/")]
                                  + [f"{k}={_param_text(v)}" for k, v in self.params]))

    def sort_key(self) -> tuple:
        """The order of tables and figures: the wheel's settings first, by ``delta``
        (unrecorded as 0), then the others by label."""
        if self.wheel:
            delta = self.delta
            return (0, delta if isinstance(delta, (int, float)) and not isinstance(delta, bool) else 0, "")
        return (1, 0, self.label())


def bandit_setting(run: RunRow) -> BanditSetting:
    """The :class:`BanditSetting` of a bandit run, from its ``env_id`` and ``env_params``
    (see the module docstring for which parameters count)."""
    params = run.env_params
    if run.env_id == WHEEL_ENV_ID:
        return BanditSetting(run.env_id, (("delta", _hashable(params.get("delta"))),))
    names = task_param_names(run.env_id)
    if names is None:  # an environment of one's own: all it recorded but the run length
        names = tuple(sorted(k for k in params if k != _LENGTH))
    return BanditSetting(run.env_id, tuple((k, _hashable(params[k])) for k in names if k in params))


def _hashable(value: Any) -> Any:
    """A recorded value as a setting holds it: a JSON scalar as it is, a list or mapping as
    its JSON text."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return json.dumps(value, sort_keys=True, default=str)


def _param_text(value: Any) -> str:
    if value is None:
        return "?"
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def problem_key(run: RunRow) -> tuple:
    """``(name, dim, bounds, minimize, space, constraints, parameters, objective_names, parameter_constraints)`` of a
    black-box run, from its
    ``env_params`` (``None`` for what it did not record): the fields of :class:`Problem` but
    the optimum.
    ``space`` is :func:`space_text` of a run over a search space, ``None`` for a box (whose
    recorded space of floats ``x0 ...`` its bounds say already)."""
    params = run.env_params
    bounds, space = _bounds(params.get("bounds")), params.get("space")
    if bounds is not None:
        space = None
    elif params.get("bounds") is not None and space is None:  # bounds in a form of the caller's own: shown as given
        space = params["bounds"]
    dim = _count(params.get("dim")) or (len(bounds[0]) if bounds else _count(run.policy_params.get("dim")))
    minimize = _directions(params.get("minimize"))
    constraints = params.get("constraints")
    names = recorded_names(params) if isinstance(minimize, tuple) else None
    if names is not None and len(names) != len(minimize):  # a caller's own record: its names say nothing
        names = None
    return (str(params.get("objective", "?")), dim, bounds, minimize,
            None if space is None else space_text(space) if _is_space_record(space) else printable(str(space)),
            None if constraints is None else str(constraints),
            len(space) if _is_space_record(space) else None,
            None if names is None else tuple(printable(n) for n in names), _linear_text(params))


def _linear_text(params: dict) -> str | None:
    """A run's recorded ``parameter_constraints`` on one line (``None`` without)."""
    given = params.get("parameter_constraints")
    if not given:
        return None
    return printable(", ".join(str(c) for c in given) if isinstance(given, list) else str(given))


def _directions(minimize: object) -> bool | tuple[bool, ...] | None:
    """A run's recorded ``minimize`` as a :class:`Problem` holds it: a list of bools (a run of
    several objectives) as a tuple, any other list (``env_params`` of a caller's own) as
    unknown (``None``), ``None`` as it is, anything else as a bool."""
    if isinstance(minimize, list):
        return tuple(minimize) if minimize and all(isinstance(m, bool) for m in minimize) else None
    return None if minimize is None else bool(minimize)


def _bounds(bounds: object) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """A run's recorded ``bounds`` as ``(lower, upper)`` float tuples; ``None`` when absent or
    not two equal-length rows of numbers (``env_params`` of a caller's own runs may hold anything)."""
    try:
        lower, upper = (tuple(float(v) for v in row) for row in bounds)  # type: ignore[union-attr]
    except (TypeError, ValueError):
        return None
    return (lower, upper) if len(lower) == len(upper) > 0 else None


def _count(value: object) -> int | None:
    """A recorded dimension as an int (``None`` for anything but a positive integer)."""
    return int(value) if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value > 0 else None


def _is_space_record(space: object) -> bool:
    """Whether ``space`` is a search space's record (:meth:`npbandit.space.SearchSpace.describe`:
    a dict of parameter names to dicts)."""
    return isinstance(space, dict) and all(isinstance(spec, dict) for spec in space.values())


def space_text(space: dict) -> str:
    """A search space's record (:meth:`npbandit.space.SearchSpace.describe`) on one line:
    ``lr: float [0.0001, 0.1] log, layers: int [1, 4], act: choice {relu, tanh}`` (a choice with
    dependents: ``model: choice {svm, rf} (svm: C; rf: n depth)``)."""
    parts = []
    for name, spec in space.items():
        spec = spec if isinstance(spec, dict) else {}
        kind = str(spec.get("type", "?"))
        if kind == "choice":
            text = "{" + ", ".join(str(v) for v in spec.get("values", [])) + "}"
            text += " ordered" if spec.get("ordered") else ""
            pairs = spec.get("dependents")
            if isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs):
                # a conditional space: which parameters each value brings
                text += " (" + "; ".join(f"{v}: " + " ".join(str(n) for n in names) for v, names in pairs
                                         if isinstance(names, list)) + ")"
        else:
            text = f"[{_number(spec.get('low'))}, {_number(spec.get('high'))}]"
            text += " log" if spec.get("log") else ""
            text += f" step {_number(spec['step'])}" if spec.get("step") is not None else ""
        parts.append(printable(f"{name}: {kind} {text}"))
    return ", ".join(parts)


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) and not isinstance(value, bool) else "?"


def bo_groups(runs: list[RunRow]) -> dict[Problem, list[RunRow]]:
    """Completed BO runs by problem, sorted by name, dimension, bounds and direction; a
    problem's optimum is the one its runs recorded, ``None`` when none did or they disagree."""
    by_key: dict[tuple, list[RunRow]] = defaultdict(list)
    for run in runs:
        if run.kind == "bo" and run.status == "completed":
            by_key[problem_key(run)].append(run)
    out = {}
    for key, group in by_key.items():
        stated = {float(r.env_params["optimal_value"]) for r in group if r.env_params.get("optimal_value") is not None}
        out[problem(key, optimal_value=stated.pop() if len(stated) == 1 else None)] = group
    return dict(sorted(out.items(), key=lambda kv: (kv[0].name, kv[0].dim or 0, str(kv[0].bounds),
                                                    str(kv[0].minimize), kv[0].space or "",
                                                    kv[0].constraints or "", str(kv[0].objective_names),
                                                    kv[0].parameter_constraints or "")))


def problem(key: tuple, optimal_value: float | None = None) -> Problem:
    """The :class:`Problem` of a :func:`problem_key`."""
    name, dim, bounds, minimize, space, constraints, parameters, names, linear = key
    return Problem(name, dim, bounds, minimize, optimal_value=optimal_value, space=space, constraints=constraints,
                   parameters=parameters, objective_names=names, parameter_constraints=linear)


def tail_rounds(rounds: int) -> int:
    """How many of a bandit run's last ``rounds`` its simple regret averages over
    (:data:`SIMPLE_REGRET_SHARE` of them, at least one)."""
    return max(1, math.ceil(SIMPLE_REGRET_SHARE * rounds))
