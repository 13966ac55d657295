"""``npbandit bandit``: a sweep of contextual-bandit runs (policies x tasks x seeds) on the
wheel bandit at several deltas or on classification data sets (bundled ones, or CSV files
of one's own), here one after another or on a Dask cluster, less the runs its database
holds completed."""

from __future__ import annotations

import argparse
import difflib
import functools
from pathlib import Path

from npbandit.cli.options import finite_float, non_negative_int, positive_int, progress, results_line

__all__ = ["COMMAND", "HELP", "add_arguments", "run", "WHEEL_POLICIES", "DATASET_POLICIES", "WHEEL_DELTAS"]

COMMAND = "bandit"
HELP = "contextual-bandit runs on the wheel or on data sets: several policies, deltas or data sets, and seeds"
USES_DB = True
#: the sweep's argument names its options feed under another name (an error naming one names the option)
ARGUMENT_ALIASES = {"policy": "policies"}  # make_bandit_policy's, for each of --policies

#: ``--policies`` without it: on the wheel, and on a data set (where a wheel checkpoint cannot serve)
WHEEL_POLICIES = ["cmanp-wheel", "uniform", "linucb"]
DATASET_POLICIES = ["cmanp-bo", "uniform", "linucb"]
#: ``--deltas`` without it
WHEEL_DELTAS = [0.5]


def _words(values: list) -> str:
    return " ".join(str(v) for v in values)


def add_arguments(bandit: argparse.ArgumentParser) -> None:
    """``npbandit bandit``'s options; ``--beta``'s default is :func:`~npbandit.loop.run_bandit_sweep`'."""
    from npbandit.envs.classification import DATASETS

    bandit.add_argument("--policies", nargs="+",
                        help="uniform | linucb | lin-ts | gp-ucb | <model>-wheel[-ucb|-thompson|-marginal-thompson] "
                             "(the wheel only) | <model>-bo[-ucb|-thompson] (one NP regression per arm) | a "
                             f"checkpoint path (default: {_words(WHEEL_POLICIES)} on the wheel, "
                             f"{_words(DATASET_POLICIES)} with --datasets)")
    bandit.add_argument("--deltas", type=finite_float, nargs="+",
                        help="the wheel's delta in [0, 1]: a context with norm >= delta pays 50 on its "
                        f"quadrant's arm (the larger, the rarer); the wheel only (default: {_words(WHEEL_DELTAS)})")
    bandit.add_argument("--datasets", "--dataset", nargs="+", metavar="NAME_OR_CSV",
                        help=f"play classification bandits instead of the wheel (each class an arm, the row's class "
                             f"pays 1): a data set scikit-learn bundles or a synthetic one ({', '.join(DATASETS)}; "
                             "the 'bench' extra), or a CSV file's path (a header row, then one row per example; "
                             "--label-column names the labels, every other column is a numeric feature) "
                             "(default: the wheel bandit)")
    bandit.add_argument("--label-column", metavar="NAME", nargs="+", action="extend",
                        help="the column of a CSV file given to --datasets that holds the class labels: one name for "
                             "every CSV file, or one per CSV file in their order in --datasets (repeated or several "
                             "names; bundled data sets take none) (required with a CSV file; default: none)")
    bandit.add_argument("--seeds", type=non_negative_int, nargs="+", default=[0],
                        help="one run per policy, delta or data set, and seed")
    bandit.add_argument("--steps", type=positive_int, default=2000, help="rounds per run")
    bandit.add_argument("--beta", type=finite_float, default=1.0, help="UCB exploration weight (mu + beta * sigma)")
    bandit.add_argument("--commit-every", type=positive_int, metavar="N",
                        help="steps per database transaction; a batch writes faster, but a process killed "
                             "outright loses its uncommitted steps (default: every step)")
    bandit.add_argument("--rerun", action="store_true",
                        help="run again the combinations --db holds completed (the same policy, settings, delta or "
                             "data set, seed and --steps), which are otherwise skipped, so that a sweep run again "
                             "after an interruption runs only the rest, and those still running elsewhere (a Dask "
                             "worker going on with an interrupted sweep's job), which it otherwise waits for")
    bandit.add_argument("--dask-scheduler", metavar="ADDRESS",
                        help="run on the workers of this Dask scheduler (e.g. tcp://10.0.0.5:8786; the 'dask' "
                             "extra) instead of one after another here; --db must reach every worker (a PostgreSQL "
                             "URL across machines; a CSV file's data travels with the runs) (default: run here)")


