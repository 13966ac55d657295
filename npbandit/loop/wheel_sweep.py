"""The wheel-bandit sweep: :func:`run_wheel_bandits`, runs of :func:`~npbandit.loop.episode.run_episode`
for every policy x ``delta`` x seed, each logged to a database, here or on an executor, less
those the database holds completed already. The sweep behind ``npbandit bandit`` and
``npbandit demo``."""

from __future__ import annotations

import concurrent.futures as cf
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium as gym

from npbandit.loop.env_params import _env_params
from npbandit.loop.episode import run_episode
from npbandit.loop.records import EpisodeResult
from npbandit.storage import DEFAULT_URL, RunLogger, RunRow, completed_runs, display_url, run_key, run_totals
from npbandit.validation import check_bool, check_int, check_real

__all__ = ["run_wheel_bandits"]


def run_wheel_bandits(policies: Sequence[str], deltas: Sequence[float], seeds: Sequence[int], steps: int, *,
                      beta: float = 1.0, db: str = DEFAULT_URL, progress: bool = False,
                      say: Callable[[str], None] | None = print,
                      executor: cf.Executor | None = None,
                      commit_every: int | None = None, rerun: bool = False) -> list[EpisodeResult]:
    """Wheel-bandit runs for every ``delta`` x ``seed`` x policy, each logged to ``db``; those
    ``db`` holds completed already are not run again.

    The sweep behind ``npbandit bandit`` and ``npbandit demo``. Every policy name is
    checked before any run starts. Without ``executor`` the runs go one after another
    here, each policy built once and reset per run; with one, each run is a job on the
    executor (:func:`npbandit.cluster.run_jobs`: a Dask cluster's workers, a process pool),
    building its policy there, and gives the same steps as run here with its seed.

    A sweep run again after an interruption goes on where it stopped: a run is skipped when
    ``db`` holds a completed run of the same policy with the same settings (its name, its
    ``params()`` and checkpoint: another ``beta`` or a retrained checkpoint is another run),
    ``delta``, seed and ``steps`` (:func:`npbandit.storage.completed_runs`), and ``say`` hears
    how many were skipped. A run that was interrupted, failed or is still running is run
    again, as a new run. ``rerun=True`` runs every combination again, completed or not.

    Args:
        policies: names for :func:`npbandit.policies.make_bandit_policy` (``uniform``,
            ``linucb``, ``gp-ucb``, ``<checkpoint>[-ucb|-thompson|-marginal-thompson]``).
        deltas: wheel radii in ``[0, 1]``; seeds: one run per seed (the same reward
            table for every policy); steps: rounds per run.
        beta: UCB exploration weight; db: SQLAlchemy URL / SQLite path (with an
            executor, one that every worker reaches: a relative SQLite path is made absolute,
            :func:`npbandit.storage.shared_url`).
        say: called with one line per finished run (``None``: silent).
        executor: where the runs go (``None``: in this process, one after another).
        commit_every: steps per database transaction (``None``: the storage default,
            every step, so a killed process loses at most the step in flight). A batch
            writes faster but a SIGKILL loses its uncommitted steps
            (:class:`~npbandit.storage.RunLogger`).
        rerun: run the combinations ``db`` holds completed too (default: skip them).

    Returns:
        the results in run order (deltas, then seeds, then policies), whatever the order
        they finished in: run id, cumulative regret and failed steps, with ``steps``
        empty -- every step is in ``db`` (:func:`npbandit.storage.run_steps`). A skipped
        combination's result is the completed run found, read back from ``db``.

    Raises:
        ValueError / TypeError / FileNotFoundError: an unknown policy name, an unusable
            checkpoint, a ``delta`` outside ``[0, 1]``, a seed that is not a
            non-negative int, ``steps`` < 1, ``beta`` < 0, ``commit_every`` < 1, or a ``db``,
            ``progress``, ``rerun`` or ``say`` of the wrong type, before anything runs or any
            database is created.
    """
    from npbandit.policies import make_bandit_policy
    from npbandit.policies.bandit import check_bandit_policy_name

    for what, values in (("policies", policies), ("deltas", deltas), ("seeds", seeds)):
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
            raise TypeError(f"{what} must be a sequence (a list or tuple), got {type(values).__name__} {values!r}")
        if not values:
            raise ValueError(f"{what} is empty: nothing would run")
    # fail fast, before any run: a sweep would otherwise stop at its first bad entry with runs already logged
    for name in policies:
        check_bandit_policy_name(name)
    deltas = [check_real(f"deltas[{i}]", d, low=0.0, high=1.0) for i, d in enumerate(deltas)]
    seeds = [check_int(f"seeds[{i}]", s, minimum=0) for i, s in enumerate(seeds)]
    steps = check_int("steps", steps, minimum=1)
    beta = check_real("beta", beta, low=0.0)
    if not isinstance(db, str) or not db:
        raise TypeError(f"db must be an SQLAlchemy URL or a file path, got {db!r}")
    check_bool("progress", progress)
    check_bool("rerun", rerun)
    if commit_every is not None:
        commit_every = check_int("commit_every", commit_every, minimum=1)
    if say is not None and not callable(say):
        raise TypeError(f"say must be callable or None, got {type(say).__name__}")
    jobs = [(name, delta, seed) for delta in deltas for seed in seeds for name in policies]

    def tell(result: EpisodeResult, name: str, delta: float, seed: int) -> None:
        if say is not None:
            regret = "n/a" if result.cumulative_regret is None else f"{result.cumulative_regret:.1f}"
            say(f"run {result.run_id}: {name:<22} delta={delta} seed={seed}  "
                f"cumulative regret {regret} over {steps} steps")

    # built here even for an executor's sweep: a completed run is found by its policy's settings
    built = {name: make_bandit_policy(name, beta=beta) for name in policies} if executor is None or not rerun else {}
    envs = {delta: gym.make("npbandit/WheelBandit-v0", delta=delta, horizon=steps) for delta in deltas}
    results: list[EpisodeResult | None] = [None] * len(jobs)
    if not rerun:
        done = completed_runs(db, kind="bandit")
        for i, (name, delta, seed) in enumerate(jobs):
            row = done.get(_wheel_key(built[name], envs[delta], delta, seed, steps))
            if row is not None:
                results[i] = _stored_result(db, row)
        skipped = sum(r is not None for r in results)
        if skipped and say is not None:
            say(f"skipping {skipped} of {len(jobs)} runs: {display_url(db)} holds them completed (the same policy, "
                "settings, delta, seed and steps); rerun=True (npbandit bandit --rerun) runs them again")
    pending = [i for i, result in enumerate(results) if result is None]
    if executor is not None:
        from npbandit.cluster import run_jobs
        from npbandit.storage import shared_url

        db = shared_url(db)
        if pending:
            for k, result in run_jobs(_wheel_run, [(*jobs[i], steps, beta, db, commit_every) for i in pending],
                                      executor, desc="wheel runs", progress=progress):
                results[pending[k]] = result
                tell(result, *jobs[pending[k]])
        return results  # type: ignore[return-value]  # every slot is filled once run_jobs is through
    for i in pending:
        name, delta, seed = jobs[i]
        logger = RunLogger(db, commit_every=commit_every)
        # the steps are in the database: a long run keeps none in memory
        results[i] = run_episode(envs[delta], built[name], seed=seed, logger=logger,
                                 run_info=_wheel_info(delta, steps), progress=progress,
                                 desc=f"{name} delta={delta} seed={seed}", keep_steps=False)
        tell(results[i], name, delta, seed)
    return results  # type: ignore[return-value]  # every slot is filled: found completed, or run


