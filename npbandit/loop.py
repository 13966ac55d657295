"""The one loop: runs a policy in an environment and hands every step to a logger.

Bandits and BO share it. Each step: ``policy.act(obs)`` -> ``env.step(action)`` ->
``policy.observe(...)`` (NP policies stream the observation in with ``update``) ->
``logger.log_step(...)``. An objective that fails (raises or returns NaN/inf, see
:class:`~npbandit.envs.ObjectiveError`) is recorded as a failed step and either
stops the run with that error (``on_error="raise"``, the default) or is skipped
(``on_error="skip"``): the policy never sees it, so nothing non-finite enters a
surrogate's context.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import gymnasium as gym
from tqdm import tqdm

from npbandit.envs import ObjectiveError
from npbandit.policies.base import Policy
from npbandit.storage import RunLogger

__all__ = ["run_episode", "EpisodeResult"]


@dataclass
class EpisodeResult:
    """What a run produced (the same numbers the logger wrote)."""

    run_id: int | None
    steps: list[dict[str, Any]] = field(default_factory=list)
    cumulative_regret: float = 0.0
    failed_steps: int = 0


def run_episode(env: gym.Env, policy: Policy, *, seed: int, steps: int | None = None,
                logger: RunLogger | None = None, run_info: dict[str, Any] | None = None,
                on_error: str = "raise", progress: bool = False, desc: str | None = None) -> EpisodeResult:
    """Run ``policy`` in ``env`` for ``steps`` steps (default: until the episode truncates).

    Args:
        seed: seeds the environment's reset and the policy.
        logger: where steps go; started here with ``run_info`` (``kind``, ``env_id``,
            ``env_params``) and finished here (``failed`` with the error text if the
            run raises).
        on_error: ``"raise"`` or ``"skip"`` for steps whose objective fails.
    """
    if on_error not in ("raise", "skip"):
        raise ValueError(f"on_error must be 'raise' or 'skip', got {on_error!r}")
    if not isinstance(policy, Policy):
        raise TypeError(f"policy must be an npbandit Policy, got {type(policy).__name__}")
    result = EpisodeResult(run_id=None)
    if logger is not None:
        info = dict(run_info or {})
        result.run_id = logger.start(kind=info.get("kind", "bandit"), env_id=info.get("env_id", str(env.spec.id
                                     if env.spec else type(env).__name__)), env_params=info.get("env_params", {}),
                                     policy=policy.name, policy_params=policy.params(), checkpoint=policy.checkpoint,
                                     seed=seed)
    try:
        obs, _ = env.reset(seed=seed)
        policy.reset(seed)
        horizon = steps if steps is not None else _horizon(env)
        bar = tqdm(total=horizon, desc=desc or policy.name, disable=not progress, leave=False)
        t = 0
        while horizon is None or t < horizon:
            t0 = time.perf_counter()
            action = policy.act(obs)
            t1 = time.perf_counter()
            try:
                next_obs, reward, terminated, truncated, info = env.step(action)
            except ObjectiveError:
                result.failed_steps += 1
                row = dict(t=t, action=action, reward=None, regret=None, cumulative_regret=None, failed=True,
                           value=None, act_s=t1 - t0, env_s=time.perf_counter() - t1, observe_s=0.0)
                result.steps.append(row)
                if logger is not None:
                    logger.log_step(**row)
                if on_error == "raise":
                    raise
                t += 1  # the failed evaluation still spends budget
                bar.update(1)
                continue
            t2 = time.perf_counter()
            policy.observe(obs, action, reward, info)
            t3 = time.perf_counter()
            regret = info.get("regret")
            if regret is not None:
                result.cumulative_regret += regret
            row = dict(t=t, action=action, reward=float(reward), regret=regret,
                       cumulative_regret=result.cumulative_regret if regret is not None else None,
                       expected_regret=info.get("expected_regret"), value=info.get("value"),
                       best_value=info.get("best_value"), failed=False, act_s=t1 - t0, env_s=t2 - t1,
                       observe_s=t3 - t2)
            result.steps.append(row)
            if logger is not None:
                logger.log_step(**row)
            obs = next_obs
            t += 1
            bar.update(1)
            if terminated or truncated:
                break
        bar.close()
    except BaseException as err:
        if logger is not None:
            logger.finish("failed", f"{type(err).__name__}: {err}")
        raise
    if logger is not None:
        logger.finish("completed")
    return result


def _horizon(env: gym.Env) -> int | None:
    base = env.unwrapped
    return getattr(base, "horizon", None) or getattr(base, "budget", None)
