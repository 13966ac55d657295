"""The run loop and SQLite storage: logging, failures, crashes, concurrent writers."""

import gc
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import gymnasium
import numpy as np
import pytest
from helpers import four_writers
from sqlalchemy import select

from npbandit.envs import BlackBoxEnv, ObjectiveError, WheelBanditEnv
from npbandit.loop import RunInterrupted, run_episode
from npbandit.policies import SobolPolicy, UniformPolicy
from npbandit.storage import Run, RunLogger, Step, StorageError, list_runs, open_db, run_steps


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
    # and the versions it was made with: npbandit, torch, Python and the numerical packages
    import importlib.metadata
    import platform

    import torch

    from npbandit import __version__
    from npbandit.storage.logger import RECORDED_PACKAGES

    assert run.versions == {"npbandit": __version__, "torch": torch.__version__, "python": platform.python_version(),
                            **{name: importlib.metadata.version(name) for name in RECORDED_PACKAGES}}


def test_times_read_back_as_aware_utc_whatever_zone_they_were_logged_in(tmp_path):
    import datetime as dt

    db = str(tmp_path / "runs.db")
    before = dt.datetime.now(dt.UTC)
    logger = RunLogger(db, commit_every=1)
    logger.start(kind="bo", env_id="x", env_params={}, policy="p")
    tokyo = dt.timezone(dt.timedelta(hours=9))
    sent = dt.datetime(2026, 1, 2, 12, 0, tzinfo=tokyo)
    logger.log_step(t=0, action=[0.5], reward=1.0, submitted_at=sent, finished_at=dt.datetime(2026, 1, 2, 3, 30))
    logger.finish("completed")
    (step,) = run_steps(db, logger.run_id)
    assert step["submitted_at"] == sent and step["submitted_at"].utcoffset() == dt.timedelta(0)
    # a naive time is taken as UTC
    assert step["finished_at"] == dt.datetime(2026, 1, 2, 3, 30, tzinfo=dt.UTC)
    (run,) = list_runs(db)
    assert run.started_at.tzinfo is not None and run.finished_at.tzinfo is not None
    assert before - dt.timedelta(seconds=5) <= run.started_at <= run.finished_at <= dt.datetime.now(dt.UTC)


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


@pytest.mark.integration
@pytest.mark.slow
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


@pytest.mark.integration
@pytest.mark.slow
def test_four_processes_write_one_sqlite_file(tmp_path):
    db = str(tmp_path / "runs.db")
    open_db(db)
    errors = four_writers(db, tmp_path)
    assert not any("locked" in e for e in errors)
    runs = list_runs(db)
    assert len(runs) == 12 and all(r.status == "completed" and r.n_steps == 100 for r in runs)
    with open_db(db).connect() as conn:
        assert len(conn.execute(select(Step.id)).all()) == 12 * 100


def test_open_db_rejects_bad_urls():
    with pytest.raises(ValueError, match="db must be"):
        open_db("")


def test_every_run_commits_each_step_unless_it_asks_for_batches(tmp_path):
    db = str(tmp_path / "runs.db")
    bo, bandit, batched = RunLogger(db), RunLogger(db), RunLogger(db, commit_every=50)
    bo.start(kind="bo", env_id="x", env_params={}, policy="p")
    bandit.start(kind="bandit", env_id="x", env_params={}, policy="p")
    batched.start(kind="bandit", env_id="x", env_params={}, policy="p")
    assert (bo.commit_every, bandit.commit_every, batched.commit_every) == (1, 1, 50)
    bo.log_step(t=0, action=[0.5], reward=1.0)
    bandit.log_step(t=0, action=1, reward=1.0)
    batched.log_step(t=0, action=1, reward=1.0)
    assert {r.id: r.n_steps for r in list_runs(db)} == {bo.run_id: 1, bandit.run_id: 1, batched.run_id: 0}
    for logger in (bo, bandit, batched):
        logger.finish()
    assert all(r.n_steps == 1 and r.status == "completed" for r in list_runs(db))
    with pytest.raises(ValueError, match="commit_every"):
        RunLogger(db, commit_every=0)


def test_a_batch_is_committed_when_its_steps_turn_out_slow(tmp_path):
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db, commit_every=1000, max_wait_s=0.05)
    logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
    logger.log_step(t=0, action=1, reward=1.0)
    time.sleep(0.1)
    logger.log_step(t=1, action=1, reward=1.0)  # the first one has waited longer than max_wait_s
    assert list_runs(db)[0].n_steps == 2
    logger.finish()


