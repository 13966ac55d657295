"""Gymnasium environments, registered on import:

- ``npbandit/WheelBandit-v0`` -- :class:`~npbandit.envs.wheel.WheelBanditEnv`;
- ``npbandit/BlackBox-v0`` -- :class:`~npbandit.envs.blackbox.BlackBoxEnv`, whose objective
  runs where its evaluator says (:mod:`npbandit.envs.evaluation`).
"""

import gymnasium as gym

from npbandit.envs.blackbox import (BlackBoxEnv, ObjectiveError, available_functions, make_test_function,
                                   objective_value, problem_objective)
from npbandit.envs.evaluation import AsyncEvaluator, Evaluation, Evaluator, Outcome, OutcomeRelay
from npbandit.envs.wheel import WheelBanditEnv

__all__ = ["WheelBanditEnv", "BlackBoxEnv", "ObjectiveError", "available_functions", "make_test_function",
           "objective_value", "problem_objective", "AsyncEvaluator", "Evaluation", "Evaluator", "Outcome",
           "OutcomeRelay"]

for _id, _entry in (("npbandit/WheelBandit-v0", "npbandit.envs.wheel:WheelBanditEnv"),
                    ("npbandit/BlackBox-v0", "npbandit.envs.blackbox:BlackBoxEnv")):
    if _id not in gym.registry:
        gym.register(id=_id, entry_point=_entry, disable_env_checker=False)
