"""Asynchronous BO on a Dask LocalCluster: wall time and regret against q (issue 17).

The objective sleeps ``--sleep`` seconds (1 s) and then returns Branin's or Hartmann-6's
value, as an expensive evaluation would. ``npbandit.optimize`` with ``--surrogate`` (``tnpd``,
its default, or ``cmanp``; otherwise the defaults: LogEI, a 2d + 1-point Sobol design, the trust
region, pending points believed at ``--liar``, default optimize's) runs ``--budget`` (64) evaluations
with q = 1, 2, 4, 8 of them in flight on a 4-worker ``LocalCluster`` (one thread per worker,
in this process: the objective sleeps, so threads are workers enough, and each task is still
pickled as on a real cluster); q = 1 runs on the same cluster, one evaluation at a time.
The peer: Optuna's ``TPESampler(seed=seed, constant_liar=True)`` (every other option its
default) with ``study.optimize(n_jobs=4)``, the same 4 workers as threads, on the same
objective over the function's own bounds.

Reported per function and method, over the seeds that ran: the wall time of a run (first
submission to last result, from the steps' ``submitted_at`` / ``finished_at``), its ratio to
q = 1 (ratio of the medians), the median final log10 simple regret with quartiles, and the
seconds spent proposing over the run (the steps' ``act_s``: proposals run in the driver,
one after another, so their sum is a floor under the wall time whatever q is). The bars of issue 17: q = 4 wall
time <= 0.35 x q = 1; q = 4 median final regret at most 0.3 log10 above q = 1.

A second, small table separates the engine from the surrogate: the same runs with
``surrogate="random"`` (Sobol points, proposals cost nothing) for the first
``--sobol-seeds`` seeds, whose wall time is the asynchronous loop and Dask alone.

Every run is logged to ``--db`` (completed runs are not repeated), the Sobol rows first and
then seed after seed, so ``--stop-after-minutes`` leaves whole seeds of every cell where it can.

    python experiments/benchmarks/batch_bo.py                                  # 10 seeds (hours on 2 loaded cores)
    python experiments/benchmarks/batch_bo.py --stop-after-minutes 60          # as many seeds as fit an hour
    python experiments/benchmarks/batch_bo.py --seeds 1 --budget 16 --sleep 0.2 --no-write   # quick look
"""

from __future__ import annotations

import argparse
import datetime as dt
import functools
import math
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, is_current, machine_line, prepare_db, publish  # noqa: E402

from npbandit.acquisition.pending import DEFAULT_LIAR, LIARS  # noqa: E402

COMMAND = "python experiments/benchmarks/batch_bo.py"
#: label -> (BlackBoxEnv function name, dimension)
FUNCTIONS = {"branin": ("branin", None), "hartmann6": ("hartmann", 6)}
QS = [1, 2, 4, 8]
WORKERS = 4
RUN_THREADS = 1  # torch threads of the driver, which proposes every point
OPTUNA = "optuna-tpe-cl"
OPTUNA_VERSION = "5.0.0"
BARS = {"wall_ratio": 0.35, "regret_gap": 0.3}


def _slow(objective, seconds: float, x: np.ndarray) -> float:
    """The benchmark's expensive evaluation: wait ``seconds``, then the function's value."""
    time.sleep(seconds)
    return objective(x)


def _problem(label: str):
    from npbandit.envs import make_test_function
    from npbandit.envs.blackbox import problem_objective

    name, dim = FUNCTIONS[label]
    problem = make_test_function(name, dim)
    return problem, problem_objective(problem, label), float(problem._optimal_value)


def _objective_name(label: str, sleep: float) -> str:
    return f"{label}-sleep{sleep:g}s"


def run_npbandit(label: str, q: int, seed: int, budget: int, sleep: float, db: str, executor,
                 surrogate: str, liar: str) -> None:
    from npbandit import optimize

    problem, f, optimum = _problem(label)
    optimize(functools.partial(_slow, f, sleep), problem.bounds, surrogate=surrogate, budget=budget, seed=seed, db=db,
             batch_size=q, executor=executor, name=_objective_name(label, sleep), optimal_value=optimum,
             progress=False, **({} if surrogate == "random" else {"liar": liar}))


