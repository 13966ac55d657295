"""What the run loop keeps and writes: a run's result (:class:`EpisodeResult`), each step's
record (what an environment's ``step`` returned, checked first) and its write, and the
policy taking in a step (``observe`` / ``observe_failure``), timed for the next step's
``observe_s``. Shared by the sequential loop
(:mod:`npbandit.loop.episode`) and the asynchronous one (:mod:`npbandit.loop.asynchronous`)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.envs.blackbox import BlackBoxEnv, ObjectiveError
from npbandit.policies.base import Policy, Recommendation
from npbandit.stopping import StopSignals
from npbandit.validation import check_arm, is_real

__all__ = ["EpisodeResult"]


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
    posterior mean there in the objective's units and direction). ``stopped_early``: why the
    run ended before its horizon (``run_episode``'s ``stop`` rule held), else ``None``.
    ``cumulative_regret``: the sum of the steps' ``info["regret"]``; ``None`` when no step
    gave one (an environment that does not know its regret), not 0. ``unit``: what the run's
    end (its stop, an interruption) calls a step: ``"evaluation"`` for a black-box run
    (``kind="bo"``, whose budget counts evaluations), else ``"step"`` (a bandit's ``--steps``)."""

    run_id: int | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    cumulative_regret: float | None = None
    failed_steps: int = 0
    last_error: str | None = None  # the latest failed evaluation's message (``on_error="skip"``)
    recommendation: Recommendation | None = None
    recommended: dict[str, Any] | None = None
    n_steps: int = 0
    stopped_early: str | None = None
    keep_steps: bool = field(default=True, repr=False, compare=False)
    unit: str = field(default="step", repr=False, compare=False)

    def stop_early(self, horizon: int | None) -> None:
        """Record that the run's ``stop`` rule ended it now, out of ``horizon`` steps, named by
        ``unit``: ``stopped_early = "by its stop rule after 13 of 30 evaluations"`` (a bandit
        run: ``"... 13 of 30 steps"``)."""
        self.stopped_early = (f"by its stop rule after {self.n_steps}" + (f" of {horizon}" if horizon is not None
                                                                           else "") + f" {self.unit}s")



@dataclass
class _Clock:
    """The policy's seconds taking in the last evaluation: written as the next step's
    ``observe_s`` (a step is written before the policy sees it)."""

    observe_s: float = 0.0

    def take(self) -> float:
        seconds, self.observe_s = self.observe_s, 0.0
        return seconds


def _record(result: EpisodeResult, logger: Any, signals: StopSignals, row: dict[str, Any]) -> None:
    """Keep a finished step and write it; a signal arriving meanwhile waits until it is written."""
    with signals.held():
        result.n_steps += 1
        if result.keep_steps:
            result.steps.append(row)
        if logger is not None:
            logger.log_step(**row)


def _step_outcome(reward: Any, info: Any, t: int) -> tuple[float | np.ndarray, float | None]:
    """``(reward, regret)`` of what an environment's ``step`` returned at step ``t``,
    checked before the step is written: the reward a finite real number (a 0-d array too; a
    bool, Python's or NumPy's, is a success or not, 1.0 or 0.0), or
    for several objectives a 1-D array of at least two finite real numbers (returned as a
    float64 copy; the step stores the values from ``info["values"]`` and no reward),
    ``info`` a dict whose ``regret`` and ``expected_regret``, when given, are finite real
    numbers. The run sums the regrets, so one NaN would make every later cumulative regret
    NaN (stored as NULL); errors name the value, ``env.step`` and the step."""
    where = f"(env.step at step t={t})"
    if not isinstance(info, dict):
        raise TypeError(f"info must be a dict {where}, got {type(info).__name__}")
    several = isinstance(reward, np.ndarray) and reward.ndim == 1
    if several and (reward.size < 2 or reward.dtype.kind not in "iuf" or not np.isfinite(reward).all()):
        raise ValueError(f"reward must be a finite real number, or for several objectives a 1-D array of at least "
                         f"two finite real numbers {where}, got {reward!r}")
    value = reward.item() if isinstance(reward, np.ndarray) and reward.ndim == 0 else reward
    if isinstance(value, (bool, np.bool_)):  # a success or not (a Bernoulli bandit): pays 1 or 0
        value = float(value)
    if not several and (not is_real(value) or not math.isfinite(value)):
        raise ValueError(f"reward must be a finite real number {where}, got {reward!r}")
    for key in ("regret", "expected_regret"):
        given = info.get(key)
        if given is not None and (not is_real(given) or not math.isfinite(given)):
            raise ValueError(f'info["{key}"] must be a finite real number or absent {where}, got {given!r}')
    regret = info.get("regret")
    return (reward.astype(np.float64) if several else float(value)), None if regret is None else float(regret)


