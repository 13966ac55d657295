"""The one loop: runs a policy in an environment and hands every step to a logger.

Bandits and BO share it. Each step: ``policy.act(obs)`` -> ``env.step(action)`` (the
evaluation) -> ``logger.log_step(...)`` (the write) -> ``policy.observe(...)`` (NP policies
stream the observation in with ``update``). The step is written before the policy sees it,
so whatever the policy then does (fail, be interrupted) the evaluation is saved; a step's
``observe_s`` is therefore the time the policy spent taking in the evaluation *before* it.
An objective that fails (raises, returns NaN/inf, or returns something other than a number,
see :class:`~npbandit.envs.ObjectiveError`) is recorded as a failed step, with the error's
text (``error``) and how it failed (``error_kind``: the error's
:attr:`~npbandit.exceptions.ObjectiveError.kind`), and either
stops the run with that error (``on_error="raise"``, the default) or is skipped
(``on_error="skip"``): the policy never sees it, so nothing non-finite enters a
surrogate's context. What any environment's ``step`` returns is checked before it is
written: a reward that is no finite real number, an ``info`` that is no dict, or an
``info["regret"]`` / ``info["expected_regret"]`` that is given but no finite real number
ends the run ``failed`` with an error naming it and the step (the regrets are summed, so
a NaN would turn every later cumulative regret into NaN). On an environment whose actions
are arms (a ``Discrete`` action space) the action ``policy.act`` returns is checked before
``env.step`` sees it: an int in the space's range, else the run ends ``failed`` naming the
policy and the step. A value the policy cannot learn
from (``observe`` raises) is saved, and the run ends ``failed`` with a note naming the step.

Stopping a run: SIGINT (Ctrl-C) and SIGTERM stop it between or during steps (an
evaluation in progress is abandoned); every step already taken is committed, the run
is recorded as ``interrupted`` and :class:`RunInterrupted` (a ``KeyboardInterrupt``)
is raised. From the moment an evaluation returns until its step is written a signal is
held (:mod:`npbandit.stopping`), so no returned evaluation is lost and no step is torn;
the message counts the steps the database holds. A ``KeyboardInterrupt`` raised in the run
itself (by the objective, a policy, a ``stop`` rule) stops it the same way, recorded as
``KeyboardInterrupt``, not as a signal (:attr:`RunInterrupted.signum
<npbandit.stopping.RunInterrupted.signum>` ``None``).

Asynchronous BO (``executor=``, ``batch_size=q``): :mod:`npbandit.loop.asynchronous`.
"""

from __future__ import annotations

import concurrent.futures as cf
import time
import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

from npbandit.envs.blackbox import BlackBoxEnv, ObjectiveError
from npbandit.envs.evaluation import Outcome
from npbandit.loop.asynchronous import _check_async, _run_async
from npbandit.loop.env_params import _check_steps_within_episode, _env_id, _env_params, _horizon
from npbandit.loop.records import (
    EpisodeResult,
    _checked_action,
    _Clock,
    _observe,
    _observe_failure,
    _outcomes,
    _params,
    _record,
    _step_outcome,
    _stored_reward,
)
from npbandit.policies.base import Policy, Recommendation
from npbandit.stopping import RunInterrupted, StopSignals, stop_on_signals, stopped_by
from npbandit.storage import RunLogger
from npbandit.validation import check_bool, check_int, check_seed

__all__ = ["run_episode"]


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
            except (Exception, SystemExit) as err:  # noqa: BLE001 - the user's objective: step reports it
                outcome = Outcome(False, err)
        self.signals.hold_step()
        return outcome