def run(args: argparse.Namespace) -> int:
    """Run the sweep, each run logged to ``--db``, then say where they are (:func:`results_line`)."""
    from npbandit.loop import run_bandit_sweep

    tasks = _tasks(args)
    # the sweep's tasks[i] is the i-th value of the option that made them
    args.flag_overrides = {"tasks": ("--deltas" if args.datasets is None else "--datasets", True)}
    policies = args.policies or (WHEEL_POLICIES if args.datasets is None else DATASET_POLICIES)
    executor = None
    if args.dask_scheduler is not None:
        from npbandit.cluster import dask_executor

        # connected to by the sweep once it has checked the policies and tasks, so that nothing it refuses
        # reaches the cluster
        executor = functools.partial(dask_executor, args.dask_scheduler)
    run_bandit_sweep(policies, tasks, args.seeds, args.steps, beta=args.beta, db=args.db, progress=progress(),
                     executor=executor, commit_every=args.commit_every, rerun=args.rerun)
    print(results_line(args.db))
    return 0


def _tasks(args: argparse.Namespace) -> list:
    """The sweep's tasks from ``--deltas`` or ``--datasets`` (with ``--label-column``), every
    combination the two cannot make refused naming the options."""
    from npbandit.envs.classification import DATASETS
    from npbandit.loop import csv_task, dataset_task

    if args.datasets is None:
        if args.label_column is not None:
            raise ValueError("--label-column goes with a CSV file given to --datasets (the wheel has no labels)")
        deltas = WHEEL_DELTAS if args.deltas is None else args.deltas
        return [_wheel_task(d) for d in deltas]
    if args.deltas is not None:
        raise ValueError("--deltas is the wheel's, and --datasets plays data sets instead of the wheel: give one of "
                         "them")
    files = [value for value in args.datasets if value not in DATASETS]
    if args.label_column is not None and not files:
        raise ValueError(f"--label-column goes with a CSV file given to --datasets, and {_words(args.datasets)} "
                         f"{'is a bundled data set' if len(args.datasets) == 1 else 'are bundled data sets'}: leave "
                         "--label-column out")
    for value in files:
        if not Path(value).is_file():
            close = difflib.get_close_matches(value, DATASETS, n=1, cutoff=0.6)
            hint = f" -- did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"--datasets: {value!r} is neither a data set ({', '.join(DATASETS)}) nor a file "
                             f"(a CSV file's path){hint}")
    columns = iter(_label_columns(args.label_column, files))  # the i-th CSV file's is the i-th
    tasks = []
    for value in args.datasets:
        if value in DATASETS:
            tasks.append(dataset_task(value))
            continue
        column = next(columns)
        try:
            tasks.append(csv_task(value, column))
        except (OSError, ValueError) as err:
            raise ValueError(f"--datasets {value} --label-column {column}: {err}") from None
    return tasks


def _label_columns(given: list[str] | None, files: list[str]) -> list[str]:
    """The label column of each CSV file of ``--datasets`` (``files``, in order) from
    ``--label-column``: one name for all, or one per file in their order; any other count refused."""
    if not files:
        return []
    if given is None:
        raise ValueError(f"--datasets {files[0]} is a CSV file: --label-column NAME is required, the column that "
                         "holds its class labels")
    if len(given) == 1:
        return given * len(files)
    if len(given) != len(files):
        raise ValueError(f"--label-column gives {len(given)} names ({_words(given)}) for {len(files)} CSV file(s) "
                         f"({_words(files)}): give one name for every CSV file, or one per CSV file in their order in "
                         "--datasets (bundled data sets take none)")
    return given


def _wheel_task(delta: float):
    """:func:`~npbandit.loop.wheel_task` of ``delta``, its range error naming ``--deltas``."""
    from npbandit.loop import wheel_task

    try:
        return wheel_task(delta)
    except ValueError:
        raise ValueError(f"--deltas must be in [0, 1], got {delta}") from None
