"""A bool reward (Python's or NumPy's), what a Bernoulli bandit's ``step`` returns as ``arm ==
best``, is a success or not: 1.0 or 0.0, taken as such by ``run_episode`` and by every bandit
policy's ``observe``, and the run is the run of the same rewards given as floats."""

import gymnasium as gym
import numpy as np
import pytest
from helpers import tiny_checkpoint

from npbandit.loop import run_episode
from npbandit.policies import make_bandit_policy
from npbandit.storage import RunLogger, run_steps


class CoinBandit(gym.Env):
    """2-D contexts, 3 arms; arm ``a`` succeeds with probability ``sigmoid(x . w_a)``; ``kind``:
    how the success comes back (``bool``, ``numpy``: ``np.bool_``, ``float``)."""

    observation_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, kind="bool"):
        self.kind = kind
        self.w = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, -1.0]])

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.x = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x, {}

    def step(self, arm):
        success = self.np_random.uniform() < 1 / (1 + np.exp(-self.w[arm] @ self.x))  # a NumPy bool
        reward = {"bool": bool(success), "numpy": success, "float": float(success)}[self.kind]
        self.x = self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x, reward, False, False, {}


@pytest.mark.parametrize("name", ["uniform", "linucb", "lin-ts", "per-arm NP"])
def test_bool_rewards_run_as_the_same_rewards_in_floats(tmp_path, name):
    if name == "per-arm NP":
        name = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    rewards = {}
    for kind in ("bool", "numpy", "float"):
        db = str(tmp_path / f"{kind}.db")
        result = run_episode(CoinBandit(kind), make_bandit_policy(name, env=CoinBandit()), seed=0, steps=12,
                             logger=RunLogger(db))
        assert result.failed_steps == 0
        rewards[kind] = [(s["action"], s["reward"]) for s in run_steps(db, result.run_id)]
    assert rewards["bool"] == rewards["numpy"] == rewards["float"]
    assert {r for _, r in rewards["bool"]} <= {0.0, 1.0} and len(rewards["bool"]) == 12


def test_a_policy_observes_a_bool_reward_as_one_or_zero():
    policy = make_bandit_policy("linucb", env=CoinBandit())
    policy.reset(0)
    x = np.zeros(2, np.float32)
    policy.observe(x, policy.act(x), np.True_, {})
    policy.observe(x, policy.act(x), False, {})
    with pytest.raises(ValueError, match="reward must be a finite real number, got 'yes'"):
        policy.observe(x, 0, "yes", {})
