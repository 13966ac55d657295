"""The curves behind ``npbandit report --plot``, read from a database (no matplotlib here).

Three quantities, each drawn in a figure of its own (:data:`QUANTITIES`):

- ``"bandit"``: bandit cumulative regret against the round, one panel per setting
  (:func:`~npbandit.report.grouping.bandit_setting`: the wheel's ``delta``, a classification
  data set...); the figure is titled for the wheel bandit when every panel is the wheel's;
- ``"bo-regret"``: black-box simple regret (the gap from the best value found so far to
  the problem's recorded optimum) against the evaluation, one panel per problem whose
  optimum is known;
- ``"bo-value"``: the best value found so far, one panel per problem whose optimum is not;
- ``"bo-hypervolume"``: for a problem of several objectives, the hypervolume of a run's
  feasible Pareto front so far, against the reference point shared by every run of the
  problem (:mod:`~npbandit.report.hypervolume`), one panel per problem.

A black-box run that started from given points (``optimize(initial=...)``, ``--initial-from``)
counts its evaluations from them: with ``M`` given, its first evaluation is evaluation ``M + 1``
and its curve starts at evaluation ``M`` with the best of the given points
(:func:`given_best`; unknown, and the curve starts at ``M + 1``, for points no run holds),
the best found so far counting them; of several objectives, it starts at the hypervolume of
the given points' front, and its front counts them.

A panel's lines are its rows as ``npbandit report`` tabulates them (one policy with one
setting, :class:`~npbandit.report.labels.RowKey`), each the runs' curves stacked.
"""

from __future__ import annotations

import math
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from npbandit.feasibility import best_step
from npbandit.report.grouping import BanditSetting, Problem, bandit_setting, bo_groups
from npbandit.report.hypervolume import group_reference, hypervolume, hypervolume_curve
from npbandit.report.labels import RowKey, row_keys
from npbandit.storage import DEFAULT_URL, INITIAL, INITIAL_FROM, RunRow, list_runs, run_evaluations, run_steps

__all__ = ["Quantity", "QUANTITIES", "Line", "Panel", "panels", "best_curve", "given_best", "figure_title",
           "length_text"]

#: characters in one line of a panel's title: about a panel's width at the figures' smallest font
_TITLE_CHARS = 36


def _wrapped(text: str) -> str:
    """``text`` on lines of at most :data:`_TITLE_CHARS` characters (:func:`textwrap.wrap`), so
    a long name, search space or box stays within its panel instead of running across its
    neighbours' titles."""
    return "\n".join(textwrap.wrap(text, _TITLE_CHARS))


@dataclass(frozen=True)
class Quantity:
    """What a figure plots: its title, axis labels, whether the values are regrets
    (a regret axis is logarithmic when the values span a decade or more), and the part
    :func:`~npbandit.report.figures.figure_paths` adds to a file's stem where there are
    several figures (the kind of run, then what is plotted where it is not a regret:
    ``regret-bo.png``, not ``regret-bo-regret.png``)."""

    title: str
    xlabel: str
    ylabel: str
    regret: bool
    file_part: str


#: the figures ``npbandit report --plot`` draws, by id, in the order it draws them
QUANTITIES = {
    "bandit": Quantity("Bandits: cumulative regret", "round", "cumulative regret", True, "bandit"),
    "bo-regret": Quantity("Black-box optimisation: simple regret", "evaluation", "simple regret", True, "bo"),
    "bo-value": Quantity("Black-box optimisation: best value found", "evaluation", "best value found", False,
                         "bo-value"),
    "bo-hypervolume": Quantity("Black-box optimisation, several objectives: hypervolume", "evaluation",
                               "hypervolume of the feasible front", False, "bo-hypervolume"),
}


@dataclass
class Line:
    """One line of a panel: the runs of one row.

    Attributes:
        key: the row (policy id and the settings that tell it apart).
        given: how many points its runs were given before their first evaluation (0: none);
            the curves' first ``given - 1`` entries are NaN and entry ``given - 1`` is the
            given points' best.
        suffix: what tells lines of one row apart within the panel (``", budget 20"``,
            ``", 300 rounds"``: :func:`length_text`), else ``""``.
        curves: ``[runs, steps]``, one curve per run (NaN where a black-box run had no
            successful evaluation yet).
        n_inits: the distinct initial-design sizes of its runs (empty when they logged none).
        length: its runs' length, rounds (bandit) or budget (black-box); a figure whose panels
            hold lines of several lengths gives each length a dash of its own.
    """

    key: RowKey
    suffix: str
    curves: np.ndarray
    n_inits: frozenset[int] = field(default_factory=frozenset)
    given: int = 0
    length: int = 0

    @property
    def runs(self) -> int:
        return int(self.curves.shape[0])