def test_the_heartbeat_does_not_wait_for_steps(tmp_path):
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db, heartbeat_every=0.05)
    logger.start(kind="bo", env_id="x", env_params={}, policy="p")
    engine = open_db(db)

    def heartbeat():
        with engine.connect() as conn:
            return conn.execute(select(Run.heartbeat_at)).scalar_one()

    first = heartbeat()
    # no step is logged meanwhile, so only the heartbeat thread can move it; polled rather than
    # read once after a fixed sleep, which a commit delayed on a loaded machine could outlast
    deadline = time.monotonic() + 60
    while heartbeat() <= first:
        assert time.monotonic() < deadline, "the heartbeat never moved while no step was logged"
        time.sleep(0.05)
    thread = logger._beat_thread
    logger.finish()
    assert not thread.is_alive()
    dropped = RunLogger(db, heartbeat_every=0.05)
    dropped.start(kind="bo", env_id="x", env_params={}, policy="p")
    thread = dropped._beat_thread
    del dropped  # never finished: its heartbeat must not outlive it
    gc.collect()
    thread.join(60)  # returns as soon as it ends; only a thread that never ends waits this long
    assert not thread.is_alive()


def test_finish_records_interrupted_and_refuses_unknown_statuses(tmp_path):
    db = str(tmp_path / "runs.db")
    with pytest.raises(KeyboardInterrupt):
        with RunLogger(db) as logger:
            logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
            logger.log_step(t=0, action=1, reward=1.0)
            raise KeyboardInterrupt
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.n_steps == 1
    with pytest.raises(ValueError, match="status"):
        RunLogger(db).finish("crashed")


def test_unusable_databases_are_reported_by_name(tmp_path):
    with pytest.raises(StorageError, match="does not exist"):
        RunLogger(str(tmp_path / "no-such-dir" / "runs.db"))
    with pytest.raises(StorageError, match="directory"):
        RunLogger(str(tmp_path))
    db = tmp_path / "runs.db"
    open_db(str(db))
    # SQLite itself refuses writes here, as it does for a read-only file (which root may write anyway)
    logger = RunLogger(f"sqlite:///file:{db}?mode=ro&uri=true")
    with pytest.raises(StorageError, match="readonly"):
        logger.start(kind="bo", env_id="x", env_params={}, policy="p")
    for reader in (list_runs, lambda url: run_steps(url, 1)):
        with pytest.raises(StorageError, match="no database"):
            reader(str(tmp_path / "typo.db"))
    assert not (tmp_path / "typo.db").exists()


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes read-only files anyway")
def test_a_read_only_file_is_refused_for_writing_and_read_as_it_is(tmp_path):
    db = tmp_path / "runs.db"
    run_episode(WheelBanditEnv(horizon=5), UniformPolicy(), seed=0, logger=RunLogger(str(db)), run_info=wheel_info())
    db.chmod(0o444)
    tmp_path.chmod(0o555)
    try:
        with pytest.raises(StorageError, match="read-only"):
            RunLogger(f"{tmp_path}/./runs.db")  # the same file under a new URL, so no cached engine
        (run,) = list_runs(f"sqlite:///{db}")
        assert run.n_steps == 5 and len(run_steps(f"sqlite:///{db}", run.id)) == 5
    finally:
        tmp_path.chmod(0o755)
        db.chmod(0o644)


def test_reading_never_writes(tmp_path):
    db = tmp_path / "runs.db"
    run_episode(WheelBanditEnv(horizon=20), UniformPolicy(), seed=0, logger=RunLogger(str(db)), run_info=wheel_info())
    open_db(str(db)).dispose()  # the writer's pooled connections would keep the file in WAL mode
    with sqlite3.connect(db) as conn:  # a database in rollback-journal mode, as another tool may leave it
        conn.execute("PRAGMA journal_mode=DELETE")
    before, files = db.read_bytes(), sorted(os.listdir(tmp_path))
    (run,) = list_runs(str(db))
    assert len(run_steps(str(db), run.id)) == 20
    from npbandit.report import report_text

    assert "uniform" in report_text(str(db))
    assert db.read_bytes() == before and sorted(os.listdir(tmp_path)) == files
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"


