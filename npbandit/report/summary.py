"""The tables of ``npbandit report``: the latest runs and what made them
(:func:`versions_lines`), then bandit and black-box regret, each row a set of comparable
runs (:mod:`npbandit.report.grouping`) of one policy with one setting
(:mod:`npbandit.report.labels`).

- bandits: one *setting* -- the environment and the parameters that define its task
  (:func:`~npbandit.report.grouping.bandit_setting`: the wheel's ``delta``, a
  classification data set...) -- and one run length. *Simple regret* is the mean
  per-round regret over the last quarter of each run (:data:`SIMPLE_REGRET_SHARE`):
  the last 500 of the wheel protocol's 2000 rounds, the last 75 of a 300-round run.
  When every run played the wheel, the table is the wheel bandit's, one row per
  ``delta``; else each row names its setting (``wheel δ=0.9``,
  ``ClassificationBandit-v0 dataset=iris``).
- black-box optimisation: one *problem* -- objective name (``optimize(name=...)``, else
  the callable's ``module:qualname``), input dimension, bounds and direction
  (minimise / maximise) -- and one budget. When the run recorded the problem's optimum
  (``optimize(optimal_value=...)``, named test functions on their own bounds),
  *simple regret* is the gap between the best value found and it. With outcome
  constraints (``optimize(constraints=...)``) the best value is the best *feasible* one
  (every constraint value ``<= 0``), the block counts the feasible evaluations, and a run
  that found no feasible point has no best value. A row whose runs had failed evaluations
  lists why (:func:`failure_reason`): each distinct reason with its count, the most
  frequent first (:data:`SHOWN_REASONS` of them, the others counted). A run's best value
  is of its own evaluations; a run that started from given points says so in the runs list
  (:func:`given_text`), as does a run some of whose evaluations held values the caller fixed
  (``Optimizer.ask(fixed=...)``): ``(fixed values in 2 of 20 evaluations)``.
- black-box optimisation of several objectives (a run that recorded each objective's
  direction, ``minimize`` a list): a section of its own after the one of single objectives,
  one block per problem -- its title names each objective's direction by the objective's
  name, ``minimise cost, maximise accuracy`` (``minimise f0, maximise f1`` for objectives
  named by position) -- and budget, which says its reference point once; a row per policy gives
  the hypervolume of each run's feasible Pareto front after its last evaluation, the front's
  size (median [25 %, 75 %] over runs of each), the evaluations per run, the seconds per
  evaluation and the failed evaluations, with their reasons below it, as above (the rule of
  the reference point: :mod:`~npbandit.report.hypervolume`).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from typing import Any

import numpy as np

from npbandit.feasibility import is_feasible
from npbandit.objective_names import positional_names
from npbandit.report.grouping import (
    SIMPLE_REGRET_SHARE,
    Problem,
    bandit_setting,
    bo_groups,
    problem,
    problem_key,
    tail_rounds,
)
from npbandit.report.hypervolume import front_size, group_reference, hypervolume, objective_row, readable_values
from npbandit.report.labels import row_keys
from npbandit.storage import (
    DEFAULT_URL,
    INITIAL,
    INITIAL_FROM,
    RunRow,
    display_url,
    fixed_steps,
    list_runs,
    run_steps,
    step_params,
)
from npbandit.storage.logger import RECORDED_PACKAGES
from npbandit.text import printable, shorten

__all__ = ["bandit_summary", "bo_summary", "report_text", "step_params", "versions_lines", "step_feasible",
           "params_text", "failure_reason", "given_text", "SHOWN_REASONS"]

#: the distinct failure reasons a black-box row lists, the most frequent first (the rest counted)
SHOWN_REASONS = 3
#: characters of a failure reason (a row's) or of a run's error (the runs list) shown, cut at a word's end
REASON_WIDTH, RUN_ERROR_WIDTH = 100, 72
#: what a black-box table's s/eval column counts: the search's own time, which a slow objective does not change
S_PER_EVAL = ("s/eval = the seconds the search spent per evaluation (proposing the point and taking in its value; "
              "the objective's own time not counted)")
# the point a failed evaluation's error names (``at x=[0.1, 0.2]``, ``at x={'lr': 0.01}``): each failure's own
_POINT = re.compile(r" at x=(\[[^\[\]]*\]|\{[^{}]*\})")
# the values a failure that returned NaN / inf names (several objectives, or constraints): the finite ones differ
_NONFINITE = re.compile(r"(returned \[)([^\[\]]*)(\].*\(NaN or infinite\))$")


def bandit_summary(db: str = DEFAULT_URL) -> list[dict[str, Any]]:
    """Per (setting: ``setting``, a :class:`~npbandit.report.grouping.BanditSetting`; run
    length: ``steps``; policy with its settings: ``label``; see the module docstring), over
    completed runs: final cumulative regret of each run, normalised by Uniform's mean on the
    same setting and run length (×100) when Uniform ran (with one setting), and simple
    regret (mean per-round regret over the last ``simple_regret_rounds`` rounds,
    :data:`SIMPLE_REGRET_SHARE` of the run). ``delta`` is the wheel's (``None`` for other
    environments).

    A run has a regret only when every one of its steps recorded one (its environment's
    ``info["regret"]``, which an environment of one's own may not know): the lists hold the
    runs that have one, ``runs`` counts all the row's runs and ``no_regret`` those without.
    ``repeated_seeds``: ``{seed: runs}`` for each seed the row ran more than once (a sweep
    run again with ``rerun=True`` / ``--rerun``, or runs logged by hand, repeat completed
    runs, and a run of one seed is the same run again: counted twice, it narrows the spread)."""
    settings: dict[tuple, list[tuple[RunRow, float | None, float | None]]] = defaultdict(list)
    for run in list_runs(db, kind="bandit"):
        if run.status != "completed":
            continue
        steps = run_steps(db, run.id)
        if not steps:
            continue
        final = simple = None
        if all(s["regret"] is not None for s in steps):
            final = steps[-1]["cumulative_regret"]
            simple = statistics.fmean(s["regret"] for s in steps[-tail_rounds(len(steps)):])
        settings[(bandit_setting(run), len(steps))].append((run, final, simple))
    rows = []
    for (setting, horizon), cell in sorted(settings.items(), key=lambda kv: (*kv[0][0].sort_key(), kv[0][1])):
        labels = {i: k.text() for i, k in row_keys([run for run, _, _ in cell]).items()}
        by_label: dict[str, list[tuple[RunRow, float | None, float | None]]] = defaultdict(list)
        for entry in cell:
            by_label[labels[entry[0].id]].append(entry)
        uniform = [v for label, entries in by_label.items() for r, v, _ in entries
                   if r.policy == "uniform" and v is not None]
        uniform_rows = {label for label, entries in by_label.items() if entries[0][0].policy == "uniform"}
        # Uniform runs with two settings (numbers of arms) are no single yardstick: no normalisation then
        norm = statistics.fmean(uniform) if len(uniform_rows) == 1 and uniform else None
        for label, entries in sorted(by_label.items()):
            values = [v for _, v, _ in entries if v is not None]
            row = {"setting": setting, "delta": setting.delta, "steps": horizon, "policy": entries[0][0].policy,
                   "label": label, "runs": len(entries), "cumulative_regret": values,
                   "simple_regret": [s for _, _, s in entries if s is not None],
                   "simple_regret_rounds": tail_rounds(horizon), "no_regret": len(entries) - len(values),
                   "repeated_seeds": {seed: n for seed, n in sorted(Counter(r.seed for r, _, _ in entries).items(),
                                                                      key=lambda kv: (kv[0] is None, kv[0] or 0))
                                      if n > 1}}
            if norm:
                row["normalised"] = [100 * v / norm for v in values]
            rows.append(row)
    return rows


def bo_summary(db: str = DEFAULT_URL) -> list[dict[str, Any]]:
    """Per (problem, budget, policy with its settings: ``label``, see the module
    docstring), over completed runs: the best value each run found,
    its simple regret when the problem's optimum is known (else ``None``), the mean
    seconds per evaluation spent by the policy (act + observe), ``best_point``: the
    row's best evaluation, ``{"run", "t", "value", "reward", "params"}``, its point by name
    in the user's units (:func:`step_params`; ``None`` where the run recorded too little),
    and ``recommended``: of the runs' recommendations (:attr:`RunRow.recommended
    <npbandit.storage.RunRow.recommended>`, the evaluated point each run's model believes
    best; with constraints, of those it predicts feasible), the one with the best posterior
    mean, ``{"run", "t", "value", "params"}`` (``value``: that mean; ``t``: ``None`` for a
    point given to the run); ``None`` when no run of the row recorded one (runs without a
    model).

    With outcome constraints only feasible evaluations count for ``best`` and ``best_point``;
    ``best`` lists the runs that found a feasible point, ``infeasible_runs`` counts those that
    did not (``best_point`` is ``None`` when none did), and ``feasible`` / ``evaluated`` total
    the feasible and the successful evaluations of the row's runs (``None`` for an
    unconstrained row). ``failed`` / ``steps`` total the failed evaluations and all
    evaluations of the row's runs, and ``failures`` says why: ``[(reason, count)]``, each
    distinct :func:`failure_reason` of the failed evaluations, the most frequent first
    (equal counts in the order they first failed).

    A problem of several objectives (:attr:`Problem.objectives
    <npbandit.report.grouping.Problem.objectives>` > 1) has no best value: its rows hold
    ``hypervolume``, each run's hypervolume of its feasible Pareto front after its last
    evaluation, against ``reference``, the one reference point of every run of the problem
    in the user's units and sense (:mod:`~npbandit.report.hypervolume`; ``hypervolume`` and
    ``reference`` are ``None`` when no run of the problem found a feasible point), and
    ``front``, each run's front size; ``unreadable`` counts the successful evaluations whose
    recorded ``values`` are not the problem's number of finite numbers (left out of the
    fronts). ``best``, ``simple_regret``, ``best_point`` and ``recommended`` are ``None``
    there, ``infeasible_runs`` counts the runs whose front is empty, and ``evals``,
    ``s_per_step``, ``feasible`` / ``evaluated``, ``failed`` / ``steps`` and ``failures``
    are as above."""
    rows = []
    for group, runs in bo_groups(list_runs(db, kind="bo")).items():
        if group.objectives > 1:
            rows += _objectives_rows(db, group, runs)
            continue
        cells: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
        labels = {i: k.text() for i, k in row_keys(runs).items()}
        for run in runs:
            steps = run_steps(db, run.id)
            good = [s for s in steps if not s["failed"]]
            if not good:
                continue
            budget = run.env_params.get("budget") or len(steps)
            seconds = statistics.fmean(s["act_s"] + s["observe_s"] for s in good)
            constrained = group.constraints is not None
            feasible = [s for s in good if step_feasible(s)] if constrained else good
            point = None
            if feasible:
                top = max(feasible, key=lambda s: s["reward"])  # rewards are maximised, whatever the direction
                point = {"run": run.id, "t": top["t"], "value": top["value"], "reward": top["reward"],
                         "params": step_params(run, top)}
            cells[(budget, labels[run.id], run.policy)].append({
                "best": good[-1]["best_value"] if feasible else None, "point": point, "evals": len(steps),
                "s_per_step": seconds, "feasible": len(feasible), "evaluated": len(good),
                "failed": len(steps) - len(good), "steps": len(steps),
                "failures": Counter(failure_reason(s["error"]) for s in steps if s["failed"]),
                "recommended": _recommended(run)})
        for (budget, label, policy), cell in sorted(cells.items()):
            best = [c["best"] for c in cell if c["best"] is not None]
            regret = [group.regret(b) for b in best]
            points = [c["point"] for c in cell if c["point"] is not None]
            constrained = group.constraints is not None
            rows.append({"problem": group, "objective": group.name, "budget": budget, "policy": policy,
                         "label": label, "runs": len(cell), "best": best,
                         "simple_regret": None if None in regret else regret,
                         "evals": max(c["evals"] for c in cell),
                         "s_per_step": statistics.fmean(c["s_per_step"] for c in cell),
                         "best_point": max(points, key=lambda p: p["reward"]) if points else None,
                         "infeasible_runs": len(cell) - len(best),
                         "feasible": sum(c["feasible"] for c in cell) if constrained else None,
                         "evaluated": sum(c["evaluated"] for c in cell) if constrained else None,
                         "failed": sum(c["failed"] for c in cell), "steps": sum(c["steps"] for c in cell),
                         "failures": sum((c["failures"] for c in cell), Counter()).most_common(),
                         "recommended": _best_recommendation([c["recommended"] for c in cell], group.minimize)})
    return rows


def _objectives_rows(db: str, group: Problem, runs: list[RunRow]) -> list[dict[str, Any]]:
    """:func:`bo_summary`'s rows of ``group``, a problem of several objectives, from its
    completed ``runs``."""
    labels = {i: k.text() for i, k in row_keys(runs).items()}
    read = [(run, steps) for run, steps in ((run, run_steps(db, run.id)) for run in runs)
            if any(not s["failed"] for s in steps)]  # as for one objective, a run with no success is not a row's
    reference = group_reference((steps for _, steps in read), group)
    constrained = group.constraints is not None
    cells: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for run, steps in read:
        good = [s for s in steps if not s["failed"]]
        feasible = [s for s in good if objective_row(s, group) is not None]
        budget = run.env_params.get("budget") or len(steps)
        cells[(budget, labels[run.id], run.policy)].append({
            "hypervolume": None if reference is None else hypervolume(steps, group, reference),
            "front": front_size(steps, group), "evals": len(steps),
            "s_per_step": statistics.fmean(s["act_s"] + s["observe_s"] for s in good),
            "feasible": len(feasible), "evaluated": len(good), "failed": len(steps) - len(good), "steps": len(steps),
            "unreadable": sum(not readable_values(s, group.objectives) for s in good),
            "failures": Counter(failure_reason(s["error"]) for s in steps if s["failed"])})
    rows = []
    for (budget, label, policy), cell in sorted(cells.items()):
        rows.append({"problem": group, "objective": group.name, "budget": budget, "policy": policy, "label": label,
                     "runs": len(cell), "best": None, "simple_regret": None, "best_point": None, "recommended": None,
                     "hypervolume": None if reference is None else [c["hypervolume"] for c in cell],
                     "reference": reference, "front": [c["front"] for c in cell],
                     "infeasible_runs": sum(c["front"] == 0 for c in cell),
                     "evals": max(c["evals"] for c in cell),
                     "s_per_step": statistics.fmean(c["s_per_step"] for c in cell),
                     "feasible": sum(c["feasible"] for c in cell) if constrained else None,
                     "evaluated": sum(c["evaluated"] for c in cell) if constrained else None,
                     "failed": sum(c["failed"] for c in cell), "steps": sum(c["steps"] for c in cell),
                     "unreadable": sum(c["unreadable"] for c in cell),
                     "failures": sum((c["failures"] for c in cell), Counter()).most_common()})
    return rows


def failure_reason(error: str | None) -> str:
    """Why an evaluation failed, as a report groups failures: its recorded ``error`` without
    the point it names (`` at x=[...]`` / `` at x={...}``, which differs from one failure to
    the next; the point is the step's own record) and, where several values came back and one
    was NaN or infinite, with each finite one read ``finite`` (``objective returned [finite,
    nan] (NaN or infinite)``: which objective or constraint failed), whitespace runs made one space;
    ``"no reason recorded"`` for a step that recorded none."""
    if not error:
        return "no reason recorded"
    reason = " ".join(_POINT.sub("", error).split())
    return _NONFINITE.sub(lambda m: m[1] + ", ".join(_kept(v) for v in m[2].split(",")) + m[3], reason)


def _kept(value: str) -> str:
    """A value of a failure that returned NaN / inf, as :func:`failure_reason` groups it:
    a non-finite one as it is, a finite one as ``finite``."""
    value = value.strip()
    return value if value in ("nan", "inf", "-inf") else "finite"


def step_feasible(step: dict[str, Any]) -> bool:
    """Whether a black-box step of a constrained run satisfied its constraints (every value
    it recorded ``<= 0``); ``False`` for a step that recorded none (failed, or logged
    before steps recorded them)."""
    values = step.get("constraints")
    return bool(values) and is_feasible(values)


def _recommended(run: RunRow) -> dict[str, Any] | None:
    """A run's recommendation as a row shows it, ``None`` when it has none or an unreadable one."""
    rec = run.recommended if isinstance(run.recommended, dict) else {}
    value, t, params = rec.get("value"), rec.get("t"), rec.get("params")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return {"run": run.id, "t": t if isinstance(t, int) and not isinstance(t, bool) else None, "value": float(value),
            "params": params if isinstance(params, dict) else None}


def _best_recommendation(recs: list[dict[str, Any] | None], minimize: bool | None) -> dict[str, Any] | None:
    """Of the recommendations ``recs`` (``None``: a run without one), the one with the best
    posterior mean in the problem's direction (minimised when it is unknown)."""
    recs = [r for r in recs if r is not None]
    if not recs:
        return None
    return (max if minimize is False else min)(recs, key=lambda r: r["value"])


def params_text(params: dict[str, Any] | None, width: int = 100) -> str:
    """``lr=0.00123, layers=3, act='relu'`` on one printable line of at most about ``width``
    characters (floats to 4 significant digits, strings quoted; the parameters that do not
    fit counted at the end)."""
    if params is None:
        return "?"
    parts = [f"{name}={_value_text(value)}" for name, value in params.items()]
    shown: list[str] = []
    for i, part in enumerate(parts):
        rest = len(parts) - i
        if shown and len(", ".join([*shown, part])) > width - (0 if rest == 1 else 14):
            shown.append(f"... {rest} more")
            break
        shown.append(part)
    return printable(", ".join(shown))


def _value_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return repr(value)


def _failure_lines(failures: list[tuple[str, int]]) -> list[str]:
    """A row's failure reasons (``bo_summary``'s ``failures``) as lines below it: the first
    :data:`SHOWN_REASONS`, each shortened at a word's end, then the others counted."""
    lines = [f"    {count} failed: {shorten(printable(reason), REASON_WIDTH)}"
             for reason, count in failures[:SHOWN_REASONS]]
    rest = failures[SHOWN_REASONS:]
    if rest:
        lines.append(f"    {sum(count for _, count in rest)} failed for {len(rest)} other reason(s)")
    return lines


def _mean_std(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f}"


def _median_quartiles(values: list[float] | None) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.4g}"
    q1, median, q3 = np.percentile(values, [25, 50, 75])
    return f"{median:.4g} [{q1:.4g}, {q3:.4g}]"


def given_text(run: RunRow) -> str:
    """What a black-box run started from, as the runs list says it: ``continues run 7, 12
    given points`` for a run that continued another (``optimize(initial=7)``,
    ``--initial-from 7``: its steps are its own evaluations, after those 12); ``12 given
    points`` for one given them in another form; ``""`` for a run given none."""
    given, source = run.policy_params.get(INITIAL), run.policy_params.get(INITIAL_FROM)
    if isinstance(given, bool) or not isinstance(given, int) or given <= 0:
        return ""
    points = f"{given} given point{'s' if given != 1 else ''}"
    return f"continues run {source}, {points}" if isinstance(source, int) and not isinstance(source, bool) else points


#: the order a report names a run's versions in (others follow, by name)
_VERSION_ORDER = ("npbandit", "torch", "python", *RECORDED_PACKAGES)


def _versions_text(versions: dict[str, Any]) -> str:
    names = sorted(versions, key=lambda n: (_VERSION_ORDER.index(n) if n in _VERSION_ORDER else len(_VERSION_ORDER), n))
    return printable(", ".join(f"{name} {versions[name]}" for name in names))


def _ids_text(ids: list[int]) -> str:
    """``run 4`` or ``runs 1-5, 8``: run ids, consecutive ones as a range."""
    spans: list[list[int]] = []
    for i in sorted(ids):
        if spans and i == spans[-1][1] + 1:
            spans[-1][1] = i
        else:
            spans.append([i, i])
    text = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)
    return f"run{'s' if len(ids) > 1 else ''} {text}"


def versions_lines(runs: list[RunRow]) -> list[str]:
    """What made ``runs``, as the report says it under its runs list: ``made with: npbandit
    ..., torch ..., ...`` when every run recorded the same versions (:attr:`RunRow.versions`),
    else the versions all alike and, run by run, those that differ, so that runs of two
    installs are told apart; ``[]`` for no runs."""
    groups: dict[tuple, list[int]] = defaultdict(list)
    for run in runs:
        groups[tuple(sorted((str(k), str(v)) for k, v in (run.versions or {}).items()))].append(run.id)
    if len(groups) <= 1:
        return [f"made with: {_versions_text(dict(versions)) or 'no versions recorded'}" for versions in groups]
    recorded = [set(versions) for versions in groups if versions]
    alike = set.intersection(*recorded) if recorded else set()
    lines = ["made with (versions differ between runs" + (f"; alike where recorded: {_versions_text(dict(alike))}"
                                                         if alike else "") + "):"]
    for versions, ids in sorted(groups.items(), key=lambda item: min(item[1])):
        differ = dict(pair for pair in versions if pair not in alike)
        said = _versions_text(differ) if differ else ("nothing else recorded" if versions else "no versions recorded")
        lines.append(f"  {_ids_text(ids)}: {said}")
    return lines


def _setting(run: RunRow) -> str:
    if run.kind == "bandit":
        setting = bandit_setting(run)
        text = f"delta={setting.delta}" if setting.wheel else setting.label()
    else:
        solved = problem(problem_key(run))
        shown = {True: "min", False: "max", None: "?"}
        direction = shown[solved.minimize] if not isinstance(solved.minimize, tuple) else (
            ",".join(shown[m] for m in solved.minimize) if solved.names() == positional_names(solved.objectives)
            else ",".join(f"{name} {shown[m]}" for name, m in zip(solved.names(), solved.minimize)))
        # the objective's name first: a space's columns go, then the name's start (its end tells settings apart)
        tail = f" {solved.dim_text()} {direction}"
        if len(solved.name) + len(tail) > 36 and solved.parameters is not None:
            tail = f" {solved.parameters} parameters {direction}"
        room = max(36 - len(tail), 12)
        text = (solved.name if len(solved.name) <= room else "…" + solved.name[1 - room:]) + tail
    return text if len(text) <= 36 else text[:35] + "…"


def report_text(db: str = DEFAULT_URL, limit: int = 20) -> str:
    """The report as text: the latest ``limit`` runs, then the bandit and the
    black-box-optimisation tables of completed runs (see the module docstring)."""
    runs = list_runs(db)
    lines = [f"database: {display_url(db)}", f"runs: {len(runs)} ("
             + ", ".join(f"{s} {sum(r.status == s for r in runs)}"
                         for s in ("completed", "running", "interrupted", "failed")) + ")", ""]
    if runs:
        fixed = fixed_steps(db, [r.id for r in runs[-limit:] if r.kind == "bo"])
        lines.append(f"{'id':>4}  {'kind':<6}  {'policy':<24}  {'setting':<36}  {'seed':>4}  {'steps':>6}  status")
        for r in runs[-limit:]:
            # stored text is shown escaped: a newline or terminal escape in an error (or a
            # user's policy name) must not break the table or colour the terminal
            lines.append(f"{r.id:>4}  {r.kind:<6}  {printable(r.policy):<24}  {printable(_setting(r)):<36}  "
                         f"{r.seed if r.seed is not None else '-':>4}  {r.n_steps:>6}  {r.status}"
                         + (f"  ({given_text(r)})" if given_text(r) else "")
                         + (f"  (fixed values in {fixed[r.id]} of {r.n_steps} evaluations)" if r.id in fixed else "")
                         + (f"  (stopped early {printable(r.stopped_early)})" if r.stopped_early else "")
                         + (f"  ({shorten(printable(r.error), RUN_ERROR_WIDTH)})" if r.error else ""))
        if len(runs) > limit:
            lines.append(f"  ... {len(runs) - limit} older runs not shown")
        lines += versions_lines(runs)
    bandit = bandit_summary(db)
    if bandit:
        width = max(24, *(len(r["label"]) for r in bandit))
        tails = sorted({(r["simple_regret_rounds"], r["steps"]) for r in bandit}, key=lambda p: p[1])
        wheel = all(r["setting"].wheel for r in bandit)  # the wheel's own table, one row per delta
        if wheel:
            head, first = f"{'delta':>6}", [f"{r['delta']!s:>6}" for r in bandit]
        else:
            names = [r["setting"].label() for r in bandit]
            column = max(7, *(len(name) for name in names))
            head, first = f"{'setting':<{column}}", [f"{name:<{column}}" for name in names]
        lines += ["", ("Wheel bandit (completed runs, one row per delta, run length and policy; mean ± sd over runs):"
                       if wheel else "Bandits (completed runs, one row per setting -- the environment and the "
                       "parameters that define its task -- run length and policy; mean ± sd over runs):"),
                  "cumulative regret at the last round (normalised: Uniform's mean = 100, when Uniform ran); "
                  f"simple regret = mean per-round regret over the last {SIMPLE_REGRET_SHARE:.0%} of the rounds "
                  "(" + "; ".join(f"the last {tail} of {rounds} rounds" for tail, rounds in tails) + ")",
                  f"{head}  {'rounds':>6}  {'policy':<{width}}  {'runs':>4}  {'normalised':>16}  "
                  f"{'cumulative':>18}  {'simple':>12}"]
        for r, setting in zip(bandit, first):
            lines.append(f"{setting}  {r['steps']:>6}  {r['label']:<{width}}  {r['runs']:>4}  "
                         f"{_mean_std(r.get('normalised', [])):>16}  {_mean_std(r['cumulative_regret']):>18}  "
                         f"{_mean_std(r['simple_regret']):>12}")
            if r["repeated_seeds"]:
                lines.append("  (seeds run more than once, each run counted: " + ", ".join(
                    f"seed {seed} x{n}" for seed, n in r["repeated_seeds"].items()) + ")")
            if r["no_regret"]:
                lines.append(f"  ({r['no_regret']} of its {r['runs']} run{'s' * (r['runs'] != 1)} recorded no "
                             "regret: their environment's step gave no info[\"regret\"]; the regret columns are of "
                             "the others, - for none)")
    rows = bo_summary(db)
    bo = [r for r in rows if r["problem"].objectives == 1]
    if bo:
        lines += ["", "Black-box optimisation (completed runs, one block per problem -- objective, dimension, "
                  "bounds or search space, direction -- and budget; median [25 %, 75 %] over runs):",
                  "best value = the best objective value a run found; simple regret = its distance from the "
                  "problem's recorded optimum (- when no optimum was recorded); best point = the block's best "
                  "evaluation, its parameters by name; recommended = the evaluated point a run's model believes best, "
                  "at the model's posterior mean there (the best of the block's runs; runs without a model have none); "
                  "with constraints (\"subject to\"), only feasible evaluations count, and feasible = feasible / "
                  "successful evaluations over the row's runs; failed (in a block where an evaluation failed) = "
                  "failed / all evaluations over the row's runs, each distinct reason listed below its row with "
                  f"its count; {S_PER_EVAL}"]
        width = max(24, *(len(r["label"]) for r in bo))
        for (solved, budget), block in _blocks(bo).items():
            optimum = "" if solved.optimal_value is None else f"  optimum {solved.optimal_value:.6g}"
            constrained = solved.constraints is not None
            feasible_head = f"  {'feasible':>12}" if constrained else ""
            failures = any(r["failed"] for r in block)
            feasible_head += f"  {'failed':>9}" if failures else ""
            lines += ["", printable(f"{solved.label()}{optimum}  budget {budget}"),
                      f"  {'policy':<{width}}  {'runs':>4}  {'best value':>30}  {'simple regret':>30}  {'s/eval':>7}"
                      + feasible_head]
            for r in block:
                feasible = f"  {str(r['feasible']) + '/' + str(r['evaluated']):>12}" if constrained else ""
                feasible += f"  {str(r['failed']) + '/' + str(r['steps']):>9}" if failures else ""
                lines.append(f"  {r['label']:<{width}}  {r['runs']:>4}  {_median_quartiles(r['best']):>30}  "
                             f"{_median_quartiles(r['simple_regret']):>30}  {r['s_per_step']:>7.3f}{feasible}")
                lines += _failure_lines(r["failures"])
                if r["simple_regret"] and min(r["simple_regret"]) < 0:
                    lines.append(f"  (a run beat the recorded optimum {solved.optimal_value:.6g}: it is not the "
                                 "optimum, or the objective is noisy and an observation beat it by its noise)")
                if r["infeasible_runs"]:
                    lines.append(f"  ({r['infeasible_runs']} of its {r['runs']} runs found no feasible point: no best "
                                 "value)")
            points = [r["best_point"] for r in block if r["best_point"] is not None]
            if points:
                top = max(points, key=lambda p: p["reward"])
                shown = (f"value {top['value']:.6g}" if top["value"] is not None  # a step logged without its value
                         else f"reward {top['reward']:.6g}")
                lines.append(f"  best {'feasible ' if constrained else ''}point: run {top['run']}, evaluation "
                             f"{top['t']}, {shown}: {params_text(top['params'])}")
            else:
                lines.append("  best feasible point: none (no run found a feasible point)")
            rec = _best_recommendation([r["recommended"] for r in block], solved.minimize)
            if rec is not None:
                where = "a point given to the run" if rec["t"] is None else f"evaluation {rec['t']}"
                lines.append(f"  recommended: run {rec['run']}, {where}, posterior mean {rec['value']:.6g}: "
                             f"{params_text(rec['params'])}")
    lines += _objectives_lines([r for r in rows if r["problem"].objectives > 1])
    return "\n".join(lines)


def _blocks(rows: list[dict[str, Any]]) -> dict[tuple, list[dict[str, Any]]]:
    """:func:`bo_summary`'s rows by ``(problem, budget)``, a report block each, in their order."""
    blocks: dict[tuple, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        blocks[(r["problem"], r["budget"])].append(r)
    return blocks


def _objectives_lines(rows: list[dict[str, Any]]) -> list[str]:
    """The report's section on problems of several objectives (:func:`bo_summary`'s rows of
    them), ``[]`` for none: one block per problem and budget, its reference point, a row per
    policy with its settings."""
    if not rows:
        return []
    lines = ["", "Black-box optimisation, several objectives (completed runs, one block per problem -- objective, "
             "dimension, bounds or search space, each objective's direction -- and budget; median [25 %, 75 %] "
             "over runs):",
             "hypervolume = the volume a run's Pareto front (its feasible evaluations that no other beats in every "
             "objective) dominates, bounded by the reference point: the nadir of the front of all the problem's "
             "feasible evaluations together, moved a tenth of each objective's range over them further (one point "
             "for every run of the problem, so that their hypervolumes compare; larger is better); front = the "
             "distinct points on a run's front (equal values once, where ParetoResult.front keeps each "
             "evaluation); evals = evaluations per run; failed = failed / all evaluations over the row's runs, "
             "each distinct reason listed below its row with its count; with constraints "
             "(\"subject to\"), only feasible evaluations count, and feasible = feasible / successful evaluations "
             f"over the row's runs; {S_PER_EVAL}"]
    width = max(24, *(len(r["label"]) for r in rows))
    for (solved, budget), block in _blocks(rows).items():
        constrained = solved.constraints is not None
        reference = block[0]["reference"]
        at = ", ".join(f"{name}={v:.6g}" for name, v in zip(solved.names(), reference or ()))
        lines += ["", printable(f"{solved.label()}  budget {budget}"),
                  "  reference point: " + ("none (no run found a feasible point: no hypervolume)" if reference is None
                                           else at),
                  f"  {'policy':<{width}}  {'runs':>4}  {'hypervolume':>30}  {'front':>16}  {'evals':>5}  "
                  f"{'s/eval':>7}" + (f"  {'feasible':>12}" if constrained else "") + f"  {'failed':>9}"]
        for r in block:
            lines.append(f"  {r['label']:<{width}}  {r['runs']:>4}  {_median_quartiles(r['hypervolume']):>30}  "
                         f"{_median_quartiles(r['front']):>16}  {r['evals']:>5}  {r['s_per_step']:>7.3f}"
                         + (f"  {str(r['feasible']) + '/' + str(r['evaluated']):>12}" if constrained else "")
                         + f"  {str(r['failed']) + '/' + str(r['steps']):>9}")
            lines += _failure_lines(r["failures"])
            if r["infeasible_runs"]:
                lines.append(f"  ({r['infeasible_runs']} of its {r['runs']} runs found no feasible point: an empty "
                             "front" + (", hypervolume 0)" if reference is not None else ")"))
            if r["unreadable"]:
                lines.append(f"  ({r['unreadable']} successful evaluation(s) recorded no {solved.objectives} finite "
                             "objective values: left out of the fronts)")
    return lines
