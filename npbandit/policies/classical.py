"""The classical contextual-bandit policies: :class:`UniformPolicy` (an arm at random, the
normaliser of the wheel protocol) and :class:`LinUCBPolicy` (disjoint LinUCB). NumPy alone:
a process that plays only these (and :class:`~npbandit.policies.linear_ts.LinearTSPolicy`)
loads neither torch nor BoTorch.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from npbandit.policies.problem import (
    ContextualBanditPolicy,
    check_arm_and_reward,
    check_bandit_context,
    check_bounds,
)
from npbandit.validation import check_int, check_real

__all__ = ["UniformPolicy", "LinUCBPolicy"]


class UniformPolicy(ContextualBanditPolicy):
    """Pulls an arm uniformly at random (the normaliser of the wheel protocol).

    ``context_dim``: the width of every context (``None``: ``bounds``' width, else any
    width, the same within a run). ``bounds``: ``[2, d]`` (lower row, upper row), the box
    every context lies in (``make_bandit_policy`` passes the ``Box``'s finite bounds), or
    ``None``. It reads no context, but checks each one as the other policies do
    (:func:`~npbandit.policies.problem.check_bandit_context`: a finite array of shape
    ``(d,)``, inside ``bounds``), and the environment's spaces against what it was built for."""

    name = "uniform"

    def __init__(self, n_arms: int = 5, context_dim: int | None = None, bounds: Any = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.context_dim = None if context_dim is None else check_int("context_dim", context_dim, minimum=1)
        self.bounds = None if bounds is None else check_bounds("bounds", bounds, self.context_dim)
        if self.bounds is not None:
            self.context_dim = self.bounds.shape[1]

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self._width = self.context_dim  # None: the first context's

    def _check(self, obs: Any) -> None:
        self._width = len(check_bandit_context(obs, self._width, self.bounds))

    def act(self, obs: np.ndarray) -> int:
        self._check(obs)
        return int(self.rng.integers(self.n_arms))

    def observe(self, obs, action, reward, info) -> None:
        check_arm_and_reward(action, reward, self.n_arms)
        self._check(obs)

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms}


class LinUCBPolicy(ContextualBanditPolicy):
    """Disjoint LinUCB (Li et al. 2010): per arm, ridge regression on ``[x, 1]`` and
    ``argmax theta·z + alpha * sqrt(z^T A^-1 z)``.

    ``bounds``: ``[2, context_dim]`` (lower row, upper row), the box every context lies in
    (``make_bandit_policy`` passes the ``Box``'s finite bounds), or ``None``: a context
    outside it is refused (:func:`~npbandit.policies.problem.check_bandit_context`), as is
    an environment whose ``Box`` it does not contain. The contexts are read as they come."""

    name = "linucb"

    def __init__(self, n_arms: int = 5, context_dim: int = 2, alpha: float = 1.0, ridge: float = 1.0,
                 bounds: Any = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.context_dim = check_int("context_dim", context_dim, minimum=1)
        self.bounds = None if bounds is None else check_bounds("bounds", bounds, self.context_dim)
        self.alpha = check_real("alpha", alpha, low=0.0)
        self.ridge = check_real("ridge", ridge)
        if not self.ridge > 0:
            raise ValueError(f"ridge must be positive, got {ridge!r}")

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k = self.context_dim + 1
        self.A_inv = np.stack([np.eye(k) / self.ridge] * self.n_arms)
        self.b = np.zeros((self.n_arms, k))

    def act(self, obs: np.ndarray) -> int:
        z = self._linear_features(obs)
        theta = np.einsum("akl,al->ak", self.A_inv, self.b)
        width = np.sqrt(np.einsum("k,akl,l->a", z, self.A_inv, z))
        scores = theta @ z + self.alpha * width
        best = np.flatnonzero(scores == scores.max())
        return int(self.rng.choice(best))

    def observe(self, obs, action, reward, info) -> None:
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        z = self._linear_features(obs)
        a_inv = self.A_inv[action]
        u = a_inv @ z  # Sherman-Morrison rank-one update of A^-1
        self.A_inv[action] = a_inv - np.outer(u, u) / (1.0 + z @ u)
        self.b[action] += reward * z

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "alpha": self.alpha, "ridge": self.ridge}

