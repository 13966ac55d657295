"""Bandit sweeps: :func:`run_bandit_sweep`, runs of :func:`~npbandit.loop.episode.run_episode`
for every policy x task (:class:`~npbandit.loop.bandit_tasks.BanditTask`: the wheel at a
``delta``, a data set) x seed, each logged to a database, here or on an executor, less those
the database holds completed already; :func:`run_wheel_bandits`, the sweep over the wheel's
``delta`` values. The sweeps behind ``npbandit bandit`` and ``npbandit demo``."""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import os
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.loop.bandit_tasks import BanditTask, exact_delta, wheel_task
from npbandit.loop.env_params import _env_params
from npbandit.loop.episode import run_episode
from npbandit.loop.records import EpisodeResult
from npbandit.storage import (
    DEFAULT_URL,
    RunLogger,
    RunMadeElsewhere,
    RunRow,
    display_url,
    run_key,
    run_totals,
    runs_by_key,
)
from npbandit.validation import check_bool, check_int, check_real, check_seed

__all__ = ["LIVE_POLL_S", "run_bandit_sweep", "run_wheel_bandits"]

#: seconds between two looks at the database while a sweep waits for runs still running elsewhere
#: (read from this module when used)
LIVE_POLL_S = 10.0


def run_wheel_bandits(policies: Sequence[str], deltas: Sequence[float], seeds: Sequence[int], steps: int, *,
                      beta: float = 1.0, db: str | os.PathLike[str] = DEFAULT_URL, progress: bool = False,
                      say: Callable[[str], None] | None = print,
                      executor: cf.Executor | Callable[[], AbstractContextManager[cf.Executor]] | None = None,
                      commit_every: int | None = None, rerun: bool = False) -> list[EpisodeResult]:
    """Wheel-bandit runs for every ``delta`` x ``seed`` x policy, each logged to ``db``; those
    ``db`` holds completed already are not run again: :func:`run_bandit_sweep` over
    :func:`~npbandit.loop.bandit_tasks.wheel_task` of each ``delta``.

    The sweep behind ``npbandit demo`` (and ``npbandit bandit`` without ``--dataset``).
    ``deltas`` are wheel radii in ``[0, 1]`` (a list, tuple or 1-D NumPy array); every other
    argument, the results and the errors are :func:`run_bandit_sweep`'s (a ``delta`` outside
    ``[0, 1]``, or a NumPy float narrower than float64 whose value is not the decimal it prints
    as, ``np.float32(0.9)``, is a ``ValueError`` naming ``deltas[i]``, before anything runs:
    :func:`~npbandit.loop.bandit_tasks.exact_delta`).
    """
    deltas = _as_list("deltas", deltas, numbers=True)
    values = [exact_delta(f"deltas[{i}]", d) for i, d in enumerate(deltas)]
    for i, delta in enumerate(values):
        if delta in values[:i]:  # the same task twice: each of its runs would be made, and counted, twice
            raise ValueError(f"deltas[{i}] repeats delta {delta:g}: each delta's runs would be made, and counted, "
                             "twice; give each delta once")
    tasks = [wheel_task(delta) for delta in values]
    return run_bandit_sweep(policies, tasks, seeds, steps, beta=beta, db=db, progress=progress, say=say,
                            executor=executor, commit_every=commit_every, rerun=rerun)


