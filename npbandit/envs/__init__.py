"""Gymnasium environments, registered on import by entry point (the module defining an
environment is imported when ``gymnasium.make`` first makes it, not here):

- ``npbandit/WheelBandit-v0`` -- :class:`~npbandit.envs.wheel.WheelBanditEnv`;
- ``npbandit/LinearBandit-v0`` -- :class:`~npbandit.envs.linear.LinearBanditEnv`, a linear
  contextual bandit of any context width and arm count;
- ``npbandit/ClassificationBandit-v0`` -- :class:`~npbandit.envs.classification.ClassificationBanditEnv`,
  a labelled data set as a bandit (each class an arm; ``dataset=`` names a bundled one,
  :func:`~npbandit.envs.classification.read_csv` reads one's own from a CSV file);
- ``npbandit/BlackBox-v0`` -- :class:`~npbandit.envs.blackbox.BlackBoxEnv`, whose objective
  runs where its evaluator says (:mod:`npbandit.envs.evaluation`).

The classes and helpers below are importable from here too; each loads its module
(NumPy, torch, BoTorch for the named test problems) on first use.

Each bandit environment names the parameters that define its task (``TASK_PARAMS``,
``task_params()``: the wheel's ``delta``, a classification data set's name...);
:func:`~npbandit.loop.run_episode` records them in a run's ``env_params`` and ``npbandit
report`` compares only runs of one task (:func:`task_param_names`). A bandit of one's own
is recorded with its shape too (:func:`shape_params`), whatever its ``task_params()`` says.
"""

import importlib
from typing import Any

import gymnasium as gym

from npbandit.exceptions import ObjectiveError

__all__ = ["WheelBanditEnv", "LinearBanditEnv", "ClassificationBanditEnv", "read_csv", "CsvData", "BlackBoxEnv",
           "ObjectiveError", "available_functions", "make_test_function", "objective_value", "problem_objective",
           "AsyncEvaluator", "Evaluation", "Evaluator", "Outcome", "OutcomeRelay", "task_param_names", "shape_params"]

#: each environment id with its ``"module:class"`` entry point
ENTRY_POINTS = {"npbandit/WheelBandit-v0": "npbandit.envs.wheel:WheelBanditEnv",
                "npbandit/LinearBandit-v0": "npbandit.envs.linear:LinearBanditEnv",
                "npbandit/ClassificationBandit-v0": "npbandit.envs.classification:ClassificationBanditEnv",
                "npbandit/BlackBox-v0": "npbandit.envs.blackbox:BlackBoxEnv"}

for _id, _entry in ENTRY_POINTS.items():
    if _id not in gym.registry:
        gym.register(id=_id, entry_point=_entry, disable_env_checker=False)

_CLASSIFICATION = ("ClassificationBanditEnv", "read_csv", "CsvData")
_BLACKBOX = ("BlackBoxEnv", "available_functions", "make_test_function", "objective_value", "problem_objective")
_EVALUATION = ("AsyncEvaluator", "Evaluation", "Evaluator", "Outcome", "OutcomeRelay")


def task_param_names(env_id: str) -> tuple[str, ...] | None:
    """The ``env_params`` that define the task of a run of the environment registered here
    as ``env_id`` (its class's ``TASK_PARAMS``; loads that class's module); ``None`` for an id
    not registered here, or an environment that names none (``BlackBox-v0``, whose problem
    its own fields say).

    Raises:
        TypeError: ``env_id`` is not a str.
    """
    if not isinstance(env_id, str):
        raise TypeError(f"env_id must be a str, got {type(env_id).__name__}")
    entry = ENTRY_POINTS.get(env_id)
    if entry is None:
        return None
    module, name = entry.split(":")
    return getattr(getattr(importlib.import_module(module), name), "TASK_PARAMS", None)


def shape_params(env: gym.Env) -> dict[str, int]:
    """``{"context_dim": d, "n_arms": n}`` of a bandit of one's own (an ``env`` whose
    observation space is a 1-D ``Box`` of width ``d`` and whose action space a ``Discrete(n)``,
    not one of the classes registered here), read from its spaces: what
    :func:`~npbandit.loop.run_episode` adds to such a run's ``env_params``, so that ``npbandit
    report`` never puts runs of two shapes in one row. ``{}`` for any other ``env``: npbandit's
    own bandits record what defines their task (their ``task_params()``: the wheel's shape is
    fixed, a linear bandit records both, a data set fixes both), a black box its dimension."""
    base = env.unwrapped
    if f"{type(base).__module__}:{type(base).__qualname__}" in ENTRY_POINTS.values():
        return {}
    box, arms = env.observation_space, env.action_space
    if not (isinstance(box, gym.spaces.Box) and len(box.shape) == 1 and isinstance(arms, gym.spaces.Discrete)):
        return {}
    return {"context_dim": int(box.shape[0]), "n_arms": int(arms.n)}


def __getattr__(name: str) -> Any:
    if name == "WheelBanditEnv":
        from npbandit.envs import wheel as module
    elif name == "LinearBanditEnv":
        from npbandit.envs import linear as module
    elif name in _CLASSIFICATION:
        from npbandit.envs import classification as module
    elif name in _BLACKBOX:
        from npbandit.envs import blackbox as module
    elif name in _EVALUATION:
        from npbandit.envs import evaluation as module
    else:
        raise AttributeError(f"module 'npbandit.envs' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
