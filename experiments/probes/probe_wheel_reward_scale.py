"""Does a per-arm ``bo`` policy on the wheel keep to one arm when no 50 has been seen?

The per-arm NP policy (``make_bandit_policy("cmanp-bo", env=env)``) standardises every arm's
rewards by the mean and std of all rewards seen so far. On the wheel
(``npbandit/WheelBandit-v0``) arm 0 pays about 1.2, arms 1-4 about 1.0, except that the arm of
a context's quadrant pays 50 where the context lies at radius ``>= delta``. Until a 50 has been
received, the scale the policy has learnt knows nothing of it. Per seed this probe runs one
episode of ``--steps`` rounds and prints: the plays of each arm, the round of the first 50
received (``-`` if none), how many 50s were received, the most played arm's share of the last
100 rounds, and the run's cumulative regret (the env's own, realised).

    python experiments/probes/probe_wheel_reward_scale.py --delta 0.9 --seeds 0 1 2 3 4 --steps 500
"""

from __future__ import annotations

import argparse
from collections import Counter

import gymnasium as gym
import torch

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.loop import run_episode
from npbandit.policies import make_bandit_policy

LARGE = 25.0  # a reward above this is the wheel's large one (50; the small ones are ~1)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", default="cmanp-bo")
    parser.add_argument("--delta", type=float, default=0.9)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--steps", type=int, default=500)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    env = gym.make("npbandit/WheelBandit-v0", delta=args.delta, horizon=args.steps).unwrapped
    print(f"{args.policy} on the wheel, delta = {args.delta}, {args.steps} rounds")
    print("| seed | plays of arms 0-4 | first 50 received | 50s received | top arm's share, last 100 | regret |")
    print("|---:|---|---:|---:|---:|---:|")
    for seed in args.seeds:
        policy = make_bandit_policy(args.policy, env=env)
        result = run_episode(env, policy, seed=seed)
        actions = [int(s["action"]) for s in result.steps]
        rewards = [float(s["reward"]) for s in result.steps]
        plays = Counter(actions)
        large = [t for t, r in enumerate(rewards) if r > LARGE]
        top = Counter(actions[-100:]).most_common(1)[0]
        first = str(large[0] + 1) if large else "-"
        print(f"| {seed} | {' / '.join(str(plays[a]) for a in range(5))} | {first} | {len(large)} "
              f"| arm {top[0]}: {top[1] / min(100, len(actions)):.2f} | {result.cumulative_regret:.0f} |", flush=True)


if __name__ == "__main__":
    main()
