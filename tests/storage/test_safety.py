"""Storage must not harm databases it does not own: readers leave an SQLite file's
directory as it was (no ``-wal`` / ``-shm`` files that would lock its owner out), writers
refuse another application's database before changing anything, bad ``db`` arguments are
named, and objective error text is stored as given but printed escaped."""

import contextlib
import os
import shutil
import sqlite3
import tempfile
import traceback

import pytest
from helpers import forget_engines
from sqlalchemy import select, update

from npbandit.envs import WheelBanditEnv
from npbandit.loop import run_episode
from npbandit.policies import UniformPolicy
from npbandit.storage import (
    Meta,
    RunLogger,
    SchemaVersionError,
    StorageError,
    list_runs,
    open_db,
    run_steps,
    run_totals,
)
from npbandit.storage import engine as storage_engine

WHEEL = {"kind": "bandit", "env_id": "npbandit/WheelBandit-v0", "env_params": {"delta": 0.5}}


def _directory_state(path):
    """Every entry of ``path`` with its size, mtime and owner, and the directory's own mtime."""
    entries = {name: (st.st_size, st.st_mtime_ns, st.st_uid)
               for name in os.listdir(path) for st in [os.stat(os.path.join(path, name))]}
    return entries, os.stat(path).st_mtime_ns


def _log_run(db, horizon=5, seed=0):
    return run_episode(WheelBanditEnv(horizon=horizon), UniformPolicy(), seed=seed, logger=RunLogger(db),
                       run_info=WHEEL)


def test_reading_a_closed_wal_database_leaves_its_directory_unchanged(tmp_path):
    from npbandit.report import report_text

    db = str(tmp_path / "runs.db")
    _log_run(db, horizon=12)
    forget_engines()  # the writer has ended: SQLite removed its -wal and -shm files
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    before = _directory_state(tmp_path)
    assert list(before[0]) == ["runs.db"]
    (run,) = list_runs(db)
    assert len(run_steps(db, run.id)) == 12
    assert "uniform" in report_text(db)
    assert _directory_state(tmp_path) == before  # no file made, none touched
    forget_engines()
    _log_run(db, seed=1)  # and the owner writes on
    assert [r.n_steps for r in list_runs(db)] == [12, 5]


def test_reading_while_a_writer_is_open_sees_its_committed_steps_and_adds_no_file(tmp_path):
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db, commit_every=1)
    logger.start(kind="bandit", env_id="x", env_params={}, policy="p")
    for t in range(3):
        logger.log_step(t=t, action=t, reward=1.0)
    files = sorted(os.listdir(tmp_path))
    (run,) = list_runs(db)
    assert run.status == "running" and run.n_steps == 3 and len(run_steps(db, run.id)) == 3
    assert sorted(os.listdir(tmp_path)) == files
    logger.finish()


def test_a_reader_notices_a_file_changed_under_it_and_reads_again(tmp_path):
    db = str(tmp_path / "runs.db")
    _log_run(db)
    forget_engines()
    # the run's last write a second back: a WAL checkpoint changes neither the file's size nor its
    # header, only its times, and a kernel with coarse file timestamps (one per tick, up to 10 ms)
    # would give the change below the time of the run's last write, some milliseconds before
    written = os.stat(db)
    os.utime(db, ns=(written.st_atime_ns, written.st_mtime_ns - 1_000_000_000))
    engine = open_db(db, readonly=True)
    calls = []

    def read(conn):
        calls.append(len(calls))
        if len(calls) == 1:  # a writer commits and checkpoints into the file while this read runs
            with sqlite3.connect(db) as writer:
                writer.execute("UPDATE runs SET policy = 'changed'")
            writer.close()
        return conn.execute(select(storage_engine.Base.metadata.tables["runs"].c.policy)).scalar_one()

    assert storage_engine._read(engine, db, "read runs", read) == "changed"
    assert len(calls) == 2


def test_a_writer_that_opens_the_file_during_a_read_makes_the_reader_read_again(tmp_path):
    """A writer's commit goes to its -wal file, leaving the database file as it was: the read
    is consistent, but the writer may checkpoint into the file within one timestamp tick, so
    its -wal file appearing counts as a change, and the read again goes through its files."""
    db = str(tmp_path / "runs.db")
    _log_run(db)
    forget_engines()
    assert not os.path.exists(db + "-wal")  # every writer closed: the reader opens the file immutable
    engine = open_db(db, readonly=True)
    calls, writers = [], []

    def read(conn):
        calls.append(len(calls))
        if len(calls) == 1:  # a writer opens the database and commits, without checkpointing, during this read
            writer = sqlite3.connect(db)
            writer.execute("UPDATE runs SET policy = 'changed'")
            writer.commit()
            writers.append(writer)
        return conn.execute(select(storage_engine.Base.metadata.tables["runs"].c.policy)).scalar_one()

    try:
        assert storage_engine._read(engine, db, "read runs", read) == "changed"
    finally:
        for writer in writers:
            writer.close()
    assert len(calls) == 2