def run_bandit_sweep(policies: Sequence[str], tasks: Sequence[BanditTask], seeds: Sequence[int], steps: int, *,
                     beta: float = 1.0, db: str | os.PathLike[str] = DEFAULT_URL, progress: bool = False,
                     say: Callable[[str], None] | None = print,
                     executor: cf.Executor | Callable[[], AbstractContextManager[cf.Executor]] | None = None,
                     commit_every: int | None = None, rerun: bool = False) -> list[EpisodeResult]:
    """Bandit runs for every task x ``seed`` x policy, each logged to ``db``; those ``db``
    holds completed already are not run again.

    Every task's environment is made, and every policy built for it
    (:func:`npbandit.policies.make_bandit_policy` with ``env=``, or a factory of one's own
    called with the environment), before any run starts, so
    an unknown name or a policy that cannot serve a task (a wheel checkpoint on a data set)
    stops the sweep with nothing run -- nor any cluster reached, when ``executor`` is a
    function that connects to one (see ``executor``). Without ``executor`` the runs go one
    after another here, each (policy, task) pair's policy built once and reset per run; with
    one, each run is a job on the executor (:func:`npbandit.cluster.run_jobs`: a Dask
    cluster's workers, a process pool), building its environment and policy there from the
    task, and gives the same steps as run here with its seed.

    A sweep run again after an interruption goes on where it stopped: a run is skipped when
    ``db`` holds a completed run of the same policy with the same settings (its name, its
    ``params()`` and checkpoint: another ``beta`` or a retrained checkpoint is another run),
    task (the environment and every parameter the run records of it: the wheel's
    ``delta``, a data set's name, a CSV file's path and hash), seed and ``steps``
    (:func:`npbandit.storage.completed_runs`), and ``say`` hears how many were skipped. A
    run that was interrupted or failed is run again, as a new run. One still running
    (:func:`npbandit.storage.running_runs`: a job of the interrupted sweep that a cluster's
    worker went on with, or another process's run) is not started twice: the sweep runs
    everything else, then waits for it, checking every :data:`LIVE_POLL_S` seconds, takes
    it once completed and runs it here if it stops otherwise (a run on another host counts
    as running until its heartbeat is :data:`~npbandit.storage.heartbeat.STALE_AFTER` old).
    Each run the sweep starts claims its start, here or as a job on the executor's worker
    (:class:`~npbandit.storage.RunLogger` ``claim``): a run that another process started
    since the sweep looked (a second sweep of the same runs, here or on a cluster) is found
    as it starts, taken if completed and waited for if running, so two sweeps of the same
    runs at once share them and each run is made once, also when both start it at the same
    moment (SQLite or PostgreSQL; the sweep that loses a claim writes nothing).
    ``rerun=True`` runs every combination again, completed or running, and claims nothing.

    Args:
        policies: names for :func:`npbandit.policies.make_bandit_policy` (``uniform``,
            ``linucb``, ``lin-ts``, ``gp-ucb``, ``<checkpoint>[-ucb|-thompson|-marginal-thompson]``),
            or policies of one's own as factories: a callable ``env -> Policy`` called with
            each task's environment (``beta`` is the named policies' only; a run is
            recorded, and found completed, under the built policy's ``name``, ``params()``
            and ``checkpoint``). With an executor, a factory travels to the workers as the
            executor sends a callable (a process pool: a module-level function or class).
        tasks: the bandits (:func:`~npbandit.loop.bandit_tasks.wheel_task`,
            :func:`~npbandit.loop.bandit_tasks.dataset_task`, :func:`~npbandit.loop.bandit_tasks.csv_task`,
            or a :class:`~npbandit.loop.bandit_tasks.BanditTask` of one's own).
        seeds: one run per seed (the same rounds for every policy): ints >= 0 in a list,
            tuple or ``range``, or a 1-D NumPy int array (``np.arange(10)``); steps: rounds per run.
        beta: UCB exploration weight; db: SQLAlchemy URL / SQLite path, a str or a
            ``pathlib.Path`` (with an executor, one that every worker reaches: a relative
            SQLite path is made absolute, :func:`npbandit.storage.shared_url`).
        progress: a progress bar per run (here) or over the jobs (on an executor).
        say: called with one line per finished run (``None``: silent).
        executor: where the runs go (``None``: in this process, one after another): a
            ``concurrent.futures.Executor``, or a function returning a context manager that
            yields one (``functools.partial(npbandit.cluster.dask_executor, address)``, as
            ``npbandit bandit --dask-scheduler`` passes), which the sweep enters once the
            arguments, tasks and policies are checked and leaves when the runs are through.
        commit_every: steps per database transaction (``None``: the storage default,
            every step, so a killed process loses at most the step in flight). A batch
            writes faster but a SIGKILL loses its uncommitted steps
            (:class:`~npbandit.storage.RunLogger`).
        rerun: run the combinations ``db`` holds completed or running too (default: skip the
            completed ones and wait for the running ones).

    Returns:
        the results in run order (tasks, then seeds, then policies), whatever the order
        they finished in: run id, cumulative regret and failed steps, with ``steps``
        empty -- every step is in ``db`` (:func:`npbandit.storage.run_steps`). A skipped
        combination's result is the completed run found, read back from ``db``.

    Raises:
        ValueError / TypeError / FileNotFoundError: an unknown policy name, an unusable
            checkpoint or one that cannot serve a task, a task that is not a
            ``BanditTask`` or whose environment cannot be made, a seed that is not a
            non-negative int, a seed, policy or task given twice (the same run made
            twice), ``steps`` < 1, ``beta`` < 0, ``commit_every`` < 1, or a
            ``db``, ``progress``, ``rerun``, ``say`` or ``executor`` of the wrong type, before
            anything runs, any database is created or any cluster is reached.
    """
    policies, tasks = _as_list("policies", policies), _as_list("tasks", tasks)
    seeds = _as_list("seeds", seeds, numbers=True)
    for i, spec in enumerate(policies):
        if not (isinstance(spec, str) or callable(spec)):
            raise TypeError(f"policies[{i}] must be a policy name or a factory env -> Policy, got "
                            f"{type(spec).__name__} {spec!r}")
    # fail fast, before any run: a sweep would otherwise stop at its first bad entry with runs already logged
    # (the policy names are checked where they are built below, for each task's shape)
    for i, task in enumerate(tasks):
        if not isinstance(task, BanditTask):
            raise TypeError(f"tasks[{i}] must be a BanditTask (wheel_task, dataset_task, csv_task), "
                            f"got {type(task).__name__}")
    seeds = [check_seed(f"seeds[{i}]", s) for i, s in enumerate(seeds)]
    for i, seed in enumerate(seeds):
        if seed in seeds[:i]:  # a seed's run is the same run again: made twice, a report would count it twice
            raise ValueError(f"seeds[{i}] repeats seed {seed}: each seed's runs would be made, and counted, twice; "
                             "give each seed once")
    steps = check_int("steps", steps, minimum=1)
    beta = check_real("beta", beta, low=0.0)
    if isinstance(db, os.PathLike):  # a file path, as RunLogger and list_runs take it
        db = os.fspath(db)
    if not isinstance(db, str) or not db:
        raise TypeError(f"db must be an SQLAlchemy URL or a file path (a str or os.PathLike), got {db!r}")
    check_bool("progress", progress)
    check_bool("rerun", rerun)
    if commit_every is not None:
        commit_every = check_int("commit_every", commit_every, minimum=1)
    if say is not None and not callable(say):
        raise TypeError(f"say must be callable or None, got {type(say).__name__}")
    if executor is not None and not (isinstance(executor, cf.Executor) or callable(executor)):
        raise TypeError(f"executor must be a concurrent.futures.Executor, a function returning a context manager "
                        f"that yields one, or None, got {type(executor).__name__}")
    jobs = [(j, k, seed) for k in range(len(tasks)) for seed in seeds for j in range(len(policies))]
    untold = 0  # runs of this sweep not yet told (set once the skipped ones are known)
    id_width = 0  # the digits of the largest run id a line is padded to (``run 9: `` as wide as ``run 10:``)

    def tell(result: EpisodeResult, j: int, k: int, seed: int) -> None:
        nonlocal untold, id_width
        name = built[j, k].name
        if not id_width and result.run_id is not None:
            # the ids of the runs still to come follow the first's, barring other writers (which widen it later)
            id_width = len(str(result.run_id + max(untold - 1, 0)))
        id_width = max(id_width, len(str(result.run_id)))
        untold -= 1
        if say is not None:
            regret = "n/a" if result.cumulative_regret is None else f"{result.cumulative_regret:.1f}"
            head = f"run {result.run_id}:".ljust(len("run :") + id_width)
            say(f"{head} {name:<22} {tasks[k].label} seed={seed}  cumulative regret {regret} over {steps} steps")

    envs = [task.make(steps) for task in tasks]
    # built here for an executor's sweep too: a completed run is found by its policy's settings, and an
    # unknown name, or a policy that cannot serve a task, is refused before any run or job starts
    built = {(j, k): _build(spec, beta, env, j) for k, env in enumerate(envs) for j, spec in enumerate(policies)}
    keys = [_run_key(built[j, k], envs[k], tasks[k], seed, steps) for j, k, seed in jobs]
    _refuse_repeated_runs(keys, jobs, policies, built, tasks)
    results: list[EpisodeResult | None] = [None] * len(jobs)
    # one read of the runs: the completed ones (skipped) and those running elsewhere (waited for)
    done, live = ({}, {}) if rerun else runs_by_key(db, kind="bandit")
    if not rerun:
        for i in range(len(jobs)):
            row = done.get(keys[i])
            if row is not None:
                results[i] = _stored_result(db, row)
        skipped = sum(r is not None for r in results)
        if skipped and say is not None:
            varies = {task.what for task in tasks}
            what = varies.pop() if len(varies) == 1 else "task"
            say(f"skipping {skipped} of {len(jobs)} runs: {display_url(db)} holds them completed (the same policy, "
                f"settings, {what}, seed and steps); rerun=True (--rerun on the command line) runs them again")
    pending = [i for i, result in enumerate(results) if result is None]
    untold = len(pending)
    # a run still running elsewhere (the job of an earlier, interrupted sweep that a cluster's worker goes on
    # with; another process's sweep) is not started a second time: the sweep waits for it below
    waiting = {i: live[keys[i]] for i in pending if keys[i] in live}

    def finish(i: int, made: EpisodeResult | RunRow) -> None:
        """Job ``i`` is through: ``made`` is its run's result, or (its claim lost) the run found
        made elsewhere, taken if completed and else waited for with the others below."""
        if isinstance(made, RunRow):
            if made.status != "completed":
                waiting[i] = made
                return
            made = _stored_result(db, made)
        results[i] = made
        tell(made, *jobs[i])

    def run(indices: list[int], executor: cf.Executor | None) -> None:
        if not indices:
            return
        if executor is not None:
            from npbandit.cluster import run_jobs

            # each job claims its start on its worker, as a run here does (below)
            work = [(policies[jobs[i][0]], tasks[jobs[i][1]], jobs[i][2], steps, beta, db, commit_every, not rerun)
                    for i in indices]
            for n, made in run_jobs(_task_run, work, executor, desc="bandit runs", progress=progress):
                finish(indices[n], made)
            return
        for i in indices:
            j, k, seed = jobs[i]
            # each run claims its start: another process (a second sweep of the same runs) may have started it
            # since this sweep looked, and the claim finds it, completed (taken) or running (waited for with the
            # others), however close together the two starts are
            finish(i, _claimed_run(envs[k], built[j, k], tasks[k], seed, steps, db, commit_every, not rerun,
                                   progress=progress, desc=f"{built[j, k].name} {tasks[k].label} seed={seed}"))

    with contextlib.ExitStack() as stack:
        if executor is not None:
            from npbandit.storage import shared_url

            db = shared_url(db)
            if not isinstance(executor, cf.Executor):  # everything above checked: now reach the cluster
                executor = stack.enter_context(executor())
        run([i for i in pending if i not in waiting], executor)
        said: set[int] = set()
        while waiting:
            if say is not None and set(waiting) != said:  # said once, and again when the runs waited for change
                said = set(waiting)
                ids = ", ".join(str(row.id) for row in waiting.values())
                say(f"waiting for {len(waiting)} run(s) still running elsewhere (run {ids}) rather than starting them "
                    f"twice; one that stops without completing is run here")
            time.sleep(LIVE_POLL_S)
            done, live = runs_by_key(db, kind="bandit")
            for i in list(waiting):
                if keys[i] in done:
                    del waiting[i]
                    finish(i, done[keys[i]])
            stopped = [i for i in waiting if keys[i] not in live]
            for i in stopped:
                del waiting[i]
            run(stopped, executor)
    return results  # type: ignore[return-value]  # every slot is filled: found completed, waited for, or run


