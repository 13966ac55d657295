"""An Ax ``Client`` loop on Branin whose model is the pretrained CMANP (``NPModel``).

Everything is Ax's: the Client, the experiment, the generation strategy Ax builds for a
custom model (the centre point and Sobol points, then its modular BoTorch node). The only
npbandit line is that node's model configuration:

    ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"})

Ax rebuilds the model for every trial; the checkpoint is loaded once per process and the
"fit" costs nothing (the network is pretrained). With ``--acquisition logei`` the node uses
LogEI, as ``npbandit.optimize`` does, instead of Ax's default qLogNoisyExpectedImprovement
(seconds per trial of both against ``optimize``: experiments/log/benchmarks.md, "NPModel inside Ax").

Needs the ``ax`` extra (``pip install -e ".[ax]"``).

Run:  .venv/bin/python examples/ax_client.py [--trials 20] [--init 5] [--seed 0] [--acquisition ax|logei]
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
from botorch.acquisition import LogExpectedImprovement

from npbandit.models import NPModel

BRANIN_MIN = 0.397887  # the global minimum value of Branin


def branin(x1: float, x2: float) -> float:
    b, c, t = 5.1 / (4 * math.pi**2), 5 / math.pi, 1 / (8 * math.pi)
    return (x2 - b * x1**2 + c * x1 - 6) ** 2 + 10 * (1 - t) * math.cos(x1) + 10


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--init", type=int, default=5, help="initial trials (the centre point and Sobol points)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--acquisition", choices=("ax", "logei"), default="ax",
                        help="ax: Ax's default for the node (qLogNoisyExpectedImprovement); logei: LogEI")
    args = parser.parse_args()
    if args.trials < 1 or not 1 <= args.init <= args.trials:
        parser.error("--trials must be positive and --init between 1 and --trials")
    torch.set_num_threads(1)
    set_ax_logger_levels(logging.WARNING)  # Ax logs every trial at INFO; this script prints its own line
    warnings.filterwarnings("ignore", category=DeprecationWarning)  # Ax's and pandas' notices
    warnings.filterwarnings("ignore", module="pandas")
    # BoTorch's notice that it restarts an acquisition optimisation; counted in experiments/benchmarks/ax_cost.py
    warnings.filterwarnings("ignore", message="Optimization failed", category=RuntimeWarning)

    client = Client(random_seed=args.seed)
    client.configure_experiment(parameters=[
        RangeParameterConfig(name="x1", parameter_type="float", bounds=(-5.0, 10.0)),
        RangeParameterConfig(name="x2", parameter_type="float", bounds=(0.0, 15.0))])
    client.configure_optimization(objective="-branin")  # minimise
    client.set_generation_strategy(choose_generation_strategy(
        GenerationStrategyDispatchStruct(method="custom", initialization_budget=args.init,
                                         initialization_random_seed=args.seed),
        model_config=ModelConfig(botorch_model_class=NPModel, model_options={"checkpoint": "cmanp-bo"}),
        botorch_acqf_class=LogExpectedImprovement if args.acquisition == "logei" else None))

    model_based = []
    for i in range(args.trials):
        t0 = time.perf_counter()
        trials = client.get_next_trials(max_trials=1)
        seconds = time.perf_counter() - t0
        for index, p in trials.items():
            value = branin(p["x1"], p["x2"])
            client.complete_trial(index, raw_data={"branin": value})
            node = client._experiment.trials[index].generator_runs[0]._generation_node_name
            if i >= args.init:
                model_based.append(seconds)
            print(f"trial {index:2d} ({node:6s} {seconds:5.2f} s): x1={p['x1']:7.3f} x2={p['x2']:7.3f} "
                  f"branin={value:8.3f}", flush=True)
    best, values, _, _ = client.get_best_parameterization(use_model_predictions=False)
    print(f"best: branin={values['branin'][0]:.4f} at x1={best['x1']:.3f}, x2={best['x2']:.3f} "
          f"(global minimum {BRANIN_MIN}); seconds per model-based trial: "
          f"{sum(model_based) / max(len(model_based), 1):.2f} over {len(model_based)}")


if __name__ == "__main__":
    main()