# root writes whatever the file modes say, so both the owner and the reader are unprivileged users
@pytest.mark.integration
@pytest.mark.skipif(not hasattr(os, "fork") or os.geteuid() != 0,
                    reason="needs root, to act as two unprivileged users (the owner and a reader) in forked children")
def test_a_report_by_another_user_does_not_lock_the_owner_out(tmp_path):
    from npbandit.report import report_text

    # warm up in this process: a child that has become another user may not be able to import
    # anything more (the interpreter's own files may be readable by root only)
    warm = str(tmp_path / "warm.db")
    _log_run(warm)
    report_text(warm)
    forget_engines()
    owner, reader = 54321, 54322
    shared = tempfile.mkdtemp(prefix="npbandit-shared-")  # reachable by both users, unlike tmp_path
    try:
        os.chown(shared, owner, owner)
        os.chmod(shared, 0o777)  # a directory the reader may write too: where SQLite used to leave its files
        db = os.path.join(shared, "runs.db")

        def as_user(uid, work):
            read_end, write_end = os.pipe()
            pid = os.fork()
            if pid == 0:  # pragma: no cover - the child
                code = 1
                try:
                    os.close(read_end)
                    os.setgroups([])
                    os.setgid(uid)
                    os.setuid(uid)
                    work()
                    forget_engines()
                    code = 0
                except BaseException:  # noqa: BLE001 - sent to the parent
                    os.write(write_end, traceback.format_exc()[-3000:].encode())
                finally:
                    os._exit(code)
            os.close(write_end)
            with os.fdopen(read_end, "rb") as pipe:
                message = pipe.read().decode()
            _, status = os.waitpid(pid, 0)
            assert status == 0, f"uid {uid}: {message}"

        as_user(owner, lambda: _log_run(db))
        files = sorted(os.listdir(shared))
        as_user(reader, lambda: report_text(db) and list_runs(db))
        assert sorted(os.listdir(shared)) == files == ["runs.db"]
        as_user(owner, lambda: _log_run(db, seed=1))
        assert [r.seed for r in list_runs(db)] == [0, 1]
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def test_a_writer_refuses_another_applications_sqlite_database(tmp_path):
    db = tmp_path / "otherapp.db"
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
        conn.execute("CREATE TABLE tags (name TEXT)")
        conn.execute("INSERT INTO notes (body) VALUES ('keep me')")
    conn.close()
    content, state = db.read_bytes(), _directory_state(tmp_path)
    for opening in (lambda: RunLogger(str(db)), lambda: open_db(f"sqlite:///{db}"), lambda: list_runs(str(db))):
        with pytest.raises(StorageError, match=r"db '.*otherapp\.db'.*notes, tags.*not an npbandit database"):
            opening()
    from npbandit import optimize

    with pytest.raises(StorageError, match="notes, tags"):
        optimize(lambda x: float(x.sum()), [[0.0], [1.0]], surrogate="random", budget=2, db=str(db), progress=False)
    assert db.read_bytes() == content and _directory_state(tmp_path) == state
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"  # not switched to WAL
        assert {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")} == {"notes", "tags"}
    conn.close()


def test_an_empty_file_is_made_an_npbandit_database(tmp_path):
    db = tmp_path / "new.db"
    db.touch()
    _log_run(str(db))
    assert [r.n_steps for r in list_runs(str(db))] == [5]


def test_a_schema_version_that_is_not_a_number_is_called_so(tmp_path):
    db = str(tmp_path / "runs.db")
    _log_run(db)
    with open_db(db).begin() as conn:
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="banana"))
    forget_engines()
    for opening in (lambda: RunLogger(db), lambda: list_runs(db)):
        with pytest.raises(SchemaVersionError, match="'banana', which is not a schema version") as info:
            opening()
        assert "older npbandit" not in str(info.value)
    forget_engines()