def run_episode(env: gym.Env, policy: Policy, *, seed: int, steps: int | None = None,
                logger: RunLogger | None = None, run_info: dict[str, Any] | None = None,
                on_error: str = "raise", progress: bool = False, desc: str | None = None,
                executor: cf.Executor | None = None, batch_size: int = 1,
                eval_timeout: float | None = None, keep_steps: bool = True,
                stop: Callable[[EpisodeResult], bool] | None = None) -> EpisodeResult:
    """Run ``policy`` in ``env`` for ``steps`` steps (default: until the episode truncates).

    Args:
        steps: at most the steps ``env`` declares its episode has (its ``horizon``, a
            black-box environment's ``budget``, Gymnasium's ``max_episode_steps``), where
            the episode truncates; more is refused rather than cut short.
        seed: seeds the environment's reset and the policy.
        logger: where steps go; started here with ``run_info`` (``kind``, ``env_id``,
            ``env_params``, to which a black-box run's problem and the dict an env's
            ``task_params()`` returns are added) and finished here: ``completed``, with
            the policy's recommendation asked for then (``policy.recommend()``;
            :class:`EpisodeResult`); ``interrupted`` on SIGINT / SIGTERM; ``failed`` with
            the error text if the run raises, or if every evaluation failed (``on_error="skip"``).
        on_error: ``"raise"`` or ``"skip"`` for steps whose objective fails.
        executor: a :class:`concurrent.futures.Executor` evaluating a
            :class:`~npbandit.envs.BlackBoxEnv`'s objective asynchronously
            (:mod:`npbandit.loop.asynchronous`); ``None``: the sequential loop.
        batch_size: evaluations kept in flight with ``executor`` (> 1 requires one).
        eval_timeout: seconds after which an evaluation in flight is recorded as failed
            (``executor`` only); ``None``: wait for ever.
        keep_steps: keep every step's record in the result (``EpisodeResult.steps``);
            ``False`` for a long bandit run logged to a database, so that its memory stays
            flat in rounds (about 0.7 KB a step otherwise). A black-box run keeps its steps
            (its result and recommendation are read from them).
        stop: called with the result so far after each step is written and observed (a
            failed one too); when it returns true the episode ends there, ``completed``, and
            the policy's recommendation is asked for as at its end; the result's and the
            database's ``stopped_early`` say so (:attr:`RunRow.stopped_early
            <npbandit.storage.RunRow.stopped_early>`). With ``executor`` no
            further point is proposed, and the evaluations already in flight are waited for
            and written.

    Raises:
        TypeError / ValueError: a bad argument, or an ``env`` whose spaces the policy was
            not built for (``policy.check_spaces``: a bandit policy's arms and context
            width), before anything runs or is logged.
        ValueError: during the run, an action of ``policy`` that is no arm of ``env``'s
            ``Discrete`` action space, or a reward / regret ``env.step`` returned that is no
            finite number (the run is then recorded ``failed``).
        RunInterrupted: SIGINT or SIGTERM arrived (see the module docstring).
        RunMadeElsewhere: ``logger`` claims its run (``RunLogger(claim=True)``) and its
            database holds the same run completed or running: nothing was run or written.
        ObjectiveError: an evaluation failed with ``on_error="raise"``; its ``records`` and
            ``run_id`` are the run's steps so far (the failed one last) and its id.
    """
    _check_on_error(on_error)
    if stop is not None and not callable(stop):
        raise TypeError(f"stop must be callable (the result so far -> bool) or None, got {type(stop).__name__}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be an npbandit Policy, got {type(policy).__name__}")
    if not isinstance(env, gym.Env):
        raise TypeError(f"env must be a gymnasium.Env, got {type(env).__name__}")
    # a NumPy integer as an int: gymnasium's reset refuses one, and SQLite would store its bytes as the seed
    seed = check_seed("seed", seed)
    if steps is not None:
        steps = check_int("steps", steps, minimum=1)
        _check_steps_within_episode(env, steps)
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
    batch_size = _check_async(executor, batch_size, eval_timeout)
    if executor is not None and not isinstance(env.unwrapped, BlackBoxEnv):
        raise TypeError(f"executor needs a BlackBoxEnv (asynchronous BO), got {type(env.unwrapped).__name__}")
    policy.check_spaces(env.observation_space, env.action_space)  # a policy built for another env's shape
    result = EpisodeResult(run_id=None, keep_steps=keep_steps)
    with stop_on_signals() as signals:
        _run(env, policy, seed, steps, logger, dict(run_info or {}), on_error, progress, desc, result, signals,
             (executor, batch_size, eval_timeout), stop)
    return result


def _run(env: gym.Env, policy: Policy, seed: int, steps: int | None, logger: RunLogger | None,
         info: dict[str, Any], on_error: str, progress: bool, desc: str | None, result: EpisodeResult,
         signals: StopSignals, async_args: tuple = (None, 1, None),
         stop: Callable[[EpisodeResult], bool] | None = None) -> None:
    bar = None
    try:
        obs = _start(env, policy, seed, logger, info, result, signals, async_args)
        horizon = steps if steps is not None else _horizon(env)
        bar = tqdm(total=horizon, desc=desc or policy.name, disable=not progress, leave=False)
        if async_args[0] is not None:
            _run_async(env, policy, obs, horizon, logger, on_error, result, signals, bar, *async_args, stop=stop)
        else:
            _run_sequential(env, policy, obs, horizon, logger, on_error, result, signals, bar, stop)
        if not result.n_steps or result.failed_steps < result.n_steps:
            result.recommendation, result.recommended = _recommendation(env, policy, result.steps)
    except BaseException as err:
        interrupted = _end_on_error(err, logger, result, signals)
        if interrupted is not None:
            raise interrupted from None
        raise
    finally:
        if bar is not None:
            bar.close()
    _finish(logger, result, signals)


