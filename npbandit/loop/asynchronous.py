"""The asynchronous loop (``run_episode(executor=..., batch_size=q)``).

Up to ``q`` evaluations run at once
on a :class:`concurrent.futures.Executor`; each proposal sees the points still in flight
(``policy.act(obs, pending=...)``). The env is stepped only through ``env.step(action)``:
for the run, the :class:`~npbandit.envs.BlackBoxEnv`'s ``evaluator`` is an
:class:`~npbandit.envs.evaluation.AsyncEvaluator`, which runs the objective on the
executor's workers and hands each finished evaluation to ``step`` (the caller's evaluator
is put back after). Steps are recorded in the order evaluations finish, ``t`` counting
them, with the worker and the submit / finish times. An evaluation that outlives
``eval_timeout`` seconds is recorded as failed (its worker is not stopped: no executor can
stop a running call; its result, if it ever comes, is dropped). An evaluation the executor
failed because it cannot send the objective to its workers at all (a lambda on a process
pool) stops the run there, written as failed, whatever ``on_error``: every other would fail
the same way.
"""

from __future__ import annotations

import concurrent.futures as cf
import datetime as dt
import time
from collections.abc import Callable
from typing import Any

import gymnasium as gym

from npbandit.envs.blackbox import BlackBoxEnv
from npbandit.envs.evaluation import AsyncEvaluator, Evaluation
from npbandit.loop.records import EpisodeResult, _Clock, _record_evaluation
from npbandit.policies.base import Policy
from npbandit.stopping import RunInterrupted, StopSignals
from npbandit.storage import RunLogger
from npbandit.validation import check_int


def _check_async(executor: Any, batch_size: Any, eval_timeout: Any) -> int:
    """Check the arguments of the asynchronous loop; ``batch_size`` as an int (a NumPy integer too)."""
    batch_size = check_int("batch_size", batch_size, minimum=1)
    if executor is not None and not isinstance(executor, cf.Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}")
    if batch_size > 1 and executor is None:
        raise ValueError(f"batch_size={batch_size} needs an executor to run the evaluations on")
    if eval_timeout is not None:
        if executor is None:
            raise ValueError("eval_timeout needs an executor (a sequential evaluation cannot be abandoned)")
        if isinstance(eval_timeout, bool) or not isinstance(eval_timeout, (int, float)) or not eval_timeout > 0:
            raise ValueError(f"eval_timeout must be a positive number of seconds or None, got {eval_timeout!r}")
    return batch_size


def _run_async(env: gym.Env, policy: Policy, obs: Any, horizon: int | None, logger: RunLogger | None,
               on_error: str, result: EpisodeResult, signals: StopSignals, bar: Any, executor: cf.Executor,
               batch_size: int, eval_timeout: float | None,
               stop: Callable[[EpisodeResult], bool] | None = None) -> None:
    """The asynchronous loop: an :class:`~npbandit.envs.evaluation.AsyncEvaluator` runs the
    objective on ``executor`` and hands each finished evaluation to ``env.step``. Once
    ``stop(result)`` is true nothing more is submitted; what is in flight is written."""
    import numpy as np

    base: BlackBoxEnv = env.unwrapped  # type: ignore[assignment]  # run_episode checked it
    budget = base.budget if horizon is None else min(horizon, base.budget)
    evaluator = AsyncEvaluator(executor, timeout=eval_timeout)
    act_s: dict[Evaluation, float] = {}
    clock = _Clock()
    submitted = 0
    stopping, at_stop = False, 0
    previous, base.evaluator = base.evaluator, evaluator
    try:
        while (submitted < budget and not stopping) or evaluator.in_flight:
            while submitted < budget and not stopping and len(evaluator.in_flight) < batch_size:
                inflight = evaluator.in_flight
                pending = np.array([e.action for e in inflight]).reshape(len(inflight), base.dim)
                t0 = time.perf_counter()
                action = np.asarray(policy.act(obs, pending=pending) if inflight else policy.act(obs),
                                    dtype=np.float64)
                act_s[evaluator.submit(base, action)] = time.perf_counter() - t0
                submitted += 1
            for evaluation in evaluator.wait():
                # an executor that cannot send the objective fails every evaluation: stop at the first
                failing = "raise" if _unsendable(evaluation) else on_error
                obs = _record_async(env, evaluator, policy, obs, evaluation, act_s.pop(evaluation), logger,
                                    failing, result, signals, clock)
                bar.update(1)
                if stop is not None and stop(result) and not stopping:  # asked after every write
                    stopping, at_stop = True, result.n_steps
                    result.stop_early(budget)
        if stopping and result.n_steps > at_stop:  # what was in flight then came back and was written too
            late = result.n_steps - at_stop
            result.stopped_early += f"; {late} evaluation{'' if late == 1 else 's'} in flight then, written too"
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


def _unsendable(evaluation: Evaluation) -> bool:
    """Whether ``evaluation`` failed because its executor cannot send the objective to its
    workers (:attr:`~npbandit.envs.evaluation.ExecutorFailure.unsendable`): no evaluation
    there can pass, so ``on_error="skip"`` would only spend the budget on failures."""
    outcome = evaluation.outcome
    return outcome is not None and not outcome.ok and getattr(outcome.value, "unsendable", False) is True


def _record_async(env: gym.Env, evaluator: AsyncEvaluator, policy: Policy, obs: Any, evaluation: Evaluation,
                  act_s: float, logger: RunLogger | None, on_error: str, result: EpisodeResult,
                  signals: StopSignals, clock: _Clock) -> Any:
    """Step ``env`` with one finished evaluation and write it (the next ``t``), stop signals
    held from here (its objective has returned) until it is written; then observe it.
    Returns the new obs."""
    env_s = time.perf_counter() - evaluation.submitted
    times = dict(worker=evaluation.outcome.worker, submitted_at=evaluation.submitted_at,
                 finished_at=dt.datetime.now(dt.UTC))
    obs, _ = _record_evaluation(env, policy, obs, evaluation.action, lambda: evaluator.hand_over(evaluation), act_s,
                                env_s, times, logger, on_error, result, signals, clock)
    return obs
