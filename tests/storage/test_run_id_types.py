"""``run_steps`` / ``run_totals`` take a run's id as an int of any kind: a NumPy integer (an id
read from an array, a data frame) finds the run, and an id that is no int is called so rather
than reported as a run the database does not hold."""

import numpy as np
import pytest

from npbandit.envs import WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.storage import RunLogger, run_steps, run_totals


@pytest.fixture
def db(tmp_path):
    db = str(tmp_path / "runs.db")
    for seed in (0, 1):
        run_episode(WheelBanditEnv(delta=0.5, horizon=6), UniformPolicy(), seed=seed, logger=RunLogger(db))
    return db


@pytest.mark.parametrize("run_id", [np.int64(2), np.int32(2), np.uint8(2)])
def test_a_numpy_integer_run_id_finds_the_run(db, run_id):
    steps = run_steps(db, run_id)
    assert steps == run_steps(db, 2) and len(steps) == 6 and all(s["run_id"] == 2 for s in steps)
    assert run_totals(db, run_id) == run_totals(db, 2)


@pytest.mark.parametrize("run_id", ["2", 2.0, True, None])
def test_a_run_id_that_is_no_int_is_called_so(db, run_id):
    for read in (run_steps, run_totals):
        with pytest.raises(TypeError, match=r"^run_id must be a run's id \(an int\), got "):
            read(db, run_id)