def run_optuna(label: str, seed: int, budget: int, sleep: float, db: str) -> None:
    """Optuna's constant-liar TPE with ``WORKERS`` threads; its trials are then logged as
    one run's steps in the order they finished, like an asynchronous ``optimize`` run."""
    from bo import require_optuna

    from npbandit.storage import RunLogger

    optuna = require_optuna([OPTUNA])
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    problem, f, optimum = _problem(label)
    low, high = (problem.bounds[0].numpy().astype(np.float64), problem.bounds[1].numpy().astype(np.float64))
    study = optuna.create_study(direction="minimize",
                                sampler=optuna.samplers.TPESampler(seed=seed, constant_liar=True))

    def objective(trial) -> float:
        x = np.array([trial.suggest_float(f"x{i}", float(lo), float(hi)) for i, (lo, hi) in enumerate(zip(low, high))])
        return _slow(f, sleep, x)

    study.optimize(objective, n_trials=budget, n_jobs=WORKERS)
    logger = RunLogger(db, commit_every=budget)
    logger.start(kind="bo", env_id="npbandit/BlackBox-v0",
                 env_params={"objective": _objective_name(label, sleep), "dim": len(low),
                             "bounds": [low.tolist(), high.tolist()], "minimize": True, "budget": budget,
                             "optimal_value": optimum, "batch_size": WORKERS},
                 policy=OPTUNA, policy_params={"sampler": "TPESampler", "constant_liar": True, "n_jobs": WORKERS,
                                               "optuna": optuna.__version__}, seed=seed)
    best = math.inf
    for t, trial in enumerate(sorted(study.trials, key=lambda tr: tr.datetime_complete)):
        value = float(trial.value)
        best = min(best, value)
        x = np.array([trial.params[f"x{i}"] for i in range(len(low))])
        logger.log_step(t=t, action=((x - low) / (high - low)).tolist(), reward=-value, regret=value - optimum,
                        value=value, best_value=best, failed=False,
                        env_s=(trial.datetime_complete - trial.datetime_start).total_seconds(),
                        submitted_at=_utc(trial.datetime_start), finished_at=_utc(trial.datetime_complete))
    logger.finish("completed")


def _utc(local: dt.datetime) -> dt.datetime:
    """Optuna's local, naive trial times, aware (the steps table stores them as UTC)."""
    return local.astimezone(dt.UTC)


def _method(run) -> str | None:
    """A run's row: ``q=4`` (the default surrogate), ``sobol q=4`` or the Optuna row."""
    if run.policy == OPTUNA:
        return OPTUNA
    q = run.env_params.get("batch_size")
    if q is None:
        return None
    return f"sobol q={q}" if run.policy == "sobol" else f"q={q}"


def collect(db: str, budget: int, sleep: float, surrogate: str, liar: str) -> dict[tuple[str, str], list[dict]]:
    """Completed runs of this configuration (the NP rows: ``surrogate`` with pending points
    believed at ``liar``; runs before the liar was recorded believed the worst value):
    (function, method) -> per-seed wall, regret, proposal time."""
    from npbandit.api import SURROGATES
    from npbandit.storage import list_runs, run_steps

    names = {_objective_name(label, sleep): label for label in FUNCTIONS}
    out: dict[tuple[str, str], list[dict]] = {}
    for r in list_runs(db, kind="bo"):
        label, method = names.get(r.env_params.get("objective")), _method(r)
        if (r.status != "completed" or label is None or method is None or r.env_params.get("budget") != budget
                or r.n_steps != budget or not is_current(r)):
            continue
        if method.startswith("q=") and (not r.policy.startswith(SURROGATES[surrogate] + "-")
                                        or r.policy_params.get("liar", "worst") != liar):
            continue
        steps = run_steps(db, r.id)
        wall = (max(s["finished_at"] for s in steps) - min(s["submitted_at"] for s in steps)).total_seconds()
        final = min(s["value"] for s in steps if not s["failed"]) - r.env_params["optimal_value"]
        out.setdefault((label, method), []).append({
            "seed": r.seed, "wall_s": wall, "log10_regret": math.log10(max(final, 1e-12)),
            "propose_s": sum(s["act_s"] for s in steps) if method != OPTUNA else None,
            "propose_share": sum(s["act_s"] for s in steps) / wall if method != OPTUNA else None,
            "versions": r.versions})
    return out


