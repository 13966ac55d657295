"""BO on problems nobody here tuned for: what a user gets through the public API (issue 45, item 5).

Problems (bo_wide_problems.py), all minimised: BoTorch synthetic functions outside the six-function
suite (Michalewicz-5/10, Griewank-8, Styblinski-Tang-8, Powell-8, Dixon-Price-8, Shekel-4,
Six-Hump Camel, Cosine-8), high-dimensional set-ups (Hartmann-6 in 30 / 60 inputs, Branin in 30 /
100, the rest inert; Ackley with a shifted optimum, Levy and Rosenbrock at d = 12, 30, 60), and
scikit-learn hyperparameter tuning with integer, log-scale and categorical parameters (3-fold CV
loss). Methods (bo_wide_methods.py), same seeds and budget: random search, Optuna TPE and
GPSampler, BoTorch SingleTaskGP + LogEI, TuRBO-1, and npbandit's own rows through its public
API: ``npbandit.optimize(..., surrogate="tnpd" | "cmanp")`` and ``NPSampler``. A row that cannot
take a problem yet (today: the NP rows beyond d = 6 or on mixed spaces) is recorded as
unsupported and retried on the next run, so the rows fill in as the library grows.

Reported per problem and method: final log10 simple regret where the optimum is known, else the
final best loss (median [25 %, 75 %] over seeds), seconds per evaluation spent in the method,
paired wins of the NP rows against each peer, and the issue's bars. Each run is stored through
``npbandit.storage`` when it completes; completed runs are not repeated. SIGINT / SIGTERM stop the
script at once: the runs in flight are abandoned, their workers killed, none of them stored as
completed (``common.run_jobs``), and the same command resumes from the completed runs.

    python experiments/benchmarks/bo_wide.py --workers 2                              # everything (many hours)
    python experiments/benchmarks/bo_wide.py --problems high-d --methods random optuna-tpe --seeds 3
    python experiments/benchmarks/bo_wide.py --problems shekel4 svc-digits --budget 12 --seeds 1 --no-write
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bo_wide_methods import (  # noqa: E402
    GP_PEERS,
    METHODS,
    NP_METHODS,
    OPTUNA_SAMPLERS,
    Unsupported,
    checkpoint_of,
    np_method_label,
    split_optimizer,
)
from bo_wide_problems import CHOOSING_GROUPS, all_problems, groups, problem  # noqa: E402
from common import (  # noqa: E402
    ROOT,
    add_cluster_arguments,
    is_current,
    machine_line,
    new_figure,
    paired_cell,
    prepare_db,
    publish,
    run_jobs,
    save_figure,
)

RUN_THREADS = 1
KIND = "bo_wide"  # the runs' kind in the database: npbandit report and bo.py (kind "bo") leave them alone
SECTION = "bo-wide"
DEFAULT_NP = "optimize-tnpd"  # the bars are stated for the default surrogate
REGRET_FLOOR = 1e-12
OPTUNA_VERSION = "5.0.0"


class Recorder:
    """The objective as every method calls it: evaluates the problem, and records each call's
    point, value, the seconds the method spent since the previous call returned (``act_s``:
    proposing, fitting, its bookkeeping) and the evaluation's own seconds (``env_s``)."""

    def __init__(self, prob, budget: int) -> None:
        self.problem, self.budget, self.rows = prob, budget, []
        self.last = time.perf_counter()

    def __call__(self, params: dict) -> float:
        start = time.perf_counter()
        if len(self.rows) >= self.budget:
            raise RuntimeError(f"the method asked for evaluation {len(self.rows) + 1} of a budget of {self.budget}")
        value = self.problem(params)
        best = min([value, *(r["value"] for r in self.rows)])
        opt = self.problem.optimal_value
        self.rows.append({"t": len(self.rows), "action": {k: _plain(v) for k, v in params.items()}, "value": value,
                          "reward": -value, "best_value": best, "regret": None if opt is None else value - opt,
                          "act_s": start - self.last, "env_s": time.perf_counter() - start})
        self.last = time.perf_counter()
        return value


