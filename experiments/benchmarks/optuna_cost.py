"""Seconds per trial: ``NPSampler`` inside Optuna vs ``npbandit.optimize``, same checkpoint.

Branin, ``--budget`` evaluations, ``cmanp-bo`` with LogEI (10 restarts, 512 raw samples)
in both, from the same start: ``optimize``'s 2d + 1 = 5 Sobol points are enqueued as the
study's first trials and the sampler is given ``n_startup_trials=5`` (its default is 10),
so both routes make the same number of NP proposals from the same data.
Each route runs without storage (``optimize(db=None)``, Optuna's in-memory storage) and
with an SQLite file (``optimize``'s run log, Optuna's RDB storage). The routes of a seed
run back to back in a rotating order, so a slower stretch of a busy machine hits them
alike; the table gives medians over seeds and the per-seed ratio to ``optimize``.

Where the time goes: the seconds inside the shared proposal step
(``npbandit.acquisition.proposal.propose``: LogEI and ``optimize_acqf``) and in building /
updating the ``NPModel`` are timed in every run; the rest is the route's own bookkeeping
(``optimize``: the environment, the loop, the run log; Optuna: trials and storage).
``--profile`` adds a cProfile of one Optuna + SQLite study (top functions by own time).

    python experiments/benchmarks/optuna_cost.py --profile  # 5 seeds, writes experiments/log/benchmarks.md
    python experiments/benchmarks/optuna_cost.py --seeds 2 --no-write
    python experiments/benchmarks/optuna_cost.py --no-run   # re-render from experiments/log/results/optuna_cost.json
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    BRANIN_BOUNDS,
    ROOT,
    branin,
    machine_line,
    own_seconds_by_package,
    publish,
    top_functions,
)

THREADS = 1
COMMAND = "python experiments/benchmarks/optuna_cost.py"
JSON_NAME = "optuna_cost.json"
ROUTES = ("optimize", "optimize+sqlite", "optuna", "optuna+sqlite")


class Clock:
    """Seconds spent in the proposal step and in building/updating NPModels, by patching
    the names both routes call (so the same code is timed in each)."""

    def __init__(self) -> None:
        self.propose = self.model = 0.0

    @contextlib.contextmanager
    def installed(self):
        import npbandit.acquisition.proposal as bo  # the proposal step both routes call
        import npbandit.integrations.optuna_proposals as integration
        from npbandit import NPModel

        def timed(fn, bucket):
            def wrapper(*args, **kwargs):
                t0 = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    setattr(self, bucket, getattr(self, bucket) + time.perf_counter() - t0)
            return wrapper

        saved = (bo.propose, integration.propose, NPModel.__dict__["from_pretrained"],
                 NPModel.condition_on_observations)
        bo.propose = integration.propose = timed(saved[0], "propose")
        NPModel.from_pretrained = classmethod(timed(saved[2].__func__, "model"))
        NPModel.condition_on_observations = timed(saved[3], "model")
        try:
            yield self
        finally:
            bo.propose, integration.propose = saved[0], saved[1]
            NPModel.from_pretrained, NPModel.condition_on_observations = saved[2], saved[3]


def start_design(seed: int) -> list[list[float]]:
    """``optimize``'s first 2d + 1 points for ``seed`` on the unit cube (BOPolicy's scrambled
    Sobol design, seeded by the run's seed)."""
    import torch

    return torch.quasirandom.SobolEngine(2, scramble=True, seed=seed).draw(5, dtype=torch.float64).tolist()


def run_route(route: str, seed: int, budget: int, folder: Path) -> dict:
    """One study of ``budget`` evaluations; wall seconds, the timed parts and the best value."""
    import optuna

    import npbandit
    from npbandit.integrations.optuna import NPSampler

    clock = Clock()
    db = f"sqlite:///{folder / f'{route}-{seed}.db'}" if route.endswith("+sqlite") else None
    with clock.installed():
        t0 = time.perf_counter()
        if route.startswith("optimize"):
            best = npbandit.optimize(lambda x: branin(*x), BRANIN_BOUNDS, surrogate="cmanp", budget=budget, seed=seed,
                                     db=db, progress=False).best_value
        else:
            study = optuna.create_study(storage=db, sampler=NPSampler("cmanp-bo", n_startup_trials=5, seed=seed))
            for u in start_design(seed):
                study.enqueue_trial({"x1": BRANIN_BOUNDS[0][0] + u[0] * (BRANIN_BOUNDS[1][0] - BRANIN_BOUNDS[0][0]),
                                     "x2": BRANIN_BOUNDS[0][1] + u[1] * (BRANIN_BOUNDS[1][1] - BRANIN_BOUNDS[0][1])})
            study.optimize(lambda t: branin(t.suggest_float("x1", -5.0, 10.0), t.suggest_float("x2", 0.0, 15.0)),
                           n_trials=budget)
            best = study.best_value
        wall = time.perf_counter() - t0
    return {"route": route, "seed": seed, "s_per_trial": wall / budget, "propose_s": clock.propose / budget,
            "model_s": clock.model / budget, "rest_s": (wall - clock.propose - clock.model) / budget, "best": best}


