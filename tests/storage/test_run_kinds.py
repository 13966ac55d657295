"""``kind=`` of the run readers: a slip for one of npbandit's kinds (``"bandits"``, ``"BO"``) is
refused naming them, where it read as a database without runs; a kind of one's own
(``RunLogger.start(kind=...)``, the lab's ``"bo_wide"``) is read as before, as no runs until
one has it."""

import pytest

from npbandit.envs import WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.storage import RunLogger, completed_runs, list_runs, running_runs, runs_by_key

WHEEL = {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5, "horizon": 3}}


def _log_run(db, kind="bandit"):
    return run_episode(WheelBanditEnv(horizon=3), UniformPolicy(), seed=0, logger=RunLogger(db),
                       run_info={**WHEEL, "kind": kind}).run_id


@pytest.mark.parametrize("read", [list_runs, completed_runs, running_runs, runs_by_key])
def test_an_unknown_kind_is_refused_naming_the_kinds(tmp_path, read):
    db = str(tmp_path / "runs.db")
    if read is not list_runs:  # which reads a missing database as an error of its own
        with pytest.raises(ValueError, match=r"^kind must be 'bandit' or 'bo', got 'bandits' -- did you mean"):
            read(db, kind="bandits")  # no database yet: still a typo
    _log_run(db)
    with pytest.raises(ValueError, match=r"^kind must be 'bandit' or 'bo', got 'bandits' -- did you mean 'bandit'\?$"):
        read(db, kind="bandits")
    with pytest.raises(ValueError, match=r"^kind must be 'bandit' or 'bo', got 'BO' -- did you mean 'bo'\?$"):
        read(db, kind="BO")
    with pytest.raises(TypeError, match=r"kind must be a str \('bandit' or 'bo'\) or None, got int 3"):
        read(db, kind=3)


def test_npbandit_kinds_read_as_no_runs_where_there_are_none(tmp_path):
    db = str(tmp_path / "runs.db")
    _log_run(db)
    assert list_runs(db, kind="bo") == [] and [r.kind for r in list_runs(db, kind="bandit")] == ["bandit"]


def test_a_kind_of_ones_own_is_read_as_no_runs_until_a_run_has_it(tmp_path):
    db = str(tmp_path / "runs.db")
    _log_run(db)
    assert list_runs(db, kind="sweep_a") == [] and completed_runs(str(tmp_path / "new.db"), kind="sweep_a") == {}
    mine = _log_run(db, kind="sweep_a")
    assert [r.id for r in list_runs(db, kind="sweep_a")] == [mine]
    assert len(completed_runs(db, kind="sweep_a")) == 1
    with pytest.raises(ValueError, match=r"^kind must be 'bandit' or 'bo' \(or a kind this database's runs were "
                                         r"logged with: 'sweep_a'\), got 'bandits' -- did you mean 'bandit'\?$"):
        list_runs(db, kind="bandits")


def test_a_kind_of_ones_own_close_to_npbandits_is_read_once_a_run_has_it(tmp_path):
    db = str(tmp_path / "runs.db")
    mine = _log_run(db, kind="bandits")  # a slip, unless runs have it
    assert [r.id for r in list_runs(db, kind="bandits")] == [mine]