def _plain(v):
    return v.item() if hasattr(v, "item") else v


def _unsupported(err: BaseException) -> bool:
    """Whether ``err`` says a method cannot take a problem yet (not that something broke)."""
    from npbandit.exceptions import CheckpointError

    if isinstance(err, (Unsupported, CheckpointError)):
        return True
    return isinstance(err, ImportError) and (err.name or "").startswith("npbandit")


def budget_of(label: str, budget: int | None) -> int:
    return problem(label).budget if budget is None else budget


def _one(label: str, method: str, seed: int, budget: int, db: str) -> None:
    import torch
    from bo_wide_methods import run

    torch.set_num_threads(RUN_THREADS)
    prob = problem(label)
    env_params = {"benchmark": KIND, "problem": label, "group": prob.group, "dim": prob.dim, "budget": budget,
                  "optimal_value": prob.optimal_value, "problems_version": prob.version,
                  "space": [p.__dict__ | {"choices": list(p.choices)} for p in prob.space]}
    run_and_log(db, KIND, method, label, seed, budget, lambda record: run(method, prob, seed, budget, record),
                Recorder(prob, budget), env_params, checkpoint_of(method))


def run_and_log(db: str, kind: str, method: str, label: str, seed: int, budget: int,
                run: Callable[[Any], dict], record: Any, env_params: dict, checkpoint: str | None,
                extra: dict | None = None) -> None:
    """One benchmark run, ``run(record)`` (its facts returned, each evaluation in ``record.rows``),
    logged to ``db`` as a run of ``kind`` once it has ended: completed with its ``budget`` of
    steps, or failed with the reason when the method cannot take the problem (:func:`_unsupported`;
    anything else is raised). ``extra``: more policy parameters to record."""
    from npbandit.storage import RunLogger

    start = time.perf_counter()
    try:
        facts, error = run(record), None
    except Exception as err:  # noqa: BLE001 - an unsupported problem is recorded; anything else is raised
        if not _unsupported(err):
            raise
        facts, error = {}, f"unsupported: {type(err).__name__}: {err}".splitlines()[0][:500]
    if error is None and len(record.rows) != budget:
        raise RuntimeError(f"{method} on {label} evaluated {len(record.rows)} points of a budget of {budget}")
    logger = RunLogger(db, commit_every=max(budget, 1))
    logger.start(kind=kind, env_id=kind, env_params=env_params, policy=method, seed=seed,
                 policy_params={**facts, "wall_s": time.perf_counter() - start, "evaluations": len(record.rows),
                                **(extra or {})},
                 checkpoint=checkpoint)
    if error is not None:
        logger.finish("failed", error)
        print(f"{method} on {label}: {error}", flush=True)
        return
    for row in record.rows:
        logger.log_step(**row)
    logger.finish("completed")


def collect(db: str, budget: int | None) -> tuple[dict, dict]:
    """The completed runs, ``{(problem, method): [run]}``, and the newest unsupported note per
    cell without one, ``{(problem, method): error}``; only runs of the current problem
    definitions, budgets, checkpoints and Optuna version."""
    from npbandit.storage import list_runs, run_steps

    runs: dict[tuple[str, str], list[dict]] = {}
    notes: dict[tuple[str, str], str] = {}
    labels = all_problems()
    for r in list_runs(db, kind=KIND):
        ep = r.env_params
        label = ep.get("problem")
        if (ep.get("benchmark") != KIND or label not in labels or ep.get("problems_version") != labels[label].version
                or ep.get("budget") != budget_of(label, budget) or not is_current(r)):
            continue
        method = r.policy
        if split_optimizer(method)[0] in NP_METHODS:
            method = np_method_label(method, r.policy_params)
        if r.policy in OPTUNA_SAMPLERS or split_optimizer(r.policy)[0] == "npsampler":
            if r.status == "completed" and r.policy_params.get("optuna") != OPTUNA_VERSION:
                continue
        if r.status == "failed" and (r.error or "").startswith("unsupported"):
            notes[(label, method)] = r.error
            continue
        if r.status != "completed":
            continue
        steps = run_steps(db, r.id)
        opt = ep["optimal_value"]
        best = [s["best_value"] for s in steps]
        curve = best if opt is None else [math.log10(max(b - opt, REGRET_FLOOR)) for b in best]
        runs.setdefault((label, method), []).append(
            {"seed": r.seed, "curve": curve, "act_s": statistics.fmean(s["act_s"] for s in steps),
             "env_s": statistics.fmean(s["env_s"] for s in steps), "wall_s": r.policy_params.get("wall_s"),
             "independent_draws": r.policy_params.get("independent_draws", 0), "versions": r.versions})
    for key in runs:
        notes.pop(key, None)
    return runs, notes


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return q[0], statistics.median(values), q[2]