def test_ctrl_c_in_a_batched_run_saves_the_buffered_steps_and_records_interrupted(tmp_path):
    db = str(tmp_path / "runs.db")

    class CtrlC(UniformPolicy):
        def act(self, obs):
            if self.calls == 30:
                raise KeyboardInterrupt
            self.calls += 1
            return super().act(obs)

    policy = CtrlC()
    policy.calls = 0
    with pytest.raises(RunInterrupted, match="KeyboardInterrupt after 30 step") as info:  # raised: no signal
        run_episode(WheelBanditEnv(horizon=100), policy, seed=0, logger=RunLogger(db, commit_every=50),
                    run_info=wheel_info(horizon=100))
    assert isinstance(info.value, KeyboardInterrupt) and info.value.steps == 30
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.n_steps == 30 and run.id == info.value.run_id
    assert run.error == "KeyboardInterrupt after 30 step(s)" and info.value.signum is None
    assert [s["t"] for s in run_steps(db, run.id)] == list(range(30))


def test_shared_url_makes_sqlite_paths_absolute_for_other_processes(tmp_path, monkeypatch):
    from npbandit.storage import shared_url

    monkeypatch.chdir(tmp_path)
    assert shared_url("runs.db") == f"sqlite:///{tmp_path / 'runs.db'}"
    assert shared_url("sqlite:///sub/runs.db?timeout=5") == f"sqlite:///{tmp_path / 'sub' / 'runs.db'}?timeout=5"
    assert shared_url(f"sqlite:///{tmp_path / 'a.db'}") == f"sqlite:///{tmp_path / 'a.db'}"
    url = "postgresql+psycopg://alice:secret@db-host/npbandit"
    assert shared_url(url) == url  # the password stays: workers need it
    for memory in ("sqlite://", "sqlite:///:memory:"):
        with pytest.raises(ValueError, match="other processes cannot share"):
            shared_url(memory)
    with pytest.raises(ValueError, match="db must be"):
        shared_url(3)


def test_a_relative_sqlite_url_means_the_file_in_the_directory_of_each_open(tmp_path, monkeypatch):
    # open_db caches an engine per database: a relative path opened again after a chdir is
    # another file, and must not be written through the first directory's engine
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir(), second.mkdir()
    for directory, url in ((first, "sqlite:///npbandit.db"), (second, "sqlite:///npbandit.db"),
                           (first, "runs.db"), (second, "sqlite:///file:runs.db?uri=true")):
        monkeypatch.chdir(directory)
        name = "runs.db" if "runs" in url else "npbandit.db"
        run_episode(WheelBanditEnv(horizon=3), UniformPolicy(), seed=0, logger=RunLogger(url), run_info=wheel_info())
        assert [r.n_steps for r in list_runs(url)] == [3]  # this directory's run, read through the same URL
        assert len(list_runs(str(directory / name))) == 1
    for url in ("sqlite://", "sqlite:///:memory:"):  # in memory: one engine per reader (a writer is refused)
        assert open_db(url, readonly=True) is open_db(url, readonly=True)
    logger = RunLogger("late.db")  # a logger's file is the one named when it was made, not when its run starts
    monkeypatch.chdir(first)
    logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
    logger.finish("completed")
    assert (second / "late.db").exists() and not (first / "late.db").exists()


def test_a_relative_url_s_errors_name_it_and_the_file_in_the_current_directory(tmp_path, monkeypatch):
    # the writer and the reader read the file from the absolute URL open_db made, not from the URL as given
    monkeypatch.chdir(tmp_path)
    (tmp_path / "folder.db").mkdir()
    for given, url in (("missing/runs.db", "sqlite:///missing/runs.db"),  # a bare path, named as its URL
                       ("sqlite:///missing/runs.db", "sqlite:///missing/runs.db"),
                       ("sqlite:///file:missing/runs.db?uri=true", "sqlite:///file:missing/runs.db?uri=true")):
        with pytest.raises(StorageError) as err:
            open_db(given)
        assert str(err.value) == f"db {url!r}: directory {str(tmp_path / 'missing')!r} does not exist"
        with pytest.raises(StorageError) as err:
            open_db(given, readonly=True)
        assert str(err.value) == f"db {url!r}: no database at {str(tmp_path / 'missing' / 'runs.db')!r}"
    with pytest.raises(StorageError) as err:
        open_db("folder.db")
    assert str(err.value) == (f"db 'sqlite:///folder.db': {str(tmp_path / 'folder.db')!r} is a directory, not a "
                              "database file")