def _start(env: gym.Env, policy: Policy, seed: int, logger: RunLogger | None, info: dict[str, Any],
           result: EpisodeResult, signals: StopSignals, async_args: tuple = (None, 1, None)) -> Any:
    """Start a run: record it (``result.run_id``, with ``logger``), reset ``env`` and ``policy``
    with ``seed``; returns the env's first observation. ``result.unit``: ``"evaluation"`` for a
    black-box run (``info["kind"] == "bo"``), else ``"step"``."""
    result.unit = "evaluation" if info.get("kind", "bandit") == "bo" else "step"
    if logger is not None:
        with signals.held():
            result.run_id = logger.start(
                kind=info.get("kind", "bandit"),
                env_id=info.get("env_id", _env_id(env)),
                env_params=_env_params(env, info, async_args), policy=policy.name, policy_params=policy.params(),
                checkpoint=policy.checkpoint, seed=seed)
    obs, _ = env.reset(seed=seed)
    policy.reset(seed)
    return obs


def _end_on_error(err: BaseException, logger: RunLogger | None, result: EpisodeResult,
                  signals: StopSignals) -> RunInterrupted | None:
    """Record the run ended by ``err``: ``interrupted`` by a ``KeyboardInterrupt`` (returning the
    :class:`RunInterrupted` to raise in its place, which counts the steps saved, called
    ``result.unit``), else ``failed`` with the error's text (returning ``None``: ``err`` is
    raised as it is). An :class:`ObjectiveError`, or the ``SystemExit`` of an objective that
    exited, gets the run's steps so far (``records``) and its id (``run_id``)."""
    if isinstance(err, (ObjectiveError, SystemExit)) and getattr(err, "records", None) is None:  # they go with it
        err.records, err.run_id = result.steps, result.run_id
    interrupted = isinstance(err, KeyboardInterrupt)
    # a KeyboardInterrupt the run's handler did not raise came from no signal it saw (the objective raised it)
    signum = err.signum if isinstance(err, RunInterrupted) else None
    notes = "".join(f"; {note}" for note in getattr(err, "__notes__", ()))
    status, text = (("interrupted", f"{stopped_by(signum)} after {result.n_steps} {result.unit}(s)")
                    if interrupted else ("failed", f"{type(err).__name__}: {err}{notes}"))
    if logger is not None:
        # a second Ctrl-C while the run is being saved is dropped: saving goes first
        with signals.held(deliver=False):
            try:
                logger.finish(status, text)
            except Exception as save_err:  # noqa: BLE001 - the run's own error stays the one raised
                err.add_note(f"npbandit: could not record run {result.run_id} as {status}: {save_err}")
    if not interrupted:
        return None
    saved = None if logger is None else logger.rows_written
    return RunInterrupted(signum, result.run_id, result.n_steps, saved, result.steps, result.unit)


def _finish(logger: RunLogger | None, result: EpisodeResult, signals: StopSignals) -> None:
    """Record a run that ended without an error: ``failed`` when every evaluation failed
    (nothing to show for it), else ``completed`` with its recommendation and early stop."""
    if logger is None:
        return
    with signals.held():
        if result.n_steps and result.failed_steps == result.n_steps:  # nothing to show for the run
            logger.finish("failed", f"every one of the {result.n_steps} evaluations failed; the last: "
                                    f"{result.last_error}")
        else:
            logger.finish("completed", recommended=result.recommended, stopped_early=result.stopped_early)


def _run_sequential(env: gym.Env, policy: Policy, obs: Any, horizon: int | None, logger: RunLogger | None,
                    on_error: str, result: EpisodeResult, signals: StopSignals, bar: Any,
                    stop: Callable[[EpisodeResult], bool] | None = None) -> None:
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
            action = _checked_action(env.action_space, policy, policy.act(obs), t)
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
                               error=str(err), error_kind=err.kind, **_params(base, action))
                    _record(result, logger, signals, row)
                    if on_error == "raise":
                        raise
                    failed = True
                    clock.observe_s = _observe_failure(policy, obs, action, str(err))
                else:
                    signals.hold_step()
                    failed = False
                    reward, regret = _step_outcome(reward, info, t)
                    if regret is not None:
                        result.cumulative_regret = (result.cumulative_regret or 0.0) + regret
                    row = dict(t=t, action=action, reward=_stored_reward(reward), regret=regret,
                               cumulative_regret=result.cumulative_regret if regret is not None else None,
                               expected_regret=info.get("expected_regret"), value=info.get("value"),
                               best_value=info.get("best_value"), failed=False, act_s=t1 - t0,
                               env_s=time.perf_counter() - t1, observe_s=clock.take(), **_params(base, action),
                               **_outcomes(info))
                    _record(result, logger, signals, row)
            t += 1  # a failed evaluation still spends budget
            bar.update(1)
            if not failed:
                clock.observe_s = _observe(policy, obs, action, reward, info, t - 1, result.run_id)
                obs = next_obs
            if stop is not None and stop(result):
                result.stop_early(horizon)
                break
            if not failed and (terminated or truncated):
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