def summarise(runs: dict, labels: list[str], methods: list[str], seeds: int) -> dict:
    """Per ``problem/method``: final value quartiles, per-seed finals, curves' quartiles, timing."""
    summary = {}
    for label in labels:
        for m in methods:
            rs = [r for r in runs.get((label, m), []) if r["seed"] < seeds]
            if not rs:
                continue
            q1, med, q3 = quartiles([r["curve"][-1] for r in rs])
            summary[f"{label}/{m}"] = {
                "final": [q1, med, q3], "runs": len(rs), "final_by_seed": {str(r["seed"]): r["curve"][-1] for r in rs},
                "act_s": statistics.fmean(r["act_s"] for r in rs), "env_s": statistics.fmean(r["env_s"] for r in rs),
                "wall_s": statistics.median(r["wall_s"] for r in rs if r["wall_s"] is not None),
                "partly_random": any(r["independent_draws"] for r in rs),
                "quartile_curves": [list(quartiles(list(c))) for c in zip(*[r["curve"] for r in rs])]}
    return summary


def _cell(summary: dict, notes: dict, label: str, method: str) -> str:
    cell = summary.get(f"{label}/{method}")
    if cell is None:
        return "n/a" if (label, method) in notes else "-"
    q1, med, q3 = cell["final"]
    fmt = ".2f" if problem(label).optimal_value is not None else ".4f"
    return f"{med:{fmt}} [{q1:{fmt}}, {q3:{fmt}}]" + (" †" if cell["partly_random"] else "")


