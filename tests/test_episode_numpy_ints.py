"""``run_episode`` takes its seed and step count as NumPy integers as it validates them (a
seed from ``np.arange``, a count from an array): the run is the run of the same Python int,
and the database records the seed as an int (not the bytes of an int64)."""

import gymnasium as gym
import numpy as np

import npbandit.envs  # noqa: F401  (registers the environments)
from npbandit.loop import run_episode
from npbandit.policies import make_bandit_policy
from npbandit.storage import RunLogger, list_runs, run_steps


def test_numpy_seed_and_steps_run_the_same_run_and_record_an_int_seed(tmp_path):
    db = str(tmp_path / "runs.db")
    env = gym.make("npbandit/LinearBandit-v0", context_dim=3, n_arms=4, horizon=30)
    for seed, steps in ((3, 12), (np.int64(3), np.int64(12)), (np.uint32(3), np.int32(12))):
        result = run_episode(env, make_bandit_policy("linucb", env=env), seed=seed, steps=steps, logger=RunLogger(db))
        assert result.n_steps == 12
    runs = list_runs(db)
    assert [(r.status, r.seed, type(r.seed)) for r in runs] == [("completed", 3, int)] * 3
    actions = [[(s["action"], s["reward"]) for s in run_steps(db, r.id)] for r in runs]
    assert actions[1] == actions[0] and actions[2] == actions[0]
