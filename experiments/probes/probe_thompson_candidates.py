"""Joint against marginal Thompson draws as the candidate set grows (issue 18; experiments/log/results.md,
"What the joint draw gives a GP").

``cmanp-and-bo``'s joint draw is behind the marginal one on Hartmann-3, where the 2,048
candidates of one draw share a rank-20 covariance in 3-D. This probe runs the BO suite's
columns ``<model>-tr-thompson`` and ``<model>-tr-marginal-thompson`` (trust region, told the
budget, the suite's Sobol designs; ``--model gp``: the suite's noise-free Matérn-5/2 GP) with
``BOPolicy(thompson_candidates=...)`` at several sizes, paired by seed; per-run results are kept in
``--out`` and reused.

    python experiments/probes/probe_thompson_candidates.py --functions hartmann3 --candidates 512 2048 --seeds 10
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "benchmarks"))
import bo  # noqa: E402
from common import RunRecord  # noqa: E402

from npbandit.envs import BlackBoxEnv  # noqa: E402
from npbandit.loop import run_episode  # noqa: E402
from npbandit.policies import BOPolicy  # noqa: E402

DRAWS = ("thompson", "marginal-thompson")


def one(model: str, draw: str, candidates: int, label: str, seed: int, budget: int) -> float:
    """Final log10 simple regret of one run."""
    torch.set_num_threads(1)
    name, dim = bo._problem(label)
    env = BlackBoxEnv(function=name, dim=dim, budget=budget)
    policy = BOPolicy(env.dim, model=model, acquisition=draw, trust_region=True, thompson_candidates=candidates,
                      budget=budget, **(bo.GP_OPTIONS if model == "gp" else {}))  # the suite's GP
    result = run_episode(env, policy, seed=seed)
    return float(np.log10(max(result.steps[-1]["best_value"] - env.optimal_value, 1e-12)))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="cmanp-and-bo")
    parser.add_argument("--functions", nargs="+", default=["hartmann3"], choices=list(bo.FUNCTIONS))
    parser.add_argument("--candidates", nargs="+", type=int, default=[512, 2048])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--out", default=str(ROOT / "runs" / "probe_thompson_candidates.json"))
    args = parser.parse_args(argv)
    runs = RunRecord(args.out)
    key = "{}|{}|{}|{}|{}|{}".format
    for seed in range(args.seeds):
        for label in args.functions:
            for n in args.candidates:
                for draw in DRAWS:
                    runs.get(key(args.model, label, n, draw, args.budget, seed),
                             lambda draw=draw, n=n, label=label, seed=seed: one(args.model, draw, n, label, seed,
                                                                                args.budget))
    record = runs.runs
    for label in args.functions:
        for n in args.candidates:
            joint, marginal = ([record[key(args.model, label, n, d, args.budget, s)] for s in range(args.seeds)]
                               for d in DRAWS)
            print(f"{label}, {args.model}, {n} candidates, {args.seeds} seeds: median final log10 regret joint "
                  f"{statistics.median(joint):.2f}, marginal {statistics.median(marginal):.2f}; joint lower on "
                  f"{sum(j < m for j, m in zip(joint, marginal))} of {args.seeds} paired seeds")


if __name__ == "__main__":
    main()