def test_the_storage_package_re_exports_each_name_from_its_module():
    import npbandit.storage as storage
    from npbandit.storage import engine, heartbeat, logger, models, queries, urls

    homes = {engine: ["DEFAULT_URL", "open_db"], urls: ["display_url", "shared_url"],
             heartbeat: ["HEARTBEAT_EVERY", "STALE_AFTER", "effective_status"], logger: ["RunLogger", "COMMIT_EVERY"],
             models: ["Base", "Run", "Step", "Meta", "STATUSES", "SCHEMA_VERSION"],
             queries: ["RunRow", "list_runs", "run_steps"]}
    for module, names in homes.items():
        assert set(names) <= set(storage.__all__)
        for name in names:
            assert getattr(storage, name) is getattr(module, name), name
    assert storage.COMMIT_EVERY is logger.COMMIT_EVERY  # one dict: changing an entry works through either name


def test_the_heartbeat_settings_are_read_from_the_heartbeat_module(tmp_path, monkeypatch):
    import datetime as dt
    from types import SimpleNamespace

    from npbandit.storage import effective_status, heartbeat

    monkeypatch.setattr(heartbeat, "HEARTBEAT_EVERY", 0.25)
    assert RunLogger(str(tmp_path / "runs.db")).heartbeat_every == 0.25
    now = dt.datetime(2000, 1, 1, 12)
    run = SimpleNamespace(status="running", host="another-host", pid=1, heartbeat_at=now - dt.timedelta(minutes=5))
    assert effective_status(run, now) == "running"  # 5 minutes is within the default 30
    monkeypatch.setattr(heartbeat, "STALE_AFTER", dt.timedelta(minutes=1))
    assert effective_status(run, now) == "interrupted"


def test_a_logger_creates_a_new_sqlite_file_only_when_its_run_starts(tmp_path):
    db = tmp_path / "runs.db"
    logger = RunLogger(str(db))
    assert not db.exists()
    logger.finish("completed")  # a run that never started: nothing to record, nothing created
    assert not db.exists()
    logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
    logger.log_step(t=0, action=1, reward=1.0)
    logger.finish("completed")
    (run,) = list_runs(str(db))
    assert run.status == "completed" and run.n_steps == 1


BAD_RUN_EPISODE = [
    ({"on_error": "ignore"}, ValueError, "on_error"),
    ({"steps": 0}, ValueError, "steps"),
    # the episode truncates after its horizon (5): a longer run silently took 5 steps, completed
    ({"steps": 6}, ValueError, r"steps=6 is more than the 5 steps of env's episode \(its horizon"),
    ({"seed": -1}, ValueError, "seed"),
    ({"seed": None}, ValueError, "seed"),
    ({"progress": "yes"}, TypeError, "progress"),
    ({"run_info": ["kind", "bo"]}, TypeError, "run_info"),
    ({"policy": "uniform"}, TypeError, "policy"),
    ({"batch_size": 2}, ValueError, "batch_size"),
    ({"eval_timeout": 1.0}, ValueError, "eval_timeout"),
    ({"keep_steps": 0}, TypeError, "keep_steps"),
]


def test_a_run_that_keeps_no_steps_in_memory_still_logs_and_counts_them(tmp_path):
    db = str(tmp_path / "runs.db")
    result = run_episode(WheelBanditEnv(horizon=30), UniformPolicy(), seed=2, logger=RunLogger(db), keep_steps=False)
    kept = run_episode(WheelBanditEnv(horizon=30), UniformPolicy(), seed=2)
    assert result.steps == [] and result.n_steps == kept.n_steps == len(kept.steps) == 30
    assert result.cumulative_regret == kept.cumulative_regret
    (run,) = list_runs(db)
    assert run.n_steps == 30 and [s["action"] for s in run_steps(db, run.id)] == [s["action"] for s in kept.steps]
    with pytest.raises(ValueError, match="keep_steps=False is for bandit runs"):
        run_episode(BlackBoxEnv(objective=lambda x: float(x.sum()), bounds=[[0.0], [1.0]], budget=3), SobolPolicy(1),
                    seed=0, keep_steps=False)


@pytest.mark.parametrize("kwargs,error,match", BAD_RUN_EPISODE, ids=[next(iter(k)) + "=" + repr(next(iter(k.values())))
                                                                      for k, _, _ in BAD_RUN_EPISODE])
