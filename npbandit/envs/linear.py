"""``npbandit/LinearBandit-v0``: a linear contextual bandit of any context width and arm count.

One episode is one run of ``horizon`` rounds, then ``truncated=True``. ``reset`` draws the
whole run from ``self.np_random``: each arm's weights ``theta_a`` (standard normal, ``[n_arms,
context_dim]``), every round's context (uniform in ``[-1, 1]^context_dim``) and every round's
noise, so every policy can be replayed on the same run with the same seed.

* Observation: the context, ``Box(-1, 1, (context_dim,), float32)``.
* Action: ``Discrete(n_arms)``; arm ``a`` pays ``theta_a . x + noise_std * N(0, 1)``.
* ``info``: ``optimal_action`` (the arm of the largest mean reward), ``regret`` and
  ``expected_regret`` (both the best mean minus the mean of the arm played: the noise is
  the same whichever arm is played), ``t`` (the round, from 0). ``reset``'s ``info`` is empty.

LinUCB's model class is exactly this one, so it is the reference a learned policy is
measured against here.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from npbandit.validation import check_arm, check_int, check_options, check_real, check_render_mode

__all__ = ["LinearBanditEnv"]


class LinearBanditEnv(gym.Env):
    """A linear contextual bandit (see the module docstring).

    Args:
        context_dim: context features, a positive int.
        n_arms: arms, an int >= 2.
        horizon: rounds per episode, a positive int.
        noise_std: the reward noise's std, ``>= 0``.
        render_mode: ``None`` only (nothing is drawn).

    Raises:
        ValueError: an argument outside the ranges above.
    """

    metadata = {"render_modes": []}
    #: the parameters that define the task (:meth:`task_params`); the arms' weights are drawn
    #: anew from each seed
    TASK_PARAMS = ("context_dim", "n_arms", "noise_std")

    def __init__(self, context_dim: int = 3, n_arms: int = 4, horizon: int = 500, noise_std: float = 0.1,
                 render_mode: str | None = None) -> None:
        check_render_mode(render_mode)
        self.render_mode = render_mode
        self.context_dim = check_int("context_dim", context_dim, minimum=1)
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.horizon = check_int("horizon", horizon, minimum=1)
        self.noise_std = check_real("noise_std", noise_std, low=0.0)
        self.observation_space = gym.spaces.Box(-1.0, 1.0, shape=(self.context_dim,), dtype=np.float32)
        self.action_space = gym.spaces.Discrete(self.n_arms)
        self.t = 0
        self._drawn = False  # no run drawn before the first reset

    def task_params(self) -> dict[str, Any]:
        """``{"context_dim", "n_arms", "noise_std"}``: what defines the task (:data:`TASK_PARAMS`), as
        :func:`~npbandit.loop.run_episode` records it in a run's ``env_params``."""
        return {name: getattr(self, name) for name in self.TASK_PARAMS}

    def render(self) -> None:
        """Draw nothing and return ``None``: Gymnasium's convention for an environment made
        with ``render_mode=None``, the only mode this one takes (so a generic loop that calls
        ``render()`` runs on it)."""
        return None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        check_options(options, ())
        rng = self.np_random
        self.theta = rng.standard_normal((self.n_arms, self.context_dim))
        self.contexts = rng.uniform(-1.0, 1.0, (self.horizon + 1, self.context_dim)).astype(np.float32)
        self.noise = self.noise_std * rng.standard_normal(self.horizon)
        self.t = 0
        self._drawn = True
        return self.contexts[0].copy(), {}

    def step(self, action: Any):
        if not self._drawn:
            raise RuntimeError("call reset() before step()")
        if self.t >= self.horizon:
            raise RuntimeError("the episode is over (truncated); call reset()")
        action = check_arm("action", action, self.n_arms)
        means = self.theta @ self.contexts[self.t].astype(np.float64)
        best = int(np.argmax(means))
        gap = float(means[best] - means[action])
        reward = float(means[action] + self.noise[self.t])
        info = {"t": self.t, "optimal_action": best, "regret": gap, "expected_regret": gap}
        self.t += 1
        return self.contexts[self.t].copy(), reward, False, self.t >= self.horizon, info
