"""The policy interface shared by bandit and BO policies."""

from __future__ import annotations

import contextlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from npbandit.exceptions import PolicyNotResetError

__all__ = ["Policy", "PolicyWrapper", "Recommendation", "seeded_by"]


@contextlib.contextmanager
def seeded_by(rng: np.random.Generator) -> Iterator[None]:
    """Torch's global generator seeded from the run's ``rng`` for the block, and restored after.
    A GP's fit (restarts from prior draws when a fit fails), ``optimize_acqf``'s choice of start
    points and Thompson draws use the global generator: so seeded, a run depends on its seed
    alone, not on what its process ran before. Torch is imported here, by the policies that
    use it: a policy of NumPy alone (uniform, LinUCB) loads no torch."""
    import torch

    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(int(rng.integers(2**62)))
        yield


@dataclass(frozen=True)
class Recommendation:
    """The point a policy's model believes best among those it observed (:meth:`Policy.recommend`).

    Attributes:
        action: the point as it was observed (for BO, ``[d]`` in the unit cube).
        reward: what the model predicts there, in the rewards' units (maximised): its
            posterior mean.
    """

    action: np.ndarray
    reward: float


class Policy(ABC):
    """Chooses actions from observations and learns from rewards.

    The run loop calls ``reset(seed)`` once per run, then per step ``act(obs)``,
    the environment, and ``observe(obs, action, reward, info)``. Randomness comes
    only from the generator ``reset`` seeds.

    Before the first ``reset`` a policy has no run state: reading any attribute it lacks
    (what ``act`` / ``observe`` / ``recommend`` use, made by ``reset``) raises
    :class:`~npbandit.exceptions.PolicyNotResetError` saying to call ``reset(seed)`` first.
    """

    name: str = "policy"
    #: the surrogate checkpoint this policy uses, if any (logged with each run)
    checkpoint: dict[str, Any] | None = None

    def reset(self, seed: int | None = None) -> None:
        """Start a new run: seed ``self.rng`` with ``seed`` (``None``: fresh entropy).
        Subclasses also forget what they observed, and call ``super().reset(seed)``."""
        self.rng = np.random.default_rng(seed)

    def __getattr__(self, name: str) -> Any:
        # reached only when normal lookup fails: before the first reset, that is a run's state
        if name.startswith("__") or "rng" in self.__dict__:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}", name=name, obj=self)
        self._require_reset()

    def _require_reset(self) -> None:
        """Raise :class:`~npbandit.exceptions.PolicyNotResetError` unless ``reset`` has run:
        for a step that reads no run state (a policy that learns nothing still refuses)."""
        if "rng" not in self.__dict__:
            raise PolicyNotResetError(f"policy {self.name!r} has not been reset: call reset(seed) before act / "
                                      "observe (run_episode does)")

    @abstractmethod
    def act(self, obs: np.ndarray) -> Any:
        """The action for observation ``obs``: for a bandit, ``obs`` is the context ``[d]``
        and the action an arm index; for BO, ``obs`` is the last point and its value
        ``[d + 1]`` and the action a point of the unit cube ``[d]``."""

    @abstractmethod
    def observe(self, obs: np.ndarray, action: Any, reward: float, info: dict[str, Any]) -> None:
        """Learn from one step: the observation ``act`` was given, the action taken, the
        reward received and the environment's ``info`` dict."""

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        """Refuse an environment this policy cannot act in, before a run starts (``run_episode``
        calls it with ``env``'s spaces): raise an error naming ``env.observation_space`` or
        ``env.action_space`` and what the policy was built for. Default: any environment."""
        return None

    def observe_failure(self, obs: np.ndarray, action: Any, error: str) -> None:
        """Learn from a step whose evaluation failed (the objective raised, returned a
        non-finite value or timed out; the run goes on with ``on_error="skip"``): the
        observation ``act`` was given, the action taken and the error's text. Default:
        nothing (the step spends budget, and the policy is not told)."""
        return None

    def recommend(self) -> Recommendation | None:
        """The observed point this policy's model believes best, with the model's prediction
        there (a :class:`Recommendation`); ``None`` (the default): the policy has no model, or
        too little data for one. The run loop asks once, when a run completes."""
        return None

    def params(self) -> dict[str, Any]:
        """JSON-serialisable settings, logged with each run."""
        return {}


class PolicyWrapper(Policy):
    """A policy that hands every call to ``inner`` (and takes its name and checkpoint): the
    base of a wrapper that changes one step and forwards the rest, so that a method added to
    :class:`Policy` reaches the wrapped policy without every wrapper learning of it."""

    def __init__(self, inner: Policy) -> None:
        if not isinstance(inner, Policy):
            raise TypeError(f"inner must be a Policy, got {type(inner).__name__}")
        self.inner = inner
        self.name, self.checkpoint = inner.name, inner.checkpoint

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.inner.reset(seed)

    def act(self, obs: np.ndarray, pending: np.ndarray | None = None, pinned: Any = None) -> Any:
        if pinned is not None:  # a policy that takes fixed values (BOPolicy's act)
            return self.inner.act(obs, pending=pending, pinned=pinned)
        return self.inner.act(obs) if pending is None else self.inner.act(obs, pending=pending)

    def observe(self, obs: np.ndarray, action: Any, reward: float, info: dict[str, Any]) -> None:
        self.inner.observe(obs, action, reward, info)

    def check_spaces(self, observation_space: Any, action_space: Any) -> None:
        self.inner.check_spaces(observation_space, action_space)

    def observe_failure(self, obs: np.ndarray, action: Any, error: str) -> None:
        self.inner.observe_failure(obs, action, error)

    def recommend(self) -> Recommendation | None:
        return self.inner.recommend()

    def params(self) -> dict[str, Any]:
        return self.inner.params()
