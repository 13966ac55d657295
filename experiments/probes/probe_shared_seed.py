"""Does ``run_episode`` seeding the env and the policy with one seed correlate their draws?

``run_episode(env, policy, seed=s)`` calls ``env.reset(seed=s)`` and ``policy.reset(s)``, so
Gymnasium's ``np_random`` and the policy's ``default_rng`` start from the same seed. This probe
plays the uniform policy (the one whose every draw is random) for ``--steps`` rounds on each
bandit, once that way and once with the policy seeded apart (``policy.reset(s + OFFSET)``,
the same env stream), and reports per bandit the share of rounds where uniform played the
round's best arm. Independent draws put it at 1 / arms.

    python experiments/probes/probe_shared_seed.py --seeds 20 --steps 2000
"""

from __future__ import annotations

import argparse
import statistics

import gymnasium as gym

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.policies import UniformPolicy

OFFSET = 1_000_003


def best_arm_share(env: gym.Env, n_arms: int, seed: int, policy_seed: int, steps: int) -> float:
    """The share of ``steps`` rounds where uniform (seeded ``policy_seed``) played the arm
    with the highest expected reward (``info["optimal_action"]``)."""
    policy = UniformPolicy(n_arms=n_arms)
    obs, _ = env.reset(seed=seed)
    policy.reset(policy_seed)
    hits = 0
    for _ in range(steps):
        arm = policy.act(obs)
        next_obs, reward, _, _, info = env.step(arm)
        hits += int(arm == info["optimal_action"])
        policy.observe(obs, arm, reward, info)
        obs = next_obs
    return hits / steps


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    bandits = {
        "WheelBandit-v0 (delta 0.9)": (lambda: gym.make("npbandit/WheelBandit-v0", delta=0.9, horizon=args.steps), 5),
        "ClassificationBandit-v0 (iris)": (lambda: gym.make("npbandit/ClassificationBandit-v0", dataset="iris",
                                                            horizon=args.steps), 3),
        "LinearBandit-v0 (3-D, 4 arms)": (lambda: gym.make("npbandit/LinearBandit-v0", context_dim=3, n_arms=4,
                                                           horizon=args.steps), 4),
    }
    print("| bandit | arms | 1 / arms | shared seed (run_episode) | policy seeded apart |")
    print("|---|---:|---:|---:|---:|")
    for name, (make, n_arms) in bandits.items():
        shared = [best_arm_share(make(), n_arms, s, s, args.steps) for s in range(args.seeds)]
        apart = [best_arm_share(make(), n_arms, s, s + OFFSET, args.steps) for s in range(args.seeds)]
        print(f"| {name} | {n_arms} | {1 / n_arms:.3f} | {statistics.fmean(shared):.3f} "
              f"[{min(shared):.3f}, {max(shared):.3f}] | {statistics.fmean(apart):.3f} "
              f"[{min(apart):.3f}, {max(apart):.3f}] |", flush=True)


if __name__ == "__main__":
    main()