def _as_list(what: str, values: Any, numbers: bool = False) -> list[Any]:
    """``values`` as a list: a sequence (a list, tuple, ``range``) or, with ``numbers``, a 1-D
    NumPy array too (``np.arange(3)`` as seeds; its entries are checked one by one after);
    ``TypeError`` / ``ValueError`` naming ``what`` for anything else or an empty one."""
    if numbers and isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise ValueError(f"{what} must be 1-D (a list, tuple or 1-D array), got an array of shape {values.shape}")
        values = list(values)  # NumPy scalars, each checked by its entry's name
    kinds = "a list, tuple or 1-D NumPy array" if numbers else "a list or tuple"
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{what} must be a sequence ({kinds}), got {type(values).__name__} {values!r}")
    if not values:
        raise ValueError(f"{what} is empty: nothing would run")
    return list(values)


def _run_key(policy: Any, env: gym.Env, task: BanditTask, seed: int, steps: int) -> str:
    """The :func:`~npbandit.storage.run_key` of the run ``run_episode`` would log for ``policy``
    on ``env`` (made from ``task``) with this seed: what it records of both, as it records them."""
    info = task.run_info(steps)
    return run_key(kind=info["kind"], env_id=info["env_id"], env_params=_env_params(env, info), policy=policy.name,
                   policy_params=policy.params(), checkpoint=policy.checkpoint, seed=seed, n_steps=steps)