def paired_table(summary: dict, labels: list[str], method: str, references: list[str]) -> list[str]:
    """Rows: problems; columns: references; cells: ``method``'s median minus the reference's and
    on how many shared seeds ``method`` ended lower."""
    refs = [r for r in references if r != method]
    lines = [f"| {method} against | " + " | ".join(refs) + " |", "|---|" + "---:|" * len(refs)]
    for label in labels:
        cells = [paired_cell(summary.get(f"{label}/{method}"), summary.get(f"{label}/{ref}")) for ref in refs]
        if any(c != "-" for c in cells):
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def bars(summary: dict, labels: list[str]) -> list[str]:
    """The issue's bars on the problems run, each PASS / FAIL / incomplete with its count."""
    def med(label, m):
        cell = summary.get(f"{label}/{m}")
        return None if cell is None else cell["final"][1]

    lines = []
    high = [lab for lab in labels if problem(lab).group == "high-d"]
    if high:
        have = [lab for lab in high if med(lab, DEFAULT_NP) is not None]
        vs_random = [lab for lab in have if med(lab, "random") is not None]
        below_random = sum(med(lab, DEFAULT_NP) < med(lab, "random") for lab in vs_random)
        vs_tpe = [lab for lab in have if med(lab, "optuna-tpe") is not None]
        below_tpe = sum(med(lab, DEFAULT_NP) < med(lab, "optuna-tpe") for lab in vs_tpe)
        vs_gp = [lab for lab in have if any(med(lab, g) is not None for g in GP_PEERS)]
        near_gp = sum(med(lab, DEFAULT_NP) - min(med(lab, g) for g in GP_PEERS if med(lab, g) is not None) <= 0.5
                      for lab in vs_gp)
        complete = len(have) == len(high)
        lines += [f"- high-d ({len(high)} problems; {DEFAULT_NP} has results on {len(have)}): below random on "
                  f"{below_random}/{len(vs_random)} ({_verdict(complete, below_random == len(high))}); below TPE on "
                  f"{below_tpe}/{len(vs_tpe)} ({_verdict(complete, 3 * below_tpe >= 2 * len(high))}, bar: 2/3); "
                  f"within 0.5 log10 of the best GP-based peer ({', '.join(GP_PEERS)}) on {near_gp}/{len(vs_gp)} "
                  f"({_verdict(complete, near_gp == len(high))})"]
    tuning = [lab for lab in labels if problem(lab).group == "tuning"]
    if tuning:
        for m in ("npsampler", DEFAULT_NP):
            have = [lab for lab in tuning if med(lab, m) is not None]
            vs_tpe = [lab for lab in have if med(lab, "optuna-tpe") is not None]
            below_tpe = sum(med(lab, m) < med(lab, "optuna-tpe") for lab in vs_tpe)
            vs_random = [lab for lab in have if med(lab, "random") is not None]
            not_worse = sum(med(lab, m) <= med(lab, "random") for lab in vs_random)
            complete = len(have) == len(tuning)
            lines.append(f"- tuning ({len(tuning)} problems; {m} has results on {len(have)}): below TPE on "
                         f"{below_tpe}/{len(vs_tpe)} ({_verdict(complete, 4 * below_tpe >= 3 * len(tuning))}, bar: "
                         f"3/4); not worse than random on {not_worse}/{len(vs_random)} "
                         f"({_verdict(complete, not_worse == len(tuning))})")
    return lines


def _verdict(complete: bool, passed: bool) -> str:
    return "incomplete" if not complete else "PASS" if passed else "FAIL"


def report(summary: dict, notes: dict, labels: list[str], methods: list[str], args, command: str) -> str:
    budgets: dict[int, list[str]] = {}
    for group, members in groups().items():
        if any(lab in labels for lab in members):
            budgets.setdefault(budget_of(members[0], args.budget), []).append(group)
    budget_text = ", ".join(f"{b} ({', '.join(g)})" for b, g in budgets.items())
    choosing = all(problem(lab).group in CHOOSING_GROUPS for lab in labels)
    title = ("## A choosing suite of the wide benchmark (issue 45): defaults are chosen here, not reported"
             if choosing else "## BO on problems nobody here tuned for (issue 45)")
    lines = [title, "",
             f"Command: `{command}` (CPU: {machine_line(RUN_THREADS)}). {args.seeds} seeds; evaluations per run: "
             f"{budget_text}. Final "
             "log10 simple regret (synthetic, high-d) or final best CV loss (tuning): median [25 %, 75 %]. "
             "`n/a`: the method cannot take the problem yet (recorded, retried on the next run); `-`: not run; "
             "†: NPSampler drew some parameters at random (outside its model). Methods: "
             "experiments/benchmarks/bo_wide_methods.py; problems: bo_wide_problems.py.", ""]
    for group, members in groups().items():
        rows = [lab for lab in members if lab in labels]
        if not rows:
            continue
        lines += [f"**{group}**", "", "| problem | d | " + " | ".join(methods) + " |",
                  "|---|---:|" + "---:|" * len(methods)]
        lines += [f"| {lab} | {problem(lab).dim} | " + " | ".join(_cell(summary, notes, lab, m) for m in methods) + " |"
                  for lab in rows]
        lines.append("")
    lines += incomplete_note(summary, args.seeds)
    lines += timing_table(summary, labels, methods)
    for method in [m for m in args.paired if m in methods]:
        lines += ["", f"Paired: {method}'s median minus the peer's, and on how many seeds {method} ended lower.", "",
                  *paired_table(summary, labels, method, methods)]
    lines += ["", "Bars (issue 45):", "", *bars(summary, labels)]
    if notes:
        lines += ["", "Unsupported so far: " + "; ".join(f"{m} on {lab}: {e.removeprefix('unsupported: ')}"
                                                       for (lab, m), e in sorted(notes.items())
                                                       if lab in labels and m in methods)]
    lines += ["", f"![final value vs evaluations: median and quartiles](figures/{args.section.replace('-', '_')}.png)"]
    return "\n".join(lines) + "\n"


