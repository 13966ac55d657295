"""Where does a per-arm NP bandit run's memory go as its rounds grow?

Runs ``make_bandit_policy(--policy)`` on ``npbandit/LinearBandit-v0`` (``--context-dim``,
``--arms``) for ``--rounds`` rounds and prints, every ``--every`` rounds, the process's
resident memory and the tensors alive (count and MiB of their storages, the largest shapes).
With ``--collect`` a full ``gc.collect()`` runs before each reading, so the difference between
a run with and one without it is the memory held by cyclic garbage: objects no reference
outside their own cycle keeps, which Python frees only at its next full collection.

    OMP_NUM_THREADS=1 nice python experiments/probes/probe_bandit_memory.py --rounds 2600
    OMP_NUM_THREADS=1 nice python experiments/probes/probe_bandit_memory.py --rounds 2600 --collect
"""

from __future__ import annotations

import argparse
import collections
import gc
import os

import gymnasium as gym
import torch

from npbandit.policies import make_bandit_policy


def resident_mib() -> float:
    """The process's resident memory in MiB (Linux ``/proc/self/statm``)."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def live_tensors(top: int = 3) -> tuple[int, float, list[tuple[tuple[int, ...], float]]]:
    """The tensors the collector tracks, each storage counted once: their count, their MiB,
    and the ``top`` shapes holding the most MiB."""
    seen: set[int] = set()
    by_shape: collections.Counter = collections.Counter()
    for obj in gc.get_objects():
        if type(obj) is torch.Tensor:
            storage = obj.untyped_storage()
            if storage.data_ptr() in seen:
                continue
            seen.add(storage.data_ptr())
            by_shape[tuple(obj.shape)] += storage.nbytes()
    total = sum(by_shape.values()) / 2**20
    return len(seen), total, [(shape, round(n / 2**20, 1)) for shape, n in by_shape.most_common(top)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="cmanp-bo")
    parser.add_argument("--context-dim", type=int, default=3)
    parser.add_argument("--arms", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=2600)
    parser.add_argument("--every", type=int, default=650)
    parser.add_argument("--collect", action="store_true", help="a full gc.collect() before each reading")
    args = parser.parse_args()
    torch.set_num_threads(1)
    env = gym.make("npbandit/LinearBandit-v0", context_dim=args.context_dim, n_arms=args.arms, horizon=args.rounds)
    policy = make_bandit_policy(args.policy, env=env)
    obs, _ = env.reset(seed=0)
    policy.reset(seed=0)
    print("round | resident MiB | tensors | tensor MiB | largest shapes (MiB)")
    for t in range(args.rounds):
        arm = policy.act(obs)
        following, reward, terminated, truncated, info = env.step(arm)
        policy.observe(obs, arm, reward, info)
        obs = following
        if t % args.every == 0 or t == args.rounds - 1:
            if args.collect:
                gc.collect()
            count, mib, shapes = live_tensors()
            print(f"{t} | {resident_mib():.0f} | {count} | {mib:.1f} | {shapes}", flush=True)
        if terminated or truncated:
            break


if __name__ == "__main__":
    main()
