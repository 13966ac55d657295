"""`npbandit report`: tables of runs and regret from a database, and regret plots.

A row (and a plot panel) only puts together runs that are comparable:

- wheel bandit: one ``delta`` and one run length. *Simple regret* is the mean
  per-round regret over the last quarter of each run (:data:`SIMPLE_REGRET_SHARE`):
  the last 500 of the protocol's 2000 rounds, the last 75 of a 300-round run.
- black-box optimisation: one *problem* -- objective name (``optimize(name=...)``, else
  the callable's ``module:qualname``), input dimension, bounds and direction
  (minimise / maximise) -- and one budget. When the run recorded the problem's optimum
  (``optimize(optimal_value=...)``, named test functions on their own bounds),
  *simple regret* is the gap between the best value found and it.

Within one of these, a row (a line) is one policy *with one setting*: runs of one policy
name whose logged settings differ (UCB's ``beta``, ``n_init``, the evaluations kept in
flight...) are separate rows, labelled with the settings that tell them apart
(``gp-ucb  beta=2``, ``gp-ucb  beta=4``; ``?`` where a run logged before a setting was
recorded).
"""

from __future__ import annotations

import json
import math
import statistics
import textwrap
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from npbandit.storage import DEFAULT_URL, RunRow, display_url, list_runs, run_steps

__all__ = ["report_text", "bandit_summary", "bo_summary", "plot_regret", "regret_figure", "Problem",
           "SIMPLE_REGRET_SHARE"]

#: the share of a bandit run's last rounds that simple regret averages over (the wheel
#: protocol's 500 of 2000 rounds)
SIMPLE_REGRET_SHARE = 0.25


_SUPERSCRIPTS = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


@dataclass(frozen=True)
class Problem:
    """What a black-box run optimised, as recorded with it. Fields a run did not record
    (runs logged before they were) are ``None`` and shown as ``?``.

    Attributes:
        name: the objective's name.
        dim: input dimension ``d``.
        bounds: ``(lower, upper)``, each a tuple of ``d`` floats.
        minimize: the direction.
        optimal_value: the optimum the runs recorded (``None``: unknown, or runs disagree).
    """

    name: str
    dim: int | None
    bounds: tuple[tuple[float, ...], tuple[float, ...]] | None
    minimize: bool | None
    optimal_value: float | None = None

    def bounds_text(self, superscript: bool = False) -> str:
        """``[0, 1]^6`` for a cube (``[0, 1]⁶`` with ``superscript``), else ``[a, b] x [c, d] ...``."""
        if self.bounds is None:
            return "bounds ?"
        lower, upper = self.bounds
        if len(set(lower)) == 1 and len(set(upper)) == 1:
            power = str(len(lower)).translate(_SUPERSCRIPTS) if superscript else f"^{len(lower)}"
            return f"[{lower[0]:g}, {upper[0]:g}]{power}"
        return " x ".join(f"[{lo:g}, {hi:g}]" for lo, hi in zip(lower, upper))

    def direction(self) -> str:
        return {True: "minimise", False: "maximise", None: "direction ?"}[self.minimize]

    def label(self) -> str:
        """``hartmann  d=6  [0, 1]^6  minimise``"""
        return f"{self.name}  d={self.dim if self.dim is not None else '?'}  {self.bounds_text()}  {self.direction()}"

    def regret(self, best: float) -> float | None:
        """Simple regret of a best value: how far it is from the optimum, in the
        direction of optimisation. Negative when a run beat the recorded optimum (then
        the recorded optimum is wrong; shown, not hidden)."""
        if self.optimal_value is None or self.minimize is None:
            return None
        return best - self.optimal_value if self.minimize else self.optimal_value - best


def _problem_key(run: RunRow) -> tuple:
    params = run.env_params
    bounds = params.get("bounds")
    if bounds is not None:
        bounds = (tuple(float(v) for v in bounds[0]), tuple(float(v) for v in bounds[1]))
    dim = params.get("dim") or (len(bounds[0]) if bounds else run.policy_params.get("dim"))
    minimize = params.get("minimize")
    return (str(params.get("objective", "?")), None if dim is None else int(dim), bounds,
            None if minimize is None else bool(minimize))