def incomplete_note(summary: dict, seeds: int) -> list[str]:
    """A section's line (and a blank one) saying how many of ``seeds`` its cells hold so far,
    when some cell of ``summary`` (:func:`summarise`'s) holds fewer; none otherwise."""
    counts = [c["runs"] for c in summary.values()]
    if counts and min(counts) < seeds:
        return [f"**Incomplete:** {min(counts)} to {max(counts)} of the {seeds} seeds per cell so far (the "
                "script resumes where it stopped).", ""]
    return []


def timing_table(summary: dict, labels: list[str], methods: list[str]) -> list[str]:
    """Its heading line and a table: per problem and method, the seconds per evaluation spent in
    the method, the objective's own, and one run's wall time (a :func:`summarise` cell's)."""
    lines = ["Seconds per evaluation spent in the method (proposal and bookkeeping, mean over runs) / the "
             "objective's own seconds per evaluation / one run's wall time (median):", "",
             "| problem | " + " | ".join(methods) + " |", "|---|" + "---:|" * len(methods)]
    for lab in labels:
        cells = []
        for m in methods:
            c = summary.get(f"{lab}/{m}")
            cells.append("-" if c is None else f"{c['act_s']:.2f} / {c['env_s']:.2f} / {c['wall_s']:.0f} s")
        lines.append(f"| {lab} | " + " | ".join(cells) + " |")
    return lines


def plot(summary: dict, labels: list[str], methods: list[str], section: str = SECTION) -> None:
    plot_curves(summary, labels, methods, section.replace("-", "_"),
                lambda lab: "log10 regret" if problem(lab).optimal_value is not None else problem(lab).loss,
                lambda lab: problem(lab).optimal_value is None)


def plot_curves(summary: dict, labels: list[str], methods: list[str], name: str, ylabel: Callable[[str], str],
                loss: Callable[[str], bool]) -> None:
    """:func:`curves_figure`, saved as experiments/log/figures/<name>.png."""
    save_figure(curves_figure(summary, labels, methods, ylabel, loss), name)


def curves_figure(summary: dict, labels: list[str], methods: list[str], ylabel: Callable[[str], str],
                  loss: Callable[[str], bool]):
    """One panel per problem: each method's median curve (a :func:`summarise` cell's
    ``quartile_curves``) against evaluations, its quartiles shaded, in the colour of its place in
    ``methods`` on every panel (a panel without some method keeps the others' colours);
    ``ylabel(label)`` names the y axis, and where ``loss(label)`` the axis leaves out the first
    draws' spread (a loss without a known optimum)."""
    fig, axes = new_figure(len(labels), width=3.4, height=2.6)
    for ax, lab in zip(axes, labels):
        for i, m in enumerate(methods):
            cell = summary.get(f"{lab}/{m}")
            if cell:
                q1, med, q3 = zip(*cell["quartile_curves"])
                evals = range(1, len(med) + 1)
                ax.plot(evals, med, label=m, linewidth=1, color=f"C{i % 10}")
                ax.fill_between(evals, q1, q3, alpha=0.15, color=f"C{i % 10}")
        ax.set_title(lab, fontsize=9)
        tops = [summary[f"{lab}/{m}"]["quartile_curves"][min(9, len(summary[f"{lab}/{m}"]["quartile_curves"]) - 1)][2]
                for m in methods if f"{lab}/{m}" in summary]
        lows = [summary[f"{lab}/{m}"]["quartile_curves"][-1][0] for m in methods if f"{lab}/{m}" in summary]
        if loss(lab) and tops:  # a loss: the first draws' spread would flatten the rest
            margin = 0.05 * (max(tops) - min(lows))
            ax.set_ylim(min(lows) - margin, max(tops) + margin)
        ax.set_ylabel(ylabel(lab), fontsize=8)
        ax.set_xlabel("evaluations", fontsize=8)
        ax.tick_params(labelsize=7)
    axes[0].legend(fontsize=6)
    return fig


