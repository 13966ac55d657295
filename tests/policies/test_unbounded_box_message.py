"""A per-arm NP policy on a ``Box`` without finite sides needs ``bounds=`` and says so exactly:
which dimensions have none, the call that gives them (one ``lower_i`` / ``upper_i`` per
dimension), that the box must hold every context and the ``Box``'s finite sides, and how a
sweep passes it (a factory). No box is made up from data: the policy is not built."""

import gymnasium as gym
import numpy as np
import pytest
from helpers import tiny_checkpoint

from npbandit.policies import make_bandit_policy


class HalfOpen(gym.Env):
    observation_space = gym.spaces.Box(np.array([-1.0, -np.inf, 0.0], dtype=np.float32),
                                       np.array([1.0, 2.0, np.inf], dtype=np.float32), dtype=np.float32)
    action_space = gym.spaces.Discrete(4)


class Wide(gym.Env):
    observation_space = gym.spaces.Box(-np.inf, np.inf, shape=(8,), dtype=np.float32)
    action_space = gym.spaces.Discrete(3)


@pytest.fixture()
def card(tmp_path):
    return str(tiny_checkpoint(tmp_path, "cmanp", "bo"))


def test_the_message_names_the_open_dimensions_and_the_call_that_gives_the_box(card):
    with pytest.raises(ValueError) as caught:
        make_bandit_policy(card, env=HalfOpen())
    said = str(caught.value)
    assert said.startswith(f"bounds are required: policy {card!r} refuses every context outside a finite box, and "
                           "env.observation_space Box(")
    assert "has no finite one in dimension(s) 1, 2; " in said
    assert (f"pass make_bandit_policy({card!r}, env=env, bounds=[[lower_0, lower_1, lower_2], "
            "[upper_0, upper_1, upper_2]]), a box with lower_i < upper_i that holds every context the bandit gives "
            "and the Box's finite sides (in a sweep, as a factory: lambda env: make_bandit_policy(..., bounds=...))"
            ) in said


def test_wide_contexts_and_no_env_are_said_as_briefly(card):
    with pytest.raises(ValueError, match=r"dimension\(s\) 0, 1, 2, 3, 4, 5, 6, 7; pass .*bounds=\[\[lower_0, \.\.\., "
                                         r"lower_7\], \[upper_0, \.\.\., upper_7\]\]\)"):
        make_bandit_policy(card, env=Wide())
    with pytest.raises(ValueError, match=r"and no bounds were given; pass bounds=\[\[lower_0, lower_1\], "
                                         r"\[upper_0, upper_1\]\] with lower_i < upper_i"):
        make_bandit_policy(card, n_arms=3, context_dim=2)


def test_the_bounds_it_asks_for_build_the_policy(card):
    policy = make_bandit_policy(card, env=HalfOpen(), bounds=[[-1, -5, 0], [1, 2, 10]])
    assert policy.bounds.tolist() == [[-1, -5, 0], [1, 2, 10]]