@pytest.mark.parametrize("url,message", [
    ("postgresql+psycopg://alice:s3cret@db-host:notaport/runs", r"^db must be .*'postgresql\+psycopg://alice:\*\*\*@"),
    ("file:x.db?mode=memory", r"^db 'file:x.db\?mode=memory'.*SQLite URI filename.*uri=true"),
    ("sqlite:///file:x.db", r"^db 'sqlite:///file:x.db'.*SQLite URI filename.*uri=true"),
    ("sqlite:///runs.db?mode=ro", r"^db 'sqlite:///runs.db\?mode=ro'.*parameter\(s\) mode.*uri=true"),
    ("postgres://alice:s3cret@db-host/runs", r"^db must be .*'postgres://alice:\*\*\*@.*no database kind 'postgres'.*"
                                             r"postgresql\+psycopg://"),
    ("sqllite:///runs.db", r"^db must be .*'sqllite:///runs.db'.*no database kind 'sqllite'.*sqlite:///"),
    ("postgresql+psycopg3://alice@db-host/runs", r"^db must be .*psycopg3.*the driver psycopg: postgresql\+psycopg://"),
])
def test_bad_db_arguments_are_one_line_naming_db(tmp_path, monkeypatch, url, message):
    monkeypatch.chdir(tmp_path)
    for opening in (lambda: open_db(url), lambda: RunLogger(url), lambda: list_runs(url)):
        with pytest.raises(ValueError, match=message) as info:
            opening()
        assert "\n" not in str(info.value) and "s3cret" not in str(info.value)
    assert os.listdir(tmp_path) == []  # no file named "file:x.db" or "runs.db"


def test_an_absolute_path_given_with_three_slashes_is_pointed_out(tmp_path, monkeypatch):
    """``sqlite:///tmp/x.db`` names ``tmp/x.db`` in the current directory; when that is missing
    but ``/tmp/x.db`` is there, the error says how to write the absolute path (four slashes)."""
    db = tmp_path / "runs.db"
    _log_run(str(db))
    monkeypatch.chdir(tmp_path)
    three = f"sqlite://{db}"  # sqlite:///tmp/...: a path relative to the current directory
    for opening in (lambda: list_runs(three), lambda: RunLogger(three)):
        with pytest.raises(StorageError, match=f"^db '{three}': .*relative.*sqlite:///{db}") as info:
            opening()
        assert "four slashes" in str(info.value)
    with pytest.raises(StorageError, match="no database at") as info:  # no such file anywhere: no hint
        list_runs(f"sqlite://{tmp_path / 'typo.db'}")
    assert "four slashes" not in str(info.value)
    assert not (tmp_path / "tmp").exists()  # nothing made under the current directory


def test_an_sqlite_uri_with_uri_true_is_read_as_its_file_and_never_created(tmp_path):
    db = tmp_path / "runs.db"
    _log_run(str(db))
    forget_engines()
    state = _directory_state(tmp_path)
    assert [r.n_steps for r in list_runs(f"sqlite:///file:{db}?uri=true")] == [5]
    assert _directory_state(tmp_path) == state
    with pytest.raises(StorageError, match="no database"):
        list_runs(f"sqlite:///file:{tmp_path / 'typo.db'}?mode=rwc&uri=true")
    assert not (tmp_path / "typo.db").exists()


def test_error_text_is_stored_as_given_and_printable_escapes_it(tmp_path):
    from npbandit.text import printable

    db = str(tmp_path / "runs.db")
    nasty = "ValueError: line one\nline two \x1b[31mred\x1b[0m\r\x07 \u202eevil\u2028end"
    logger = RunLogger(db)
    logger.start(kind="bo", env_id="x", env_params={}, policy="p")
    logger.finish("failed", nasty)
    (run,) = list_runs(db)
    assert run.error == nasty  # stored as given
    shown = printable(run.error)
    assert shown == ("ValueError: line one\\nline two \\x1b[31mred\\x1b[0m\\r\\x07 \\u202eevil\\u2028end")
    assert shown.isprintable()
    assert printable("naïve ünïcode — fine, tab\t") == "naïve ünïcode — fine, tab\\t"
    with pytest.raises(TypeError, match="text must be a str"):
        printable(None)


def test_a_wal_file_without_its_index_is_read_without_creating_the_index(tmp_path):
    db = tmp_path / "runs.db"
    _log_run(str(db))
    forget_engines()
    (tmp_path / "runs.db-wal").write_bytes(b"")  # as a copy that left the -shm file behind would be
    state = _directory_state(tmp_path)
    with pytest.warns(RuntimeWarning, match="no -shm file"):
        assert [r.n_steps for r in list_runs(str(db))] == [5]
    assert _directory_state(tmp_path) == state


