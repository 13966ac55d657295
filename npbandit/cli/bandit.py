"""``npbandit bandit``: a sweep of wheel-bandit runs (policies x deltas x seeds), here one
after another or on a Dask cluster, less the runs its database holds completed."""

from __future__ import annotations

import argparse
import contextlib

from npbandit.cli.options import finite_float, non_negative_int, positive_int, progress

__all__ = ["COMMAND", "HELP", "add_arguments", "run"]

COMMAND = "bandit"
HELP = "wheel-bandit runs: several policies, deltas and seeds"
USES_DB = True


def add_arguments(bandit: argparse.ArgumentParser) -> None:
    """``npbandit bandit``'s options; ``--beta``'s default is :func:`~npbandit.loop.run_wheel_bandits`'."""
    bandit.add_argument("--policies", nargs="+", default=["cmanp-wheel", "uniform", "linucb"],
                        help="uniform | linucb | lin-ts | gp-ucb | <model>-wheel[-ucb|-thompson|-marginal-thompson] | "
                             "<model>-bo[-ucb|-thompson] (one NP regression per arm) | a checkpoint path")
    bandit.add_argument("--deltas", type=finite_float, nargs="+", default=[0.5],
                        help="the wheel's delta in [0, 1]: a context with norm >= delta pays 50 on its "
                        "quadrant's arm (the larger, the rarer)")
    bandit.add_argument("--seeds", type=non_negative_int, nargs="+", default=[0],
                        help="one run per policy, delta and seed")
    bandit.add_argument("--steps", type=positive_int, default=2000, help="rounds per run")
    bandit.add_argument("--beta", type=finite_float, default=1.0, help="UCB exploration weight (mu + beta * sigma)")
    bandit.add_argument("--commit-every", type=positive_int, metavar="N",
                        help="steps per database transaction; a batch writes faster, but a process killed "
                             "outright loses its uncommitted steps (default: every step)")
    bandit.add_argument("--rerun", action="store_true",
                        help="run again the combinations --db holds completed (the same policy, settings, delta, seed "
                             "and --steps), which are otherwise skipped, so that a sweep run again after an "
                             "interruption runs only the rest")
    bandit.add_argument("--dask-scheduler", metavar="ADDRESS",
                        help="run on the workers of this Dask scheduler (e.g. tcp://10.0.0.5:8786; the 'dask' "
                             "extra) instead of one after another here; --db must reach every worker (a PostgreSQL "
                             "URL across machines) (default: run here)")


def run(args: argparse.Namespace) -> int:
    """Run the sweep, each run logged to ``--db``."""
    from npbandit.loop import run_wheel_bandits
    from npbandit.policies.bandit import check_bandit_policy_name

    for name in args.policies:  # before a cluster is reached for them (run_wheel_bandits checks them again)
        check_bandit_policy_name(name)
    with contextlib.ExitStack() as stack:
        executor = None
        if args.dask_scheduler is not None:
            from npbandit.cluster import dask_executor

            executor = stack.enter_context(dask_executor(args.dask_scheduler))
        run_wheel_bandits(args.policies, args.deltas, args.seeds, args.steps, beta=args.beta, db=args.db,
                          progress=progress(), executor=executor, commit_every=args.commit_every, rerun=args.rerun)
    return 0
