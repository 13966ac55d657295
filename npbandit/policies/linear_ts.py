"""Linear Thompson sampling with unknown noise (:class:`LinearTSPolicy`, ``lin-ts``): per arm,
Bayesian linear regression of the reward on ``z = [x, 1]`` under a Normal-Inverse-Gamma prior,
and each round the arm whose reward at the context is highest under one joint draw of every
arm's weights and noise variance.

The model of arm ``a`` (``k = d + 1`` weights, the last the intercept)::

    sigma^2 ~ InvGamma(a0, b0)
    w | sigma^2 ~ N(0, sigma^2 / lambda * I_k)
    r | x, w, sigma^2 ~ N(w . z, sigma^2)

is conjugate: after the ``n`` rounds ``(Z [n, k], y [n])`` the arm was played in, the
posterior is Normal-Inverse-Gamma with

    precision  P_n = lambda * I_k + Z^T Z
    mean       m_n = P_n^-1 Z^T y
    shape      a_n = a0 + n / 2
    scale      b_n = b0 + (y^T y - m_n^T P_n m_n) / 2

(``y^T y - m_n^T P_n m_n = |y - Z m_n|^2 + lambda |m_n|^2 >= 0``). A draw takes
``sigma^2 ~ InvGamma(a_n, b_n)``, then ``w ~ N(m_n, sigma^2 P_n^-1)``: the weights' spread
follows the noise the arm's rewards showed, not a noise level fixed in advance as LinUCB's
ridge regression assumes.

What is kept per arm is ``Z^T y``, ``y^T y``, ``n`` and the lower Cholesky factor ``L`` of
``P_n``. A round's observation is a rank-one update ``P <- P + z z^T``, done on ``L`` directly
(:func:`cholesky_add`, ``O(k^2)``); a draw is two triangular solves, ``u = L^-1 Z^T y``, then
``w = L^-T (u + sigma * e)`` with ``e ~ N(0, I_k)``, which has mean ``P^-1 Z^T y = m_n`` and
covariance ``sigma^2 L^-T L^-1 = sigma^2 P^-1`` (also ``O(k^2)``), and
``m_n^T P_n m_n = |u|^2``. No round refits from the rows seen.

The defaults (``a0 = b0 = 6``, ``lambda = 0.25``, an intercept, each arm played twice in
turn before any draw) are those of the linear full-posterior baseline of Riquelme, Tucker &
Snoek (2018, "Deep Bayesian Bandits Showdown").
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import solve_triangular  # SciPy comes with BoTorch

from npbandit.policies.problem import (
    ContextualBanditPolicy,
    check_arm_and_reward,
    check_bounds,
)
from npbandit.validation import check_arm, check_int, check_real

__all__ = ["LinearTSPolicy", "cholesky_add"]


def cholesky_add(factor: np.ndarray, z: np.ndarray) -> None:
    """Turn ``factor`` (``[k, k]``, lower triangular with a positive diagonal, ``L``) into the
    Cholesky factor of ``L L^T + z z^T``, in place, in ``O(k^2)``: column by column, a plane
    rotation folds ``z``'s entry into the diagonal and carries the rest of ``z`` on to the
    next column (the positive-definite sum needs no square root of a difference, so the
    update is stable)."""
    z = np.array(z, dtype=np.float64)  # a copy: it is consumed
    for j in range(len(z)):
        diag = factor[j, j]
        r = np.hypot(diag, z[j])
        c, s = r / diag, z[j] / diag
        factor[j, j] = r
        column = (factor[j + 1:, j] + s * z[j + 1:]) / c
        z[j + 1:] = c * z[j + 1:] - s * column
        factor[j + 1:, j] = column


class LinearTSPolicy(ContextualBanditPolicy):
    """Thompson sampling on per-arm Bayesian linear regression with a Normal-Inverse-Gamma
    prior (the model and its updates: :mod:`npbandit.policies.linear_ts`).

    Every round draws, for each arm, a noise variance and then weights from the arm's
    posterior, and plays the arm whose drawn ``w . [x, 1]`` is highest. The first
    ``initial_pulls * n_arms`` rounds play the arms in turn (0, 1, ..., n - 1, 0, ...), so every
    arm's posterior starts from data. All draws come from the generator ``reset`` seeds.

    Args:
        n_arms: arms (>= 2); context_dim: the width ``d`` of every context (>= 1).
        a0, b0: the Inverse-Gamma prior's shape and scale for the noise variance (> 0).
        prior_precision: ``lambda`` (> 0): the weights' prior is ``N(0, sigma^2 / lambda I)``,
            the intercept's included.
        initial_pulls: times each arm is played in turn before the first draw (>= 0).
        bounds: ``[2, context_dim]`` (lower row, upper row), the box every context lies in
            (``make_bandit_policy`` passes the ``Box``'s finite bounds), or ``None``: a context
            outside it is refused (:func:`~npbandit.policies.problem.check_bandit_context`),
            as is an environment whose ``Box`` it does not contain. Contexts are read as they come.
    """

    name = "lin-ts"

    def __init__(self, n_arms: int = 5, context_dim: int = 2, a0: float = 6.0, b0: float = 6.0,
                 prior_precision: float = 0.25, initial_pulls: int = 2, bounds: Any = None) -> None:
        self.n_arms = check_int("n_arms", n_arms, minimum=2)
        self.context_dim = check_int("context_dim", context_dim, minimum=1)
        for what, value in (("a0", a0), ("b0", b0), ("prior_precision", prior_precision)):
            if not check_real(what, value) > 0:
                raise ValueError(f"{what} must be positive, got {value!r}")
        self.a0, self.b0, self.prior_precision = float(a0), float(b0), float(prior_precision)
        self.initial_pulls = check_int("initial_pulls", initial_pulls, minimum=0)
        self.bounds = None if bounds is None else check_bounds("bounds", bounds, self.context_dim)

    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        k = self.context_dim + 1
        self.factor = np.stack([np.eye(k) * np.sqrt(self.prior_precision)] * self.n_arms)  # L of each arm's P
        self.zy = np.zeros((self.n_arms, k))  # Z^T y
        self.yy = np.zeros(self.n_arms)  # y^T y
        self.counts = np.zeros(self.n_arms, dtype=np.int64)

    def _whitened(self, arm: int) -> np.ndarray:
        """``u = L^-1 Z^T y`` of ``arm`` (``P^-1 Z^T y = L^-T u``, ``m^T P m = |u|^2``)."""
        return solve_triangular(self.factor[arm], self.zy[arm], lower=True, check_finite=False)

    def posterior(self, arm: int) -> tuple[np.ndarray, np.ndarray, float, float]:
        """``arm``'s posterior as ``(mean [k], precision [k, k], a, b)``: the weights of
        ``[x, 1]`` are ``N(mean, sigma^2 precision^-1)`` given ``sigma^2``, and ``sigma^2`` is
        ``InvGamma(a, b)``. ``ValueError`` naming ``arm`` for an index out of range."""
        arm = check_arm("arm", arm, self.n_arms)
        u = self._whitened(arm)
        mean = solve_triangular(self.factor[arm], u, lower=True, trans="T", check_finite=False)
        a, b = self._shape_scale(arm, u)
        return mean, self.factor[arm] @ self.factor[arm].T, a, b

    def _shape_scale(self, arm: int, u: np.ndarray) -> tuple[float, float]:
        # y^T y - |u|^2 is a sum of squares; rounding can take it below zero only by a few rounding
        # units of y^T y, which b0 > 0 outweighs
        return self.a0 + 0.5 * self.counts[arm], self.b0 + 0.5 * (self.yy[arm] - u @ u)

    def sample(self, arm: int) -> tuple[np.ndarray, float]:
        """One joint draw ``(weights [k], noise variance)`` from ``arm``'s posterior, with the
        policy's generator: what ``act`` draws for every arm each round."""
        return self._sample(check_arm("arm", arm, self.n_arms))

    def _sample(self, arm: int) -> tuple[np.ndarray, float]:
        u = self._whitened(arm)
        a, b = self._shape_scale(arm, u)
        variance = b / self.rng.gamma(a)  # InvGamma(a, b): b over a Gamma(a, 1) draw
        e = self.rng.standard_normal(len(u))
        weights = solve_triangular(self.factor[arm], u + np.sqrt(variance) * e, lower=True, trans="T",
                                   check_finite=False)
        return weights, float(variance)

    def act(self, obs: np.ndarray) -> int:
        z = self._linear_features(obs)
        played = int(self.counts.sum())
        if played < self.initial_pulls * self.n_arms:
            return played % self.n_arms
        scores = np.array([self._sample(arm)[0] @ z for arm in range(self.n_arms)])
        return int(np.argmax(scores))

    def observe(self, obs, action, reward, info) -> None:
        action, reward = check_arm_and_reward(action, reward, self.n_arms)
        z = self._linear_features(obs)
        if not np.isfinite(self.yy[action] + reward * reward):
            raise ValueError(f"reward {reward!r} is too large: arm {action}'s sum of squared rewards would overflow")
        cholesky_add(self.factor[action], z)
        self.zy[action] += reward * z
        self.yy[action] += reward * reward
        self.counts[action] += 1

    def params(self) -> dict[str, Any]:
        return {"n_arms": self.n_arms, "a0": self.a0, "b0": self.b0, "prior_precision": self.prior_precision,
                "initial_pulls": self.initial_pulls}