def _refuse_repeated_runs(keys: list[str], jobs: list[tuple[int, int, int]], policies: Sequence[Any],
                          built: dict[tuple[int, int], Any], tasks: Sequence[BanditTask]) -> None:
    """Refuse a sweep two of whose jobs are the same run (one :func:`~npbandit.storage.run_key`:
    a policy or a task given twice, or two names of one policy, ``cmanp-bo`` and
    ``cmanp-bo-ucb``): it would be made twice and counted twice by a report."""
    first: dict[str, int] = {}
    for i, key in enumerate(keys):
        if key not in first:
            first[key] = i
            continue
        (j0, k0, _), (j, k, _) = jobs[first[key]], jobs[i]
        if j0 == j:  # one policy, two tasks: the task is given twice (a delta, a data set, one CSV file by two paths)
            raise ValueError(f"tasks[{k0}] {tasks[k0].label} and tasks[{k}] {tasks[k].label} are the same task: "
                             "each of its runs would be made, and counted, twice; give each task once")
        said = [f"policies[{b}] {built[b, t].name if callable(policies[b]) else policies[b]!r} on {tasks[t].label}"
                for b, t in ((j0, k0), (j, k))]
        raise ValueError(f"{said[0]} and {said[1]} are the same run (the same policy, settings and task): it would be "
                         "made, and counted, twice; give each policy and task once")


