"""A bandit task of one's own (``BanditTask(env_id, env_kwargs)``) is the environment its
keyword arguments make: two tasks of one id with other plain arguments (a noise level) are
two tasks, their runs recorded with those arguments, never one run found "completed" for the
other (the second sweep skipped its runs and returned the first task's results)."""

import gymnasium as gym
import numpy as np
import pytest

from npbandit.loop import BanditTask, csv_task, dataset_task, run_bandit_sweep, wheel_task
from npbandit.report import bandit_summary
from npbandit.storage import list_runs

ENV_ID = "npbandit-tests/NoisyBandit-v0"


class NoisyBandit(gym.Env):
    """2-D contexts, 3 arms, rewards with Gaussian noise of std ``noise``."""

    observation_space = gym.spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
    action_space = gym.spaces.Discrete(3)

    def __init__(self, noise=0.1, horizon=100):
        self.noise, self.horizon = noise, horizon

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t, self.x = 0, self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x, {}

    def step(self, arm):
        means = np.array([self.x[0], self.x[1], -self.x[0]])
        reward = float(means[arm] + self.noise * self.np_random.standard_normal())
        self.t, self.x = self.t + 1, self.np_random.uniform(-1, 1, 2).astype(np.float32)
        return self.x, reward, False, self.t >= self.horizon, {"regret": float(means.max() - means[arm])}


@pytest.fixture(autouse=True)
def _registered():
    gym.register(ENV_ID, entry_point=NoisyBandit)
    yield
    gym.registry.pop(ENV_ID)


def test_tasks_of_other_plain_arguments_are_other_tasks(tmp_path):
    db = str(tmp_path / "runs.db")
    quiet, loud = BanditTask(ENV_ID, {"noise": 0.1}, label="quiet"), BanditTask(ENV_ID, {"noise": 2.0}, label="loud")
    first = run_bandit_sweep(["linucb"], [quiet], [0], 8, db=db, say=None)
    second = run_bandit_sweep(["linucb"], [loud], [0], 8, db=db, say=None)  # not the quiet task's run
    assert [r.run_id for r in first + second] == [1, 2]
    assert [r.env_params for r in list_runs(db)] == [{"noise": 0.1, "horizon": 8, "context_dim": 2, "n_arms": 3},
                                                     {"noise": 2.0, "horizon": 8, "context_dim": 2, "n_arms": 3}]
    assert len(bandit_summary(db)) == 2  # a row each
    both = run_bandit_sweep(["linucb"], [quiet, loud], [0], 8, db=db, say=None)  # not refused as one task twice
    assert [r.run_id for r in both] == [1, 2]


def test_a_numpy_argument_is_recorded_as_its_value_beside_the_given_params(tmp_path):
    db = str(tmp_path / "runs.db")
    task = BanditTask(ENV_ID, {"noise": np.float64(0.5)}, {"noise_level": "medium"}, label="medium")
    run_bandit_sweep(["uniform"], [task], [0], 4, db=db, say=None)
    (run,) = list_runs(db)
    assert run.env_params["noise"] == 0.5 and run.env_params["noise_level"] == "medium"


def test_npbandits_own_tasks_record_what_they_did(tmp_path):
    assert wheel_task(0.9).run_info(5)["env_params"] == {"delta": 0.9, "horizon": 5}
    assert dataset_task("iris").run_info(5)["env_params"] == {"dataset": "iris", "horizon": 5}
    (tmp_path / "f.csv").write_text("x,y\n1,a\n2,b\n")
    # a CSV file's data (arrays) is fingerprinted by the environment, not recorded whole
    assert set(csv_task(tmp_path / "f.csv", "y").run_info(5)["env_params"]) == {
        "csv", "csv_path", "csv_sha256", "label_column", "horizon"}