def _quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return q[0], statistics.median(values), q[2]


def summarise(runs: dict, functions: list[str], seeds: int, qs: list[int]) -> dict:
    summary: dict = {}
    for (label, method), rs in runs.items():
        rs = [r for r in rs if r["seed"] < seeds and label in functions]
        if not rs:
            continue
        walls = [r["wall_s"] for r in rs]
        proposals = [r["propose_s"] for r in rs if r["propose_s"] is not None]
        shares = [r["propose_share"] for r in rs if r["propose_share"] is not None]
        summary[f"{label}/{method}"] = {
            "runs": len(rs), "seeds": sorted(r["seed"] for r in rs), "wall_s": _quartiles(walls),
            "log10_regret": _quartiles([r["log10_regret"] for r in rs]),
            "propose_s": statistics.median(proposals) if proposals else None,
            "propose_share": statistics.median(shares) if shares else None}
    for label in functions:
        for prefix, methods in (("", [*(f"q={q}" for q in qs), OPTUNA]), ("sobol ", [f"sobol q={q}" for q in qs])):
            base = summary.get(f"{label}/{prefix}q=1")
            for method in methods:
                cell = summary.get(f"{label}/{method}")
                if cell and base:
                    cell["wall_ratio"] = cell["wall_s"][1] / base["wall_s"][1]
                    cell["regret_gap"] = cell["log10_regret"][1] - base["log10_regret"][1]
    return summary