@dataclass
class Panel:
    """One panel of a figure: a ``quantity`` (a key of :data:`QUANTITIES`), a title
    naming the setting (a bandit setting, a problem and budget), and its lines;
    ``setting``: a bandit panel's :class:`~npbandit.report.grouping.BanditSetting`
    (``None`` for a black-box one)."""

    quantity: str
    title: str
    lines: list[Line]
    setting: BanditSetting | None = None

    def design_ends(self) -> list[int]:
        """The distinct initial-design sizes of the panel's runs that fall inside it (where a
        vertical line marks the end of the initial design), in increasing order."""
        length = max(line.curves.shape[1] for line in self.lines)
        return sorted({n for line in self.lines for n in line.n_inits if 1 <= n <= length})


def length_text(quantity: str, length: int) -> str:
    """How a figure names a run length of ``quantity``: ``"300 rounds"`` (bandit),
    ``"budget 20"`` (black-box)."""
    return f"{length} rounds" if quantity == "bandit" else f"budget {length}"


def best_curve(steps: list[dict[str, Any]], length: int) -> np.ndarray:
    """Best value found after each of ``length`` evaluations (failed ones included, they
    spend budget); NaN before the first evaluation that succeeded. Shape ``[length]``."""
    curve = np.full(length, np.nan)
    best = math.nan
    by_t = {s["t"]: s for s in steps}
    for t in range(length):
        step = by_t.get(t)
        if step is not None and not step["failed"] and step["best_value"] is not None:
            best = step["best_value"]
        curve[t] = best
    return curve


def given_best(db: str, run: RunRow, problem: Problem) -> tuple[int, float]:
    """``(M, best)``: how many points a black-box run was given before its first evaluation
    and the best value among them in the problem's direction (with constraints, the best
    feasible one), read from the run it continued (:func:`~npbandit.storage.run_evaluations`);
    ``best`` is NaN when none succeeded, when the points are in no run (given as pairs, a
    history...), the chain cannot be followed, or the direction is unknown."""
    given = run.policy_params.get(INITIAL)
    if isinstance(given, bool) or not isinstance(given, int) or given <= 0:
        return 0, math.nan
    if run.policy_params.get(INITIAL_FROM) is None or problem.minimize is None:
        return given, math.nan
    try:
        seen = run_evaluations(db, run)[:given]
    except (TypeError, ValueError):  # a chain broken since: the report shows what it can
        return given, math.nan
    best = best_step(seen, problem.minimize, problem.constraints is not None)
    return given, math.nan if best is None else best["value"]


def figure_title(quantity: str, group: list[Panel]) -> str:
    """The title of the figure of ``quantity`` drawn from the panels ``group``: its
    :data:`QUANTITIES` title, ``Wheel bandit: cumulative regret`` for bandit panels that
    are all the wheel bandit's."""
    if quantity == "bandit" and group and all(p.setting is not None and p.setting.wheel for p in group):
        return "Wheel bandit: cumulative regret"
    return QUANTITIES[quantity].title


def _runs_text(lines: list[Line]) -> str:
    counts = sorted({line.runs for line in lines})
    many = counts[-1] != 1
    span = str(counts[0]) if len(counts) == 1 else f"{counts[0]}-{counts[-1]}"
    return f"{span} run{'s' if many else ''} per line"


def _bandit_panels(db: str, runs: list[RunRow]) -> list[Panel]:
    finished: dict[BanditSetting, list[tuple[RunRow, np.ndarray]]] = defaultdict(list)
    for run in runs:
        if run.kind == "bandit" and run.status == "completed":
            steps = run_steps(db, run.id)
            # a run whose environment gave no regret has no curve (the table says so)
            if steps and all(s["cumulative_regret"] is not None for s in steps):
                finished[bandit_setting(run)].append(
                    (run, np.array([s["cumulative_regret"] for s in steps], dtype=float)))
    by_setting: dict[BanditSetting, dict[tuple[RowKey, int], list[np.ndarray]]] = defaultdict(
        lambda: defaultdict(list))
    for setting, cell in finished.items():
        for length in {len(curve) for _, curve in cell}:  # rows among the runs of one length, as in the table
            same = [(run, curve) for run, curve in cell if len(curve) == length]
            keys = row_keys([run for run, _ in same])
            for run, curve in same:
                by_setting[setting][(keys[run.id], length)].append(curve)
    panels = []
    for setting, by_line in sorted(by_setting.items(), key=lambda kv: kv[0].sort_key()):
        lengths = {n for _, n in by_line}
        lines = [Line(key, "" if len(lengths) == 1 else f", {length_text('bandit', n)}", np.stack(curves),
                      length=n)
                 for (key, n), curves in sorted(by_line.items(), key=lambda kv: (kv[0][0].text(), kv[0][1]))]
        rounds = f", {length_text('bandit', lengths.pop())}" if len(lengths) == 1 else ""
        # wrapped with its run length: a label that just fits a line would run past its panel with it
        name = f"δ = {setting.delta}{rounds}" if setting.wheel else _wrapped(f"{setting.label()}{rounds}")
        panels.append(Panel("bandit", f"{name}\n{_runs_text(lines)}", lines, setting))
    return panels


