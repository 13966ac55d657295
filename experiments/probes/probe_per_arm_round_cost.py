"""A per-arm NP bandit policy's round cost at t = 10 against t = 1e4 and 1e5, paired (issue 48's flat-cost bar).

``cmanp-bo-ucb`` (one ``cmanp-bo`` regression per arm, :mod:`npbandit.policies.per_arm`) on
``--dim``-D Gaussian contexts (through the default context projection where ``--dim`` exceeds
the checkpoint's width) and ``--arms`` arms, Bernoulli rewards. Snapshots:

- ``t = 10``: a run from ``reset`` through ``act`` / ``observe``, stopped after round 10 (the
  first rounds in which every arm has a model);
- ``t = n`` for each ``--rows`` ``n``: ``n`` rounds of history, each arm's model conditioned on
  its rows at once instead of streamed (which gives CMANP the same state): through the
  projection, the rows put into the policy's buffers and fitted (``_fit``, as the doubling
  schedule's fit at ``n`` rows does); without one, each arm's model built on its rows.

Each trial takes a deep copy of every snapshot and runs ``--rounds`` rounds (act + observe) from
it on the same fresh contexts, the snapshots in turn, so load on the shared machine falls on all
of them alike; a round's cost is the thread's CPU time. Printed per snapshot: the median round
and the mean round (what the run pays, occasional refits, re-standardisations and noise
re-reads included) over all trials, and each as a ratio to ``t = 10``'s.

    OMP_NUM_THREADS=1 nice -n 19 python experiments/probes/probe_per_arm_round_cost.py
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time

import numpy as np


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[10000, 100000])
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20, help="rounds per snapshot per trial")
    parser.add_argument("--trials", type=int, default=15)
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from npbandit.policies import make_bandit_policy

    D, K = args.dim, args.arms
    rng = np.random.default_rng(0)
    weights = rng.standard_normal((K, D)) / np.sqrt(D)

    def context() -> np.ndarray:
        return np.clip(rng.standard_normal(D), -9, 9)

    def reward(x: np.ndarray, arm: int) -> float:
        return float(rng.random() < 1 / (1 + np.exp(-2 * weights[arm] @ x)))

    def fresh():
        policy = make_bandit_policy("cmanp-bo-ucb", n_arms=K, context_dim=D, bounds=[[-10.0] * D, [10.0] * D])
        policy.reset(0)
        return policy

    early = fresh()
    for _ in range(10):
        x = context()
        a = early.act(x)
        early.observe(x, a, reward(x, a), {})
    if any(m is None for m in early.models):
        raise SystemExit("not every arm has a model after 10 rounds; use fewer --arms")
    snapshots = {10: early}
    for n in args.rows:
        policy = fresh()
        X = np.clip(rng.standard_normal((n, D)), -9, 9)
        arms = rng.integers(K, size=n)
        rewards = np.array([reward(x, a) for x, a in zip(X, arms)])
        policy.counts = np.bincount(arms, minlength=K).tolist()
        if policy.projection is None:  # contexts the checkpoint reads as they are: each arm's model on its rows
            policy.models = [policy._model(X[arms == a], rewards[arms == a][:, None]) for a in range(K)]
        else:
            for x, a, r in zip(X, arms, rewards):
                policy._contexts.append(x)
                policy._arms.append(a)
                policy._rewards.append(r)
            policy._fit()
        snapshots[n] = policy

    costs: dict[int, list[float]] = {t: [] for t in snapshots}
    for trial in range(args.trials):
        contexts = [context() for _ in range(args.rounds)]
        for t, snapshot in snapshots.items():
            policy = copy.deepcopy(snapshot)
            policy.act(contexts[0])  # the first round after a copy or a fit computes the arms' states
            for x in contexts:
                t0 = time.thread_time()
                a = policy.act(x)
                policy.observe(x, a, reward(x, a), {})
                costs[t].append(time.thread_time() - t0)
        print(f"trial {trial + 1}/{args.trials}", flush=True)
    base_median, base_mean = statistics.median(costs[10]), statistics.fmean(costs[10])
    print(f"cmanp-bo-ucb, {D}-D contexts, {K} arms, {args.trials} trials x {args.rounds} rounds per snapshot; "
          "CPU ms per round (act + observe)")
    for t, c in costs.items():
        median, mean = statistics.median(c), statistics.fmean(c)
        print(f"t = {t:>7,}: median {1e3 * median:6.2f} ms ({median / base_median:.2f}x t = 10), "
              f"mean {1e3 * mean:6.2f} ms ({mean / base_mean:.2f}x), max {1e3 * max(c):6.1f} ms")


if __name__ == "__main__":
    main()