def test_run_episode_refuses_bad_arguments_before_creating_the_database(tmp_path, kwargs, error, match):
    args = {"policy": UniformPolicy(), "seed": 0, "logger": RunLogger(str(tmp_path / "runs.db")), **kwargs}
    with pytest.raises(error, match=match):
        run_episode(WheelBanditEnv(horizon=5), **args)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("kwargs,error,match", [
    ({"policies": ["no-such-policy"]}, ValueError, "policy"),
    ({"policies": ["/no/such/checkpoint.json"]}, (ValueError, FileNotFoundError), "checkpoint"),
    ({"deltas": [2.0]}, ValueError, "deltas"),
    ({"seeds": [-1]}, ValueError, "seeds"),
    ({"steps": 0}, ValueError, "steps"),
    ({"beta": -1.0}, ValueError, "beta"),
    ({"commit_every": 0}, ValueError, "commit_every"),
    ({"say": "loudly"}, TypeError, "say"),
    ({"progress": 1}, TypeError, "progress"),
])
def test_run_wheel_bandits_refuses_bad_arguments_before_creating_the_database(tmp_path, kwargs, error, match):
    from npbandit.loop import run_wheel_bandits

    args = {"policies": ["uniform"], "deltas": [0.5], "seeds": [0], "steps": 3, "db": str(tmp_path / "runs.db"),
            "say": None, **kwargs}
    with pytest.raises(error, match=match):
        run_wheel_bandits(**args)
    assert list(tmp_path.iterdir()) == []


def test_an_observation_the_policy_cannot_take_is_saved_and_ends_the_run_failed(tmp_path):
    db = str(tmp_path / "runs.db")

    class Choking(UniformPolicy):
        def observe(self, obs, action, reward, info):
            if info["t"] == 3:
                raise ValueError("cannot learn from this")
            super().observe(obs, action, reward, info)

    with pytest.raises(ValueError, match="cannot learn") as info:
        run_episode(WheelBanditEnv(horizon=10), Choking(), seed=0, logger=RunLogger(db),
                    run_info=wheel_info(horizon=10))
    (run,) = list_runs(db)
    assert run.status == "failed" and run.n_steps == 4 and "step t=3" in run.error
    assert any(f"step t=3, which run {run.id} holds" in note for note in info.value.__notes__)


class _Returns(gymnasium.Env):
    """A bandit of one's own whose step ``t=2`` returns ``reward`` and ``info`` as given."""

    observation_space = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    action_space = gymnasium.spaces.Discrete(3)

    def __init__(self, reward, info):
        self.bad = reward, info

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        return np.zeros(2, np.float32), {}

    def step(self, action):
        self.t += 1
        reward, info = self.bad if self.t == 3 else (1.0, {"regret": 0.5})
        return np.zeros(2, np.float32), reward, False, False, info


@pytest.mark.parametrize(("reward", "info", "error", "message"), [
    (None, {}, ValueError, r"reward must be a finite real number \(env.step at step t=2\), got None"),
    (float("nan"), {}, ValueError, r"reward must be a finite real number \(env.step at step t=2\), got nan"),
    ("1", {}, ValueError, r"reward must be a finite real number .*, got '1'"),
    (1.0, None, TypeError, r"info must be a dict \(env.step at step t=2\), got NoneType"),
    (1.0, {"regret": float("nan")}, ValueError,
     r'info\["regret"\] must be a finite real number or absent \(env.step at step t=2\), got nan'),
    (1.0, {"regret": "x"}, ValueError, r'info\["regret"\] must be a finite real number or absent .*, got \'x\''),
    (1.0, {"expected_regret": float("inf")}, ValueError, r'info\["expected_regret"\] must be a finite real number'),
])
def test_what_an_environment_step_returns_is_checked_by_name_before_it_is_written(tmp_path, reward, info, error,
                                                                                 message):
    """A None reward raised float()'s TypeError naming nothing, a NaN regret made the run's
    cumulative regret NaN (stored as NULL: the report then failed on the database), a str
    regret raised a bare '+=' TypeError."""
    db = str(tmp_path / "runs.db")
    with pytest.raises(error, match=message):
        run_episode(_Returns(reward, info), UniformPolicy(3), seed=0, steps=5, logger=RunLogger(db))
    (run,) = list_runs(db)
    assert run.status == "failed" and run.n_steps == 2 and "step t=2" in run.error
    assert [s["cumulative_regret"] for s in run_steps(db, run.id)] == [0.5, 1.0]


def test_a_zero_d_array_reward_and_numpy_regrets_are_numbers(tmp_path):
    result = run_episode(_Returns(np.array(2.0), {"regret": np.float32(0.25), "expected_regret": np.int64(0)}),
                         UniformPolicy(3), seed=0, steps=4)
    assert [s["reward"] for s in result.steps] == [1.0, 1.0, 2.0, 1.0]
    assert result.cumulative_regret == 1.75


