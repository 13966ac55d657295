"""Does the per-arm NP policy fall behind LinUCB over long runs because it reads fewer features?

On a data set wider than the ``bo`` checkpoints (wine: 13 features, 3 arms), four policies over the same rows
per seed: LinUCB on every feature and on the first six whole-data principal components (the lab's
``PrincipalComponents`` view), and the per-arm NP policy (``cmanp-bo-ucb``) on its default projection and on the
same six components. If LinUCB on six components trails the NP as LinUCB on every feature leads it, the features
the NP does not read would explain the gap. Cumulative regret at 100 / 500 / 1,000 / 2,000 rounds, mean over seeds:

    python experiments/probes/probe_long_horizon_views.py --dataset wine --seeds 3 --steps 2000
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))


def main(argv: list[str] | None = None) -> None:
    import torch
    from classification_bandits import NP_WIDTH, PrincipalComponents

    from npbandit.envs import ClassificationBanditEnv
    from npbandit.loop import run_episode
    from npbandit.policies import make_bandit_policy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="wine")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=2000)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    marks = [t for t in (100, 500, 1000, 2000, args.steps) if t <= args.steps]
    marks = sorted(set(marks))
    print("| policy | view | " + " | ".join(f"t={t}" for t in marks) + " |\n|---|---|" + "---:|" * len(marks))
    for name in ("linucb", "cmanp-bo-ucb"):
        for view in ("all features", f"pca{NP_WIDTH}"):
            at = {t: [] for t in marks}
            for seed in range(args.seeds):
                env = ClassificationBanditEnv(dataset=args.dataset, horizon=args.steps)
                played = env if view == "all features" else PrincipalComponents(env, NP_WIDTH)
                result = run_episode(played, make_bandit_policy(name, env=played), seed=seed)
                for t in marks:
                    at[t].append(result.steps[t - 1]["cumulative_regret"])
            print(f"| {name} | {view} | " + " | ".join(f"{statistics.fmean(at[t]):.1f}" for t in marks) + " |",
                  flush=True)


if __name__ == "__main__":
    main()
