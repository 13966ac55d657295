"""The policy interface shared by bandit and BO policies."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any

import numpy as np

__all__ = ["Policy"]


class Policy(ABC):
    """Chooses actions from observations and learns from rewards.

    The run loop calls ``reset(seed)`` once per run, then per step ``act(obs)``,
    the environment, and ``observe(obs, action, reward, info)``. Randomness comes
    only from the generator ``reset`` seeds.
    """

    name: str = "policy"
    #: the surrogate checkpoint this policy uses, if any (logged with each run)
    checkpoint: dict[str, Any] | None = None

    def reset(self, seed: int | None = None) -> None:
        """Start a new run: seed ``self.rng`` with ``seed`` (``None``: fresh entropy).
        Subclasses also forget what they observed, and call ``super().reset(seed)``."""
        self.rng = np.random.default_rng(seed)

    @abstractmethod
    def act(self, obs: np.ndarray) -> Any:
        """The action for observation ``obs``: for a bandit, ``obs`` is the context ``[d]``
        and the action an arm index; for BO, ``obs`` is the last point and its value
        ``[d + 1]`` and the action a point of the unit cube ``[d]``."""

    @abstractmethod
    def observe(self, obs: np.ndarray, action: Any, reward: float, info: dict[str, Any]) -> None:
        """Learn from one step: the observation ``act`` was given, the action taken, the
        reward received and the environment's ``info`` dict."""

    def params(self) -> dict[str, Any]:
        """JSON-serialisable settings, logged with each run."""
        return {}
