"""``maximised``: an objective's values as a policy maximises them, the one place the sign flip is written."""

import numpy as np
import pytest

from npbandit.envs import BlackBoxEnv
from npbandit.envs.directions import maximised


def test_one_objective_is_negated_only_when_minimised_and_the_flip_is_its_own_inverse():
    assert maximised(2.5, True) == -2.5 and maximised(2.5, False) == 2.5
    values = np.array([1.0, -3.0, 0.25])
    np.testing.assert_array_equal(maximised(values, True), -values)
    np.testing.assert_array_equal(maximised(maximised(values, True), True), values)


def test_several_objectives_negate_the_columns_minimised_in_the_order_of_the_directions():
    values = np.array([[1.0, 2.0, 3.0], [-4.0, 5.0, -6.0]])
    out = maximised(values, [True, False, True])
    np.testing.assert_array_equal(out, [[-1.0, 2.0, -3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_array_equal(maximised(values[0], {"a": False, "b": True, "c": False}), [1.0, -2.0, 3.0])
    np.testing.assert_array_equal(maximised(out, (True, False, True)), values)


@pytest.mark.parametrize("values, minimize, error, match", [
    (np.zeros((2, 3)), [True, False], ValueError, r"2 columns.*got shape \(2, 3\)"),
    (1.0, [True, False], ValueError, r"2 columns.*got shape \(\)"),
    (1.0, "min", TypeError, "minimize must be a bool"),
    (np.zeros(2), [True, 1], TypeError, r"minimize\[1\] must be a bool"),
])
def test_values_and_directions_that_do_not_fit_are_refused_naming_what_was_expected(values, minimize, error, match):
    with pytest.raises(error, match=match):
        maximised(values, minimize)


@pytest.mark.parametrize("minimize", [True, False, [True, False]])
def test_the_black_box_rewards_are_its_values_maximised(minimize):
    several = not isinstance(minimize, bool)
    env = BlackBoxEnv(objective=lambda x: [float(x[0]), 2.0 * float(x[1])] if several else float(x.sum()),
                      bounds=[[0.0, 0.0], [1.0, 1.0]], budget=2, minimize=minimize)
    env.reset(seed=0)
    _, reward, _, _, info = env.step(np.array([0.25, 0.5]))
    value = np.array(info["values"]) if several else info["value"]
    np.testing.assert_array_equal(reward, maximised(value, minimize))
    np.testing.assert_array_equal(np.abs(reward), np.abs(value))
    assert (np.atleast_1d(reward) < 0).tolist() == ([True, False] if several else [minimize])
