"""The environments as a Gymnasium user drives them, beyond ``check_env``: ``render()`` with no
render mode, a black box stepped before ``reset`` or given an action that is no number, each
``info`` key documented, and a several-objective black box's ``reward_space`` (MO-Gymnasium's)."""


import gymnasium as gym
import pytest

import npbandit.envs  # noqa: F401  (registers the environments)

# one small instance of every registered environment
SMALL = {
    "npbandit/WheelBandit-v0": {"horizon": 3},
    "npbandit/LinearBandit-v0": {"horizon": 3},
    "npbandit/ClassificationBandit-v0": {"X": [[0.0, 1.0], [2.0, 1.0], [4.0, 3.0]], "y": ["b", "a", "b"],
                                         "horizon": 3},
    "npbandit/BlackBox-v0": {"objective": lambda x: float(x.sum()), "bounds": [[0.0, 0.0], [1.0, 2.0]], "budget": 3},
}


def test_every_registered_env_is_among_the_small_ones():
    assert {env_id for env_id in gym.registry if env_id.startswith("npbandit/")} == set(SMALL)


@pytest.mark.parametrize("env_id", sorted(SMALL))
def test_render_without_a_render_mode_draws_nothing_and_returns_none(env_id):
    # Gymnasium's convention for render_mode=None: no render is computed (not NotImplementedError)
    env = gym.make(env_id, **SMALL[env_id])
    env.reset(seed=0)
    assert env.render() is None
    assert env.unwrapped.render() is None
