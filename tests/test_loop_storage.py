"""The run loop and SQLite storage: logging, failures, crashes, concurrent writers."""

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import pytest
from sqlalchemy import select

from npbandit.envs import BlackBoxEnv, ObjectiveError, WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import SobolPolicy, UniformPolicy
from npbandit.storage import RunLogger, Step, list_runs, open_db, run_steps


def wheel_info(delta=0.5, horizon=50):
    return {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": delta, "horizon": horizon}}


def test_a_run_logs_every_step(tmp_path):
    db = str(tmp_path / "runs.db")
    result = run_episode(WheelBanditEnv(horizon=50), UniformPolicy(), seed=1, logger=RunLogger(db, commit_every=7),
                         run_info=wheel_info())
    steps = run_steps(db, result.run_id)
    assert [s["t"] for s in steps] == list(range(50))
    assert steps[-1]["cumulative_regret"] == pytest.approx(sum(s["regret"] for s in steps))
    assert steps[-1]["cumulative_regret"] == pytest.approx(result.cumulative_regret)
    (run,) = list_runs(db)
    assert run.status == "completed" and run.n_steps == 50 and run.env_params == {"delta": 0.5, "horizon": 50}
    assert run.policy == "uniform" and run.seed == 1


def test_steps_are_unique_per_run(tmp_path):
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db, commit_every=1)
    logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
    logger.log_step(t=0, action=1, reward=1.0, act_s=0.0, env_s=0.0, observe_s=0.0)
    with pytest.raises(Exception, match="UNIQUE"):
        logger.log_step(t=0, action=2, reward=2.0, act_s=0.0, env_s=0.0, observe_s=0.0)


def test_failed_objective_stops_the_run_and_is_recorded(tmp_path):
    db = str(tmp_path / "runs.db")
    calls = {"n": 0}

    def flaky(x):
        calls["n"] += 1
        return float("nan") if calls["n"] == 3 else float(x.sum())

    env = BlackBoxEnv(objective=flaky, bounds=[[0, 0], [1, 1]], budget=6)
    info = {"kind": "bo", "env_id": "npbandit/BlackBox-v0", "env_params": {"objective": "flaky"}}
    with pytest.raises(ObjectiveError, match="nan"):
        run_episode(env, SobolPolicy(2), seed=0, logger=RunLogger(db, commit_every=100), run_info=info)
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert run.status == "failed" and "ObjectiveError" in run.error
    assert [s["failed"] for s in steps] == [False, False, True]
    calls["n"] = 0
    result = run_episode(env, SobolPolicy(2), seed=0, logger=RunLogger(db), run_info=info, on_error="skip")
    assert result.failed_steps == 1 and len(result.steps) == 6
    assert list_runs(db)[-1].status == "completed"


def test_a_killed_run_keeps_its_committed_steps_and_shows_as_interrupted(tmp_path):
    db = str(tmp_path / "runs.db")
    script = textwrap.dedent(f"""
        import time
        from npbandit.envs import WheelBanditEnv
        from npbandit.loop import run_episode
        from npbandit.policies import UniformPolicy
        from npbandit.storage import RunLogger

        class Slow(UniformPolicy):
            def act(self, obs):
                time.sleep(0.002)
                return super().act(obs)

        run_episode(WheelBanditEnv(horizon=100000), Slow(), seed=0, logger=RunLogger({db!r}, commit_every=10),
                    run_info={{"kind": "bandit", "env_id": "wheel", "env_params": {{"delta": 0.5}}}})
    """)
    proc = subprocess.Popen([sys.executable, "-c", script])
    deadline = time.time() + 60
    while time.time() < deadline:
        time.sleep(0.3)
        runs = list_runs(db) if os.path.exists(db) else []
        if runs and runs[0].n_steps >= 50:
            break
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert run.status == "interrupted"
    assert len(steps) >= 50 and len(steps) % 10 == 0  # whole committed batches, nothing torn
    assert [s["t"] for s in steps] == list(range(len(steps)))
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_four_processes_write_one_sqlite_file(tmp_path):
    db = str(tmp_path / "runs.db")
    open_db(db)
    script = textwrap.dedent(f"""
        import sys
        from npbandit.envs import WheelBanditEnv
        from npbandit.loop import run_episode
        from npbandit.policies import UniformPolicy
        from npbandit.storage import RunLogger
        for seed in range(3):
            run_episode(WheelBanditEnv(horizon=300), UniformPolicy(), seed=seed,
                        logger=RunLogger({db!r}, commit_every=1),
                        run_info={{"kind": "bandit", "env_id": "wheel", "env_params": {{"delta": 0.5}}}})
    """)
    procs = [subprocess.Popen([sys.executable, "-c", script], stderr=subprocess.PIPE, text=True) for _ in range(4)]
    errors = [p.communicate(timeout=300)[1] for p in procs]
    assert all(p.returncode == 0 for p in procs), errors
    assert not any("locked" in e for e in errors)
    runs = list_runs(db)
    assert len(runs) == 12 and all(r.status == "completed" and r.n_steps == 300 for r in runs)
    with open_db(db).connect() as conn:
        assert len(conn.execute(select(Step.id)).all()) == 12 * 300


def test_open_db_rejects_bad_urls():
    with pytest.raises(ValueError, match="db must be"):
        open_db("")