def _bo_groups(runs: list[RunRow]) -> dict[Problem, list[RunRow]]:
    """Completed BO runs by problem; a problem's optimum is the one its runs recorded,
    ``None`` when none did or they disagree."""
    by_key: dict[tuple, list[RunRow]] = defaultdict(list)
    for run in runs:
        if run.kind == "bo" and run.status == "completed":
            by_key[_problem_key(run)].append(run)
    out = {}
    for key, group in by_key.items():
        stated = {float(r.env_params["optimal_value"]) for r in group if r.env_params.get("optimal_value") is not None}
        out[Problem(*key, optimal_value=stated.pop() if len(stated) == 1 else None)] = group
    return dict(sorted(out.items(), key=lambda kv: (kv[0].name, kv[0].dim or 0, str(kv[0].bounds),
                                                    str(kv[0].minimize))))


def _settings(run: RunRow) -> dict[str, Any]:
    """How a run's policy was set up: its logged ``policy_params`` (less ``dim``, which the
    problem fixes) and, for black-box runs, the evaluations it kept in flight
    (``batch_size``; sequential runs, which do not log it, kept one)."""
    out = {k: v for k, v in run.policy_params.items() if k != "dim"}
    if run.kind == "bo":
        out["batch_size"] = run.env_params.get("batch_size", 1)
    return out


