"""The environments as a Gymnasium user drives them, beyond ``check_env``: ``render()`` with no
render mode, a black box stepped before ``reset`` or given an action that is no number, each
``info`` key documented, and a several-objective black box's ``reward_space`` (MO-Gymnasium's)."""


import inspect
import re

import gymnasium as gym
import numpy as np
import pytest

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.envs import BlackBoxEnv
from npbandit.exceptions import ObjectiveError, ObjectiveReturnError

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


def test_blackbox_refuses_a_step_before_reset_as_the_bandits_do():
    env = BlackBoxEnv(**SMALL["npbandit/BlackBox-v0"])
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(np.full(2, 0.5))
    assert env.t == 0  # no budget spent
    env.reset(seed=0)
    env.step(np.full(2, 0.5))


@pytest.mark.parametrize("action", ["a", None, [0.5, "b"], {"x0": 0.5}])
def test_blackbox_names_the_action_when_it_is_no_point_of_numbers(action):
    env = BlackBoxEnv(**SMALL["npbandit/BlackBox-v0"])
    env.reset(seed=0)
    expected = r"action must be a finite point of \[0, 1\]\^2, got " + re.escape(repr(action))
    with pytest.raises(ValueError, match=expected):
        env.step(action)
    assert env.t == 0


@pytest.mark.parametrize("env_id", sorted(SMALL))
def test_every_info_key_reset_and_step_return_is_documented_in_the_module(env_id):
    env = gym.make(env_id, **SMALL[env_id])
    doc = inspect.getmodule(type(env.unwrapped)).__doc__
    _, reset_info = env.reset(seed=0)
    *_, step_info = env.step(env.action_space.sample())
    for key in list(reset_info) + list(step_info):
        assert f"``{key}``" in doc, f"{env_id}: info key {key!r} is not documented"


def test_blackbox_space_reset_info_is_documented():
    from npbandit.envs import blackbox
    from npbandit.space import Float

    env = BlackBoxEnv(objective=lambda p: p["a"], space={"a": Float(0, 1)}, budget=1)
    assert set(env.reset(seed=0)[1]) == {"space"} and "``space``" in blackbox.__doc__


def test_several_objectives_give_the_reward_space_mo_gymnasium_reads():
    env = BlackBoxEnv(objective=lambda x: [float(x[0]), float(x[1])], bounds=[[0, 0], [1, 1]],
                      minimize=[True, False], budget=2)
    assert env.reward_space == gym.spaces.Box(-np.inf, np.inf, shape=(2,), dtype=np.float64)
    env.reset(seed=0)
    _, reward, *_ = env.step(np.array([0.25, 0.75]))
    assert env.reward_space.contains(reward)
    np.testing.assert_array_equal(reward, [-0.25, 0.75])
    assert BlackBoxEnv(**SMALL["npbandit/BlackBox-v0"]).reward_space is None  # one objective: a float reward


def _fails_past_half(x):
    if x[0] > 0.5:
        raise ZeroDivisionError("boom")
    return float(x.sum())


# Gymnasium logs the worker's error as UserWarnings before raising it again
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("vector", [gym.vector.SyncVectorEnv,
                                    pytest.param(gym.vector.AsyncVectorEnv, marks=pytest.mark.integration)])
def test_a_failed_evaluation_in_a_vector_env_is_an_objective_error_in_the_main_process(vector):
    # AsyncVectorEnv raises a worker's error again as type(err)(err): an ObjectiveError must be
    # constructible from its message alone, or the user gets a TypeError about a missing 'x'
    envs = vector([lambda: gym.make("npbandit/BlackBox-v0", objective=_fails_past_half, bounds=[[0, 0], [1, 1]],
                                     budget=2)] * 2)
    try:
        envs.reset(seed=0)
        with pytest.raises(ObjectiveError, match=r"objective raised ZeroDivisionError: boom at x=\[0.9, 0.1\]"):
            envs.step(np.array([[0.9, 0.1], [0.2, 0.2]]))
    finally:
        envs.close()


def test_an_objective_error_made_from_its_message_alone_has_no_point():
    err = ObjectiveError("objective returned nan at x=[0.5]")
    assert err.x is None and err.kind is None and str(err) == "objective returned nan at x=[0.5]"
    assert ObjectiveReturnError("objective must return a float").x is None