class _Plays(UniformPolicy):
    """A policy of one's own that plays ``arm`` from step ``t=2`` on (arm 0 before)."""

    name = "plays"

    def __init__(self, arm):
        super().__init__(3)
        self.arm = arm

    def reset(self, seed=None):
        super().reset(seed)
        self.t = 0

    def act(self, obs):
        self.t += 1
        return self.arm if self.t == 3 else 0

    def observe(self, obs, action, reward, info):
        pass


@pytest.mark.parametrize("arm", [-1, 3, True, 1.0, "1", np.array([1])])
def test_an_action_that_is_no_arm_of_the_environment_ends_the_run_before_env_step(tmp_path, arm):
    """A policy of one's own returning -1 on a ``Discrete(3)`` bandit had an environment that
    indexes a NumPy array pay arm 2 while the run recorded -1; True was recorded as JSON true."""
    db = str(tmp_path / "runs.db")
    env = _Returns(1.0, {"regret": 0.5})
    with pytest.raises(ValueError, match=r"policy 'plays' returned .* at step t=2: an action of this environment "
                                         r"is an arm, an int in 0\.\.2 \(env\.action_space Discrete\(3\)\)"):
        run_episode(env, _Plays(arm), seed=0, steps=5, logger=RunLogger(db))
    assert env.t == 2  # env.step never saw it
    (run,) = list_runs(db)
    assert run.status == "failed" and run.n_steps == 2 and "step t=2" in run.error


def test_a_numpy_integer_action_is_recorded_as_the_arm_it_names(tmp_path):
    db = str(tmp_path / "runs.db")
    result = run_episode(_Returns(1.0, {"regret": 0.5}), _Plays(np.int64(2)), seed=0, steps=4, logger=RunLogger(db))
    assert [type(s["action"]) for s in result.steps] == [int] * 4
    assert [s["action"] for s in run_steps(db, result.run_id)] == [0, 0, 2, 0]


def test_steps_may_reach_a_gymnasium_time_limit_but_not_pass_it():
    env = gymnasium.make("npbandit/LinearBandit-v0", context_dim=3, n_arms=4, horizon=50, max_episode_steps=20)
    assert run_episode(env, UniformPolicy(4, 3), seed=0, steps=20).n_steps == 20
    with pytest.raises(ValueError, match=r"steps=21 is more than the 20 steps of env's episode \(its "
                                         r"max_episode_steps"):
        run_episode(env, UniformPolicy(4, 3), seed=0, steps=21)


def test_a_run_whose_process_was_killed_says_why_it_counts_as_interrupted(tmp_path):
    # a process killed outright (SIGKILL) cannot close its run: the run stays marked running, is shown
    # interrupted, and says why, as a run stopped by SIGTERM says "SIGTERM after N step(s)"
    import datetime as dt
    import subprocess
    from types import SimpleNamespace

    from sqlalchemy import update

    from npbandit.report import report_text
    from npbandit.storage import open_db
    from npbandit.storage.heartbeat import interruption
    from npbandit.storage.models import Run

    db = str(tmp_path / "runs.db")
    logger = RunLogger(db)
    logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
    logger.log_step(t=0, action=1, reward=1.0)
    gone = subprocess.Popen(["true"])
    gone.wait()  # a pid no process holds any more (reaped)
    with open_db(db).begin() as conn:  # as a killed process leaves it: still running, its pid gone
        conn.execute(update(Run).values(pid=gone.pid))
    (run,) = list_runs(db)
    assert run.status == "interrupted" and run.error.startswith(f"its process {gone.pid} ended without closing")
    assert f"interrupted  (its process {gone.pid} ended" in report_text(db)
    logger.finish("completed")
    (run,) = list_runs(db)
    assert run.status == "completed" and run.error is None  # a closed run: nothing to explain
    now = dt.datetime(2000, 1, 1, 12)
    far = SimpleNamespace(status="running", host="another-host", pid=1, heartbeat_at=now - dt.timedelta(hours=2))
    assert interruption(far, now) == ("no heartbeat from another-host since 2000-01-01 10:00:00 UTC: its process "
                                      "stopped without closing the run, or lost the database")
    assert interruption(SimpleNamespace(status="running", host="another-host", pid=1, heartbeat_at=now), now) is None
