"""Per-arm NP policies (a ``bo`` checkpoint, one model per arm) on a bandit that is not the wheel:
cumulative regret against LinUCB and Uniform on a linear contextual bandit with 3-D contexts and
4 arms, and whether a round's cost grows with the rounds.

The bandit: ``npbandit/LinearBandit-v0`` with 3-D contexts and 4 arms: contexts uniform in
[-1, 1]^3 (a ``Box``), arm ``a`` paying ``theta_a . x + 0.1 N(0, 1)``
with ``theta`` drawn standard normal per seed; the regret of a round is the expected one (best
arm's mean minus the played arm's). LinUCB's model is the true one here (linear in ``[x, 1]``), so
it is the yardstick a well-specified baseline sets; the NP's ``bo`` prior is a GP prior, which
covers linear functions only as very long lengthscales. Each policy is built from the env's spaces
with ``make_bandit_policy(name, env=env)``; per step, ``act_s + observe_s`` (the loop's timings).

    python experiments/probes/probe_any_bandit.py --seeds 5 --steps 500
"""

from __future__ import annotations

import argparse
import statistics
import time

import gymnasium as gym
import numpy as np

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.loop import run_episode
from npbandit.policies import make_bandit_policy


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policies", nargs="+", default=["cmanp-bo", "cmanp-bo-thompson", "linucb", "uniform"])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args(argv)
    env = gym.make("npbandit/LinearBandit-v0", context_dim=3, n_arms=4, horizon=args.steps).unwrapped
    marks = sorted({min(100, args.steps), args.steps // 2, args.steps})
    print(f"linear bandit, 3-D contexts, 4 arms, {args.steps} rounds, seeds 0..{args.seeds - 1}")
    print("| policy | " + " | ".join(f"regret @{m}" for m in marks)
          + " | ms/step rounds 1-100 | ms/step last 100 | wall s |")
    print("|---|" + "---|" * (len(marks) + 3))
    for name in args.policies:
        policy = make_bandit_policy(name, env=env)
        curves, early, late = [], [], []
        started = time.perf_counter()
        for seed in range(args.seeds):
            result = run_episode(env, policy, seed=seed)
            curves.append(np.cumsum([s["regret"] for s in result.steps]))
            cost = [1e3 * (s["act_s"] + s["observe_s"]) for s in result.steps]
            early += cost[1:100]  # a step's observe_s is the previous step's observation
            late += cost[-100:]
        wall = time.perf_counter() - started
        cells = [f"{statistics.mean(c[m - 1] for c in curves):.1f} ± {statistics.stdev(c[m - 1] for c in curves):.1f}"
                 for m in marks]
        print(f"| {policy.name} | " + " | ".join(cells)
              + f" | {statistics.median(early):.1f} | {statistics.median(late):.1f} | {wall:.0f} |", flush=True)


if __name__ == "__main__":
    main()