#: own-time buckets for the profile: a path fragment (or a C function's name) -> label
PACKAGES = (("sqlite3", "sqlite3 (C: execute, commit)"), ("/sqlalchemy/", "SQLAlchemy"), ("/alembic/", "Alembic"),
            ("/optuna/", "Optuna"), ("/botorch/", "BoTorch"), ("/gpytorch/", "GPyTorch"),
            ("/linear_operator/", "GPyTorch"), ("/scipy/", "SciPy"), ("/npbandit/", "npbandit"), ("torch", "torch"))


def profile_optuna_sqlite(seed: int, budget: int, folder: Path,
                          top: int = 10) -> tuple[list[str], dict[str, float], dict[str, float]]:
    """cProfile of one Optuna + SQLite study: own seconds per trial by package, the
    functions with the most own time, and SQLite's commits (per trial, seconds each)."""
    profiler = cProfile.Profile()
    profiler.enable()
    run_route("optuna+sqlite", seed, budget, folder / "profile")
    profiler.disable()
    stats = pstats.Stats(profiler)
    commits = {"per_trial": 0.0, "s_each": 0.0}
    for (_, _, function), (_, ncalls, tottime, _, _) in stats.stats.items():
        if "commit" in function and "sqlite3.Connection" in function:
            commits = {"per_trial": ncalls / budget, "s_each": tottime / max(ncalls, 1)}
    return top_functions(profiler, top), own_seconds_by_package(stats, PACKAGES, budget), commits


