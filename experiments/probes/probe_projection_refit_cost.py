"""What a projected per-arm NP policy's rounds cost as its history grows (issue 48's flat-cost bar).

``cmanp-bo-ucb`` on ``--dim``-D contexts and ``--arms`` arms, through each context projection.
For each history size ``n`` in ``--rows`` (Gaussian contexts, arms drawn uniformly, Bernoulli
rewards), the policy's row buffers are filled with ``n`` rounds and it is refitted
(``PerArmNPPolicy._fit``: the projection fitted on every row, every arm re-conditioned); printed:
the fit's seconds and seconds per row, the first round after it (where the arms' models compute
their state, which the fit leaves to the first prediction), and the mean of the ``--rounds``
rounds after that (act + observe, each streamed into its arm's model). A fit at ``n`` rows comes
after ``n / 2`` rounds since the last (the doubling schedule), so a round's amortised share of the
fits is twice the fit's (fit + first round) seconds per row.

    OMP_NUM_THREADS=1 nice -n 19 python experiments/probes/probe_projection_refit_cost.py
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--arms", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--projections", nargs="+", default=["principal-components", "reward-directions"])
    args = parser.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    from npbandit.policies import make_bandit_policy

    rng = np.random.default_rng(0)
    D, K = args.dim, args.arms
    for projection in args.projections:
        policy = make_bandit_policy("cmanp-bo-ucb", n_arms=K, context_dim=D, bounds=[[-10.0] * D, [10.0] * D],
                                    projection=projection)
        for n in args.rows:
            X = np.clip(rng.standard_normal((n + args.rounds + 1, D)), -9, 9)
            arms = rng.integers(K, size=n)
            rewards = (rng.random(n) < 0.3).astype(float)
            policy.reset(0)
            for x, a, r in zip(X, arms, rewards):
                policy._contexts.append(x)
                policy._arms.append(a)
                policy._rewards.append(r)
            policy.counts = np.bincount(arms, minlength=K).tolist()
            t0 = time.perf_counter()
            policy._fit()
            fit = time.perf_counter() - t0
            t0 = time.perf_counter()
            policy.observe(X[n], policy.act(X[n]), 1.0, {})
            first = time.perf_counter() - t0
            t0 = time.perf_counter()
            for x in X[n + 1:]:
                policy.observe(x, policy.act(x), float(rng.random() < 0.3), {})
            after = (time.perf_counter() - t0) / args.rounds
            print(f"{projection} n={n}: fit {fit:.2f} s ({1e6 * fit / n:.0f} us/row), first round after "
                  f"{1e3 * first:.0f} ms, then {1e3 * after:.1f} ms a round (widenings {policy.widenings}); "
                  f"amortised share of the fits {2e3 * (fit + first) / n:.2f} ms a round", flush=True)


if __name__ == "__main__":
    main()