def render(summary: dict, args) -> str:
    methods = [*(f"q={q}" for q in args.qs), *([] if args.no_optuna else [OPTUNA])]
    lines = ["## Asynchronous BO on a Dask LocalCluster (issue 17)", "",
             f"Command: `{args.command}` (CPU: {machine_line(RUN_THREADS)}"
             f"{'; ' + args.note if args.note else ''}). This table: the "
             "runs completed so far (seeds per cell below; the script resumes where it stopped). "
             f"{args.budget} evaluations of an objective that sleeps {args.sleep:g} s and returns the "
             f"function's value; `npbandit.optimize` with `surrogate=\"{args.surrogate}\"` (LogEI, 2d + 1 Sobol "
             f"points, the trust region: the defaults) and `batch_size=q` on a {WORKERS}-worker Dask `LocalCluster` "
             "(one thread per worker; "
             "`executor=client.get_executor()`, q = 1 included); pending points believed at the "
             f"{args.liar} value the model sees (a constant liar, `liar=\"{args.liar}\"`). {OPTUNA}: Optuna "
             f"{OPTUNA_VERSION} `TPESampler(seed=seed, constant_liar=True)`, "
             f"`study.optimize(n_jobs={WORKERS})` on the same objective. Wall time: first submission to last "
             "result, median [25 %, 75 %] over seeds, and its ratio to q = 1 (of the medians); regret: final "
             "log10 simple regret, median [25 %, 75 %]; proposing: seconds the driver spent proposing points over the "
             "run (median over seeds): proposals run one after another, so this is a floor under the wall time "
             "whatever q is.",
             ""]
    for label in args.functions:
        lines += [f"**{label}**", "", "| method | seeds | wall time (s) | wall / q=1 | final log10 regret | "
                  "regret − q=1 | proposing (s) |", "|---|---:|---:|---:|---:|---:|---:|"]
        for method in methods:
            c = summary.get(f"{label}/{method}")
            if c is None:
                lines.append(f"| {method} | 0 | - | - | - | - | - |")
                continue
            w, g = c["wall_s"], c["log10_regret"]
            lines.append(f"| {method} | {c['runs']} | {w[1]:.1f} [{w[0]:.1f}, {w[2]:.1f}] | "
                         f"{c.get('wall_ratio', float('nan')):.2f} | {g[1]:.2f} [{g[0]:.2f}, {g[2]:.2f}] | "
                         f"{c.get('regret_gap', float('nan')):+.2f} | "
                         + ("-" if c["propose_s"] is None else f"{c['propose_s']:.1f}") + " |")
        lines.append("")
    sobol = [(label, q, summary.get(f"{label}/sobol q={q}")) for label in args.functions for q in args.qs]
    if any(c for _, _, c in sobol):
        lines += ["Without proposal cost (`surrogate=\"random\"`: Sobol points; the same objective, cluster and "
                  "loop), the wall time of the asynchronous loop and Dask alone:", "",
                  "| function | q | seeds | wall time (s) | wall / q=1 |", "|---|---:|---:|---:|---:|"]
        for label, q, c in sobol:
            if c is not None:
                lines.append(f"| {label} | {q} | {c['runs']} | {c['wall_s'][1]:.1f} | "
                             f"{c.get('wall_ratio', float('nan')):.2f} |")
        lines.append("")
    lines += ["Bars (issue 17), q = 4 against q = 1:", ""]
    for label in args.functions:
        c = summary.get(f"{label}/q=4")
        if c is None or "wall_ratio" not in c:
            lines.append(f"- {label}: not measured")
            continue
        ratio_ok = c["wall_ratio"] <= BARS["wall_ratio"]
        gap_ok = c["regret_gap"] <= BARS["regret_gap"]
        lines.append(f"- {label}: wall time {c['wall_ratio']:.2f} x q = 1 (bar <= {BARS['wall_ratio']}: "
                     f"{'holds' if ratio_ok else 'missed'}); median final regret {c['regret_gap']:+.2f} log10 "
                     f"from q = 1 (bar <= +{BARS['regret_gap']}: {'holds' if gap_ok else 'missed'}); "
                     f"{c['runs']} seeds. q = 4 spent {100 * c['propose_share']:.0f} % of its wall time proposing "
                     f"(median over seeds: {c['propose_s']:.0f} s, {c['propose_s'] / args.budget:.2f} s per evaluation)"
                     + (f"; without proposal cost q = 4 took {summary[f'{label}/sobol q=4']['wall_ratio']:.2f} x q = 1"
                        if "wall_ratio" in summary.get(f"{label}/sobol q=4", {}) else "") + ".")
    counts = [c["runs"] for key, c in summary.items() if "sobol" not in key]
    if counts and min(counts) < args.seeds:
        lines += ["", f"**Incomplete:** {min(counts)} to {max(counts)} of the {args.seeds} seeds per cell ran "
                  "(the script resumes where it stopped)."]
    return "\n".join(lines) + "\n"


