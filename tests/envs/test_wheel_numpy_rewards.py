"""The wheel's rewards in NumPy (npbandit.wheel_rewards, what the environment draws from) are
the prior's in torch (npbandit.priors.wheel), bit for bit on the environment's contexts
(float32 values), so that playing the wheel needs no torch and every recorded run replays."""

import numpy as np
import pytest
import torch

from npbandit.envs.wheel import WheelBanditEnv
from npbandit.priors.wheel import quadrant_arm as torch_quadrant_arm
from npbandit.priors.wheel import wheel_mean_rewards
from npbandit.wheel_rewards import MEAN_LARGE, mean_rewards, quadrant_arm


def test_numpy_means_are_the_priors_on_float32_contexts_with_the_boundary_included():
    rng = np.random.default_rng(0)
    radius, angle = np.sqrt(rng.random(20_000)), 2 * np.pi * rng.random(20_000)
    x = np.stack([radius * np.cos(angle), radius * np.sin(angle)], -1).astype(np.float32)
    # points on the axes and on circles of the deltas below: the comparisons' edges
    edges = np.array([[0.0, 0.0], [0.5, 0.0], [-0.0, 0.9], [0.6, -0.8], [0.0, -0.5]], dtype=np.float32)
    x = np.concatenate([x, edges]).astype(np.float64)
    np.testing.assert_array_equal(quadrant_arm(x), torch_quadrant_arm(torch.from_numpy(x)).numpy())
    for delta in (np.float32(0.0), np.float32(0.5), np.float32(0.9), np.float32(1.0)):
        means, large = mean_rewards(x, delta)
        t_means, t_large = wheel_mean_rewards(torch.from_numpy(x), torch.tensor(delta))
        np.testing.assert_array_equal(means, t_means.numpy())
        np.testing.assert_array_equal(large, t_large.numpy())


def test_the_environment_compares_contexts_with_delta_at_float32_as_it_always_has():
    # seed 73 at delta 0.9 draws, in round 143, a context at norm 0.8999999996: inside the wheel of
    # delta = 0.9, outside that of float32(0.9) = 0.89999998, as every recorded run of it was played
    env = WheelBanditEnv(delta=0.9, horizon=2000)
    env.reset(seed=73)
    x = env.contexts[143].astype(np.float64)
    assert float(np.float32(0.9)) <= np.sqrt(np.square(x).sum()) < 0.9
    assert env.means[143].tolist() == [1.2, 1.0, 1.0, 1.0, MEAN_LARGE]
    assert mean_rewards(x, 0.9)[0].tolist() == [1.2, 1.0, 1.0, 1.0, 1.0]  # delta as given: inside


def test_mean_rewards_refuses_contexts_that_are_not_2d():
    with pytest.raises(ValueError, match=r"x must hold 2-D contexts, shape \[\.\.\., 2\], got shape \(4, 3\)"):
        mean_rewards(np.zeros((4, 3)), 0.5)
