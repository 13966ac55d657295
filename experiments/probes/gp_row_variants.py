"""Why the BO suite's SingleTaskGP row trailed Optuna's GPSampler: the GP row with one setting changed.

Each variant is ``BOPolicy(model="gp", noise_free=True)`` (the row before 2026-11-24, BoTorch's
default RBF kernel) with one change, run on ``experiments/benchmarks/bo.py``'s functions, seeds and budget
(60 evaluations, the same Sobol design per seed), logged to ``--db`` (completed runs are skipped),
then summarised as the median final log10 simple regret per function:

- ``rbf``: the row as it was; ``rbf-repeats``: ``avoid_repeats=False``;
- ``rbf-init10``: a 10-point initial design, as Optuna's 10 random start-up trials;
- ``rbf-restarts``: 20 restarts and 2048 raw samples for ``optimize_acqf`` (10 and 512);
- ``matern52``: ``gp_kernel="matern52"`` (Matérn-5/2 with the same dimension-scaled prior).

    python experiments/probes/gp_row_variants.py --functions branin hartmann3 --variants rbf matern52
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "benchmarks"))

VARIANTS = {"rbf": {}, "rbf-repeats": {"avoid_repeats": False}, "rbf-init10": {"n_init": 10},
            "rbf-restarts": {"num_restarts": 20, "raw_samples": 2048}, "matern52": {"gp_kernel": "matern52"}}


def main() -> None:
    import bo
    import torch

    from npbandit.envs import BlackBoxEnv
    from npbandit.loop import run_episode
    from npbandit.policies import BOPolicy
    from npbandit.storage import RunLogger, list_runs, open_db, run_steps

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--functions", nargs="+", default=list(bo.FUNCTIONS), choices=list(bo.FUNCTIONS))
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--db", default=f"sqlite:///{ROOT / 'runs' / 'gp_row_variants.db'}")
    args = parser.parse_args()
    torch.set_num_threads(1)
    open_db(args.db)
    done = {(r.policy, r.env_params.get("objective"), r.seed) for r in list_runs(args.db) if r.status == "completed"}
    for variant in args.variants:
        for label in args.functions:
            name, dim = bo._problem(label)
            for seed in range(args.seeds):
                if (f"gp-{variant}", label, seed) in done:
                    continue
                env = BlackBoxEnv(function=name, dim=dim, budget=60)
                policy = BOPolicy(env.dim, model="gp", noise_free=True, **VARIANTS[variant])
                policy.name = f"gp-{variant}"
                run_episode(env, policy, seed=seed, logger=RunLogger(args.db, commit_every=60),
                            run_info={"kind": "bo", "env_id": "npbandit/BlackBox-v0",
                                      "env_params": {"objective": label, "budget": 60,
                                                     "optimal_value": env.optimal_value}})
    finals: dict[tuple[str, str], list[float]] = {}
    for run in list_runs(args.db):
        label = run.env_params.get("objective")
        if run.status == "completed" and run.policy.removeprefix("gp-") in args.variants and label in args.functions:
            last = run_steps(args.db, run.id)[-1]
            regret = last["best_value"] - run.env_params["optimal_value"]
            finals.setdefault((run.policy, label), []).append(math.log10(regret))
    print("| variant | " + " | ".join(args.functions) + " |")
    print("|---|" + "---:|" * len(args.functions))
    for variant in args.variants:
        cells = [finals.get((f"gp-{variant}", f)) for f in args.functions]
        print(f"| {variant} | " + " | ".join(f"{statistics.median(c):.2f} ({len(c)})" if c else "-" for c in cells)
              + " |")


if __name__ == "__main__":
    main()