def _command(args, parser) -> str:
    """The command that reproduces the table: the script with the options that shape the runs
    (not the ones that only say when to stop or what to print)."""
    parts = [COMMAND]
    for name in ("surrogate", "liar", "functions", "qs", "seeds", "budget", "sleep", "sobol_seeds"):
        value = getattr(args, name)
        if value != parser.get_default(name):
            shown = " ".join(map(str, value)) if isinstance(value, list) else value
            parts.append(f"--{name.replace('_', '-')} {shown}")
    return " ".join(parts + (["--no-optuna"] if args.no_optuna else []))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--surrogate", default="tnpd", choices=["tnpd", "cmanp"],
                        help="optimize's surrogate (default: optimize's default)")
    parser.add_argument("--liar", default=DEFAULT_LIAR, choices=list(LIARS),
                        help="what pending points are believed at (default: optimize's default)")
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=list(FUNCTIONS))
    parser.add_argument("--qs", type=int, nargs="+", default=QS)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=64)
    parser.add_argument("--sleep", type=float, default=1.0, help="seconds each evaluation waits")
    parser.add_argument("--no-optuna", action="store_true", help="leave out the Optuna row")
    parser.add_argument("--sobol-seeds", type=int, default=1,
                        help="seeds of the Sobol rows (surrogate='random': the engine's own wall time)")
    parser.add_argument("--stop-after-minutes", type=float, help="start no run after this many minutes")
    parser.add_argument("--note", default="", help="said of the machine beside the command (e.g. what else ran)")
    parser.add_argument("--db", default=str(ROOT / "runs" / "bench_batch_bo.db"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true", help="only summarise the completed runs in --db")
    args = parser.parse_args(argv)
    args.command = _command(args, parser)
    import torch

    # one thread for the driver's proposals, as every other BO benchmark runs them: torch's
    # default (one per core) oversubscribes a machine shared with a training run
    torch.set_num_threads(RUN_THREADS)
    if 1 not in args.qs:
        parser.error("--qs must include 1: the other rows are measured against it")
    args.db = prepare_db(args.db)
    from npbandit.storage import open_db

    open_db(args.db)  # created (a first run's summary reads it)
    methods = [*(f"q={q}" for q in args.qs), *([] if args.no_optuna else [OPTUNA])]
    logged = collect(args.db, args.budget, args.sleep, args.surrogate, args.liar)
    done = {(label, method, r["seed"]) for (label, method), rs in logged.items() for r in rs}
    sobol = [f"sobol q={q}" for q in args.qs]
    todo = [(s, label, m) for s in range(args.sobol_seeds) for label in args.functions for m in sobol
            if (label, m, s) not in done]
    todo += [(s, label, m) for s in range(args.seeds) for label in args.functions for m in methods
             if (label, m, s) not in done]
    print(f"{len(done)} runs already in the database; {len(todo)} to go")
    if not args.no_run and todo:
        from distributed import Client, LocalCluster

        start = time.perf_counter()
        with LocalCluster(n_workers=WORKERS, threads_per_worker=1, processes=False,
                          dashboard_address=None) as cluster, Client(cluster) as client:
            executor = client.get_executor()
            for seed, label, method in todo:
                if args.stop_after_minutes is not None and time.perf_counter() - start > 60 * args.stop_after_minutes:
                    print(f"stopping after {args.stop_after_minutes:g} minutes")
                    break
                t0 = time.perf_counter()
                if method == OPTUNA:
                    run_optuna(label, seed, args.budget, args.sleep, args.db)
                else:
                    q = int(method.rsplit("q=", 1)[1])
                    run_npbandit(label, q, seed, args.budget, args.sleep, args.db, executor,
                                 "random" if method.startswith("sobol") else args.surrogate, args.liar)
                print(f"{label} {method} seed {seed}: {time.perf_counter() - t0:.1f} s", flush=True)
    runs = collect(args.db, args.budget, args.sleep, args.surrogate, args.liar)
    summary = summarise(runs, args.functions, args.seeds, args.qs)
    text = render(summary, args)
    print(text)
    if not args.no_write:
        # the default surrogate's table is section batch-bo (what optimize gives); others batch-bo-<name>
        section = "batch-bo" if args.surrogate == "tnpd" else f"batch-bo-{args.surrogate}"
        shown = {f"{label}/{method}": rs for (label, method), rs in sorted(runs.items()) if label in args.functions}
        publish(section, text, f"{section.replace('-', '_')}.json", args.command,
                {"budget": args.budget, "sleep_s": args.sleep, "workers": WORKERS, "seeds": args.seeds,
                 "note": args.note, "bars": BARS, "summary": summary,
                 "runs": {cell: [{k: v for k, v in r.items() if k != "versions"} for r in rs]
                          for cell, rs in shown.items()}},
                packages=("optuna", "dask", "distributed"),
                runs=[r["versions"] for rs in shown.values() for r in rs if r["seed"] < args.seeds])


if __name__ == "__main__":
    main()