def _stored_reward(reward: float | np.ndarray) -> float | None:
    """What a step's ``reward`` column holds of a checked reward (:func:`_step_outcome`): the
    number, or ``None`` for several objectives' (the step holds their ``values``)."""
    return None if isinstance(reward, np.ndarray) and reward.ndim == 1 else float(reward)


def _checked_action(action_space: Any, policy: Policy, action: Any, t: int) -> Any:
    """The action ``policy.act`` returned at step ``t``, checked before ``env.step`` sees it
    when the environment's actions are arms (a ``Discrete`` action space): an int (a NumPy
    or 0-d array integer too, returned as an int) in the space's range, never a bool. A
    policy of one's own returning -1 would otherwise have an environment that indexes an
    array pay its last arm while the run records -1. Other action spaces (a black-box
    environment's points) pass as they are."""
    if not isinstance(action_space, gym.spaces.Discrete):
        return action
    try:
        return check_arm("action", action, int(action_space.n), int(action_space.start))
    except ValueError:
        raise ValueError(f"policy {policy.name!r} returned {action!r} at step t={t}: an action of this environment is "
                         f"an arm, an int in {action_space.start}..{action_space.start + action_space.n - 1} "
                         f"(env.action_space {action_space})") from None


def _observe(policy: Policy, obs: Any, action: Any, reward: float | np.ndarray, info: dict[str, Any], t: int,
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


def _params(env: Any, action: Any, fixed: dict[str, Any] | None = None) -> dict[str, Any]:
    """A step's ``params``: the evaluated point by name in the user's units (a
    :class:`~npbandit.envs.BlackBoxEnv`'s, :meth:`~npbandit.envs.BlackBoxEnv.params`), with the
    values ``fixed`` (``{name: value}``, held by the caller) set exactly as given, not read back
    through the unit cube, and those values as the step's ``fixed``; none for other environments."""
    if not isinstance(env, BlackBoxEnv):
        return {}
    if not fixed:
        return {"params": env.params(action)}
    return {"params": {**env.params(action), **fixed}, "fixed": dict(fixed)}


def _outcomes(info: dict[str, Any]) -> dict[str, Any]:
    """A step's ``constraints`` and ``values``: the outcome-constraint values an evaluation
    returned (a :class:`~npbandit.envs.BlackBoxEnv` with ``constraints``) and the values of an
    objective of several (one with ``minimize=[...]``); those it has."""
    return {key: info[key] for key in ("constraints", "values") if info.get(key) is not None}


def _record_evaluation(env: gym.Env, policy: Policy, obs: Any, action: np.ndarray, hand_over: Callable[[], None],
                       act_s: float, env_s: float, times: dict[str, Any], logger: Any, on_error: str,
                       result: EpisodeResult, signals: StopSignals, clock: _Clock,
                       fixed: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
    """Record one evaluation of a :class:`~npbandit.envs.BlackBoxEnv` made elsewhere (on an
    executor's worker, or by whoever was told the point): ``hand_over()`` gives the env's
    evaluator the outcome, ``env.step(action)`` judges it, and the step is written as the next
    ``t`` with stop signals held from the hand-over until it is written; then the policy
    observes it (``observe_failure`` for a failed one, which ``on_error="raise"`` raises after
    writing it). ``act_s``, ``env_s``: the seconds spent proposing and evaluating the point;
    ``times``: the step's ``worker``, ``submitted_at`` and ``finished_at``; ``fixed``: the values
    the caller held in the point (``{name: value}``, :func:`_params`), or ``None``. Returns the
    new obs and the step's record."""
    t = result.n_steps
    with signals.step():
        signals.hold_step()
        hand_over()
        try:
            next_obs, reward, _, _, info = env.step(action)
        except ObjectiveError as err:
            result.failed_steps += 1
            result.last_error = str(err)
            row = dict(t=t, action=action, reward=None, regret=None, cumulative_regret=None, failed=True,
                       value=None, act_s=act_s, env_s=env_s, observe_s=clock.take(), error=str(err),
                       error_kind=err.kind, **times, **_params(env.unwrapped, action, fixed))
            _record(result, logger, signals, row)
            if on_error == "raise":
                raise
        else:
            row = dict(t=t, action=action, reward=_stored_reward(reward), regret=info.get("regret"),
                       cumulative_regret=None, expected_regret=info.get("expected_regret"), value=info.get("value"),
                       best_value=info.get("best_value"), failed=False, act_s=act_s, env_s=env_s,
                       observe_s=clock.take(), **times, **_params(env.unwrapped, action, fixed), **_outcomes(info))
            _record(result, logger, signals, row)
    if row["failed"]:
        clock.observe_s = _observe_failure(policy, obs, action, row["error"])
        return obs, row
    clock.observe_s = _observe(policy, obs, action, reward, info, t, result.run_id)
    return next_obs, row
