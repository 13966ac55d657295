"""Gymnasium environments, registered on import by entry point (the module defining an
environment is imported when ``gymnasium.make`` first makes it, not here):

- ``npbandit/WheelBandit-v0`` -- :class:`~npbandit.envs.wheel.WheelBanditEnv`;
- ``npbandit/LinearBandit-v0`` -- :class:`~npbandit.envs.linear.LinearBanditEnv`, a linear
  contextual bandit of any context width and arm count;
- ``npbandit/ClassificationBandit-v0`` -- :class:`~npbandit.envs.classification.ClassificationBanditEnv`,
  a labelled data set as a bandit (each class an arm; ``dataset=`` names a bundled one);
- ``npbandit/BlackBox-v0`` -- :class:`~npbandit.envs.blackbox.BlackBoxEnv`, whose objective
  runs where its evaluator says (:mod:`npbandit.envs.evaluation`).

The classes and helpers below are importable from here too; each loads its module
(NumPy, torch, BoTorch for the named test problems) on first use.
"""

from typing import Any

import gymnasium as gym

from npbandit.exceptions import ObjectiveError

__all__ = ["WheelBanditEnv", "LinearBanditEnv", "ClassificationBanditEnv", "BlackBoxEnv", "ObjectiveError",
           "available_functions", "make_test_function", "objective_value", "problem_objective", "AsyncEvaluator",
           "Evaluation", "Evaluator", "Outcome", "OutcomeRelay"]

#: each environment id with its ``"module:class"`` entry point
ENTRY_POINTS = {"npbandit/WheelBandit-v0": "npbandit.envs.wheel:WheelBanditEnv",
                "npbandit/LinearBandit-v0": "npbandit.envs.linear:LinearBanditEnv",
                "npbandit/ClassificationBandit-v0": "npbandit.envs.classification:ClassificationBanditEnv",
                "npbandit/BlackBox-v0": "npbandit.envs.blackbox:BlackBoxEnv"}

for _id, _entry in ENTRY_POINTS.items():
    if _id not in gym.registry:
        gym.register(id=_id, entry_point=_entry, disable_env_checker=False)

_BLACKBOX = ("BlackBoxEnv", "available_functions", "make_test_function", "objective_value", "problem_objective")
_EVALUATION = ("AsyncEvaluator", "Evaluation", "Evaluator", "Outcome", "OutcomeRelay")


def __getattr__(name: str) -> Any:
    if name == "WheelBanditEnv":
        from npbandit.envs import wheel as module
    elif name == "LinearBanditEnv":
        from npbandit.envs import linear as module
    elif name == "ClassificationBanditEnv":
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
