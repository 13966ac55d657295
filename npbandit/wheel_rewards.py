"""The wheel bandit's rewards (Riquelme et al. 2018), defined once for the environment that
plays it (:mod:`npbandit.envs.wheel`, NumPy) and the prior that trains on it
(:mod:`npbandit.priors.wheel`, torch).

Five arms. Arm 0 pays ``N(1.2, s²)``, arms 1-4 pay ``N(1.0, s²)``; when a context ``x`` lies
at ``||x|| >= delta`` the arm of x's quadrant pays ``N(50, 0.01²)`` instead. Quadrant ->
arm: ``(+,+) -> 1``, ``(-,+) -> 2``, ``(-,-) -> 3``, ``(+,-) -> 4``. ``s = 0.05`` as in
the public NP code that produced the published regret numbers (the papers' text says 0.01).

NumPy only: a process that plays the wheel with a classical policy loads no torch.
:func:`mean_rewards` is the NumPy form of
:func:`npbandit.priors.wheel.wheel_mean_rewards`; on contexts of float32 values (the
environment's, read as float64) the two agree exactly, the large-reward boundary included.
"""

from __future__ import annotations

import numpy as np

__all__ = ["N_ARMS", "MEAN_SAFE", "MEAN_SMALL", "MEAN_LARGE", "SMALL_REWARD_STD", "LARGE_REWARD_STD",
           "quadrant_arm", "mean_rewards"]

#: arms of the wheel bandit
N_ARMS = 5
#: the mean reward of arm 0, the safe arm
MEAN_SAFE = 1.2
#: the mean reward of arms 1-4 inside the wheel (and outside it, but for the quadrant's arm)
MEAN_SMALL = 1.0
#: the mean reward of the quadrant's arm outside the wheel (``||x|| >= delta``)
MEAN_LARGE = 50.0
#: the std of the small rewards (arm 0, and arms 1-4 where they pay ``MEAN_SMALL``)
SMALL_REWARD_STD = 0.05
#: the std of the large reward
LARGE_REWARD_STD = 0.01


def quadrant_arm(x: np.ndarray) -> np.ndarray:
    """The arm of each point's quadrant (1..4): ``x [..., 2]`` -> ``[...]`` (int64)."""
    x = np.asarray(x)
    right, up = x[..., 0] >= 0, x[..., 1] >= 0
    return np.where(up, np.where(right, 1, 2), np.where(right, 4, 3))


def mean_rewards(x: np.ndarray, delta: float) -> tuple[np.ndarray, np.ndarray]:
    """Every arm's expected reward at each context, and whether it is the large one.

    Args:
        x: ``[..., 2]`` contexts (read as float64).
        delta: the wheel's radius, a number or an array broadcastable to ``x[..., 0]``.

    Returns:
        ``means [..., 5]`` (float64) and a boolean ``large [..., 5]`` marking the arm that
        pays ``MEAN_LARGE``.

    Raises:
        ValueError: ``x`` whose last axis is not of length 2.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ValueError(f"x must hold 2-D contexts, shape [..., 2], got shape {x.shape}")
    # the norm as sqrt(x0² + x1²): for float32 values the squares are exact, so this is the
    # value torch's norm gives in the prior, bit for bit
    outside = np.sqrt(np.square(x).sum(-1)) >= np.asarray(delta, dtype=np.float64)
    large = (np.arange(N_ARMS) == quadrant_arm(x)[..., None]) & outside[..., None]
    base = np.array([MEAN_SAFE] + [MEAN_SMALL] * (N_ARMS - 1))
    return np.where(large, MEAN_LARGE, base), large