def render(results: list[dict], budget: int, seeds: int, optuna_version: str, command: str,
           profile: list[str], by_package: dict[str, float], commits: dict[str, float]) -> tuple[str, dict]:
    """The docs section (markdown) and the summary numbers, from the runs and the profile."""
    by = {route: [r for r in results if r["route"] == route] for route in ROUTES}

    def ratio(route: str, base: str, key: str) -> float:
        """The median over seeds of ``route``'s ``key`` over ``base``'s for the same seed."""
        pairs = zip(sorted(by[route], key=lambda r: r["seed"]), sorted(by[base], key=lambda r: r["seed"]))
        return statistics.median(a[key] / b[key] for a, b in pairs)

    # each Optuna route against the optimize route with the same storage
    base = {"optimize": "optimize", "optimize+sqlite": "optimize", "optuna": "optimize",
            "optuna+sqlite": "optimize+sqlite"}
    lines = ["## NPSampler in Optuna vs `optimize`: seconds per trial", "",
             f"Command: `{command}` (CPU: {machine_line(THREADS)}; Optuna {optuna_version}). Branin, {budget} "
             f"evaluations, `cmanp-bo` + LogEI (10 restarts, 512 raw samples) in both, {seeds} seeds. Both start "
             "from `optimize`'s 5 Sobol points (enqueued as the study's first trials, "
             f"`NPSampler(n_startup_trials=5)`), so both make {budget - 5} NP proposals. Without storage: "
             "`optimize(db=None)` and Optuna's in-memory storage; +sqlite: `optimize`'s run log and Optuna's RDB "
             "storage, each in a new SQLite file. The routes of a seed run back to back in rotating order on a "
             "machine shared with other work. Seconds per trial (median over seeds), split into the shared proposal "
             "step (`propose`: LogEI + `optimize_acqf`), building / updating `NPModel`, and the rest (the route's "
             "own loop, bookkeeping and storage); ratios are per seed, then the median.", "",
             "| route | s / trial | propose | NPModel | rest | s / trial ratio | rest ratio |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    summary = {}
    for route in ROUTES:
        med = {k: statistics.median(r[k] for r in by[route])
               for k in ("s_per_trial", "propose_s", "model_s", "rest_s")}
        total, rest = ratio(route, base[route], "s_per_trial"), ratio(route, base[route], "rest_s")
        summary[route] = {**med, "ratio": total, "rest_ratio": rest, "vs": base[route]}
        vs = "" if route == base[route] else f" x `{base[route]}`"
        lines.append(f"| {route} | {med['s_per_trial']:.3f} | {med['propose_s']:.3f} | {med['model_s']:.3f} | "
                     f"{med['rest_s']:.3f} | {total:.2f}{vs} | {rest:.1f}{vs} |")
    same = [s for s in range(seeds) if len({round(r["best"], 6) for r in results if r["seed"] == s}) == 1]
    spread = max((max(r["propose_s"] for r in results if r["seed"] == s and r["route"].startswith("optimize"))
                  / min(r["propose_s"] for r in results if r["seed"] == s and r["route"].startswith("optimize")))
                 for s in range(seeds))
    extra = summary["optuna+sqlite"]["rest_s"] - summary["optimize+sqlite"]["rest_s"]
    lines += ["", "Reading: without storage a trial costs the same in both routes "
              f"({summary['optuna']['ratio']:.2f} x), and nearly all of it is the shared proposal step. With SQLite, "
              f"Optuna adds {extra:.3f} s per trial outside the proposal, its storage's work (profile below). The "
              "proposal is the same code in both routes, but its time is a noisy measure here: the two `optimize` "
              f"routes make identical proposals, yet their `propose` time differed by up to {spread:.1f} x within a "
              "seed on this shared machine. "
              "Same best value (6 digits) in all four routes, i.e. the same proposals from the shared start: "
              f"seed(s) {', '.join(map(str, same)) or 'none'} of {seeds}."]
    if profile:
        lines += ["", "cProfile of one Optuna + SQLite study (seed 0, `--profile`; the profiler slows Python-heavy "
                  f"code more than torch's kernels). Its storage commits {commits['per_trial']:.1f} times per trial, "
                  f"{1000 * commits['s_each']:.1f} ms each: Optuna's RDB storage leaves SQLite at its defaults "
                  "(rollback journal, `synchronous=FULL`), so every commit waits for the disk, while `optimize`'s "
                  "run log commits once per evaluation in WAL mode with `synchronous=NORMAL` "
                  "(`npbandit/storage.py`). Own seconds per trial by package, then the top functions:", "",
                  "| package | s / trial |", "|---|---:|",
                  *[f"| {name} | {sec:.3f} |" for name, sec in by_package.items()], "", "```", *profile, "```"]
    return "\n".join(lines) + "\n", summary


def main(argv: list[str] | None = None) -> None:
    import json

    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=30)
    parser.add_argument("--profile", action="store_true", help="add a cProfile of one Optuna + SQLite study")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true",
                        help="re-render the section from experiments/log/results/" + JSON_NAME)
    args = parser.parse_args(argv)
    torch.set_num_threads(THREADS)
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    if args.no_run:
        saved = json.loads((ROOT / "experiments" / "log" / "results" / JSON_NAME).read_text())
        results, profile = saved["runs"], saved["profile"]
        by_package, commits, command = saved["profile_by_package"], saved["profile_commits"], saved["command"]
        budget, seeds, version = saved["budget"], saved["seeds"], saved["optuna"]
    else:
        folder = Path(tempfile.mkdtemp(prefix="npbandit-optuna-cost-"))
        (folder / "profile").mkdir()
        run_route("optuna", 0, 8, folder)  # warm-up: imports, the checkpoint's first load
        results = []
        for seed in range(args.seeds):
            order = ROUTES[seed % len(ROUTES):] + ROUTES[:seed % len(ROUTES)]
            for route in order:
                r = run_route(route, seed, args.budget, folder)
                results.append(r)
                print(f"seed {seed} {route:16s} {r['s_per_trial']:.3f} s/trial (propose {r['propose_s']:.3f}, "
                      f"model {r['model_s']:.3f}, rest {r['rest_s']:.3f}); best {r['best']:.3f}", flush=True)
        profile, by_package, commits = (profile_optuna_sqlite(0, args.budget, folder) if args.profile
                                        else ([], {}, {}))
        command = COMMAND + (" --profile" if args.profile else "")
        budget, seeds, version = args.budget, args.seeds, optuna.__version__
    text, summary = render(results, budget, seeds, version, command, profile, by_package, commits)
    print(text)
    if not args.no_write:
        publish("optuna-cost", text, JSON_NAME, command,
                {"budget": budget, "seeds": seeds, "optuna": version, "runs": results, "summary": summary,
                 "profile": profile, "profile_by_package": by_package, "profile_commits": commits,
                 **({"packages": saved.get("packages")} if args.no_run else {})}, threads=THREADS, packages=("optuna",))


if __name__ == "__main__":
    main()
