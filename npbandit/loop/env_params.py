"""What a run records of its environment: its ``env_id`` and its ``env_params`` (the problem
``npbandit report`` groups runs by), and the horizon a run takes without ``steps``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym

from npbandit.envs import ENTRY_POINTS, shape_params
from npbandit.envs.blackbox import BlackBoxEnv


def _env_id(env: gym.Env) -> str:
    """A run's ``env_id`` without ``run_info``'s: the registered id (npbandit's too), else the class name."""
    base = type(env.unwrapped)
    entry = f"{base.__module__}:{base.__qualname__}"
    ids = [env_id for env_id, point in ENTRY_POINTS.items() if point == entry]
    return str(env.spec.id) if env.spec is not None else ids[0] if ids else type(env).__name__


def _env_params(env: gym.Env, info: dict[str, Any], async_args: tuple = (None, 1, None)) -> dict[str, Any]:
    """``run_info["env_params"]`` (its values kept), completed with what ``npbandit report``
    groups runs by: a black-box run's problem (objective name, dimension, bounds or search
    space, direction, the objectives' names where they were given, budget, known optimum) and,
    run asynchronously, the evaluations it kept in flight (``batch_size``); the dict an env's
    ``task_params()`` returns (the wheel's ``delta``, a data set's name...); the shape of a
    bandit of one's own (:func:`~npbandit.envs.shape_params`)."""
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
        if base.named_objectives:  # beside minimize's list of directions, what each objective is called
            params.setdefault("objective_names", list(base.objective_names))
        if base.constraints is not None:  # the problem is the objective subject to these
            params.setdefault("constraints", getattr(base.constraints, "__name__", type(base.constraints).__name__))
    return params



def _horizon(env: gym.Env) -> int | None:
    base = env.unwrapped
    return getattr(base, "horizon", None) or getattr(base, "budget", None)


def _check_steps_within_episode(env: gym.Env, steps: int) -> None:
    """Refuse ``steps`` beyond the steps the environment declares its episode has -- its
    ``horizon`` (a black-box environment's ``budget``) or Gymnasium's ``max_episode_steps``
    -- since the episode truncates there and the run would end, ``completed``, short of
    the steps asked for. An attribute of that name that is no int says nothing."""
    declared = "horizon" if getattr(env.unwrapped, "horizon", None) else "budget"
    for what, limit in ((declared, _horizon(env)),
                        ("max_episode_steps", None if env.spec is None else env.spec.max_episode_steps)):
        if isinstance(limit, int) and not isinstance(limit, bool) and steps > limit:
            raise ValueError(f"steps={steps} is more than the {limit} steps of env's episode (its {what}; the "
                             f"episode truncates there): pass steps <= {limit}, or build the environment for "
                             f"{steps} steps")

