"""NPSampler on a define-by-run study with two branches: does it keep to one branch?

The objective (minimised): ``classifier = suggest_categorical("classifier", ["svc", "rf"])``;
``"svc"`` suggests ``svc_c`` in ``[0, 1]`` and returns ``(svc_c - 0.7) ** 2``, ``"rf"`` suggests
``rf_depth`` in ``[0, 1]`` and returns ``0.1 + (rf_depth - 0.25) ** 2``, so the best value is 0
(``svc``, ``svc_c = 0.7``). Only ``classifier`` is in every trial, so it is all NPSampler
models; the branch's own parameter comes from the independent sampler. Per sampler
(``NPSampler``'s default ``tnpd-bo`` with 10 start-up trials, ``TPESampler``, ``GPSampler``,
``RandomSampler``, each seeded) and seed, ``--trials`` trials; printed: the best value, and
the share of the trials after the 10th that took the branch taken most often there.

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


def objective(trial: optuna.Trial) -> float:
    if trial.suggest_categorical("classifier", ["svc", "rf"]) == "svc":
        return (trial.suggest_float("svc_c", 0.0, 1.0) - 0.7) ** 2
    return 0.1 + (trial.suggest_float("rf_depth", 0.0, 1.0) - 0.25) ** 2


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
    print("| sampler | seed | best value | branch share after the start-up |")
    print("|---|---:|---:|---:|")
    for name in args.samplers:
        for seed in args.seeds:
            study = optuna.create_study(direction="minimize", sampler=SAMPLERS[name](seed))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                study.optimize(objective, n_trials=args.trials)
            late = Counter(t.params["classifier"] for t in study.trials[STARTUP:])
            branch, count = late.most_common(1)[0]
            print(f"| {name} | {seed} | {study.best_value:.4f} | {branch} {count / sum(late.values()):.2f} |",
                  flush=True)


if __name__ == "__main__":
    main()
