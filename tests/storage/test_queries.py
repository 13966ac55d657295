"""Reading runs back: list_runs' incremental look (``after``) and the status looks, which answer
about every run."""

import pytest

from npbandit.envs import WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.storage import RunLogger, completed_runs, list_runs, running_runs, runs_by_key

WHEEL = {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5, "horizon": 3}}


def _log_run(db, seed):
    return run_episode(WheelBanditEnv(horizon=3), UniformPolicy(), seed=seed, logger=RunLogger(db),
                       run_info=WHEEL).run_id


def test_list_runs_after_reads_only_the_runs_started_since_a_look(tmp_path):
    """A user's own polling: each look reads the runs of an id above the greatest it has seen."""
    db = str(tmp_path / "runs.db")
    first = _log_run(db, 0)
    held = RunLogger(db)
    second = held.start(kind="bandit", env_id=WHEEL["env_id"], env_params=WHEEL["env_params"], policy="uniform",
                        seed=1)
    seen = max(r.id for r in list_runs(db))
    assert seen == second
    assert list_runs(db, after=seen) == []
    third = _log_run(db, 2)
    assert [r.id for r in list_runs(db, after=seen)] == [third]
    assert [r.id for r in list_runs(db, kind="bandit", after=first)] == [second, third]
    assert list_runs(db, kind="bo", after=first) == []
    assert [r.id for r in list_runs(db, after=0)] == [first, second, third]
    for bad in (-1, True, 1.5, "2"):
        with pytest.raises(ValueError, match=rf"after must be an int >= 0, got {bad!r}"):
            list_runs(db, after=bad)
    held.finish()
    # which runs are completed or running is a question about every run, whenever it started: the run
    # started before the look and completed since is among the completed ones, and they take no `after`
    assert sorted(r.id for r in completed_runs(db).values()) == [first, second, third]
    assert running_runs(db) == {}
    for look in (completed_runs, running_runs, runs_by_key):
        with pytest.raises(TypeError, match="after"):
            look(db, after=seen)