def _setting_text(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else json.dumps(value)


def _labels(runs: list[RunRow]) -> dict[int, str]:
    """Each run's row label among ``runs`` (one comparable setting): its policy name, and
    when runs of that name were set up differently, the settings that differ between
    them (``gp-ucb  beta=2``). Runs with one label are one row."""
    by_policy: dict[str, list[RunRow]] = defaultdict(list)
    for run in runs:
        by_policy[run.policy].append(run)
    labels = {}
    for policy, group in by_policy.items():
        settings = [_settings(r) for r in group]
        keys = sorted(set().union(*settings))
        differ = [k for k in keys
                  if len({json.dumps(s[k], sort_keys=True, default=str) if k in s else None for s in settings}) > 1]
        for run, setting in zip(group, settings):
            labels[run.id] = "  ".join([policy] + [f"{k}={_setting_text(setting[k]) if k in setting else '?'}"
                                                   for k in differ])
    return labels


def _best_curve(steps: list[dict[str, Any]], length: int) -> np.ndarray:
    """Best value found after each of ``length`` evaluations (failed ones included, they
    spend budget); NaN before the first evaluation that succeeded."""
    curve = np.full(length, np.nan)
    best = math.nan
    by_t = {s["t"]: s for s in steps}
    for t in range(length):
        step = by_t.get(t)
        if step is not None and not step["failed"] and step["best_value"] is not None:
            best = step["best_value"]
        curve[t] = best
    return curve


def bandit_summary(db: str = DEFAULT_URL) -> list[dict[str, Any]]:
    """Per (delta, run length, policy with its settings: ``label``, see the module
    docstring), over completed runs: final cumulative regret of each run, normalised by
    Uniform's mean on the same setting (×100) when Uniform ran (with one setting), and
    simple regret (mean per-round regret over the last ``simple_regret_rounds`` rounds,
    :data:`SIMPLE_REGRET_SHARE` of the run)."""
    settings: dict[tuple, list[tuple[RunRow, float, float]]] = defaultdict(list)
    for run in list_runs(db, kind="bandit"):
        if run.status != "completed":
            continue
        steps = run_steps(db, run.id)
        if not steps:
            continue
        settings[(run.env_params.get("delta"), len(steps))].append(
            (run, steps[-1]["cumulative_regret"], statistics.fmean(s["regret"] for s in steps[-_tail(len(steps)):])))
    rows = []
    for (delta, horizon), cell in sorted(settings.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        labels = _labels([run for run, _, _ in cell])
        by_label: dict[str, list[tuple[RunRow, float, float]]] = defaultdict(list)
        for entry in cell:
            by_label[labels[entry[0].id]].append(entry)
        uniform = [v for label, entries in by_label.items() for r, v, _ in entries if r.policy == "uniform"]
        uniform_rows = {label for label, entries in by_label.items() if entries[0][0].policy == "uniform"}
        # Uniform runs with two settings (numbers of arms) are no single yardstick: no normalisation then
        norm = statistics.fmean(uniform) if len(uniform_rows) == 1 else None
        for label, entries in sorted(by_label.items()):
            values = [v for _, v, _ in entries]
            row = {"delta": delta, "steps": horizon, "policy": entries[0][0].policy, "label": label,
                   "runs": len(values), "cumulative_regret": values, "simple_regret": [s for _, _, s in entries],
                   "simple_regret_rounds": _tail(horizon)}
            if norm:
                row["normalised"] = [100 * v / norm for v in values]
            rows.append(row)
    return rows


def _tail(rounds: int) -> int:
    return max(1, math.ceil(SIMPLE_REGRET_SHARE * rounds))


def bo_summary(db: str = DEFAULT_URL) -> list[dict[str, Any]]:
    """Per (problem, budget, policy with its settings: ``label``, see the module
    docstring), over completed runs: the best value each run found,
    its simple regret when the problem's optimum is known (else ``None``), and the mean
    seconds per evaluation spent by the policy (act + observe)."""
    rows = []
    for problem, runs in _bo_groups(list_runs(db, kind="bo")).items():
        cells: dict[tuple, list[dict[str, float]]] = defaultdict(list)
        labels = _labels(runs)
        for run in runs:
            steps = run_steps(db, run.id)
            good = [s for s in steps if not s["failed"]]
            if not good:
                continue
            budget = run.env_params.get("budget") or len(steps)
            seconds = statistics.fmean(s["act_s"] + s["observe_s"] for s in good)
            cells[(budget, labels[run.id], run.policy)].append({"best": good[-1]["best_value"],
                                                                "evals": len(steps), "s_per_step": seconds})
        for (budget, label, policy), cell in sorted(cells.items()):
            best = [c["best"] for c in cell]
            regret = [problem.regret(b) for b in best]
            rows.append({"problem": problem, "objective": problem.name, "budget": budget, "policy": policy,
                         "label": label, "runs": len(cell), "best": best,
                         "simple_regret": None if None in regret else regret,
                         "evals": max(c["evals"] for c in cell),
                         "s_per_step": statistics.fmean(c["s_per_step"] for c in cell)})
    return rows


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


def _setting(run: RunRow) -> str:
    if run.kind == "bandit":
        return f"delta={run.env_params.get('delta')}"
    problem = Problem(*_problem_key(run))
    direction = {True: "min", False: "max", None: "?"}[problem.minimize]
    text = f"{problem.name} d={problem.dim if problem.dim is not None else '?'} {direction}"
    return text if len(text) <= 36 else "…" + text[-35:]  # the end of a long name tells problems apart


def report_text(db: str = DEFAULT_URL, limit: int = 20) -> str:
    """The report as text: the latest ``limit`` runs, then the wheel-bandit and the
    black-box-optimisation tables of completed runs (see the module docstring)."""
    runs = list_runs(db)
    lines = [f"database: {display_url(db)}", f"runs: {len(runs)} ("
             + ", ".join(f"{s} {sum(r.status == s for r in runs)}"
                         for s in ("completed", "running", "interrupted", "failed")) + ")", ""]
    if runs:
        lines.append(f"{'id':>4}  {'kind':<6}  {'policy':<24}  {'setting':<36}  {'seed':>4}  {'steps':>6}  status")
        for r in runs[-limit:]:
            lines.append(f"{r.id:>4}  {r.kind:<6}  {r.policy:<24}  {_setting(r):<36}  "
                         f"{r.seed if r.seed is not None else '-':>4}  {r.n_steps:>6}  {r.status}"
                         + (f"  ({r.error[:60]})" if r.error else ""))
        if len(runs) > limit:
            lines.append(f"  ... {len(runs) - limit} older runs not shown")
    bandit = bandit_summary(db)
    if bandit:
        width = max(24, *(len(r["label"]) for r in bandit))
        tails = sorted({(r["simple_regret_rounds"], r["steps"]) for r in bandit}, key=lambda p: p[1])
        lines += ["", "Wheel bandit (completed runs, one row per delta, run length and policy; mean ± sd over runs):",
                  "cumulative regret at the last round (normalised: Uniform's mean = 100, when Uniform ran); "
                  f"simple regret = mean per-round regret over the last {SIMPLE_REGRET_SHARE:.0%} of the rounds "
                  "(" + "; ".join(f"the last {tail} of {rounds} rounds" for tail, rounds in tails) + ")",
                  f"{'delta':>6}  {'rounds':>6}  {'policy':<{width}}  {'runs':>4}  {'normalised':>16}  "
                  f"{'cumulative':>18}  {'simple':>12}"]
        for r in bandit:
            lines.append(f"{r['delta']!s:>6}  {r['steps']:>6}  {r['label']:<{width}}  {r['runs']:>4}  "
                         f"{_mean_std(r.get('normalised', [])):>16}  {_mean_std(r['cumulative_regret']):>18}  "
                         f"{_mean_std(r['simple_regret']):>12}")
    bo = bo_summary(db)
    if bo:
        lines += ["", "Black-box optimisation (completed runs, one block per problem -- objective, dimension, bounds, "
                  "direction -- and budget; median [25 %, 75 %] over runs):",
                  "best value = the best objective value a run found; simple regret = its distance from the "
                  "problem's recorded optimum (- when no optimum was recorded)"]
        header = None
        width = max(24, *(len(r["label"]) for r in bo))
        for r in bo:
            problem = r["problem"]
            block = (problem, r["budget"])
            if block != header:
                header = block
                optimum = "" if problem.optimal_value is None else f"  optimum {problem.optimal_value:.6g}"
                lines += ["", f"{problem.label()}{optimum}  budget {r['budget']}",
                          f"  {'policy':<{width}}  {'runs':>4}  {'best value':>30}  {'simple regret':>30}  {'s/eval':>7}"]
            lines.append(f"  {r['label']:<{width}}  {r['runs']:>4}  {_median_quartiles(r['best']):>30}  "
                         f"{_median_quartiles(r['simple_regret']):>30}  {r['s_per_step']:>7.3f}")
            if r["simple_regret"] and min(r["simple_regret"]) < 0:
                lines.append(f"  (a run beat the recorded optimum {problem.optimal_value:.6g}: the recorded optimum "
                             "is not the optimum)")
    return "\n".join(lines)


@dataclass
class _Line:
    policy: str  # with its settings (the row label): one colour and dash each
    label: str
    curves: np.ndarray  # [runs, steps]
    n_init: int | None = None


@dataclass
class _Panel:
    title: str
    xlabel: str
    ylabel: str
    lines: list[_Line]
    regret: bool  # whether the y values are regrets (log scale when they span decades)


def _panels(db: str) -> list[_Panel]:
    runs = list_runs(db)
    panels: list[_Panel] = []
    finished: dict[Any, list[tuple[RunRow, np.ndarray]]] = defaultdict(list)
    for run in runs:
        if run.kind == "bandit" and run.status == "completed":
            steps = run_steps(db, run.id)
            if steps:
                finished[run.env_params.get("delta")].append(
                    (run, np.array([s["cumulative_regret"] for s in steps], dtype=float)))
    wheel: dict[Any, dict[tuple[str, int], list[np.ndarray]]] = defaultdict(lambda: defaultdict(list))
    for delta, cell in finished.items():
        for length in {len(curve) for _, curve in cell}:  # labels among the runs of one length, as in the table
            same = [(run, curve) for run, curve in cell if len(curve) == length]
            labels = _labels([run for run, _ in same])
            for run, curve in same:
                wheel[delta][(labels[run.id], length)].append(curve)
    for delta, by_line in sorted(wheel.items(), key=lambda kv: str(kv[0])):
        lengths = {n for _, n in by_line}
        lines = [_Line(policy, policy if len(lengths) == 1 else f"{policy}, {n} rounds", np.stack(curves))
                 for (policy, n), curves in sorted(by_line.items())]
        rounds = f", {lengths.pop()} rounds" if len(lengths) == 1 else ""
        panels.append(_Panel(f"wheel bandit\ndelta = {delta}{rounds}", "round", "cumulative regret", lines, True))
    for problem, group in _bo_groups(runs).items():
        by_line: dict[tuple[str, int], list[tuple[np.ndarray, Any]]] = defaultdict(list)
        labels = _labels(group)
        for run in group:
            steps = run_steps(db, run.id)
            budget = run.env_params.get("budget") or len(steps)
            best = _best_curve(steps, budget)
            if problem.optimal_value is not None and problem.minimize is not None:
                best = best - problem.optimal_value if problem.minimize else problem.optimal_value - best
            by_line[(labels[run.id], budget)].append((best, run.policy_params.get("n_init")))
        budgets = {b for _, b in by_line}
        lines = []
        for (policy, budget), cell in sorted(by_line.items()):
            n_inits = {n for _, n in cell}
            lines.append(_Line(policy, policy if len(budgets) == 1 else f"{policy}, budget {budget}",
                               np.stack([c for c, _ in cell]), n_inits.pop() if len(n_inits) == 1 else None))
        name = "\n".join(textwrap.wrap(problem.name, 48))
        known = problem.regret(0.0) is not None
        title = (f"{name}\nd={problem.dim}, {problem.bounds_text(superscript=True)}, {problem.direction()}"
                 + (f", budget {budgets.pop()}" if len(budgets) == 1 else ""))
        if known and any(np.nanmin(line.curves) < 0 for line in lines if np.isfinite(line.curves).any()):
            title += f"\nruns beat the recorded optimum {problem.optimal_value:.6g}: it is not the optimum"
        panels.append(_Panel(title, "evaluation", "simple regret (gap to the optimum)" if known else "best value found",
                             lines, known))
    return panels


def _scale(ax: Any, values: np.ndarray) -> str:
    """Log y when the regrets span a decade or more (a linear axis would flatten every
    curve but the worst against zero); symmetric log, linear below the power of ten
    under the smallest positive value, when some are <= 0 (a cumulative regret starts at
    0 when the first rounds pick the best arm). Returns a note for the axis label."""
    from matplotlib.ticker import FuncFormatter

    values = values[np.isfinite(values)]
    positive = values[values > 0]
    if positive.size == 0 or positive.max() / positive.min() < 10:
        return ""
    note = ""
    if positive.size == values.size:
        ax.set_yscale("log")
    else:
        threshold = 10.0 ** math.floor(math.log10(positive.min()))
        ax.set_yscale("symlog", linthresh=threshold)
        note = f"\n(symmetric log scale, linear below {threshold:g})"
    # plain numbers (0.01, 300) read faster than 10^-2 or 3 x 10^2
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    if positive.max() / positive.min() < 100:  # under two decades few powers of ten show: label 2s and 5s too
        ax.yaxis.set_minor_formatter(FuncFormatter(_two_five))
    return note


LINESTYLES = ("-", "--", "-.", (0, (5, 1, 1, 1, 1, 1)))  # dotted is the initial design's line


def _two_five(value: float, _position: Any) -> str:
    mantissa = value / 10.0 ** math.floor(math.log10(abs(value))) if value else 0.0
    return f"{value:g}" if round(mantissa, 6) in (2.0, 5.0) else ""


def regret_figure(db: str = DEFAULT_URL) -> Any:
    """A matplotlib figure of the completed runs in ``db``: one panel per problem (a wheel
    ``delta``; a black-box problem as :func:`bo_summary` groups them), one line per
    policy: the median over runs (seeds) and the band between the 25th and 75th
    percentiles. Bandits: cumulative regret vs round. Black-box: simple regret vs
    evaluation when the optimum is known, else the best value found; a vertical line and a
    marker on each curve where the policy's initial (Sobol) design ends. Regret axes are
    logarithmic when the values span a decade or more.

    Raises:
        ValueError: ``db`` holds no completed run.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = _panels(db)
    if not panels:
        raise ValueError(f"no completed runs in {db} to plot")
    # one colour per policy across the figure, so a policy is found at a glance in every panel
    cycle = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    policies = sorted({line.policy for panel in panels for line in panel.lines})
    colours = {p: cycle[i % len(cycle)] for i, p in enumerate(policies)}
    # dashes keep policies apart where their curves coincide (the same initial design)
    styles = {p: LINESTYLES[i % len(LINESTYLES)] for i, p in enumerate(policies)}
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(5.4 * ncols, 4.3 * nrows), squeeze=False)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    for ax, panel in zip(axes.flat, panels):
        plotted = []
        design_ends: set[int] = set()
        for line in panel.lines:
            x = np.arange(1, line.curves.shape[1] + 1)
            q1, median, q3 = np.percentile(line.curves, [25, 50, 75], axis=0)
            # steps: a value holds until the next round / evaluation changes it
            (handle,) = ax.plot(x, median, lw=1.6, ls=styles[line.policy], drawstyle="steps-post",
                                color=colours[line.policy],
                                label=f"{line.label} ({line.curves.shape[0]} run{'s' if line.curves.shape[0] != 1 else ''})")
            if line.curves.shape[0] > 1:
                ax.fill_between(x, q1, q3, color=handle.get_color(), alpha=0.18, lw=0, step="post")
            if line.n_init is not None and line.n_init <= len(x):
                design_ends.add(line.n_init)
                ax.plot([line.n_init], [median[line.n_init - 1]], "o", ms=6, mfc="white", mec=handle.get_color(),
                        mew=1.5, label="_nolegend_", zorder=3)
            plotted += [q1, median, q3]
        for i, end in enumerate(sorted(design_ends)):
            ax.axvline(end, color="0.45", ls=":", lw=1.2, zorder=0,
                       label="end of initial design" if i == 0 else "_nolegend_")
        note = _scale(ax, np.concatenate(plotted)) if panel.regret else ""
        ax.set_title(panel.title, fontsize=10)
        ax.set_xlabel(panel.xlabel)
        ax.set_ylabel(panel.ylabel + note)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle("lines: median over runs (seeds); bands: 25th to 75th percentile", fontsize=9, y=0.995)
    fig.tight_layout()
    return fig


def plot_regret(db: str, path: str | Path) -> Path:
    """Write :func:`regret_figure` to ``path`` (PNG); returns the path."""
    import matplotlib.pyplot as plt

    fig = regret_figure(db)
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