def _wheel_info(delta: float, steps: int) -> dict[str, Any]:
    return {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": delta, "horizon": steps}}


def _wheel_key(policy: Any, env: gym.Env, delta: float, seed: int, steps: int) -> str:
    """The :func:`~npbandit.storage.run_key` of the run ``run_episode`` would log for ``policy``
    on ``env`` with this seed: what it records of both, as it records them."""
    info = _wheel_info(delta, steps)
    return run_key(kind=info["kind"], env_id=info["env_id"], env_params=_env_params(env, info), policy=policy.name,
                   policy_params=policy.params(), checkpoint=policy.checkpoint, seed=seed, n_steps=steps)


def _stored_result(db: str, row: RunRow) -> EpisodeResult:
    """A completed run of ``db`` as the sweep's result for it: its id, steps, cumulative
    regret and failed steps, counted in the database (its steps stay there)."""
    regret, failed = run_totals(db, row.id)
    return EpisodeResult(row.id, cumulative_regret=regret, failed_steps=failed, n_steps=row.n_steps, keep_steps=False)


def _wheel_run(name: str, delta: float, seed: int, steps: int, beta: float, db: str,
               commit_every: int | None) -> EpisodeResult:
    """One run of :func:`run_wheel_bandits`' sweep, on an executor's worker."""
    from npbandit.policies import make_bandit_policy

    env = gym.make("npbandit/WheelBandit-v0", delta=delta, horizon=steps)
    return run_episode(env, make_bandit_policy(name, beta=beta), seed=seed,
                       logger=RunLogger(db, commit_every=commit_every), run_info=_wheel_info(delta, steps),
                       keep_steps=False)