def expand(names: list[str]) -> list[str]:
    """Problem labels and group names (``synthetic``, ``high-d``, ``tuning``) as labels, in table order."""
    by_group = groups()
    wanted = {lab for n in names for lab in by_group.get(n, [n])}
    unknown = wanted - set(all_problems())
    if unknown:
        raise ValueError(f"--problems: unknown {sorted(unknown)}; expected labels or groups {list(by_group)}")
    return [lab for lab in all_problems() if lab in wanted]


def main(argv: list[str] | None = None) -> None:
    from npbandit.exceptions import StorageError
    from npbandit.storage import display_url

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--problems", nargs="+", default=[g for g in groups() if g not in CHOOSING_GROUPS],
                        help=f"problem labels or groups ({', '.join(groups())}); default: every problem of the "
                             f"reporting suite (not {', '.join(CHOOSING_GROUPS)}, which chooses defaults)")
    parser.add_argument("--methods", nargs="+", default=METHODS, choices=METHODS)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=None,
                        help="evaluations per run for every problem (default: 100 synthetic and high-d, 60 tuning)")
    add_cluster_arguments(parser)
    parser.add_argument("--db", default=str(ROOT / "runs" / "bench_bo_wide.db"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--section", default=SECTION,
                        help="log section (and JSON / figure name) to write; another name than the default "
                             "publishes a subset of problems beside the main table instead of replacing it")
    parser.add_argument("--no-run", action="store_true", help="only summarise the completed runs in --db")
    parser.add_argument("--paired", nargs="+", default=[DEFAULT_NP, "npsampler"],
                        help="methods compared seed by seed with every other method run")
    args = parser.parse_args(argv)
    try:
        labels = expand(args.problems)
    except ValueError as err:
        parser.error(str(err))
    if args.budget is not None and args.budget < 1:
        parser.error(f"--budget must be positive, got {args.budget}")
    args.db = prepare_db(args.db)
    try:
        runs, notes = collect(args.db, args.budget)
    except StorageError:  # no database yet
        runs, notes = {}, {}
    done = {(lab, m, r["seed"]) for (lab, m), rs in runs.items() for r in rs}
    # seed-major: an interrupted run leaves the first k seeds of every cell
    todo = [(lab, m, s) for s in range(args.seeds) for lab in labels for m in args.methods if (lab, m, s) not in done]
    print(f"{len(done)} runs already in {display_url(args.db)}; {len(todo)} to go")
    if not args.no_run and todo:
        run_jobs(_one, [(lab, m, s, budget_of(lab, args.budget), args.db) for lab, m, s in todo], args.workers,
                 "bo_wide runs", args.dask_scheduler)
    runs, notes = collect(args.db, args.budget)
    summary = summarise(runs, labels, args.methods, args.seeds)
    command = "python experiments/benchmarks/bo_wide.py " + " ".join(argv if argv is not None else sys.argv[1:])
    text = report(summary, notes, labels, args.methods, args, command.strip())
    print(text)
    if not args.no_write:
        plot(summary, labels, args.methods, args.section)
        unsupported = {f"{lab}/{m}": e for (lab, m), e in notes.items()}
        tabulated = [r["versions"] for lab in labels for m in args.methods for r in runs.get((lab, m), [])
                     if r["seed"] < args.seeds]
        publish(args.section, text, f"{args.section.replace('-', '_')}.json", command,
                {"summary": summary, "unsupported": unsupported}, threads=RUN_THREADS,
                packages=("optuna", "greenlet", "scikit-learn"), runs=tabulated)


if __name__ == "__main__":
    main()
