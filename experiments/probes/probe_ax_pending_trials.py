"""Do Ax trials asked for while others are running land next to them, with NPModel diagonal or correlated?

An Ax ``Client`` on Branin (2 inputs scaled to ``[0, 1]``, minimised), 5 initial trials
(Ax's design, completed at once), then ``--rounds`` rounds in which ``--batch`` trials are asked
for one at a time (``get_next_trials(max_trials=1)``) before any of them completes: each later
trial of a round is proposed with the earlier ones pending (Ax hands them to qLogNEI as
``X_pending``). Routes: ``diagonal`` (``model_options={"checkpoint": "cmanp-bo"}``, the
default independent posterior) and ``conditioning`` (``"covariance": "conditioning"`` added).
Printed per route, seed and round: the least distance between two trials of the round (unit
square), and the seconds Ax took for the round's proposals.

    python experiments/probes/probe_ax_pending_trials.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import logging
import math
import time
import warnings

import torch
from ax.api.client import Client
from ax.api.configs import RangeParameterConfig
from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
from ax.api.utils.structs import GenerationStrategyDispatchStruct
from ax.generators.torch.botorch_modular.surrogate import ModelConfig
from ax.utils.common.logger import set_ax_logger_levels

from npbandit.models import NPModel


def branin(p: dict) -> float:
    x1, x2 = 15 * p["x0"] - 5, 15 * p["x1"]
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def run(route: str, seed: int, rounds: int, batch: int) -> list[tuple[float, float]]:
    """Per round, (least distance between its trials, seconds of its proposals)."""
    client = Client(random_seed=seed)
    client.configure_experiment(parameters=[RangeParameterConfig(name=f"x{i}", parameter_type="float",
                                                                 bounds=(0.0, 1.0)) for i in range(2)])
    client.configure_optimization(objective="-f")
    options = {"checkpoint": "cmanp-bo"}
    if route == "conditioning":
        options["covariance"] = "conditioning"
    struct = GenerationStrategyDispatchStruct(method="custom", initialization_budget=5,
                                              initialization_random_seed=seed)
    client.set_generation_strategy(choose_generation_strategy(
        struct, model_config=ModelConfig(botorch_model_class=NPModel, model_options=options)))
    for _ in range(5):
        for index, p in client.get_next_trials(max_trials=1).items():
            client.complete_trial(index, raw_data={"f": branin(p)})
    out = []
    for _ in range(rounds):
        start = time.perf_counter()
        asked = {}
        for _ in range(batch):
            asked.update(client.get_next_trials(max_trials=1))
        seconds = time.perf_counter() - start
        points = torch.tensor([[p["x0"], p["x1"]] for p in asked.values()], dtype=torch.float64)
        out.append((float(torch.pdist(points).min()), seconds))
        for index, p in asked.items():
            client.complete_trial(index, raw_data={"f": branin(p)})
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--routes", nargs="+", choices=["diagonal", "conditioning"],
                        default=["diagonal", "conditioning"])
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    set_ax_logger_levels(logging.ERROR)
    print(f"Branin, 5 initial trials, then {args.rounds} rounds of {args.batch} trials asked before any completes")
    print("| route | seed | round | least distance in the round | s for the round's proposals |")
    print("|---|---:|---:|---:|---:|")
    for seed in args.seeds:
        for route in args.routes:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                rows = run(route, seed, args.rounds, args.batch)
            for r, (least, seconds) in enumerate(rows, start=1):
                print(f"| {route} | {seed} | {r} | {least:.4f} | {seconds:.1f} |", flush=True)


if __name__ == "__main__":
    main()
