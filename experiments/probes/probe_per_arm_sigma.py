"""How the per-arm NP policy's posterior narrows as an arm's rows grow: one run on a data set, the arms'
posterior std of the mean reward at each round's context (``PerArmNPPolicy.predict``), averaged over the arms
and for the arm played, over ten rounds from each of a few marks, and the rows per arm at the end.

    python experiments/probes/probe_per_arm_sigma.py --dataset wine --steps 2000 --seed 0
"""

from __future__ import annotations

import argparse

import numpy as np


def main(argv: list[str] | None = None) -> None:
    import torch

    from npbandit.envs import ClassificationBanditEnv
    from npbandit.policies import make_bandit_policy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="wine")
    parser.add_argument("--policy", default="cmanp-bo-ucb")
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    env = ClassificationBanditEnv(dataset=args.dataset, horizon=args.steps)
    policy = make_bandit_policy(args.policy, env=env)
    obs, _ = env.reset(seed=args.seed)
    policy.reset(args.seed)
    seen = []  # (round, mean std over arms, the played arm's std)
    for t in range(args.steps):
        arm = policy.act(obs)
        if policy.map is not None:  # the models are built
            std = np.sqrt(policy.predict(obs)[1])
            seen.append((t, float(std.mean()), float(std[arm])))
        next_obs, reward, _, _, info = env.step(arm)
        policy.observe(obs, arm, reward, info)
        obs = next_obs
    print("| from round | std, mean over arms | std, arm played |\n|---:|---:|---:|")
    for mark in (50, 200, 500, 1000, 1500, args.steps - 10):
        rows = [s for s in seen if mark <= s[0] < mark + 10]
        if rows:
            print(f"| {mark} | {np.mean([s[1] for s in rows]):.3f} | {np.mean([s[2] for s in rows]):.3f} |")
    print(f"rows per arm at the end: {policy.counts}")


if __name__ == "__main__":
    main()
