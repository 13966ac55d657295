"""Bayesian-optimisation regret on standard test functions (PROTOCOLS.md §4).

Branin-2, Hartmann-3, Hartmann-6, Ackley-4, Levy-4 and Rosenbrock-3 (minimised, inputs
mapped to the unit cube), ``--seeds`` seeds, ``--budget`` evaluations including a
``2d + 1``-point scrambled Sobol design that is the same for every method of a seed.
Methods: every shipped ``*-bo`` checkpoint with LogEI (``NPModel`` + ``optimize_acqf``,
streaming ``condition_on_observations``), BoTorch ``SingleTaskGP`` + LogEI refit every
iteration, and Sobol search. Reported: median and quartiles of log10 simple regret vs
evaluations (final values in the table, curves in the JSON), and seconds per iteration.
Runs go through ``npbandit.storage``; completed runs are not repeated.

    python benchmarks/bo.py --workers 2
    python benchmarks/bo.py --functions branin --seeds 2 --budget 12 --no-write   # quick look
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path


sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, is_current, machine_line, new_figure, publish, run_jobs, save_figure  # noqa: E402

RUN_THREADS = 1  # torch threads per run (each worker process sets it)
COMMAND = "python benchmarks/bo.py --workers 2"
FUNCTIONS = {"branin": None, "hartmann3": ("hartmann", 3), "hartmann6": ("hartmann", 6), "ackley4": ("ackley", 4),
             "levy4": ("levy", 4), "rosenbrock3": ("rosenbrock", 3)}


def _problem(label: str) -> tuple[str, int | None]:
    spec = FUNCTIONS[label]
    return (label, None) if spec is None else spec


def _one(method: str, label: str, seed: int, budget: int, db: str) -> None:
    import torch

    torch.set_num_threads(RUN_THREADS)
    from npbandit.envs import BlackBoxEnv
    from npbandit.loop import run_episode
    from npbandit.policies import BOPolicy, SobolPolicy
    from npbandit.storage import RunLogger

    name, dim = _problem(label)
    env = BlackBoxEnv(function=name, dim=dim, budget=budget)
    policy = SobolPolicy(env.dim) if method == "sobol" else BOPolicy(env.dim, model=method, acquisition="logei")
    run_episode(env, policy, seed=seed, logger=RunLogger(db, commit_every=budget),
                run_info={"kind": "bo", "env_id": "npbandit/BlackBox-v0",
                          "env_params": {"objective": label, "budget": budget, "benchmark": "bo",
                                         "optimal_value": env.optimal_value}})


def _method_of(policy: str) -> str:
    return policy.removesuffix("-logei")


def collect(db: str, budget: int) -> dict[tuple[str, str], list[dict]]:
    from npbandit.storage import list_runs, run_steps

    runs: dict[tuple[str, str], list[dict]] = {}
    for r in list_runs(db, kind="bo"):
        if (r.status != "completed" or r.env_params.get("benchmark") != "bo" or r.env_params.get("budget") != budget
                or not is_current(r)):
            continue
        steps = run_steps(db, r.id)
        opt = r.env_params["optimal_value"]
        curve = [math.log10(max(s["best_value"] - opt, 1e-12)) for s in steps]
        per_iter = statistics.fmean(s["act_s"] + s["observe_s"] for s in steps)
        runs.setdefault((r.env_params["objective"], _method_of(r.policy)), []).append(
            {"seed": r.seed, "curve": curve, "s_per_iter": per_iter})
    return runs


def quartiles(values: list[float]) -> tuple[float, float, float]:
    q = statistics.quantiles(values, n=4) if len(values) > 1 else [values[0]] * 3
    return q[0], statistics.median(values), q[2]


def main(argv: list[str] | None = None) -> None:
    from npbandit.surrogates.pretrained import available_checkpoints

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", default=list(FUNCTIONS), choices=list(FUNCTIONS))
    parser.add_argument("--methods", nargs="+",
                        default=[n for n in available_checkpoints() if n.endswith("-bo")] + ["gp", "sobol"])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--db", default=str(ROOT / "runs" / "bench_bo.db"))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true", help="only summarise the completed runs in --db")
    args = parser.parse_args(argv)
    Path(args.db).parent.mkdir(parents=True, exist_ok=True)
    have = collect(args.db, args.budget)
    done = {(f, m, run["seed"]) for (f, m), rs in have.items() for run in rs}
    # seed-major: an interrupted run leaves the first k seeds of every function and method
    todo = [(m, f, s) for s in range(args.seeds) for f in args.functions for m in args.methods
            if (f, m, s) not in done]
    print(f"{len(done)} runs already in {args.db}; {len(todo)} to go")
    if not args.no_run:
        run_jobs(_one, [(m, f, s, args.budget, args.db) for m, f, s in todo], args.workers, "bo runs")
    runs = collect(args.db, args.budget)
    lines = ["## Bayesian optimisation regret (PROTOCOLS.md §4)", "",
             f"Command: `{COMMAND}` (CPU: {machine_line(RUN_THREADS)}). Minimisation, {args.budget} evaluations including "
             f"the 2d + 1 Sobol points (identical across methods for a seed), {args.seeds} seeds. log10 simple "
             "regret at the last evaluation: median [25 %, 75 %]; seconds per iteration (act + observe), mean.", "",
             "| function | " + " | ".join(args.methods) + " |", "|---|" + "---:|" * len(args.methods)]
    summary = {}
    for f in args.functions:
        cells = []
        for m in args.methods:
            rs = [r for r in runs.get((f, m), []) if r["seed"] < args.seeds]
            if not rs:
                cells.append("-")
                continue
            q1, med, q3 = quartiles([r["curve"][-1] for r in rs])
            t = statistics.fmean(r["s_per_iter"] for r in rs)
            summary[f"{f}/{m}"] = {"final": [q1, med, q3], "s_per_iter": t, "runs": len(rs),
                                   "quartile_curves": [list(quartiles(list(c))) for c in zip(*[r["curve"] for r in rs])]}
            cells.append(f"{med:.2f} [{q1:.2f}, {q3:.2f}] ({t:.2f} s)")
        lines.append(f"| {f} | " + " | ".join(cells) + " |")
    counts = [c["runs"] for c in summary.values()]
    if counts and min(counts) < args.seeds:
        lines += ["", f"**Incomplete:** {min(counts)} to {max(counts)} of the {args.seeds} seeds per cell so far "
                  "(the script resumes where it stopped)."]
    lines += ["", "![log10 simple regret vs evaluations: median and quartiles](figures/bo_regret.png)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if not args.no_write:
        plot(summary, args.functions, args.methods)
        publish("bo", text, "bo.json", COMMAND, {"summary": summary}, pages=("benchmarks.md", "results.md"),
                threads=RUN_THREADS)


def plot(summary: dict, functions: list[str], methods: list[str]) -> None:
    """Median log10 simple regret vs evaluations with the quartile band, one panel per function."""
    fig, axes = new_figure(len(functions))
    for ax, f in zip(axes, functions):
        for m in methods:
            cell = summary.get(f"{f}/{m}")
            if not cell:
                continue
            q1, med, q3 = zip(*cell["quartile_curves"])
            evals = range(1, len(med) + 1)
            ax.plot(evals, med, label=m)
            ax.fill_between(evals, q1, q3, alpha=0.2)
        ax.set_title(f)
        ax.set_xlabel("evaluations")
        ax.set_ylabel("log10 simple regret")
    axes[0].legend(fontsize=8)
    save_figure(fig, "bo_regret")


if __name__ == "__main__":
    main()
