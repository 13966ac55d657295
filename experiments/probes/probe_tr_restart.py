"""Does the trust region's restart pay on a budget of tens of evaluations? (experiments/log/results.md,
"Trust region: no restart the budget cannot use")

For each seed, one run of a ``experiments/benchmarks/bo.py`` method with TuRBO's rule (the region restarts
at ``length_init`` whenever it collapses below ``length_min``: ``BOPolicy(budget=None)``) and,
when that run restarted, the same seed with the policy told its budget (``budget=60``: the side
stays at ``length_min`` when too few evaluations are left for a restart to use, which on 60
evaluations is every time). A run that never collapsed is the same both ways (same seed, same
design), so it is not repeated.

    python experiments/probes/probe_tr_restart.py cmanp-bo-tr hartmann3 branin --seeds 10
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "experiments" / "benchmarks"))
import bo  # noqa: E402

from npbandit.envs import BlackBoxEnv  # noqa: E402
from npbandit.loop import run_episode  # noqa: E402


def one(method: str, label: str, seed: int, told_budget: bool, budget: int) -> dict:
    name, dim = bo._problem(label)
    env = BlackBoxEnv(function=name, dim=dim, budget=budget)
    policy = bo.make_policy(method, env)
    if not told_budget:
        policy.budget = None
    started = time.perf_counter()
    run_episode(env, policy, seed=seed)
    return {"restarts": policy.region.restarts, "holds": policy.region.holds,
            "log10_regret": float(np.log10(abs(env.best_value - env.optimal_value))),
            "seconds": round(time.perf_counter() - started, 1)}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("method", help="a trust-region column of experiments/benchmarks/bo.py, e.g. cmanp-bo-tr")
    parser.add_argument("functions", nargs="+",
                        help="experiments/benchmarks/bo.py function labels, e.g. branin hartmann3")
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--budget", type=int, default=60)
    parser.add_argument("--out", type=Path, help="JSON of every run (default: print only)")
    args = parser.parse_args(argv)
    if not bo.split_trust_region(bo.split_method(args.method)[0])[1]:
        raise SystemExit(f"method must search a trust region (end in -tr), got {args.method!r}")
    torch.set_num_threads(1)
    rows = []
    for label in args.functions:
        for seed in range(args.seeds):
            row = {"function": label, "seed": seed, "turbo": one(args.method, label, seed, False, args.budget)}
            row["told_budget"] = (one(args.method, label, seed, True, args.budget) if row["turbo"]["restarts"]
                                  else row["turbo"])
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\n{args.method}, {args.seeds} seeds, {args.budget} evaluations, log10 final regret")
    print("| function | runs that restarted | told the budget: lower / equal / higher | median, TuRBO's restart | "
          "median, told the budget |")
    print("|---|---:|---:|---:|---:|")
    for label in args.functions:
        mine = [r for r in rows if r["function"] == label]
        before = [r["turbo"]["log10_regret"] for r in mine]
        after = [r["told_budget"]["log10_regret"] for r in mine]
        restarted = [r for r in mine if r["turbo"]["restarts"]]
        lower = sum(r["told_budget"]["log10_regret"] < r["turbo"]["log10_regret"] - 1e-9 for r in restarted)
        higher = sum(r["told_budget"]["log10_regret"] > r["turbo"]["log10_regret"] + 1e-9 for r in restarted)
        print(f"| {label} | {len(restarted)} / {len(mine)} | {lower} / {len(restarted) - lower - higher} / {higher} | "
              f"{statistics.median(before):.2f} | {statistics.median(after):.2f} |")
    if args.out:
        args.out.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