def test_sqlite_uris_are_shared_only_with_an_absolute_path(tmp_path):
    from npbandit.storage import shared_url

    absolute = f"sqlite:///file:{tmp_path / 'runs.db'}?mode=rwc&uri=true"
    assert shared_url(absolute) == absolute
    with pytest.raises(ValueError, match="absolute path"):
        shared_url("sqlite:///file:runs.db?uri=true")
    with pytest.raises(ValueError, match=r"must be an SQLite URI \(file:path\)"):
        open_db(f"sqlite:///{tmp_path / 'runs.db'}?mode=ro&uri=true")
    with pytest.raises(ValueError, match="uri must be true or false"):
        open_db(f"sqlite:///{tmp_path / 'runs.db'}?uri=maybe")
    assert os.listdir(tmp_path) == []


_READ_BESIDE_A_WRITER = """
import multiprocessing, sqlite3, sys
from concurrent.futures import ProcessPoolExecutor

from sqlalchemy import select

from npbandit.storage import Run, RunLogger, list_runs, open_db


def write(db):
    import gymnasium as gym

    from npbandit.loop import run_episode
    from npbandit.policies import SobolPolicy

    env = gym.make("npbandit/BlackBox-v0", function="branin", budget=6)
    run_episode(env, SobolPolicy(2), seed=0, logger=RunLogger(db, commit_every=6))


if __name__ == "__main__":
    db = sys.argv[1]
    with open_db(db).connect() as conn:  # this process's writer reads, its connection stays pooled
        conn.execute(select(Run.id).where(Run.kind == "bo")).all()
    list_runs(db, kind="bo")  # a read beside it
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("fork")) as pool:
        pool.submit(write, db).result(timeout=120)
    print(sqlite3.connect(db).execute("SELECT policy, n_steps FROM runs").fetchall())
"""


@pytest.mark.integration
def test_a_read_keeps_the_locks_of_this_processs_writer(tmp_path):
    # closing any descriptor of a file drops every POSIX lock the process holds on it: a
    # reader that opened and closed the database file beside this process's own writer
    # connection let a forked worker's run vanish (a benchmark driver reads, its workers write)
    import subprocess
    import sys

    script = tmp_path / "read_beside_a_writer.py"
    script.write_text(_READ_BESIDE_A_WRITER)
    out = subprocess.run([sys.executable, str(script), str(tmp_path / "runs.db")], capture_output=True, text=True,
                         timeout=300, env={**os.environ, "OMP_NUM_THREADS": "1"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[('sobol', 6)]"


def test_run_steps_names_a_run_the_database_does_not_hold(tmp_path):
    db = str(tmp_path / "runs.db")
    result = _log_run(db, horizon=3)
    assert len(run_steps(db, result.run_id)) == 3
    with pytest.raises(ValueError, match=rf"run_id: .*runs\.db holds no run {result.run_id + 1}"):
        run_steps(db, result.run_id + 1)  # was [] without a word
    steps = run_steps(db, result.run_id)  # the totals counted in the database are those of its steps
    assert run_totals(db, result.run_id) == (steps[-1]["cumulative_regret"], sum(s["failed"] for s in steps))
    with pytest.raises(ValueError, match=rf"holds no run {result.run_id + 1}"):
        run_totals(db, result.run_id + 1)
    logger = RunLogger(db)
    started = logger.start(kind="bandit", env_id="x", env_params={}, policy="uniform", policy_params={}, seed=0)
    assert run_steps(db, started) == [] and run_totals(db, started) == (None, 0)  # no step committed yet
    logger.finish()


def test_a_writer_that_switches_a_file_to_wal_while_another_writes_waits_for_it(tmp_path):
    """Two processes that start on a new SQLite file at once: one switches the file to WAL
    (each writer's connection does, from its first) while the other holds the write lock.
    SQLite answers that switch "database is locked" at once, without the busy wait, and
    the first writer failed with it; it waits for the other writer instead."""
    import threading

    db = str(tmp_path / "runs.db")
    engine = open_db(db)
    engine.dispose()  # its next connection switches the file to WAL again, as a writer's first one does
    with contextlib.closing(sqlite3.connect(db, isolation_level=None, check_same_thread=False)) as other:
        other.execute("PRAGMA journal_mode=DELETE")  # as a new file is before its first writer's switch
        other.execute("BEGIN IMMEDIATE")  # the other writer, mid-transaction
        other.execute("INSERT INTO npbandit_meta (key, value) VALUES ('other', 'writer')")
        done = threading.Timer(0.3, other.execute, args=("COMMIT",))
        done.start()
        try:
            _log_run(db)
        finally:
            done.join()
    assert [r.n_steps for r in list_runs(db)] == [5]
    with contextlib.closing(sqlite3.connect(db)) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT value FROM npbandit_meta WHERE key = 'other'").fetchone() == ("writer",)
