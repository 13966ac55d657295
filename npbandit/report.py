"""`npbandit report`: tables of runs and regret from a database, and regret plots."""

from __future__ import annotations

import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

from npbandit.storage import DEFAULT_URL, list_runs, run_steps

__all__ = ["report_text", "bandit_summary", "bo_summary", "plot_regret"]


def _mean_std(values: list[float]) -> str:
    if not values:
        return "-"
    if len(values) == 1:
        return f"{values[0]:.2f}"
    return f"{statistics.fmean(values):.2f} ± {statistics.stdev(values):.2f}"


def bandit_summary(db: str = DEFAULT_URL) -> list[dict[str, Any]]:
    """Per (delta, horizon, policy): final cumulative regret of each completed run,
    normalised by Uniform's mean on the same setting (×100) when Uniform ran."""
    groups: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    simple: dict[tuple, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for run in list_runs(db, kind="bandit"):
        if run.status != "completed":
            continue
        steps = run_steps(db, run.id)
        if not steps:
            continue
        key = (run.env_params.get("delta"), len(steps))
        groups[key][run.policy].append(steps[-1]["cumulative_regret"])
        tail = [s["regret"] for s in steps[-500:]]
        simple[key][run.policy].append(statistics.fmean(tail))
    rows = []
    for (delta, horizon), by_policy in sorted(groups.items(), key=lambda kv: (kv[0][0] or 0, kv[0][1])):
        norm = statistics.fmean(by_policy["uniform"]) if by_policy.get("uniform") else None
        for policy, values in sorted(by_policy.items()):
            row = {"delta": delta, "steps": horizon, "policy": policy, "runs": len(values),
                   "cumulative_regret": values, "simple_regret": simple[(delta, horizon)][policy]}
            if norm:
                row["normalised"] = [100 * v / norm for v in values]
            rows.append(row)
    return rows


def bo_summary(db: str = DEFAULT_URL) -> list[dict[str, Any]]:
    """Per (objective, policy): best value reached and seconds per step of completed runs."""
    groups: dict[tuple, list[dict[str, float]]] = defaultdict(list)
    for run in list_runs(db, kind="bo"):
        if run.status != "completed":
            continue
        steps = [s for s in run_steps(db, run.id) if not s["failed"]]
        if not steps:
            continue
        seconds = statistics.fmean(s["act_s"] + s["observe_s"] for s in steps)
        groups[(run.env_params.get("objective"), run.policy)].append(
            {"best": steps[-1]["best_value"], "evals": len(steps), "s_per_step": seconds})
    return [{"objective": obj, "policy": pol, "runs": len(v), "best": [r["best"] for r in v],
             "evals": max(r["evals"] for r in v), "s_per_step": statistics.fmean(r["s_per_step"] for r in v)}
            for (obj, pol), v in sorted(groups.items(), key=lambda kv: (str(kv[0][0]), kv[0][1]))]


def report_text(db: str = DEFAULT_URL, limit: int = 20) -> str:
    runs = list_runs(db)
    lines = [f"database: {db}", f"runs: {len(runs)} ("
             + ", ".join(f"{s} {sum(r.status == s for r in runs)}"
                         for s in ("completed", "running", "interrupted", "failed")) + ")", ""]
    if runs:
        lines.append(f"{'id':>4}  {'kind':<6}  {'policy':<24}  {'setting':<28}  {'seed':>4}  {'steps':>6}  status")
        for r in runs[-limit:]:
            setting = (f"delta={r.env_params.get('delta')}" if r.kind == "bandit"
                       else str(r.env_params.get("objective")))
            lines.append(f"{r.id:>4}  {r.kind:<6}  {r.policy:<24}  {setting:<28.28}  {r.seed if r.seed is not None else '-':>4}"
                         f"  {r.n_steps:>6}  {r.status}" + (f"  ({r.error[:60]})" if r.error else ""))
        if len(runs) > limit:
            lines.append(f"  ... {len(runs) - limit} older runs not shown")
    bandit = bandit_summary(db)
    if bandit:
        lines += ["", "Wheel bandit: cumulative regret at the last step (Uniform = 100 when Uniform ran), "
                  "simple regret = mean regret over the last 500 steps",
                  f"{'delta':>6}  {'steps':>6}  {'policy':<24}  {'runs':>4}  {'normalised':>16}  {'cumulative':>18}  "
                  f"{'simple':>12}"]
        for r in bandit:
            lines.append(f"{r['delta']!s:>6}  {r['steps']:>6}  {r['policy']:<24}  {r['runs']:>4}  "
                         f"{_mean_std(r.get('normalised', [])):>16}  {_mean_std(r['cumulative_regret']):>18}  "
                         f"{_mean_std(r['simple_regret']):>12}")
    bo = bo_summary(db)
    if bo:
        lines += ["", "Black-box optimisation: best objective value reached (completed runs)",
                  f"{'objective':<16}  {'policy':<24}  {'runs':>4}  {'evals':>5}  {'best value':>18}  {'s/step':>7}"]
        for r in bo:
            lines.append(f"{str(r['objective']):<16.16}  {r['policy']:<24}  {r['runs']:>4}  {r['evals']:>5}  "
                         f"{_mean_std(r['best']):>18}  {r['s_per_step']:>7.3f}")
    return "\n".join(lines)


def plot_regret(db: str, path: str | Path) -> Path:
    """PNG of mean cumulative regret vs step per (delta, policy) for bandit runs, and
    best value vs evaluation per (objective, policy) for BO runs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    curves: dict[str, dict[str, list[list[float]]]] = defaultdict(lambda: defaultdict(list))
    for run in list_runs(db):
        if run.status != "completed":
            continue
        steps = run_steps(db, run.id)
        if run.kind == "bandit":
            panel = f"wheel delta={run.env_params.get('delta')}"
            curves[panel][run.policy].append([s["cumulative_regret"] for s in steps])
        else:
            panel = f"{run.env_params.get('objective')} (best value)"
            curves[panel][run.policy].append([s["best_value"] for s in steps if not s["failed"]])
    if not curves:
        raise ValueError(f"no completed runs in {db} to plot")
    fig, axes = plt.subplots(1, len(curves), figsize=(5 * len(curves), 3.8), squeeze=False)
    for ax, (panel, by_policy) in zip(axes[0], sorted(curves.items())):
        for policy, runs in sorted(by_policy.items()):
            n = min(len(r) for r in runs)
            mean = [statistics.fmean(r[i] for r in runs) for i in range(n)]
            ax.plot(range(1, n + 1), mean, label=f"{policy} ({len(runs)})")
        ax.set_title(panel)
        ax.set_xlabel("step")
        ax.set_ylabel("cumulative regret" if panel.startswith("wheel") else "best value")
        ax.legend(fontsize=8)
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
