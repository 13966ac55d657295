"""NPModel in an Ax ``Client`` on 8 parameters of which 4 matter: the review's three findings.

The objective is ``sum_{i<4} (x_i - 0.3)^2`` over ``[0, 1]^8`` (``x4..x7`` inert), minimised,
``--trials`` trials of which the first 5 are Ax's initial design. Per route and seed the
probe reports

* ``all 4 read``: of the models Ax built (one per model-based trial), how many read all of
  ``x0..x3`` (the network reads 6 of the 8 columns);
* ``... by the other rule``: on the same data (each model-based trial's dataset), how many
  times the other column rule (``marginal`` for ``np``, ``RelevantColumns`` for
  ``np-marginal``) would have chosen all four -- a paired comparison of the two rules on
  the data of one optimisation;
* ``opt. warnings``: the warnings that reached the console saying "Optimization failed" or
  "ABNORMAL" (BoTorch's ``optimize_acqf`` after an L-BFGS-B run ended ABNORMAL) and, of
  those, how many did not come from an ``optimize_acqf`` that Ax called -- an ``npbandit``
  frame on the stack above ``botorch/optim/optimize.py``, or no such frame at all (0: all
  were Ax's acquisition optimisation);
* ``best point``: what ``client.get_best_parameterization()`` served -- ``model`` (Ax's
  leave-one-out cross-validation judged the model's fit good, so the model's predictions chose)
  or ``raw`` (the fit judged poor: Ax's "falling back on raw data" warning) -- with the p-value of
  Ax's Fisher exact test (``> 0.1`` is judged poor);
* seconds per model-based trial.

Routes: ``np`` (``columns="relevant"``, ``RelevantColumns``), ``np-marginal`` (the column rule
before forward selection, injected as a ``ColumnSelector``: ``probe_relevant_columns.marginal``),
``np-f64`` (``np`` with ``network_dtype=torch.float64``), ``gp`` (Ax's default, ``method="fast"``).

    python experiments/probes/probe_ax_wide_review.py --seeds 0 1 2 3 --routes np np-marginal
    python experiments/probes/probe_ax_wide_review.py --seeds 0 1 --routes np np-f64 gp
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
import traceback
import warnings
from pathlib import Path

import torch
from ax.adapter.cross_validation import compute_diagnostics, cross_validate
from ax.api.client import Client
from ax.api.configs import RangeParameterConfig
from ax.api.utils.generation_strategy_dispatch import choose_generation_strategy
from ax.api.utils.structs import GenerationStrategyDispatchStruct
from ax.generators.torch.botorch_modular.surrogate import ModelConfig
from ax.utils.common.logger import set_ax_logger_levels

from npbandit.models import ColumnSelector, NPModel, RelevantColumns

sys.path.insert(0, str(Path(__file__).parent))
from probe_relevant_columns import marginal  # noqa: E402

D, RELEVANT = 8, {0, 1, 2, 3}
ROUTES = ("np", "np-marginal", "np-f64", "gp")


#: per dataset a Recording selector was handed while recording: (its rule chose all of RELEVANT, the other did)
LOG: list[tuple[bool, bool]] = []
RECORDING = [True]
#: where to save every dataset recorded (``--dump``), as ``<dir>/<route>_<seed>_<n>.pt``: ``{"X", "Y"}``
DUMP: list = [None]


class Recording(ColumnSelector):
    """Selects with ``rule`` and records in :data:`LOG` (a module global: Ax copies its model
    options) whether ``rule`` and ``other`` chose all the relevant columns."""

    def __init__(self, rule, other) -> None:
        self.rule, self.other = rule, other

    def select(self, X, Y, width):
        chosen = self.rule(X, Y, width)
        if RECORDING[0]:
            LOG.append((RELEVANT <= set(chosen), RELEVANT <= set(self.other(X, Y, width))))
            if DUMP[0] is not None:
                torch.save({"X": X.detach().clone(), "Y": Y.detach().clone()}, f"{DUMP[0]}_{len(X)}.pt")
        return chosen


def objective(p: dict) -> float:
    return float(sum((p[f"x{i}"] - 0.3) ** 2 for i in range(4)))


def run(route: str, seed: int, trials: int) -> dict:
    client = Client(random_seed=seed)
    client.configure_experiment(parameters=[RangeParameterConfig(name=f"x{i}", parameter_type="float",
                                                                 bounds=(0.0, 1.0)) for i in range(D)])
    client.configure_optimization(objective="-f")
    struct = GenerationStrategyDispatchStruct(method="fast" if route == "gp" else "custom",
                                              initialization_budget=5, initialization_random_seed=seed)
    if route == "gp":
        client.set_generation_strategy(choose_generation_strategy(struct))
    else:
        forward = RelevantColumns().select
        selector = Recording(marginal, forward) if route == "np-marginal" else Recording(forward, marginal)
        options = {"checkpoint": "cmanp-bo", "columns": selector}
        if route == "np-f64":
            options["network_dtype"] = torch.float64
        client.set_generation_strategy(choose_generation_strategy(
            struct, model_config=ModelConfig(botorch_model_class=NPModel, model_options=options)))
    counts = {"warnings": 0, "ours": 0}
    if DUMP[1] is not None:
        DUMP[0] = f"{DUMP[1]}/{route}_{seed}"
    LOG.clear()
    RECORDING[0] = True

    def show(message, category, filename, lineno, file=None, line=None):
        if "Optimization failed" in str(message) or "ABNORMAL" in str(message):
            frames = [f.filename for f in traceback.extract_stack()]
            first = next((i for i, f in enumerate(frames) if f.endswith("botorch/optim/optimize.py")), len(frames))
            counts["warnings"] += 1
            # ours: npbandit called the optimiser (or raised it without one); else Ax's Acquisition.optimize did
            counts["ours"] += first == len(frames) or any("/npbandit/" in f for f in frames[:first])

    seconds = []
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show
        for i in range(trials):
            t0 = time.perf_counter()
            for index, p in client.get_next_trials(max_trials=1).items():
                client.complete_trial(index, raw_data={"f": objective(p)})
            if i >= 5:
                seconds.append(time.perf_counter() - t0)
        read_all = list(LOG)
        RECORDING[0] = False  # the cross-validation folds below are not trials
        fisher = compute_diagnostics(cross_validate(adapter=client._generation_strategy.adapter))
        fell_back = Caught()
        logging.getLogger("ax.service.utils.best_point").addHandler(fell_back)
        try:
            client.get_best_parameterization()
        finally:
            logging.getLogger("ax.service.utils.best_point").removeHandler(fell_back)
    return {"read_all": f"{sum(a for a, _ in read_all)} / {len(read_all)}" if route != "gp" else "-",
            "other": f"{sum(b for _, b in read_all)} / {len(read_all)}" if route != "gp" else "-",
            "warnings": f"{counts['warnings']} ({counts['ours']})",
            "best": "raw" if any("falling back on raw data" in m for m in fell_back.messages) else "model",
            "fisher": fisher["Fisher exact test p"]["f"], "s": sum(seconds) / len(seconds)}


class Caught(logging.Handler):
    """Keeps the messages logged to it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--routes", nargs="+", choices=ROUTES, default=["np", "np-marginal"])
    parser.add_argument("--dump", default=None, help="a folder to save every model-based trial's dataset in")
    args = parser.parse_args()
    torch.set_num_threads(1)
    if args.dump:
        Path(args.dump).mkdir(parents=True, exist_ok=True)
    DUMP[:] = [None, args.dump]
    set_ax_logger_levels(logging.ERROR)
    logging.getLogger("ax.service.utils.best_point").setLevel(logging.WARNING)  # its fallback, caught by run()
    print("| route | seed | all 4 read | ... by the other rule | opt. warnings (ours) | best point | Fisher p "
          "| s / trial |")
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    for seed in args.seeds:
        for route in args.routes:
            r = run(route, seed, args.trials)
            print(f"| {route} | {seed} | {r['read_all']} | {r['other']} | {r['warnings']} | {r['best']} "
                  f"| {r['fisher']:.3f} | {r['s']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
