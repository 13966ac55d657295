"""``npbandit/WheelBandit-v0``: the wheel bandit (Riquelme et al. 2018).

One episode is one run of ``horizon`` rounds (default 2000), then ``truncated=True``.
``reset`` draws the whole run from ``self.np_random``: every round's context and all
five rewards, so every policy can be replayed on the same table with the same seed.

* Observation: the context, a point of the unit disc (``Box(-1, 1, (2,), float32)``).
* Action: ``Discrete(5)``. Arm 0 pays ``N(1.2, 0.05²)``; arms 1-4 pay ``N(1.0, 0.05²)``,
  except that when ``||x|| >= delta`` the arm of x's quadrant pays ``N(50, 0.01²)``.
  Quadrant -> arm: ``(+,+) -> 1``, ``(-,+) -> 2``, ``(-,-) -> 3``, ``(+,-) -> 4``.
* ``info``: ``delta``, ``t`` (the round, from 0), ``optimal_action`` (highest expected
  reward), ``regret`` (the optimal arm's realised reward minus the reward received, the
  protocol's metric), ``expected_regret`` and ``rewards`` (all five realised rewards of the
  round). ``reset``'s ``info`` holds ``delta`` alone.

The rewards are :mod:`npbandit.wheel_rewards`' (NumPy): playing the wheel loads no torch.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.validation import check_arm, check_int, check_options, check_real, check_render_mode
from npbandit.wheel_rewards import LARGE_REWARD_STD, N_ARMS, SMALL_REWARD_STD, mean_rewards

__all__ = ["WheelBanditEnv"]


class WheelBanditEnv(gym.Env):
    """The wheel bandit as a Gymnasium environment (see the module docstring).

    Args:
        delta: the radius beyond which a quadrant's arm pays the large reward, in ``[0, 1]``.
        horizon: rounds per episode.
        small_reward_std: the std of the small rewards (``>= 0``; the large one's is fixed).
        render_mode: ``None`` only (nothing is drawn).

    Raises:
        ValueError: an argument outside the ranges above.
    """

    metadata = {"render_modes": []}
    #: the parameters that define the task (:meth:`task_params`): runs with another ``delta``
    #: play another problem
    TASK_PARAMS = ("delta",)

    def __init__(self, delta: float = 0.5, horizon: int = 2000, small_reward_std: float = SMALL_REWARD_STD,
                 render_mode: str | None = None) -> None:
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.delta = check_real("delta", delta, low=0.0, high=1.0)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.small_reward_std = check_real("small_reward_std", small_reward_std, low=0.0)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(N_ARMS)
        self.contexts = np.zeros((horizon, 2), dtype=np.float32)
        self.rewards = np.zeros((horizon, N_ARMS))
        self.means = np.zeros((horizon, N_ARMS))
        self.t = 0
        self._drawn = False  # no run drawn before the first reset

    def task_params(self) -> dict[str, Any]:
        """``{"delta": delta}``: what defines the task (:data:`TASK_PARAMS`), as
        :func:`~npbandit.loop.run_episode` records it in a run's ``env_params``."""
        return {"delta": self.delta}

    def render(self) -> None:
        """Draw nothing and return ``None``: Gymnasium's convention for an environment made
        with ``render_mode=None``, the only mode this one takes (so a generic loop that calls
        ``render()`` runs on it)."""
        return None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """A new run; ``options={"delta": d}`` changes δ from this run on."""
        options = check_options(options, ("delta",))
        super().reset(seed=seed)
        if "delta" in options:
            self.delta = check_real("delta", options["delta"], low=0.0, high=1.0)
        rng = self.np_random
        radius = np.sqrt(rng.random(self.horizon))
        angle = 2 * math.pi * rng.random(self.horizon)
        self.contexts = np.stack([radius * np.cos(angle), radius * np.sin(angle)], -1).astype(np.float32)
        # δ at float32 precision, as the wheel has always drawn its rewards (torch's default dtype
        # held δ): a context at float32(0.9) <= ||x|| < 0.9 is outside the wheel of δ = 0.9, and
        # every recorded run replays on the same rewards
        self.means, large = mean_rewards(self.contexts, np.float32(self.delta))
        std = np.where(large, LARGE_REWARD_STD, self.small_reward_std)
        self.rewards = self.means + std * rng.standard_normal(self.means.shape)
        self.t = 0
        self._drawn = True
        return self.contexts[0].copy(), {"delta": self.delta}

    def step(self, action):
        """Pay arm ``action`` of this round; returns ``(next context [2], reward, False,
        truncated, info)`` (see the module docstring for ``info``).

        Raises:
            ValueError: ``action`` is not an arm in ``0..4``.
            RuntimeError: before the first ``reset``, or after the last round.
        """
        action = check_arm("action", action, N_ARMS)
        if not self._drawn:
            raise RuntimeError("call reset() before step(): no run has been drawn")
        if self.t >= self.horizon:
            raise RuntimeError("the episode is over; call reset()")
        a = int(action)
        t = self.t
        best = int(np.argmax(self.means[t]))
        reward = float(self.rewards[t, a])
        info = {"delta": self.delta, "t": t, "optimal_action": best,
                "regret": float(self.rewards[t, best] - reward),
                "expected_regret": float(self.means[t, best] - self.means[t, a]),
                "rewards": self.rewards[t].copy()}
        self.t += 1
        truncated = self.t >= self.horizon
        obs = self.contexts[min(self.t, self.horizon - 1)].copy()
        return obs, reward, False, truncated, info
