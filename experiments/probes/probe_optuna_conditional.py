"""NPSampler on a define-by-run study with two branches: does it keep to one branch?

The objective (minimised): ``classifier = suggest_categorical("classifier", ["svc", "rf"])``;
``"svc"`` suggests ``svc_c``, ``svc_gamma``, ``svc_tol`` in ``[0, 1]`` and returns
``(svc_c - 0.7) ** 2 + (svc_gamma - 0.2) ** 2 + (svc_tol - 0.4) ** 2``; ``"rf"`` suggests
``rf_depth``, ``rf_leaf``, ``rf_split`` in ``[0, 1]`` and returns ``0.1 + (rf_depth - 0.25) ** 2
+ (rf_leaf - 0.6) ** 2 + (rf_split - 0.8) ** 2``; the best value is 0 (``svc``). Only
``classifier`` is in every trial, so it is all NPSampler models; the branch's own parameters
come from its independent sampler. Per sampler (``NPSampler``'s default ``tnpd-bo`` with 10
start-up trials, ``TPESampler``, ``GPSampler``, ``RandomSampler``, each seeded) and seed,
``--trials`` trials; printed: the best value of the first 10 trials and of all, and the share
of the trials after the 10th that took the branch taken most often there.

    python experiments/probes/probe_optuna_conditional.py --seeds 0 1 2 --trials 40
"""

from __future__ import annotations

import argparse
import warnings
from collections import Counter

import optuna
import torch

from npbandit.integrations.optuna import NPSampler

STARTUP = 10


BRANCHES = {"svc": (0.0, {"svc_c": 0.7, "svc_gamma": 0.2, "svc_tol": 0.4}),
            "rf": (0.1, {"rf_depth": 0.25, "rf_leaf": 0.6, "rf_split": 0.8})}


def objective(trial: optuna.Trial) -> float:
    floor, best = BRANCHES[trial.suggest_categorical("classifier", list(BRANCHES))]
    return floor + sum((trial.suggest_float(name, 0.0, 1.0) - x) ** 2 for name, x in best.items())


SAMPLERS = {"npsampler": lambda seed: NPSampler(seed=seed, n_startup_trials=STARTUP),
            "tpe": lambda seed: optuna.samplers.TPESampler(seed=seed),
            "gp": lambda seed: optuna.samplers.GPSampler(seed=seed),
            "random": lambda seed: optuna.samplers.RandomSampler(seed=seed)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--samplers", nargs="+", choices=list(SAMPLERS), default=list(SAMPLERS))
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    print(f"two-branch study, {args.trials} trials; the most frequent branch's share of trials {STARTUP + 1}-"
          f"{args.trials}")
    print(f"| sampler | seed | best of trials 1-{STARTUP} | best value | branch share after the start-up |")
    print("|---|---:|---:|---:|---:|")
    for name in args.samplers:
        for seed in args.seeds:
            study = optuna.create_study(direction="minimize", sampler=SAMPLERS[name](seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                study.optimize(objective, n_trials=args.trials)
            late = Counter(t.params["classifier"] for t in study.trials[STARTUP:])
            branch, count = late.most_common(1)[0]
            startup = min(t.value for t in study.trials[:STARTUP])
            share = count / sum(late.values())
            print(f"| {name} | {seed} | {startup:.4f} | {study.best_value:.4f} | {branch} {share:.2f} |", flush=True)


if __name__ == "__main__":
    main()
