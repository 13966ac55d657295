"""Seconds per model-based trial: ``NPModel`` inside an Ax ``Client`` vs ``npbandit.optimize``.

Branin, ``--budget`` evaluations (default 20) of which the first 5 are the initial design,
checkpoint ``cmanp-bo`` in every NP route:

- ``optimize``: ``npbandit.optimize(..., surrogate="cmanp", n_init=5, db=None)``: LogEI,
  ``optimize_acqf`` with 10 restarts and 512 raw samples, the model streamed;
- ``ax``: an Ax ``Client`` whose model-based node is Ax's modular BoTorch generator with
  ``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})``
  and nothing else: Ax's default transforms and acquisition (qLogNoisyExpectedImprovement,
  20 restarts, 1024 raw samples, a retry with fresh starts when any restart fails) and its
  initial design (the centre + 4 Sobol points);
- ``ax-logei``: the same plus ``botorch_acqf_class=LogExpectedImprovement``;
- ``ax-matched``: ``ax-logei`` with ``optimize``'s 10 restarts and 512 raw samples (the
  node's ``generator_gen_kwargs``), so the acquisition step is the same as ``optimize``'s;
- ``ax-f64``: ``ax`` with the network in float64 (``model_options["network_dtype"]``), the
  dtype of Ax's data; ``ax`` runs it in float32, as ``optimize`` does;
- ``ax-gp``: Ax's own default (``method="fast"``: a GP), for scale.

A model-based trial is one ``get_next_trials`` call after the initial design (Ax) or the
time from one evaluation's return to the next call (``optimize``), timed by the wall clock
and by the process's CPU time (steadier on a machine shared with other work, which slows
the wall clock of whichever route runs at a busy moment). Every run counts the
acquisition evaluations (``NPModel.posterior`` calls), the
acquisition optimisations it ran (``optimize_acqf``; Ax starts one again, up to 5 times,
when it proposes a point it has already evaluated, then falls back to a Sobol point), the
restarts-failed retries inside them, and splits its time into the acquisition
optimisation, building the ``NPModel`` (Ax: ``construct_inputs`` + conditioning, every
trial; ``optimize``: once, then streamed) and the rest (the framework's own work).
The routes of a seed run back to back in a rotating order. ``--profile`` adds a cProfile
of one ``ax`` run.

    python experiments/benchmarks/ax_cost.py --profile          # 5 seeds, writes experiments/log/benchmarks.md
    python experiments/benchmarks/ax_cost.py --seeds 1 --routes optimize ax --no-write
    python experiments/benchmarks/ax_cost.py --no-run           # re-render from experiments/log/results/ax_cost.json
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import statistics
import sys
import time
import warnings
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
COMMAND = "python experiments/benchmarks/ax_cost.py"
JSON_NAME = "ax_cost.json"
N_INIT = 5
ROUTES = ("optimize", "ax", "ax-logei", "ax-matched", "ax-f64", "ax-gp")


class Meter:
    """Seconds and counts inside BoTorch's acquisition optimisation and NPModel's
    construction, by wrapping the functions every route calls."""

    def __init__(self) -> None:
        self.acqf_s = self.model_s = 0.0
        self.acqf_runs = self.retries = self.evaluations = 0

    @contextlib.contextmanager
    def installed(self):
        import botorch.optim.optimize as optimize_module

        from npbandit.models import NPModel

        real_optimize, real_set, real_stream = (optimize_module._optimize_acqf, NPModel._set_data,
                                                NPModel.condition_on_observations)
        real_inputs, real_posterior = NPModel.__dict__["construct_inputs"], NPModel.posterior

        def optimize_acqf(*args, **kwargs):
            t0 = time.perf_counter()
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    return real_optimize(*args, **kwargs)
                finally:
                    self.acqf_s += time.perf_counter() - t0
                    self.acqf_runs += 1
                    self.retries += sum("Trying again" in str(w.message) for w in caught)

        def timed(fn):
            def wrapper(*args, **kwargs):
                t0 = time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    self.model_s += time.perf_counter() - t0
            return wrapper

        def posterior(*args, **kwargs):
            self.evaluations += 1
            return real_posterior(*args, **kwargs)

        optimize_module._optimize_acqf = optimize_acqf
        NPModel._set_data, NPModel.condition_on_observations = timed(real_set), timed(real_stream)
        NPModel.construct_inputs = classmethod(timed(real_inputs.__func__))
        NPModel.posterior = posterior
        try:
            yield self
        finally:
            optimize_module._optimize_acqf = real_optimize
            NPModel._set_data, NPModel.condition_on_observations = real_set, real_stream
            NPModel.construct_inputs, NPModel.posterior = real_inputs, real_posterior


def clock() -> tuple[float, float]:
    """(wall, CPU) seconds."""
    return time.perf_counter(), time.process_time()


def run_optimize(seed: int, budget: int) -> tuple[list[tuple[float, float]], float, int]:
    """(wall, CPU) seconds of each model-based trial, the best value, Sobol fallbacks (none here)."""
    import npbandit

    returned: list[tuple[float, float]] = []
    gaps: list[tuple[float, float]] = []

    def objective(x) -> float:
        if returned:
            now = clock()
            gaps.append((now[0] - returned[-1][0], now[1] - returned[-1][1]))
        value = branin(float(x[0]), float(x[1]))
        returned.append(clock())
        return value

    result = npbandit.optimize(objective, BRANIN_BOUNDS, surrogate="cmanp", budget=budget, n_init=N_INIT, seed=seed,
                               db=None, progress=False)
    return gaps[N_INIT - 1:], result.best_value, 0


def run_ax(route: str, seed: int, budget: int) -> tuple[list[tuple[float, float]], float, int]:
    import logging

    import torch
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig
    from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
    from ax.api.utils.structs import GenerationStrategyDispatchStruct
    from ax.generators.torch.botorch_modular.surrogate import ModelConfig
    from botorch.acquisition import LogExpectedImprovement

    from npbandit import NPModel

    logging.getLogger("ax").setLevel(logging.ERROR)
    client = Client(random_seed=seed)
    client.configure_experiment(parameters=[
        RangeParameterConfig(name="x1", parameter_type="float", bounds=(BRANIN_BOUNDS[0][0], BRANIN_BOUNDS[1][0])),
        RangeParameterConfig(name="x2", parameter_type="float", bounds=(BRANIN_BOUNDS[0][1], BRANIN_BOUNDS[1][1]))])
    client.configure_optimization(objective="-branin")
    if route == "ax-gp":
        client.configure_generation_strategy(initialization_budget=N_INIT, initialization_random_seed=seed)
    else:
        options = {"checkpoint": "cmanp-bo"}
        if route == "ax-f64":
            options["network_dtype"] = torch.float64
        strategy = choose_generation_strategy(
            GenerationStrategyDispatchStruct(method="custom", initialization_budget=N_INIT,
                                             initialization_random_seed=seed),
            model_config=ModelConfig(botorch_model_class=NPModel, model_options=options),
            botorch_acqf_class=LogExpectedImprovement if route in ("ax-logei", "ax-matched") else None)
        if route == "ax-matched":
            strategy.nodes_by_name["MBM"].generator_specs[0].generator_gen_kwargs = {
                "model_gen_options": {"optimizer_kwargs": {"num_restarts": 10, "raw_samples": 512}}}
        client.set_generation_strategy(strategy)
    seconds, fallbacks = [], 0
    for i in range(budget):
        t0 = clock()
        trials = client.get_next_trials(max_trials=1)
        t1 = clock()
        elapsed = (t1[0] - t0[0], t1[1] - t0[1])
        for index, p in trials.items():
            client.complete_trial(index, raw_data={"branin": branin(p["x1"], p["x2"])})
            if i >= N_INIT:
                seconds.append(elapsed)
                run = client._experiment.trials[index].generator_runs[0]
                fallbacks += "sobol" in str(getattr(run, "_generator_key", "")).lower()
    values = [t.fetch_data().df["mean"].iloc[0] for t in client._experiment.trials.values()]
    return seconds, float(min(values)), fallbacks


def run_route(route: str, seed: int, budget: int) -> dict:
    meter = Meter()
    with meter.installed(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas / Ax deprecation warnings
        t0 = time.perf_counter()
        seconds, best, fallbacks = (run_optimize(seed, budget) if route == "optimize"
                                    else run_ax(route, seed, budget))
        wall = time.perf_counter() - t0
    n = len(seconds)
    model_based = sum(wall for wall, _ in seconds)
    return {"route": route, "seed": seed, "trials": n, "s_per_trial": model_based / n,
            "cpu_per_trial": sum(cpu for _, cpu in seconds) / n, "wall_s": wall,
            "acqf_s": meter.acqf_s / n, "model_s": meter.model_s / n,
            "rest_s": (model_based - meter.acqf_s - meter.model_s) / n, "acqf_runs": meter.acqf_runs,
            "evaluations": meter.evaluations / n, "retries": meter.retries, "fallbacks": fallbacks, "best": best,
            "max_trial_s": max(wall for wall, _ in seconds)}


#: own-time buckets for the profile: a path fragment -> label
PACKAGES = (("/ax/", "Ax"), ("/pandas/", "pandas"), ("/botorch/", "BoTorch"), ("/gpytorch/", "GPyTorch"),
            ("/linear_operator/", "GPyTorch"), ("/scipy/", "SciPy"), ("/npbandit/", "npbandit"), ("torch", "torch"))


def profile_ax(seed: int, budget: int, top: int = 12) -> tuple[list[str], dict[str, float], dict[str, float]]:
    """cProfile of one ``ax`` run: own seconds per model-based trial by package, the
    functions with the most own time, and cumulative seconds per trial in the steps."""
    profiler = cProfile.Profile()
    profiler.enable()
    result = run_route("ax", seed, budget)
    profiler.disable()
    n = result["trials"]
    stats = pstats.Stats(profiler)
    steps = {"optimize_acqf: initial conditions (raw samples)": "gen_batch_initial_conditions",
             "optimize_acqf: L-BFGS-B": "gen_candidates_scipy",
             "NPModel.posterior": "posterior", "Ax: fit (transforms, model)": "_fit",
             "Ax: cross-validation (best point)": "cross_validate"}
    cumulative = {label: 0.0 for label in steps}
    for (filename, _, function), (_, _, _, cumtime, _) in stats.stats.items():
        for step, name in steps.items():
            if function == name and (name != "posterior" or "npbandit/models/" in filename) and (
                    name not in ("_fit", "cross_validate") or "/ax/adapter/" in filename):
                cumulative[step] = max(cumulative[step], cumtime / n)
    return top_functions(profiler, top), own_seconds_by_package(stats, PACKAGES, n), cumulative


def render(results: list[dict], budget: int, seeds: int, versions: str, command: str, profile: list[str],
           by_package: dict[str, float], steps: dict[str, float]) -> tuple[str, dict]:
    routes = [r for r in ROUTES if any(x["route"] == r for x in results)]
    by = {route: sorted((x for x in results if x["route"] == route), key=lambda x: x["seed"]) for route in routes}

    def ratio(route: str, key: str = "s_per_trial") -> float:
        """The median over seeds of ``route``'s seconds per trial over ``optimize``'s, same seed."""
        return statistics.median(a[key] / b[key] for a, b in zip(by[route], by["optimize"]))

    cpu = all("cpu_per_trial" in x for x in results)  # runs saved before CPU time was recorded have none

    lines = ["## NPModel inside Ax vs `optimize`: seconds per model-based trial", "",
             f"Command: `{command}` (CPU: {machine_line(THREADS)}; {versions}). Branin, {budget} evaluations, "
             f"the first {N_INIT} an initial design (`optimize`: 5 Sobol points; Ax: the centre + 4 Sobol), so "
             f"{budget - N_INIT} model-based trials per run, {seeds} seeds. `cmanp-bo` in every NP route. "
             "`optimize`: LogEI, 10 restarts, 512 raw samples, network in float32. `ax`: "
             "`ModelConfig(botorch_model_class=NPModel, model_options={\"checkpoint\": \"cmanp-bo\"})` and nothing "
             "else, so Ax's defaults: qLogNoisyExpectedImprovement, 20 restarts, 1024 raw samples (the network in "
             "float32, NPModel's default). `ax-logei`: plus `botorch_acqf_class=LogExpectedImprovement`. `ax-matched`: "
             "`ax-logei` with `optimize`'s 10 restarts and 512 raw samples (the node's `generator_gen_kwargs`). "
             "`ax-f64`: `ax` "
             "with `network_dtype=torch.float64` (the dtype of Ax's data). `ax-gp`: Ax's own default model "
             "(`method=\"fast\"`), for scale. "
             "Seconds per model-based trial (median over seeds; wall clock, and the process's CPU time, "
             "steadier on a shared machine), the wall clock split into the acquisition optimisation "
             "(`optimize_acqf`, every attempt), building the `NPModel` and the rest (the framework); per run "
             "(median): acquisition evaluations per trial (`NPModel.posterior` calls), the acquisition "
             "optimisations run (Ax runs one again, up to 5 times, when it proposes a "
             "point it has already evaluated, then takes a Sobol point), the retries inside them (BoTorch starts "
             "an optimisation again when any restart fails), the Sobol fallbacks; ratio: per seed, then the "
             "median (wall clock; CPU time). Routes of a seed run back to back in rotating order on a machine "
             "shared with other work.", "",
             "| route | s / trial | CPU s / trial | optimize_acqf | NPModel | rest | x `optimize` | "
             "x `optimize` (CPU) | evaluations / trial | acqf runs | retries | Sobol fallbacks | best value |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    summary = {}
    keys = ("s_per_trial", "acqf_s", "model_s", "rest_s", "acqf_runs", "retries", "fallbacks", "best")
    for route in routes:
        med = {k: statistics.median(x[k] for x in by[route])
               for k in keys + (("cpu_per_trial", "evaluations") if cpu else ())}
        med["ratio"] = ratio(route)
        if cpu:
            med["cpu_ratio"] = ratio(route, "cpu_per_trial")
        summary[route] = med

        def cell(key: str, fmt: str, med: dict = med) -> str:
            return format(med[key], fmt) if key in med else "–"

        lines.append(f"| {route} | {med['s_per_trial']:.2f} | {cell('cpu_per_trial', '.2f')} | {med['acqf_s']:.2f} | "
                     f"{med['model_s']:.3f} | {med['rest_s']:.2f} | {med['ratio']:.2f} | {cell('cpu_ratio', '.2f')} | "
                     f"{cell('evaluations', '.0f')} | {med['acqf_runs']:g} | {med['retries']:g} | "
                     f"{med['fallbacks']:g} | {med['best']:.2f} |")
    def total(route: str, key: str) -> int:
        return sum(x[key] for x in by.get(route, []))

    reading = []
    if "ax" in summary:
        ax_ = summary["ax"]
        cpu_part = (f" ({ax_['cpu_ratio']:.1f} x in CPU time)" if cpu else "")
        def per_evaluation(route: str) -> float:
            """Median over seeds of CPU milliseconds per acquisition evaluation."""
            return statistics.median(1e3 * x["cpu_per_trial"] / x["evaluations"] for x in by[route])

        evals = (f", {ax_['evaluations']:.0f} acquisition evaluations per trial against "
                 f"{summary['optimize']['evaluations']:.0f}, {per_evaluation('ax'):.1f} ms of CPU per evaluation "
                 f"against {per_evaluation('optimize'):.1f}: both run the network forward and backward at the "
                 "candidates, `ax` also qLogNEI's 512 samples at every observed point" if cpu else "")
        reading.append(f"with the configuration alone (`ax`) a model-based trial takes {ax_['ratio']:.1f} x "
                       f"`optimize`'s time{cpu_part}, nearly all of it in Ax's acquisition optimisation (qLogNEI "
                       "over the candidate and the observed points, whose moments the model predicts once and "
                       "keeps; 20 restarts and 1024 raw samples in batches of 32, against LogEI with 10 and 512 in "
                       f"one batch{evals}); Ax's own work and the model's construction add {ax_['rest_s']:.2f} and "
                       f"{ax_['model_s']:.3f} s per trial")
    if "ax-matched" in summary:
        reading.append(f"with `optimize`'s acquisition and settings (`ax-matched`) the ratio is "
                       f"{summary['ax-matched']['ratio']:.1f} x")
    if "ax-logei" in summary:
        reading.append(f"LogEI with Ax's settings (`ax-logei`) gives {summary['ax-logei']['ratio']:.1f} x, but it "
                       f"proposed a point it had already evaluated in "
                       f"{total('ax-logei', 'fallbacks')} trials over all seeds, and each such trial runs the "
                       "optimisation 5 times before Ax takes a Sobol point")
    if "ax-f64" in summary and "ax" in summary:
        reading.append(f"in float64 (`ax-f64`) a trial takes {summary['ax-f64']['ratio']:.1f} x `optimize`'s time "
                       f"and BoTorch restarted {total('ax-f64', 'retries')} optimisations over all seeds, in "
                       f"float32 (`ax`) {total('ax', 'retries')}")
    if "ax-gp" in summary:
        reading.append(f"Ax's own GP (`ax-gp`) takes {summary['ax-gp']['s_per_trial']:.2f} s per trial here and "
                       f"reaches a median best value of {summary['ax-gp']['best']:.2f} (Branin's minimum: 0.398), "
                       f"against {summary['optimize']['best']:.2f} for `optimize` and "
                       f"{summary.get('ax', summary['optimize'])['best']:.2f} for `ax`")
    if reading:
        lines += ["", "Reading: " + "; ".join(reading) + "."]
    per_seed = ("seconds per model-based trial, wall clock / CPU (acquisition optimisations run, Sobol fallbacks)"
                if cpu else "seconds per model-based trial (acquisition optimisations run, Sobol fallbacks)")
    lines += ["", f"Per seed, {per_seed}:", "",
              "| route | " + " | ".join(f"seed {s}" for s in range(seeds)) + " |",
              "|---|" + "---:|" * seeds]
    for route in routes:
        lines.append(f"| {route} | " + " | ".join(
            (f"{x['s_per_trial']:.2f} / {x['cpu_per_trial']:.2f}" if cpu else f"{x['s_per_trial']:.2f}")
            + f" ({x['acqf_runs']}, {x['fallbacks']})" for x in by[route]) + " |")
    if profile:
        lines += ["", "cProfile of one `ax` run (seed 0, `--profile`; the profiler slows Python-heavy code more "
                  "than torch's kernels). Cumulative seconds per model-based trial in the steps, then own seconds "
                  "by package, then the top functions by own time:", "",
                  "| step | s / trial |", "|---|---:|", *[f"| {k} | {v:.3f} |" for k, v in steps.items()], "",
                  "| package | s / trial |", "|---|---:|",
                  *[f"| {name} | {sec:.3f} |" for name, sec in by_package.items()], "", "```", *profile, "```"]
    return "\n".join(lines) + "\n", summary


def main(argv: list[str] | None = None) -> None:
    import json

    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--budget", type=int, default=20)
    parser.add_argument("--routes", nargs="+", choices=ROUTES, default=list(ROUTES))
    parser.add_argument("--profile", action="store_true", help="add a cProfile of one ax run")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--no-run", action="store_true",
                        help="re-render the section from experiments/log/results/" + JSON_NAME)
    args = parser.parse_args(argv)
    if "optimize" not in args.routes:
        parser.error("--routes must include optimize (every ratio is to it)")
    torch.set_num_threads(THREADS)
    if args.no_run:
        saved = json.loads((ROOT / "experiments" / "log" / "results" / JSON_NAME).read_text())
        results, profile, by_package, steps = saved["runs"], saved["profile"], saved["by_package"], saved["steps"]
        budget, seeds, versions, command = saved["budget"], saved["seeds"], saved["versions"], saved["command"]
    else:
        import ax
        import botorch

        versions = f"Ax {ax.__version__}, BoTorch {botorch.__version__}"
        run_route("ax", 0, N_INIT + 2)  # warm-up: imports, the checkpoint's first load
        run_route("optimize", 0, N_INIT + 2)
        results = []
        for seed in range(args.seeds):
            order = args.routes[seed % len(args.routes):] + args.routes[:seed % len(args.routes)]
            for route in order:
                r = run_route(route, seed, args.budget)
                results.append(r)
                print(f"seed {seed} {route:9s} {r['s_per_trial']:.2f} s/trial, CPU {r['cpu_per_trial']:.2f} "
                      f"({r['evaluations']:.0f} evaluations; acqf {r['acqf_s']:.2f}, model "
                      f"{r['model_s']:.3f}, rest {r['rest_s']:.2f}); acqf runs {r['acqf_runs']}, retries "
                      f"{r['retries']}, fallbacks {r['fallbacks']}; best {r['best']:.3f}", flush=True)
        profile, by_package, steps = profile_ax(0, args.budget) if args.profile else ([], {}, {})
        command = COMMAND + (" --profile" if args.profile else "")
        if args.seeds != 5 or args.budget != 20 or list(args.routes) != list(ROUTES):
            command += f" --seeds {args.seeds} --budget {args.budget} --routes {' '.join(args.routes)}"
        budget, seeds = args.budget, args.seeds
    text, summary = render(results, budget, seeds, versions, command, profile, by_package, steps)
    print(text)
    if not args.no_write:
        publish("ax-cost", text, JSON_NAME, command,
                {"budget": budget, "seeds": seeds, "versions": versions, "runs": results, "summary": summary,
                 "profile": profile, "by_package": by_package, "steps": steps,
                 **({"packages": saved.get("packages")} if args.no_run else {})}, threads=THREADS,
                packages=("ax-platform",))


if __name__ == "__main__":
    main()
