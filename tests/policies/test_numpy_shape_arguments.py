"""``make_bandit_policy(name, n_arms=, context_dim=)`` takes NumPy integers (a shape read
off an array, ``X.shape[1]`` of a data frame's values, ``np.int64``) for every policy name,
as it validates them: the policy is the one the same Python ints build."""

import numpy as np
import pytest

from npbandit import load_surrogate
from npbandit.policies import PerArmNPPolicy, make_bandit_policy
from npbandit.policies.problem import BanditProblem

BOUNDS = [[-1.0] * 3, [1.0] * 3]


@pytest.mark.parametrize("name", ["uniform", "linucb", "lin-ts", "gp-ucb", "cmanp-bo", "cmanp-bo-thompson"])
def test_numpy_integer_shapes_build_the_policy_of_the_python_ints(name):
    policy = make_bandit_policy(name, n_arms=np.int64(4), context_dim=np.int32(3), bounds=BOUNDS)
    same = make_bandit_policy(name, n_arms=4, context_dim=3, bounds=BOUNDS)
    assert policy.name == same.name and policy.params() == same.params()
    policy.reset(0)
    assert 0 <= policy.act(np.zeros(3, dtype=np.float32)) < 4


def test_a_bandit_problem_holds_python_ints():
    problem = BanditProblem(np.int64(4), np.uint8(3))
    assert (problem.n_arms, problem.context_dim) == (4, 3)
    assert type(problem.n_arms) is int and type(problem.context_dim) is int


def test_a_numpy_integer_n_views_is_the_int_it_holds():
    policy = PerArmNPPolicy(load_surrogate("cmanp-bo"), n_arms=np.int64(3), bounds=[[0.0, 0.0], [1.0, 1.0]],
                            n_views=np.int64(2))
    policy.reset(0)
    rng = np.random.default_rng(0)
    for _ in range(10):  # past the first plays: the arms' models are built with the views
        x = rng.random(2)
        policy.observe(x, policy.act(x), float(rng.random()), {})
    assert policy.params()["n_views"] == 2 and type(policy.params()["n_views"]) is int