def _hypervolume_curve(db: str, run: RunRow, steps: list[dict[str, Any]], budget: int, problem: Problem,
                       reference: tuple[float, ...] | None) -> tuple[int, np.ndarray]:
    """``(M, curve)``: as :func:`given_best` and :func:`best_curve` for a run of several
    objectives, the hypervolume of its feasible front after each evaluation, counted from the
    ``M`` points it was given (entry ``M - 1`` their front's; NaN when they cannot be read,
    as :func:`given_best` says); all NaN when the problem has no ``reference``."""
    given = run.policy_params.get(INITIAL)
    given = given if isinstance(given, int) and not isinstance(given, bool) and given > 0 else 0
    if reference is None:
        return given, np.full(given + budget, np.nan)
    seen: list[dict[str, Any]] | None = None
    if given and run.policy_params.get(INITIAL_FROM) is not None:
        try:
            seen = run_evaluations(db, run)[:given]
        except (TypeError, ValueError):  # a chain broken since: the report shows what it can
            seen = None
    curve = hypervolume_curve(steps, budget, problem, reference, seen or ())
    if not given:
        return 0, curve
    start = math.nan if seen is None else hypervolume(seen, problem, reference)
    return given, np.concatenate([np.full(given - 1, np.nan), [start], curve])


def _bo_panels(db: str, runs: list[RunRow]) -> list[Panel]:
    panels = []
    for problem, group in bo_groups(runs).items():
        by_line: dict[tuple[RowKey, int, int], list[tuple[np.ndarray, Any]]] = defaultdict(list)
        keys = row_keys(group)
        known = problem.regret(0.0) is not None
        several = problem.objectives > 1
        read = {run.id: run_steps(db, run.id) for run in group}
        # as in the tables, a run with no successful evaluation (closed before any was told) is no row's
        read = {i: steps for i, steps in read.items() if any(not s["failed"] for s in steps)}
        if not read:
            continue
        reference = group_reference(read.values(), problem) if several else None
        for run in group:
            if run.id not in read:
                continue
            steps = read[run.id]
            budget = run.env_params.get("budget") or len(steps)
            if several:
                given, best = _hypervolume_curve(db, run, steps, budget, problem, reference)
                by_line[(keys[run.id], budget, given)].append((best, run.policy_params.get("n_init")))
                continue
            best = best_curve(steps, budget)
            given, start = given_best(db, run, problem)
            if given:  # counted from the given points, the best so far counting them
                if math.isfinite(start):
                    best = np.fmin(best, start) if problem.minimize else np.fmax(best, start)
                best = np.concatenate([np.full(given - 1, np.nan), [start], best])
            if known:
                best = problem.regret(best)
            by_line[(keys[run.id], budget, given)].append((best, run.policy_params.get("n_init")))
        budgets = {b for _, b, _ in by_line}
        lines = [Line(key, "" if len(budgets) == 1 else f", {length_text('bo', budget)}",
                      np.stack([c for c, _ in cell]), frozenset(int(n) for _, n in cell if n is not None), given,
                      budget)
                 for (key, budget, given), cell in sorted(by_line.items(),
                                                          key=lambda kv: (kv[0][0].text(), kv[0][1], kv[0][2]))]
        problem_text = (f"{problem.dim_text()}, {problem.bounds_text(superscript=True)}, {problem.direction()}"
                        + (f", {length_text('bo', budgets.pop())}" if len(budgets) == 1 else ""))
        title = f"{_wrapped(problem.name)}\n{_wrapped(problem_text)}\n{_runs_text(lines)}"
        if several:
            title += "\n" + _wrapped("reference " + ("none: no feasible point" if reference is None else ", ".join(
                f"{name}={v:.4g}" for name, v in zip(problem.names(), reference))))
        if known and any(np.nanmin(line.curves) < 0 for line in lines if np.isfinite(line.curves).any()):
            title += (f"\nruns beat the recorded optimum {problem.optimal_value:.6g}:\nit is not the optimum, "
                      "or a noisy observation beat it")
        panels.append(Panel("bo-hypervolume" if several else "bo-regret" if known else "bo-value", title, lines))
    return panels


def panels(db: str = DEFAULT_URL) -> list[Panel]:
    """Every panel the completed runs in ``db`` make: the bandit ones (by setting, the
    wheel's by ``delta`` first), then the black-box ones (by problem, as
    :func:`~npbandit.report.bo_summary` groups them)."""
    runs = list_runs(db)
    return _bandit_panels(db, runs) + _bo_panels(db, runs)