def _stored_result(db: str, row: RunRow) -> EpisodeResult:
    """A completed run of ``db`` as the sweep's result for it: its id, steps, cumulative
    regret and failed steps, counted in the database (its steps stay there)."""
    regret, failed = run_totals(db, row.id)
    return EpisodeResult(row.id, cumulative_regret=regret, failed_steps=failed, n_steps=row.n_steps, keep_steps=False)


def _build(spec: str | Callable[[gym.Env], Any], beta: float, env: gym.Env, index: int | None = None) -> Any:
    """The policy ``spec`` names (:func:`~npbandit.policies.make_bandit_policy`) or builds (a
    factory called with ``env``), for ``env``; a factory's result that is not a ``Policy`` is
    refused naming ``policies[index]``."""
    from npbandit.policies import make_bandit_policy
    from npbandit.policies.base import Policy

    if isinstance(spec, str):
        return make_bandit_policy(spec, beta=beta, env=env)
    policy = spec(env)
    if not isinstance(policy, Policy):
        where = "a policy factory" if index is None else f"policies[{index}]"
        raise TypeError(f"{where} must return a Policy (npbandit.policies.base.Policy), got {type(policy).__name__}")
    return policy


def _task_run(spec: str | Callable[[gym.Env], Any], task: BanditTask, seed: int, steps: int, beta: float, db: str,
              commit_every: int | None, claim: bool) -> EpisodeResult | RunRow:
    """One run of :func:`run_bandit_sweep`'s sweep, on an executor's worker: its result or,
    with ``claim`` and the run found made elsewhere (:class:`~npbandit.exceptions.RunMadeElsewhere`:
    nothing written), that run, for the sweep to take or wait for. Returned, not raised:
    :func:`~npbandit.cluster.run_jobs` would stop the sweep at the first job that raises."""
    env = task.make(steps)
    return _claimed_run(env, _build(spec, beta, env), task, seed, steps, db, commit_every, claim)


def _claimed_run(env: gym.Env, policy: Any, task: BanditTask, seed: int, steps: int, db: str,
                 commit_every: int | None, claim: bool, **options: Any) -> EpisodeResult | RunRow:
    """One logged run of ``policy`` on ``env`` (``options``: :func:`run_episode`'s progress
    bar), its steps in the database only (a long run keeps none in memory): its result or,
    with ``claim`` and the run found made elsewhere (nothing written), that run."""
    try:
        return run_episode(env, policy, seed=seed, logger=RunLogger(db, commit_every=commit_every, claim=claim),
                           run_info=task.run_info(steps), keep_steps=False, **options)
    except RunMadeElsewhere as elsewhere:
        return elsewhere.run
