"""The one loop: runs a policy in an environment and hands every step to a logger.

Bandits and BO share it. Each step: ``policy.act(obs)`` -> ``env.step(action)`` (the
evaluation) -> ``logger.log_step(...)`` (the write) -> ``policy.observe(...)`` (NP policies
stream the observation in with ``update``). The step is written before the policy sees it,
so whatever the policy then does (fail, be interrupted) the evaluation is saved; a step's
``observe_s`` is therefore the time the policy spent taking in the evaluation *before* it.
An objective that fails (raises, returns NaN/inf, or returns something other than a number,
see :class:`~npbandit.envs.ObjectiveError`) is recorded as a failed step and either
stops the run with that error (``on_error="raise"``, the default) or is skipped
(``on_error="skip"``): the policy never sees it, so nothing non-finite enters a
surrogate's context. A value the policy cannot learn from (``observe`` raises) is saved,
and the run ends ``failed`` with a note naming the step.

Stopping a run: SIGINT (Ctrl-C) and SIGTERM stop it between or during steps (an
evaluation in progress is abandoned); every step already taken is committed, the run
is recorded as ``interrupted`` and :class:`RunInterrupted` (a ``KeyboardInterrupt``)
is raised. From the moment an evaluation returns until its step is written a signal is
held (:mod:`npbandit.stopping`), so no returned evaluation is lost and no step is torn;
the message counts the steps the database holds.

Asynchronous BO (``executor=``, ``batch_size=q``): up to ``q`` evaluations run at once
on a :class:`concurrent.futures.Executor`; each proposal sees the points still in flight
(``policy.act(obs, pending=...)``). The env is stepped only through ``env.step(action)``:
for the run, the :class:`~npbandit.envs.BlackBoxEnv`'s ``evaluator`` is an
:class:`~npbandit.envs.evaluation.AsyncEvaluator`, which runs the objective on the
executor's workers and hands each finished evaluation to ``step`` (the caller's evaluator
is put back after). Steps are recorded in the order evaluations finish, ``t`` counting
them, with the worker and the submit / finish times. An evaluation that outlives
``eval_timeout`` seconds is recorded as failed (its worker is not stopped: no executor can
stop a running call; its result, if it ever comes, is dropped).
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import signal
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from npbandit.envs import ENTRY_POINTS, shape_params
from npbandit.envs.blackbox import BlackBoxEnv, ObjectiveError
from npbandit.envs.evaluation import AsyncEvaluator, Evaluation, Outcome
from npbandit.policies.base import Policy, Recommendation
from npbandit.stopping import RunInterrupted, StopSignals, stop_on_signals
from npbandit.storage import DEFAULT_URL, RunLogger
from npbandit.validation import check_bool, check_int, check_real

__all__ = ["run_episode", "run_wheel_bandits", "EpisodeResult", "RunInterrupted", "stop_on_signals"]


class _HoldOnReturn:
    """A :class:`~npbandit.envs.BlackBoxEnv` evaluator for the sequential loop: evaluates as
    ``step`` would (the objective here, or the env's own evaluator) and, as the objective
    returns, starts holding stop signals until the step is written (:meth:`StopSignals.hold_step`).
    A signal while the objective runs still abandons it."""

    def __init__(self, signals: StopSignals, inner: Any) -> None:
        self.signals, self.inner = signals, inner

    def evaluate(self, objective: Callable[[Any], Any], x: Any) -> Outcome:
        if self.inner is not None:
            outcome = self.inner.evaluate(objective, x)
        else:
            try:
                outcome = Outcome(True, objective(x))
            except Exception as err:  # noqa: BLE001 - the user's objective: step reports it as ObjectiveError
                outcome = Outcome(False, err)
        self.signals.hold_step()
        return outcome


def _record(result: EpisodeResult, logger: Any, signals: StopSignals, row: dict[str, Any]) -> None:
    """Keep a finished step and write it; a signal arriving meanwhile waits until it is written."""
    with signals.held():
        result.n_steps += 1
        if result.keep_steps:
            result.steps.append(row)
        if logger is not None:
            logger.log_step(**row)


def _observe(policy: Policy, obs: Any, action: Any, reward: float, info: dict[str, Any], t: int,
             run_id: int | None) -> float:
    """``policy.observe`` the step ``t`` just written; returns the seconds it took. An error
    there (e.g. a value the surrogate cannot standardise) gets a note naming the step, which
    is saved: the run then ends ``failed``."""
    t0 = time.perf_counter()
    try:
        policy.observe(obs, action, reward, info)
    except Exception as err:
        saved = "" if run_id is None else f", which run {run_id} holds"
        err.add_note(f"npbandit: the policy could not take in step t={t}{saved}; the run stopped there")
        raise
    return time.perf_counter() - t0


def _observe_failure(policy: Policy, obs: Any, action: Any, error: str) -> float:
    """``policy.observe_failure`` for an evaluation written as failed (``on_error="skip"``);
    returns the seconds it took."""
    t0 = time.perf_counter()
    policy.observe_failure(obs, action, error)
    return time.perf_counter() - t0


@dataclass
class _Clock:
    """The policy's seconds taking in the last evaluation: written as the next step's
    ``observe_s`` (a step is written before the policy sees it)."""

    observe_s: float = 0.0

    def take(self) -> float:
        seconds, self.observe_s = self.observe_s, 0.0
        return seconds


@dataclass
class EpisodeResult:
    """What a run produced (the same numbers the logger wrote).

    ``steps``: every step's record, in order (empty for a run with ``keep_steps=False``,
    whose steps are in its database only); ``n_steps``: how many steps were taken.
    ``recommendation``: what ``policy.recommend()`` returned when the run completed (``None``:
    no model, see :meth:`Policy.recommend <npbandit.policies.base.Policy.recommend>`);
    ``recommended``: for a black-box run, its record as the logger stored it (``t``: the first
    evaluation of the point, ``None`` for a point the policy was given rather than evaluated
    in the run; ``params``: the point by name in the user's units; ``value``: the model's
    posterior mean there in the objective's units and direction)."""

    run_id: int | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    cumulative_regret: float = 0.0
    failed_steps: int = 0
    last_error: str | None = None  # the latest failed evaluation's message (``on_error="skip"``)
    recommendation: Recommendation | None = None
    recommended: dict[str, Any] | None = None
    n_steps: int = 0
    keep_steps: bool = field(default=True, repr=False, compare=False)


def run_episode(env: gym.Env, policy: Policy, *, seed: int, steps: int | None = None,
                logger: RunLogger | None = None, run_info: dict[str, Any] | None = None,
                on_error: str = "raise", progress: bool = False, desc: str | None = None,
                executor: cf.Executor | None = None, batch_size: int = 1,
                eval_timeout: float | None = None, keep_steps: bool = True) -> EpisodeResult:
    """Run ``policy`` in ``env`` for ``steps`` steps (default: until the episode truncates).

    Args:
        seed: seeds the environment's reset and the policy.
        logger: where steps go; started here with ``run_info`` (``kind``, ``env_id``,
            ``env_params``, to which a black-box run's problem and the dict an env's
            ``task_params()`` returns are added) and finished here: ``completed``, with
            the policy's recommendation asked for then (``policy.recommend()``;
            :class:`EpisodeResult`); ``interrupted`` on SIGINT / SIGTERM; ``failed`` with
            the error text if the run raises, or if every evaluation failed (``on_error="skip"``).
        on_error: ``"raise"`` or ``"skip"`` for steps whose objective fails.
        executor: a :class:`concurrent.futures.Executor` evaluating a
            :class:`~npbandit.envs.BlackBoxEnv`'s objective asynchronously (see the module
            docstring); ``None``: the sequential loop.
        batch_size: evaluations kept in flight with ``executor`` (> 1 requires one).
        eval_timeout: seconds after which an evaluation in flight is recorded as failed
            (``executor`` only); ``None``: wait for ever.
        keep_steps: keep every step's record in the result (``EpisodeResult.steps``);
            ``False`` for a long bandit run logged to a database, so that its memory stays
            flat in rounds (about 0.7 KB a step otherwise). A black-box run keeps its steps
            (its result and recommendation are read from them).

    Raises:
        TypeError / ValueError: a bad argument, or an ``env`` whose spaces the policy was
            not built for (``policy.check_spaces``: a bandit policy's arms and context
            width), before anything runs or is logged.
        RunInterrupted: SIGINT or SIGTERM arrived (see the module docstring).
    """
    _check_on_error(on_error)
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be an npbandit Policy, got {type(policy).__name__}")
    if not isinstance(env, gym.Env):
        raise TypeError(f"env must be a gymnasium.Env, got {type(env).__name__}")
    check_int("seed", seed, minimum=0)
    if steps is not None:
        check_int("steps", steps, minimum=1)
    if logger is not None and not isinstance(logger, RunLogger):
        raise TypeError(f"logger must be a RunLogger or None, got {type(logger).__name__}")
    if run_info is not None and not isinstance(run_info, dict):
        raise TypeError(f"run_info must be a dict or None, got {type(run_info).__name__}")
    check_bool("progress", progress)
    check_bool("keep_steps", keep_steps)
    if not keep_steps and isinstance(env.unwrapped, BlackBoxEnv):
        raise ValueError("keep_steps=False is for bandit runs: a black-box run's result and recommendation are read "
                         "from its steps")
    if desc is not None and not isinstance(desc, str):
        raise TypeError(f"desc must be a str or None, got {type(desc).__name__}")
    _check_async(executor, batch_size, eval_timeout)
    if executor is not None and not isinstance(env.unwrapped, BlackBoxEnv):
        raise TypeError(f"executor needs a BlackBoxEnv (asynchronous BO), got {type(env.unwrapped).__name__}")
    policy.check_spaces(env.observation_space, env.action_space)  # a policy built for another env's shape
    result = EpisodeResult(run_id=None, keep_steps=keep_steps)
    with stop_on_signals() as signals:
        _run(env, policy, seed, steps, logger, dict(run_info or {}), on_error, progress, desc, result, signals,
             (executor, batch_size, eval_timeout))
    return result


def _run(env: gym.Env, policy: Policy, seed: int, steps: int | None, logger: RunLogger | None,
         info: dict[str, Any], on_error: str, progress: bool, desc: str | None, result: EpisodeResult,
         signals: StopSignals, async_args: tuple = (None, 1, None)) -> None:
    bar = None
    try:
        if logger is not None:
            with signals.held():
                result.run_id = logger.start(
                    kind=info.get("kind", "bandit"),
                    env_id=info.get("env_id", _env_id(env)),
                    env_params=_env_params(env, info, async_args), policy=policy.name, policy_params=policy.params(),
                    checkpoint=policy.checkpoint, seed=seed)
        obs, _ = env.reset(seed=seed)
        policy.reset(seed)
        horizon = steps if steps is not None else _horizon(env)
        bar = tqdm(total=horizon, desc=desc or policy.name, disable=not progress, leave=False)
        if async_args[0] is not None:
            _run_async(env, policy, obs, horizon, logger, on_error, result, signals, bar, *async_args)
        else:
            _run_sequential(env, policy, obs, horizon, logger, on_error, result, signals, bar)
        if not result.n_steps or result.failed_steps < result.n_steps:
            result.recommendation, result.recommended = _recommendation(env, policy, result.steps)
    except BaseException as err:
        interrupted = isinstance(err, KeyboardInterrupt)
        signum = err.signum if isinstance(err, RunInterrupted) else signal.SIGINT
        notes = "".join(f"; {note}" for note in getattr(err, "__notes__", ()))
        status, text = (("interrupted", f"{signal.Signals(signum).name} after {result.n_steps} step(s)")
                        if interrupted else ("failed", f"{type(err).__name__}: {err}{notes}"))
        if logger is not None:
            # a second Ctrl-C while the run is being saved is dropped: saving goes first
            with signals.held(deliver=False):
                try:
                    logger.finish(status, text)
                except Exception as save_err:  # noqa: BLE001 - the run's own error stays the one raised
                    err.add_note(f"npbandit: could not record run {result.run_id} as {status}: {save_err}")
        if interrupted:
            saved = None if logger is None else logger.rows_written
            raise RunInterrupted(signum, result.run_id, result.n_steps, saved, result.steps) from None
        raise
    finally:
        if bar is not None:
            bar.close()
    if logger is not None:
        with signals.held():
            if result.n_steps and result.failed_steps == result.n_steps:  # nothing to show for the run
                logger.finish("failed", f"every one of the {result.n_steps} evaluations failed; the last: "
                                        f"{result.last_error}")
            else:
                logger.finish("completed", recommended=result.recommended)


def _run_sequential(env: gym.Env, policy: Policy, obs: Any, horizon: int | None, logger: RunLogger | None,
                    on_error: str, result: EpisodeResult, signals: StopSignals, bar: Any) -> None:
    """The sequential loop: act -> evaluate -> write -> observe, stop signals held from the
    evaluation's return (a :class:`~npbandit.envs.BlackBoxEnv`'s objective returning, or any
    other env's ``step``) until its step is written."""
    base = env.unwrapped
    blackbox = isinstance(base, BlackBoxEnv)
    if blackbox:
        previous, base.evaluator = base.evaluator, _HoldOnReturn(signals, base.evaluator)
    clock = _Clock()
    t = 0
    try:
        while horizon is None or t < horizon:
            t0 = time.perf_counter()
            action = policy.act(obs)
            t1 = time.perf_counter()
            with signals.step():
                try:
                    next_obs, reward, terminated, truncated, info = env.step(action)
                except ObjectiveError as err:
                    signals.hold_step()
                    result.failed_steps += 1
                    result.last_error = str(err)
                    row = dict(t=t, action=action, reward=None, regret=None, cumulative_regret=None, failed=True,
                               value=None, act_s=t1 - t0, env_s=time.perf_counter() - t1, observe_s=clock.take(),
                               error=str(err), **_params(base, action))
                    _record(result, logger, signals, row)
                    if on_error == "raise":
                        raise
                    failed = True
                    clock.observe_s = _observe_failure(policy, obs, action, str(err))
                else:
                    signals.hold_step()
                    failed = False
                    regret = info.get("regret")
                    if regret is not None:
                        result.cumulative_regret += regret
                    row = dict(t=t, action=action, reward=float(reward), regret=regret,
                               cumulative_regret=result.cumulative_regret if regret is not None else None,
                               expected_regret=info.get("expected_regret"), value=info.get("value"),
                               best_value=info.get("best_value"), failed=False, act_s=t1 - t0,
                               env_s=time.perf_counter() - t1, observe_s=clock.take(), **_params(base, action),
                               **_constraints(info))
                    _record(result, logger, signals, row)
            t += 1  # a failed evaluation still spends budget
            bar.update(1)
            if failed:
                continue
            clock.observe_s = _observe(policy, obs, action, reward, info, t - 1, result.run_id)
            obs = next_obs
            if terminated or truncated:
                break
    finally:
        if blackbox:
            base.evaluator = previous


def _recommendation(env: gym.Env, policy: Policy,
                    steps: list[dict[str, Any]]) -> tuple[Recommendation | None, dict[str, Any] | None]:
    """``policy.recommend()`` as a run completes and, for a black-box run, the record stored of
    it (:class:`EpisodeResult`). A recommendation that cannot be made (the model fails) is a
    warning, not a failed run: the evaluations are the run's result."""
    try:
        found = policy.recommend()
    except Exception as err:  # noqa: BLE001 - reported, and the run keeps its evaluations
        warnings.warn(f"npbandit: the run completed, but its model's recommendation failed ({type(err).__name__}: "
                      f"{err}); none is recorded", RuntimeWarning, stacklevel=4)
        return None, None
    base = env.unwrapped
    if found is None or not isinstance(base, BlackBoxEnv):
        return found, None
    action = np.asarray(found.action, dtype=np.float64)
    t = next((s["t"] for s in steps if not s["failed"] and np.array_equal(np.asarray(s["action"]), action)), None)
    value = -found.reward if base.minimize else found.reward
    return found, {"t": t, "params": base.params(action), "value": float(value)}


def _check_on_error(on_error: Any) -> str:
    """``on_error`` checked: ``"raise"`` or ``"skip"`` (what :func:`run_episode` does with a failed evaluation)."""
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    return on_error


def _check_async(executor: Any, batch_size: Any, eval_timeout: Any) -> None:
    if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError(f"batch_size must be an int >= 1, got {batch_size!r}")
    if executor is not None and not isinstance(executor, cf.Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}")
    if batch_size > 1 and executor is None:
        raise ValueError(f"batch_size={batch_size} needs an executor to run the evaluations on")
    if eval_timeout is not None:
        if executor is None:
            raise ValueError("eval_timeout needs an executor (a sequential evaluation cannot be abandoned)")
        if isinstance(eval_timeout, bool) or not isinstance(eval_timeout, (int, float)) or not eval_timeout > 0:
            raise ValueError(f"eval_timeout must be a positive number of seconds or None, got {eval_timeout!r}")


def _run_async(env: gym.Env, policy: Policy, obs: Any, horizon: int | None, logger: RunLogger | None,
               on_error: str, result: EpisodeResult, signals: StopSignals, bar: Any, executor: cf.Executor,
               batch_size: int, eval_timeout: float | None) -> None:
    """The asynchronous loop: an :class:`~npbandit.envs.evaluation.AsyncEvaluator` runs the
    objective on ``executor`` and hands each finished evaluation to ``env.step``."""
    import numpy as np

    base: BlackBoxEnv = env.unwrapped  # type: ignore[assignment]  # run_episode checked it
    budget = base.budget if horizon is None else min(horizon, base.budget)
    evaluator = AsyncEvaluator(executor, timeout=eval_timeout)
    act_s: dict[Evaluation, float] = {}
    clock = _Clock()
    submitted = 0
    previous, base.evaluator = base.evaluator, evaluator
    try:
        while submitted < budget or evaluator.in_flight:
            while submitted < budget and len(evaluator.in_flight) < batch_size:
                inflight = evaluator.in_flight
                pending = np.array([e.action for e in inflight]).reshape(len(inflight), base.dim)
                t0 = time.perf_counter()
                action = np.asarray(policy.act(obs, pending=pending) if inflight else policy.act(obs),
                                    dtype=np.float64)
                act_s[evaluator.submit(base, action)] = time.perf_counter() - t0
                submitted += 1
            for evaluation in evaluator.wait():
                obs = _record_async(env, evaluator, policy, obs, evaluation, act_s.pop(evaluation), logger,
                                    on_error, result, signals, clock)
                bar.update(1)
    except RunInterrupted:
        # evaluations that came back before the stop (while a point was proposed, or behind the
        # one whose write delivered the signal) are results: write (and observe) them, then stop
        with signals.held(deliver=False):
            for evaluation in evaluator.finished():
                obs = _record_async(env, evaluator, policy, obs, evaluation, act_s.pop(evaluation), logger,
                                    "skip", result, signals, clock)
        raise
    finally:
        evaluator.cancel()  # queued ones never start; running ones cannot be stopped
        base.evaluator = previous


def _record_async(env: gym.Env, evaluator: AsyncEvaluator, policy: Policy, obs: Any, evaluation: Evaluation,
                  act_s: float, logger: RunLogger | None, on_error: str, result: EpisodeResult,
                  signals: StopSignals, clock: _Clock) -> Any:
    """Step ``env`` with one finished evaluation and write it (the next ``t``), stop signals
    held from here (its objective has returned) until it is written; then observe it.
    Returns the new obs."""
    t = result.n_steps
    env_s = time.perf_counter() - evaluation.submitted
    times = dict(worker=evaluation.outcome.worker, submitted_at=evaluation.submitted_at,
                 finished_at=dt.datetime.now(dt.UTC))
    with signals.step():
        signals.hold_step()
        evaluator.hand_over(evaluation)
        try:
            next_obs, reward, _, _, info = env.step(evaluation.action)
        except ObjectiveError as err:
            result.failed_steps += 1
            result.last_error = str(err)
            row = dict(t=t, action=evaluation.action, reward=None, regret=None, cumulative_regret=None, failed=True,
                       value=None, act_s=act_s, env_s=env_s, observe_s=clock.take(), error=str(err), **times,
                       **_params(env.unwrapped, evaluation.action))
            _record(result, logger, signals, row)
            if on_error == "raise":
                raise
        else:
            row = dict(t=t, action=evaluation.action, reward=float(reward), regret=info.get("regret"),
                       cumulative_regret=None, expected_regret=info.get("expected_regret"), value=info.get("value"),
                       best_value=info.get("best_value"), failed=False, act_s=act_s, env_s=env_s,
                       observe_s=clock.take(), **times, **_params(env.unwrapped, evaluation.action),
                       **_constraints(info))
            _record(result, logger, signals, row)
    if row["failed"]:
        clock.observe_s = _observe_failure(policy, obs, evaluation.action, row["error"])
        return obs
    clock.observe_s = _observe(policy, obs, evaluation.action, reward, info, t, result.run_id)
    return next_obs


def _env_id(env: gym.Env) -> str:
    """A run's ``env_id`` without ``run_info``'s: the registered id (npbandit's too), else the class name."""
    base = type(env.unwrapped)
    entry = f"{base.__module__}:{base.__qualname__}"
    ids = [env_id for env_id, point in ENTRY_POINTS.items() if point == entry]
    return str(env.spec.id) if env.spec is not None else ids[0] if ids else type(env).__name__


def _env_params(env: gym.Env, info: dict[str, Any], async_args: tuple = (None, 1, None)) -> dict[str, Any]:
    """``run_info["env_params"]`` (its values kept), completed with what ``npbandit report``
    groups runs by: a black-box run's problem (objective name, dimension, bounds or search
    space, direction, budget, known optimum) and, run asynchronously, the evaluations it
    kept in flight (``batch_size``); the dict an env's ``task_params()`` returns (the wheel's
    ``delta``, a data set's name...); the shape of a bandit of one's own (:func:`~npbandit.envs.shape_params`)."""
    params = dict(info.get("env_params", {}))
    base = env.unwrapped
    task = base.task_params() if callable(getattr(base, "task_params", None)) else {}
    if not isinstance(task, Mapping):
        raise TypeError(f"{type(base).__name__}.task_params() must return a dict, got {type(task).__name__}")
    params = {**shape_params(env), **task, **params}  # run_info's own values win, then task_params()'s
    if async_args[0] is not None:
        params.setdefault("batch_size", async_args[1])
    if isinstance(base, BlackBoxEnv):
        # a box: its bounds (what reports group runs by) and its space of floats x0 ... x{d-1}; a
        # space: its record alone (SearchSpace.describe, each parameter by name with its type)
        box = () if base.has_space else (("bounds", base.bounds.tolist()),)
        for key, value in (("objective", base.name), ("dim", base.dim), *box, ("space", base.space.describe()),
                           ("minimize", base.minimize), ("budget", base.budget),
                           ("optimal_value", base.optimal_value)):
            params.setdefault(key, value)
        if base.constraints is not None:  # the problem is the objective subject to these
            params.setdefault("constraints", getattr(base.constraints, "__name__", type(base.constraints).__name__))
    return params


def _params(env: Any, action: Any) -> dict[str, Any]:
    """A step's ``params``: the evaluated point by name in the user's units (a
    :class:`~npbandit.envs.BlackBoxEnv`'s, :meth:`~npbandit.envs.BlackBoxEnv.params`); none
    for other environments."""
    return {"params": env.params(action)} if isinstance(env, BlackBoxEnv) else {}


def _constraints(info: dict[str, Any]) -> dict[str, Any]:
    """A step's ``constraints``: the outcome-constraint values an evaluation returned (a
    :class:`~npbandit.envs.BlackBoxEnv` with ``constraints``); none otherwise."""
    return {"constraints": info["constraints"]} if info.get("constraints") is not None else {}


def _horizon(env: gym.Env) -> int | None:
    base = env.unwrapped
    return getattr(base, "horizon", None) or getattr(base, "budget", None)


def run_wheel_bandits(policies: Sequence[str], deltas: Sequence[float], seeds: Sequence[int], steps: int, *,
                      beta: float = 1.0, db: str = DEFAULT_URL, progress: bool = False,
                      say: Callable[[str], None] | None = print,
                      executor: cf.Executor | None = None,
                      commit_every: int | None = None) -> list[EpisodeResult]:
    """Wheel-bandit runs for every ``delta`` x ``seed`` x policy, each logged to ``db``.

    The sweep behind ``npbandit bandit`` and ``npbandit demo``. Every policy name is
    checked before any run starts. Without ``executor`` the runs go one after another
    here, each policy built once and reset per run; with one, each run is a job on the
    executor (:func:`npbandit.cluster.run_jobs`: a Dask cluster's workers, a process pool),
    building its policy there, and gives the same steps as run here with its seed.

    Args:
        policies: names for :func:`npbandit.policies.make_bandit_policy` (``uniform``,
            ``linucb``, ``gp-ucb``, ``<checkpoint>[-ucb|-thompson|-marginal-thompson]``).
        deltas: wheel radii in ``(0, 1)``; seeds: one run per seed (the same reward
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

    Returns:
        the results in run order (deltas, then seeds, then policies), whatever the order
        they finished in: run id, cumulative regret and failed steps, with ``steps``
        empty -- every step is in ``db`` (:func:`npbandit.storage.run_steps`).

    Raises:
        ValueError / TypeError / FileNotFoundError: an unknown policy name, an unusable
            checkpoint, a ``delta`` outside ``[0, 1]``, a seed that is not a
            non-negative int, ``steps`` < 1, ``beta`` < 0, ``commit_every`` < 1, or a ``db``, ``progress`` or
            ``say`` of the wrong type, before anything runs or any database is created.
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
    if commit_every is not None:
        commit_every = check_int("commit_every", commit_every, minimum=1)
    if say is not None and not callable(say):
        raise TypeError(f"say must be callable or None, got {type(say).__name__}")
    jobs = [(name, delta, seed) for delta in deltas for seed in seeds for name in policies]

    def tell(result: EpisodeResult, name: str, delta: float, seed: int) -> None:
        if say is not None:
            say(f"run {result.run_id}: {name:<22} delta={delta} seed={seed}  "
                f"cumulative regret {result.cumulative_regret:.1f} over {steps} steps")

    if executor is not None:
        from npbandit.cluster import run_jobs
        from npbandit.storage import shared_url

        db = shared_url(db)
        results: list[EpisodeResult | None] = [None] * len(jobs)
        for i, result in run_jobs(_wheel_run, [(*job, steps, beta, db, commit_every) for job in jobs], executor,
                                  desc="wheel runs", progress=progress):
            results[i] = result
            tell(result, *jobs[i])
        return results  # type: ignore[return-value]  # every slot is filled once run_jobs is through
    built = {name: make_bandit_policy(name, beta=beta) for name in policies}
    results = []
    for delta in deltas:
        env = gym.make("npbandit/WheelBandit-v0", delta=delta, horizon=steps)
        for seed in seeds:
            for name, policy in built.items():
                logger = RunLogger(db, commit_every=commit_every)
                # the steps are in the database: a long run keeps none in memory
                result = run_episode(env, policy, seed=seed, logger=logger, run_info=_wheel_info(delta, steps),
                                     progress=progress, desc=f"{name} delta={delta} seed={seed}", keep_steps=False)
                results.append(result)
                tell(result, name, delta, seed)
    return results


def _wheel_info(delta: float, steps: int) -> dict[str, Any]:
    return {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": delta, "horizon": steps}}


def _wheel_run(name: str, delta: float, seed: int, steps: int, beta: float, db: str,
               commit_every: int | None) -> EpisodeResult:
    """One run of :func:`run_wheel_bandits`' sweep, on an executor's worker."""
    from npbandit.policies import make_bandit_policy

    env = gym.make("npbandit/WheelBandit-v0", delta=delta, horizon=steps)
    return run_episode(env, make_bandit_policy(name, beta=beta), seed=seed,
                       logger=RunLogger(db, commit_every=commit_every), run_info=_wheel_info(delta, steps),
                       keep_steps=False)
