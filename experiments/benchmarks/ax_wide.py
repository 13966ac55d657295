"""An Ax ``Client`` on more parameters than the checkpoint takes: ``NPModel`` (reading the
``width`` most relevant columns of each trial's data) vs Ax's own default.

Problem: ``branin-in30`` of bo_wide_problems.py -- Branin's two inputs at fixed random
positions among 30 parameters, the other 28 inert on ``[0, 1]`` -- minimised, ``--budget``
trials (default 40), the first 5 Ax's initial design (the centre + 4 Sobol points, seeded
per seed) in every route:

- ``np``: the model-based node is Ax's modular BoTorch generator with
  ``ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": <--checkpoint>})``
  and nothing else: Ax's default transforms, acquisition (qLogNoisyExpectedImprovement)
  and optimiser settings; the model reads 6 of the 30 columns (``columns="relevant"``, the
  default for data wider than the checkpoint), chosen again every trial;
- ``gp``: Ax's default generation strategy (``method="fast"``: its SingleTaskGP);
- ``sobol``: Ax's quasi-random search (``method="random_search"``), for scale;
- ``np-oracle`` (only when named in ``--routes``): ``np`` reading Branin's two inputs
  (``model_options["columns"]`` fixed to them), to tell the choice of columns from the
  model.

Reported: log10 simple regret of the best value after the budget (the optimum 0.397887),
seconds per trial, and for ``np`` the share of its models that read both of Branin's
inputs (from ``construct_inputs``' chosen columns and the dataset's feature names).

    nice python experiments/benchmarks/ax_wide.py                       # 3 seeds, writes experiments/log/
    nice python experiments/benchmarks/ax_wide.py --seeds 2 --routes np-oracle --merge  # adds runs to the saved ones
    python experiments/benchmarks/ax_wide.py --seeds 1 --budget 12 --no-write
    python experiments/benchmarks/ax_wide.py --no-run                   # re-render from experiments/log/results/
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import sys
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bo_wide_problems import high_d_problems  # noqa: E402
from common import ROOT, machine_line, publish  # noqa: E402

THREADS = 1
COMMAND = "python experiments/benchmarks/ax_wide.py"
JSON_NAME = "ax_wide.json"
PROBLEM = "branin-in30"
N_INIT = 5
ROUTES = ("np", "gp", "sobol")
OPTIONAL_ROUTES = ("np-oracle",)


def problem():
    return next(p for p in high_d_problems() if p.label == PROBLEM)


def active_parameters(prob) -> set[str]:
    """The parameters Branin reads (the others are inert on [0, 1]; Branin's boxes are not)."""
    return {p.name for p in prob.space if (p.low, p.high) != (0.0, 1.0)}


def run(route: str, seed: int, budget: int, checkpoint: str) -> dict:
    from ax.api.client import Client
    from ax.api.configs import RangeParameterConfig
    from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
    from ax.api.utils.structs import GenerationStrategyDispatchStruct
    from ax.generators.torch.botorch_modular.surrogate import ModelConfig

    from npbandit.models import NPModel

    prob = problem()
    client = Client(random_seed=seed)
    for name in list(logging.root.manager.loggerDict):  # Ax's loggers print every trial
        if name == "ax" or name.startswith("ax."):
            logging.getLogger(name).setLevel(logging.ERROR)
    client.configure_experiment(parameters=[RangeParameterConfig(name=p.name, parameter_type="float",
                                                                 bounds=(p.low, p.high)) for p in prob.space])
    client.configure_optimization(objective="-value")
    if route.startswith("np"):
        options = {"checkpoint": checkpoint}
        if route == "np-oracle":  # Ax's dataset has the parameters in their order
            options["columns"] = sorted(i for i, p in enumerate(prob.space) if p.name in active_parameters(prob))
        client.set_generation_strategy(choose_generation_strategy(
            GenerationStrategyDispatchStruct(method="custom", initialization_budget=N_INIT,
                                             initialization_random_seed=seed),
            model_config=ModelConfig(botorch_model_class=NPModel, model_options=options)))
    else:
        client.configure_generation_strategy(method="fast" if route == "gp" else "random_search",
                                             initialization_budget=N_INIT, initialization_random_seed=seed)
    read: list[set[str]] = []  # the parameters each NPModel read
    real = NPModel.__dict__["construct_inputs"]

    def construct_inputs(cls, training_data, **options):
        inputs = real.__func__(cls, training_data, **options)
        names = list(training_data.feature_names)
        read.append({names[i] for i in inputs.get("columns", range(len(names)))})
        return inputs

    NPModel.construct_inputs = classmethod(construct_inputs)
    values, seconds = [], []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pandas / Ax deprecations
            for i in range(budget):
                t0 = time.perf_counter()
                trials = client.get_next_trials(max_trials=1)
                if i >= N_INIT:
                    seconds.append(time.perf_counter() - t0)
                for index, params in trials.items():
                    values.append(prob(params))
                    client.complete_trial(index, raw_data={"value": values[-1]})
    finally:
        NPModel.construct_inputs = real
    regret = max(min(values) - prob.optimal_value, 1e-12)
    active = active_parameters(prob)
    return {"route": route, "seed": seed, "log10_regret": math.log10(regret), "best": min(values),
            "s_per_trial": statistics.mean(seconds), "models": len(read),
            "read_both": sum(active <= r for r in read), "read_one": sum(bool(active & r) for r in read),
            "last_read": sorted(read[-1]) if read else []}


def render(results: list[dict], budget: int, seeds: int, checkpoint: str, versions: str, command: str) -> str:
    routes = [r for r in ROUTES + OPTIONAL_ROUTES if any(x["route"] == r for x in results)]
    by = {r: sorted((x for x in results if x["route"] == r), key=lambda x: x["seed"]) for r in routes}
    prob = problem()
    lines = ["## Ax on 30 parameters: NPModel reading the relevant columns vs Ax's default", "",
             f"Command: `{command}` (CPU: {machine_line(THREADS)}; {versions}). `{PROBLEM}` (Branin's inputs "
             f"{sorted(active_parameters(prob))} among 30 parameters, the rest inert), minimised, {budget} trials "
             f"of which the first {N_INIT} are Ax's initial design (the centre + 4 Sobol), {seeds} seeds. `np`: "
             f"`ModelConfig(botorch_model_class=NPModel, model_options={{\"checkpoint\": \"{checkpoint}\"}})` and "
             "Ax's defaults otherwise (qLogNoisyExpectedImprovement, 20 restarts, 1024 raw samples); the model reads "
             "the 6 most relevant of the 30 columns of each trial's data (`columns=\"relevant\"`, the default for "
             "wider data). `gp`: Ax's default generation strategy (`method=\"fast\"`). `sobol`: "
             "`method=\"random_search\"`. `np-oracle`: `np` reading Branin's two inputs (`columns` fixed to them). "
             "log10 simple regret of the best value after the budget (median and "
             "per seed); seconds per model-based trial (mean over trials, median over seeds); `np`: models that "
             "read both of Branin's inputs, of all its models.", "",
             "| route | seeds | log10 regret (median) | per seed | s / trial | models reading both inputs |",
             "|---|---:|---:|---|---:|---:|"]
    for r in routes:
        runs = by[r]
        both = (f"{sum(x['read_both'] for x in runs)} / {sum(x['models'] for x in runs)}" if r.startswith("np")
                else "–")
        lines.append(f"| {r} | {len(runs)} | {statistics.median(x['log10_regret'] for x in runs):.2f} | "
                     + ", ".join(f"{x['log10_regret']:.2f}" for x in runs)
                     + f" | {statistics.median(x['s_per_trial'] for x in runs):.2f} | {both} |")

    def versus(a: str, b: str) -> str | None:
        """``a`` ends lower than ``b`` on k of the n seeds both ran."""
        if a not in by or b not in by:
            return None
        regret = {x["seed"]: x["log10_regret"] for x in by[b]}
        pairs = [(x["log10_regret"], regret[x["seed"]]) for x in by[a] if x["seed"] in regret]
        return f"`{a}` ends with lower regret than `{b}` on {sum(p < q for p, q in pairs)} of {len(pairs)} seeds"

    reading = [text for text in (versus("gp", "np"), versus("np", "sobol"), versus("np-oracle", "np"),
                                 versus("gp", "np-oracle")) if text]
    if reading:
        lines += ["", "Reading: " + "; ".join(reading) + "."]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    import json

    import torch

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=int, default=40)
    parser.add_argument("--checkpoint", default="cmanp-bo")
    parser.add_argument("--routes", nargs="+", choices=ROUTES + OPTIONAL_ROUTES, default=list(ROUTES))
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--merge", action="store_true",
                        help="add these runs to those saved in experiments/log/results/" + JSON_NAME)
    parser.add_argument("--no-run", action="store_true",
                        help="re-render the section from experiments/log/results/" + JSON_NAME)
    args = parser.parse_args(argv)
    torch.set_num_threads(THREADS)
    saved_path = ROOT / "experiments" / "log" / "results" / JSON_NAME
    if args.no_run:
        saved = json.loads(saved_path.read_text())
        text = render(saved["runs"], saved["budget"], saved["seeds"], saved["checkpoint"], saved["versions"],
                      saved["command"])
        print(text)
        if not args.no_write:
            publish("ax-wide", text, JSON_NAME, saved["command"], {"packages": None} | {
                k: v for k, v in saved.items() if k not in ("command", "machine")}, threads=THREADS,
                packages=("ax-platform",))
        return
    import ax
    import botorch

    versions = f"Ax {ax.__version__}, BoTorch {botorch.__version__}"
    results = []
    for seed in range(args.seeds):
        for route in args.routes:
            r = run(route, seed, args.budget, args.checkpoint)
            results.append(r)
            print(f"seed {seed} {route:5s} log10 regret {r['log10_regret']:.2f} (best {r['best']:.3f}), "
                  f"{r['s_per_trial']:.2f} s/trial; models reading both inputs {r['read_both']}/{r['models']}, "
                  f"one {r['read_one']}; last read {r['last_read']}", flush=True)
    command = COMMAND
    if (args.seeds, args.budget, args.checkpoint, list(args.routes)) != (3, 40, "cmanp-bo", list(ROUTES)):
        command += (f" --seeds {args.seeds} --budget {args.budget} --checkpoint {args.checkpoint} "
                    f"--routes {' '.join(args.routes)}")
    seeds = args.seeds
    if args.merge:
        saved = json.loads(saved_path.read_text())
        if (saved["budget"], saved["checkpoint"]) != (args.budget, args.checkpoint):
            parser.error(f"--merge needs the saved runs' --budget {saved['budget']} and --checkpoint "
                         f"{saved['checkpoint']}")
        new = {(r["route"], r["seed"]) for r in results}
        results = [r for r in saved["runs"] if (r["route"], r["seed"]) not in new] + results
        command, seeds = f"{saved['command']}; {command} --merge", max(saved["seeds"], seeds)
    text = render(results, args.budget, seeds, args.checkpoint, versions, command)
    print(text)
    if not args.no_write:
        publish("ax-wide", text, JSON_NAME, command,
                {"budget": args.budget, "seeds": seeds, "checkpoint": args.checkpoint, "versions": versions,
                 "runs": results}, threads=THREADS, packages=("ax-platform",))


if __name__ == "__main__":
    main()
