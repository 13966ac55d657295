"""Trajectory storage: every run and every step, in any SQLAlchemy database.

The default is an SQLite file (``sqlite:///npbandit.db``); any SQLAlchemy URL works
(PostgreSQL for many writers on many machines). Two tables:

- ``runs``: what ran (kind, environment id and parameters, policy and its
  parameters, surrogate checkpoint name and sha256, seed), its status
  (``running`` / ``completed`` / ``failed`` / ``interrupted``), start, end and
  heartbeat times, host and pid, package versions and the error text of a failed run;
- ``steps``: one row per step (run, t, action, reward, regret, cumulative regret,
  expected regret, objective value, whether the step failed, timings), unique on
  ``(run_id, t)``.

When steps are committed (:class:`RunLogger`): ``bo`` runs (``optimize``, any
``BlackBox`` run) commit every evaluation, since an evaluation of an expensive
objective is the most valuable row there is; other runs (bandit sweeps, whose steps
cost microseconds) commit in batches of ``commit_every`` steps, and at least every
``max_wait_s`` seconds, so a crash loses at most one batch or a few seconds of steps.
A run stopped by SIGINT / SIGTERM commits what it buffered and is recorded as
``interrupted`` (see :func:`npbandit.loop.run_episode`).

Liveness: while a run is open its logger writes a heartbeat every ``HEARTBEAT_EVERY``
seconds from a background thread, whether or not steps are being committed (an
evaluation may take hours). A run left ``running`` by a process that died (SIGKILL,
power loss) is reported as ``interrupted`` when its process is gone (same host) or
its heartbeat is older than ``STALE_AFTER`` (30 missed heartbeats).

SQLite runs in WAL mode with a busy timeout and writers take the write lock at
``BEGIN IMMEDIATE``, so several processes can log to one file without "database is
locked" errors. PostgreSQL (``postgresql+psycopg://user:password@host/dbname``, the
``postgres`` extra) serves writers on many machines; its transactions need none of that.
Reading (:func:`list_runs`, :func:`run_steps`, ``npbandit report``) never writes: an
SQLite file is opened read-only and never created, a PostgreSQL session is read-only.

Schema version: the table ``npbandit_meta`` records ``schema_version``
(:data:`SCHEMA_VERSION`), written by the first writer and checked whenever a database is
opened, so an npbandit that lays out its tables differently refuses the database
(:class:`SchemaVersionError`, naming both versions) instead of misreading or corrupting it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import socket
import sqlite3
import threading
import time
import warnings
import weakref
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Integer,
    String,
    Text,
    UniqueConstraint,
    create_engine,
    event,
    insert,
    inspect,
    select,
    text,
    update,
)
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.exc import ArgumentError, DatabaseError, OperationalError, SQLAlchemyError
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from npbandit.exceptions import SchemaVersionError, StorageError

__all__ = ["DEFAULT_URL", "Run", "Step", "Meta", "open_db", "RunLogger", "list_runs", "run_steps", "effective_status",
           "display_url", "shared_url", "StorageError", "SchemaVersionError", "STATUSES", "STALE_AFTER",
           "HEARTBEAT_EVERY", "COMMIT_EVERY", "SCHEMA_VERSION"]

DEFAULT_URL = "sqlite:///npbandit.db"
#: seconds between two heartbeats of an open run (a background thread writes them)
HEARTBEAT_EVERY = 60.0
#: a ``running`` run whose heartbeat is older than this is shown as ``interrupted``
STALE_AFTER = dt.timedelta(minutes=30)
#: steps per transaction when ``RunLogger(commit_every=None)``, by run kind; kinds not
#: listed batch ``COMMIT_EVERY["default"]`` steps
COMMIT_EVERY = {"bo": 1, "default": 50}
#: the statuses a run is stored with (``interrupted`` is also inferred for dead runs)
STATUSES = ("running", "completed", "failed", "interrupted")
#: the layout of the tables below; raise it with any change to them (a database records
#: the version that created it and is refused by an npbandit with another)
SCHEMA_VERSION = 2  # 2: steps.worker / submitted_at / finished_at (batch and asynchronous BO)


class Base(DeclarativeBase):
    pass


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))  # "bandit" | "bo"
    env_id: Mapped[str] = mapped_column(String(128))
    env_params: Mapped[dict] = mapped_column(JSON, default=dict)
    policy: Mapped[str] = mapped_column(String(128))
    policy_params: Mapped[dict] = mapped_column(JSON, default=dict)
    surrogate: Mapped[str | None] = mapped_column(String(128), nullable=True)
    checkpoint_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    seed: Mapped[int | None] = mapped_column(Integer, nullable=True)
    status: Mapped[str] = mapped_column(String(16), default="running", index=True)  # one of STATUSES
    started_at: Mapped[dt.datetime] = mapped_column(DateTime)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    heartbeat_at: Mapped[dt.datetime] = mapped_column(DateTime)
    n_steps: Mapped[int] = mapped_column(Integer, default=0)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    versions: Mapped[dict] = mapped_column(JSON, default=dict)
    error: Mapped[str | None] = mapped_column(Text, nullable=True)


class Step(Base):
    __tablename__ = "steps"
    __table_args__ = (UniqueConstraint("run_id", "t", name="uq_steps_run_t"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[int] = mapped_column(ForeignKey("runs.id"), index=True)
    t: Mapped[int] = mapped_column(Integer)
    action: Mapped[Any] = mapped_column(JSON)
    reward: Mapped[float | None] = mapped_column(Float, nullable=True)
    regret: Mapped[float | None] = mapped_column(Float, nullable=True)
    cumulative_regret: Mapped[float | None] = mapped_column(Float, nullable=True)
    expected_regret: Mapped[float | None] = mapped_column(Float, nullable=True)
    value: Mapped[float | None] = mapped_column(Float, nullable=True)
    best_value: Mapped[float | None] = mapped_column(Float, nullable=True)
    failed: Mapped[bool] = mapped_column(Boolean, default=False)
    act_s: Mapped[float] = mapped_column(Float)
    env_s: Mapped[float] = mapped_column(Float)
    observe_s: Mapped[float] = mapped_column(Float)
    # asynchronous BO (``optimize(batch_size=q, executor=...)``): who evaluated the point and
    # when it was handed out / came back (UTC, the optimiser's clock); NULL for sequential runs
    worker: Mapped[str | None] = mapped_column(String(255), nullable=True)
    submitted_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)
    finished_at: Mapped[dt.datetime | None] = mapped_column(DateTime, nullable=True)


class Meta(Base):
    """Facts about the database itself; ``schema_version`` is the one every open checks."""
    __tablename__ = "npbandit_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(255))


_STEP_FIELDS = {c.name for c in Step.__table__.columns} - {"id", "run_id"}
_STEP_DEFAULTS = {"failed": False, "act_s": 0.0, "env_s": 0.0, "observe_s": 0.0}
_STEP_TIMES = ("submitted_at", "finished_at")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


# The DateTime columns hold naive UTC (SQLite has no time zones; PostgreSQL's "timestamp without time zone"
# would shift an aware value by the session's zone). What goes in is normalised to that, what comes out is
# aware UTC, so a reader never takes a UTC time for a local one.
def _stored_time(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.timezone.utc).replace(tzinfo=None)
    return value


def _read_time(value: dt.datetime | None) -> dt.datetime | None:
    return None if value is None else value.replace(tzinfo=dt.timezone.utc)


_ENGINES: dict[tuple[str, bool], Engine] = {}


def _forget_inherited_engines() -> None:
    # A forked child (a benchmark's worker pool) must not use its parent's pooled
    # connections: two processes on one PostgreSQL socket or one SQLite handle corrupt each
    # other's transactions. close=False leaves those connections to the parent.
    for engine in list(_ENGINES.values()):
        engine.dispose(close=False)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_inherited_engines)

#: the key of the PostgreSQL advisory lock writers hold while they create or check the schema
_SCHEMA_LOCK = zlib.crc32(b"npbandit schema")


def display_url(url: str) -> str:
    """``url`` as it may be printed or logged: a password in it is shown as ``***``."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:  # a bare SQLite path
        return url


def _normalise_url(url: Any) -> str:
    if not isinstance(url, str) or not url:
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {url!r}")
    return url if "://" in url else f"sqlite:///{url}"


def _sqlite_file(url: str) -> Path | None:
    """The file of an SQLite URL; ``None`` for in-memory and ``file:`` URI databases."""
    try:
        parsed = make_url(url)
    except ArgumentError as err:
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {url!r}: {err}") from None
    if parsed.get_backend_name() != "sqlite":
        return None
    database = parsed.database or ""
    if database in ("", ":memory:") or database.startswith("file:") or parsed.query.get("uri"):
        return None
    return Path(database)


def shared_url(url: str) -> str:
    """``url`` as other processes see the same database, wherever they run from: a bare or
    relative SQLite path is made absolute (a Dask worker or pool process may start in
    another directory). Other URLs are returned as they are.

    Raises:
        ValueError: ``url`` is not a URL or path, or is an in-memory SQLite database, which
            no other process can reach.
    """
    url = _normalise_url(url)
    path = _sqlite_file(url)
    if path is None:
        if make_url(url).get_backend_name() == "sqlite":
            raise ValueError(f"db {url!r} is an in-memory or URI SQLite database, which other processes cannot "
                             "share; give a file path or a PostgreSQL URL")
        return url
    if path.is_absolute():
        return url
    return make_url(url).set(database=str(path.resolve())).render_as_string(hide_password=False)


@contextlib.contextmanager
def _storage_errors(url: str, doing: str) -> Iterator[None]:
    """Re-raise the driver's ``DatabaseError`` (read-only file, missing directory, locked
    past the busy timeout, a file that is not a database, ...) as :class:`StorageError`
    naming the database."""
    try:
        yield
    except DatabaseError as err:
        # the database, not our use of it: OperationalError, or SQLite's bare DatabaseError ("file is not
        # a database"); its other subclasses (IntegrityError: a step written twice) are errors of the caller
        if not isinstance(err, OperationalError) and type(err) is not DatabaseError:
            raise
        raise StorageError(f"db {display_url(url)!r}: cannot {doing}: {getattr(err, 'orig', None) or err}") from None


def _create_engine(url: str, **kwargs: Any) -> Engine:
    try:
        return create_engine(url, **kwargs)
    except ImportError as err:
        raise StorageError(f"db {display_url(url)!r}: its database driver is not installed ({err}); for PostgreSQL "
                           "install the `postgres` extra (pip install 'npbandit[postgres]') and use a "
                           "postgresql+psycopg:// URL") from None
    except ArgumentError as err:  # an unknown dialect or driver name
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {display_url(url)!r}: {err}") from None


def _check_schema(conn: Any, url: str, *, writer: bool) -> None:
    """Refuse a database laid out by another schema version; a writer also creates the
    missing tables and records the version (in the caller's transaction).

    A database with npbandit's tables but no version predates versioning: it is used if
    its tables have every column this version needs (a writer then records the version)."""
    tables = set(inspect(conn).get_table_names())
    stored = None
    if Meta.__tablename__ in tables:
        stored = conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one_or_none()
    if stored is not None and stored != str(SCHEMA_VERSION):
        from npbandit._version import __version__

        newer = stored.isdigit() and int(stored) > SCHEMA_VERSION
        raise SchemaVersionError(
            f"db {display_url(url)!r}: its tables have schema version {stored}, but this npbandit ({__version__}) "
            f"uses schema version {SCHEMA_VERSION}; "
            + ("it was written by a newer npbandit: upgrade npbandit to use it" if newer else
               "it was written by an older npbandit: log to a new database, and read this one with the npbandit "
               "that wrote it"))
    ours = {"runs", "steps"}
    if stored is None and tables & ours:
        present = {name: {c["name"] for c in inspect(conn).get_columns(name)} if name in tables else set()
                   for name in sorted(ours)}
        missing = [f"{name}.{column}" for name, columns in present.items()
                   for column in Base.metadata.tables[name].columns.keys() if column not in columns]
        if missing:
            raise SchemaVersionError(
                f"db {display_url(url)!r}: no schema version recorded and its tables lack {', '.join(missing)}, "
                f"which schema version {SCHEMA_VERSION} needs: it was written by an older npbandit; log to a new "
                "database")
    elif not writer and tables and not tables & ours:
        raise StorageError(f"db {display_url(url)!r} is not an npbandit database (no runs/steps tables)")
    if writer:
        Base.metadata.create_all(conn)
        if stored is None:
            conn.execute(insert(Meta).values(key="schema_version", value=str(SCHEMA_VERSION)))


def open_db(url: str = DEFAULT_URL, *, readonly: bool = False) -> Engine:
    """An engine for ``url`` (cached per URL and mode).

    A bare path (``runs.db``) is taken as an SQLite file.

    Args:
        readonly: ``False`` (writers): the database is created if needed, with its
            schema (idempotent); SQLite files switch to WAL mode. ``True`` (readers):
            nothing is written or created -- the database must exist (an SQLite file
            is opened read-only, its journal mode untouched; a PostgreSQL session is
            read-only).

    Every open checks the database's schema version (:data:`SCHEMA_VERSION`); a
    writer records it in a new database.

    Raises:
        ValueError: ``url`` is not a URL or path.
        StorageError: the database cannot be opened for that use: (readonly) it does
            not exist or is not an npbandit database; (writing) its directory does not
            exist, or the file or its directory is read-only; the server cannot be
            reached; the URL's driver is not installed.
        SchemaVersionError: (a ``StorageError``) the database has another schema version.
    """
    url = _normalise_url(url)
    key = (url, bool(readonly))
    if key in _ENGINES:
        return _ENGINES[key]
    path = _sqlite_file(url)
    engine = _open_reader(url, path) if readonly else _open_writer(url, path)
    _ENGINES[key] = engine
    return engine


def _open_writer(url: str, path: Path | None) -> Engine:
    if path is not None:
        # say what is wrong in the user's terms before SQLite says "unable to open database file"
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise StorageError(f"db {url!r}: directory {str(parent)!r} does not exist")
        if path.is_dir():
            raise StorageError(f"db {url!r}: {str(path)!r} is a directory, not a database file")
        if path.exists() and not os.access(path, os.W_OK):
            raise StorageError(f"db {url!r}: {str(path)!r} is read-only; logging a run writes to it "
                               "(`npbandit report` can read it as it is)")
        if not path.exists() and not os.access(parent, os.W_OK | os.X_OK):
            raise StorageError(f"db {url!r}: directory {str(parent)!r} is read-only; cannot create the database")
    backend = make_url(url).get_backend_name()
    if backend == "sqlite":
        engine = _create_engine(url, connect_args={"timeout": 60})

        # SQLite only: WAL and BEGIN IMMEDIATE are how SQLite serves several writers
        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record) -> None:
            dbapi_conn.isolation_level = None  # let the "begin" hook below issue BEGIN itself
            cur = dbapi_conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            cur.execute("PRAGMA busy_timeout=60000")
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA foreign_keys=ON")
            cur.close()

        @event.listens_for(engine, "begin")
        def _begin_immediate(conn) -> None:
            # take the write lock up front: a deferred transaction that later upgrades
            # to a writer can fail with "database is locked" instead of waiting
            conn.exec_driver_sql("BEGIN IMMEDIATE")
    else:
        # a run may leave its connection idle for hours (one slow evaluation), long enough
        # for the server or a network in between to drop it: test it before each use
        engine = _create_engine(url, pool_pre_ping=True)

    try:
        with _storage_errors(url, "create the schema"), engine.begin() as conn:
            if backend == "postgresql":
                # writers that start together would each create the tables and all but one
                # fail; the lock makes the first create them (DDL is transactional here) and
                # the rest find them. SQLite's BEGIN IMMEDIATE (above) serialises the same way.
                conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
            _check_schema(conn, url, writer=True)
    except Exception:
        engine.dispose()  # not cached, so nobody else would close its connection
        raise
    return engine


def _open_reader(url: str, path: Path | None) -> Engine:
    if path is not None:
        if not path.is_file():
            raise StorageError(f"db {url!r}: no database at {str(path)!r}")
        # mode=ro: SQLite itself refuses every write, and the journal mode is left as
        # it is (switching to WAL, as writers do, is a write). A WAL file in a
        # read-only directory without its -shm file cannot be opened that way; nobody
        # can be writing it then, so it is read as immutable.
        uri = f"file:{quote(str(path.resolve()))}"

        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(f"{uri}?mode=ro", uri=True, timeout=60, check_same_thread=False)
            try:
                conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
            except sqlite3.OperationalError:
                conn.close()
                conn = sqlite3.connect(f"{uri}?immutable=1", uri=True, check_same_thread=False)
            return conn

        engine = create_engine("sqlite://", creator=connect)
    else:
        engine = _create_engine(url, pool_pre_ping=True)
        if engine.dialect.name == "postgresql":
            @event.listens_for(engine, "connect")
            def _read_only(dbapi_conn, _record) -> None:
                # the server itself then refuses every write made through this engine
                cur = dbapi_conn.cursor()
                cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                cur.close()
                dbapi_conn.commit()

    try:
        with _storage_errors(url, "read it"), engine.connect() as conn:
            _check_schema(conn, url, writer=False)
    except Exception:
        engine.dispose()
        raise
    return engine


def _has_schema(engine: Engine) -> bool:
    # an existing but empty file holds no runs yet (e.g. a writer is creating the schema)
    return inspect(engine).has_table("runs")


def _versions() -> dict[str, str]:
    import platform

    import torch

    from npbandit._version import __version__

    out = {"npbandit": __version__, "torch": torch.__version__, "python": platform.python_version()}
    try:
        import botorch

        out["botorch"] = botorch.__version__
    except ImportError:  # pragma: no cover - botorch is a dependency
        pass
    return out


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


class RunLogger:
    """Writes one run and its steps; use as a context manager or call ``finish``.

    Args:
        db: SQLAlchemy URL (or SQLite path). Opened here, so a database that cannot
            be written fails before anything runs (:class:`StorageError`).
        commit_every: steps buffered per transaction (1 = commit every step). ``None``
            (default) chooses by the run's kind at :meth:`start`: every step for ``bo``
            runs, batches of 50 otherwise (``COMMIT_EVERY``).
        max_wait_s: a buffered step is committed at the latest with the first step
            logged this many seconds after it, so batching never holds back the steps
            of a run whose steps turn out slow.
        heartbeat_every: seconds between heartbeats (default ``HEARTBEAT_EVERY``),
            written by a daemon thread from :meth:`start` to :meth:`finish`.
    """

    def __init__(self, db: str = DEFAULT_URL, commit_every: int | None = None, max_wait_s: float = 5.0,
                 heartbeat_every: float | None = None) -> None:
        if commit_every is not None and (not isinstance(commit_every, int) or isinstance(commit_every, bool)
                                         or commit_every < 1):
            raise ValueError(f"commit_every must be a positive int or None, got {commit_every!r}")
        if not isinstance(max_wait_s, (int, float)) or not max_wait_s > 0:
            raise ValueError(f"max_wait_s must be a positive number of seconds, got {max_wait_s!r}")
        heartbeat_every = HEARTBEAT_EVERY if heartbeat_every is None else heartbeat_every
        if not isinstance(heartbeat_every, (int, float)) or not heartbeat_every > 0:
            raise ValueError(f"heartbeat_every must be a positive number of seconds, got {heartbeat_every!r}")
        self.url = _normalise_url(db)
        self.engine = open_db(self.url)
        self.commit_every = commit_every
        self.max_wait_s = float(max_wait_s)
        self.heartbeat_every = float(heartbeat_every)
        self.run_id: int | None = None
        self._buffer: list[dict[str, Any]] = []
        self._buffered_since = 0.0
        self._beat_stop = threading.Event()
        self._beat_thread: threading.Thread | None = None
        self.rows_written = 0
        self.status: str | None = None

    def start(self, *, kind: str, env_id: str, env_params: dict[str, Any], policy: str,
              policy_params: dict[str, Any] | None = None, checkpoint: dict[str, Any] | None = None,
              seed: int | None = None) -> int:
        """Insert the run (status ``running``), start the heartbeat; returns the run id."""
        if self.run_id is not None:
            raise RuntimeError(f"this logger already holds run {self.run_id}; use one RunLogger per run")
        if self.commit_every is None:
            self.commit_every = COMMIT_EVERY.get(kind, COMMIT_EVERY["default"])
        now = _now()
        values = dict(kind=kind, env_id=env_id, env_params=json.loads(json.dumps(env_params, default=_jsonable)),
                      policy=policy, policy_params=json.loads(json.dumps(policy_params or {}, default=_jsonable)),
                      surrogate=None if checkpoint is None else checkpoint.get("name"),
                      checkpoint_sha256=None if checkpoint is None else checkpoint.get("sha256"),
                      seed=seed, status="running", started_at=now, heartbeat_at=now, n_steps=0,
                      host=socket.gethostname(), pid=os.getpid(), versions=_versions())
        with _storage_errors(self.url, "record the run"), self.engine.begin() as conn:
            self.run_id = int(conn.execute(insert(Run).values(**values)).inserted_primary_key[0])
        self.status = "running"
        # the thread holds only a weak reference: a logger dropped without finish() stops beating
        self._beat_thread = threading.Thread(target=_heartbeat, args=(weakref.ref(self), self._beat_stop),
                                             name=f"npbandit-heartbeat-{self.run_id}", daemon=True)
        self._beat_thread.start()
        return self.run_id

    def _stop_heartbeat(self) -> None:
        self._beat_stop.set()
        if self._beat_thread is not None and self._beat_thread is not threading.current_thread():
            self._beat_thread.join(timeout=70)  # at most one update in flight (busy timeout 60 s)
        self._beat_thread = None

    def log_step(self, **row: Any) -> None:
        """Buffer one step (``t``, ``action``, ``reward``, ... as in :class:`Step`); commits
        when ``commit_every`` steps are buffered or the oldest is ``max_wait_s`` old.
        ``submitted_at`` / ``finished_at``: aware datetimes (any zone), or naive ones in UTC."""
        if self.run_id is None:
            raise RuntimeError("start() the run before logging steps")
        unknown = set(row) - _STEP_FIELDS
        if unknown:
            raise ValueError(f"unknown step field(s) {sorted(unknown)}; expected some of {sorted(_STEP_FIELDS)}")
        # every row carries every column, so a batch is one executemany
        row = {k: _jsonable(row.get(k, _STEP_DEFAULTS.get(k))) for k in _STEP_FIELDS}
        for key in _STEP_TIMES:
            row[key] = _stored_time(row[key])
        row["run_id"] = self.run_id
        if not self._buffer:
            self._buffered_since = time.monotonic()
        self._buffer.append(row)
        if len(self._buffer) >= self.commit_every or time.monotonic() - self._buffered_since >= self.max_wait_s:
            self.flush()

    def flush(self) -> None:
        """Commit buffered steps (and the heartbeat) in one transaction.

        The buffer is emptied only once the transaction has committed, so a flush that
        fails (or is interrupted) loses nothing and can be retried."""
        if self.run_id is None or not self._buffer:
            return
        rows = list(self._buffer)
        with _storage_errors(self.url, "write steps"), self.engine.begin() as conn:
            conn.execute(insert(Step), rows)
            conn.execute(update(Run).where(Run.id == self.run_id)
                         .values(heartbeat_at=_now(), n_steps=Run.n_steps + len(rows)))
        del self._buffer[:len(rows)]
        self.rows_written += len(rows)

    def finish(self, status: str = "completed", error: str | None = None) -> None:
        """Commit what is buffered, stop the heartbeat and record the final status
        (``completed``, ``failed`` or ``interrupted``) and error text.

        If the buffered steps cannot be written, the status is still recorded, with
        the reason in the error text, and the write error is raised."""
        if status not in STATUSES[1:]:
            raise ValueError(f"status must be one of {STATUSES[1:]}, got {status!r}")
        self._stop_heartbeat()
        if self.run_id is None or self.status != "running":
            return
        unsaved: Exception | None = None
        try:
            self.flush()
        except Exception as err:  # noqa: BLE001 - recorded below, then raised
            unsaved = err
            note = f"{len(self._buffer)} step(s) could not be saved: {err}"
            error = f"{error}; {note}" if error else note
            status = "failed" if status == "completed" else status
        with _storage_errors(self.url, "record the run's status"), self.engine.begin() as conn:
            conn.execute(update(Run).where(Run.id == self.run_id)
                         .values(status=status, finished_at=_now(), heartbeat_at=_now(), error=error))
        self.status = status
        if unsaved is not None:
            raise unsaved

    def __enter__(self) -> "RunLogger":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            self.finish("completed")
        else:
            self.finish("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
                        f"{exc_type.__name__}: {exc}")


def _heartbeat(ref: "weakref.ref[RunLogger]", stop: threading.Event) -> None:
    """A run's heartbeat, in its own thread so that it does not wait for steps: an
    evaluation that takes longer than ``STALE_AFTER`` must not make a live run look dead."""
    warned = False
    while True:
        logger = ref()
        if logger is None:
            return
        interval = logger.heartbeat_every
        del logger  # not held while waiting, so the logger can be collected
        if stop.wait(interval):
            return
        logger = ref()
        if logger is None:
            return
        try:
            with logger.engine.begin() as conn:
                conn.execute(update(Run).where(Run.id == logger.run_id, Run.status == "running")
                             .values(heartbeat_at=_now()))
        except SQLAlchemyError as err:  # keep beating: a lock or a network blip may pass
            if not warned:
                warnings.warn(f"run {logger.run_id}: heartbeat not written to {display_url(logger.url)}: {err}",
                              RuntimeWarning, stacklevel=1)
                warned = True
        del logger


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def effective_status(run: Run | Any, now: dt.datetime | None = None) -> str:
    """The stored status (``completed`` / ``failed`` / ``interrupted``), or for a run
    still marked ``running``: ``interrupted`` when its process is gone (same host) or
    its heartbeat is older than ``STALE_AFTER``, else ``running``."""
    if run.status != "running":
        return run.status
    if run.host == socket.gethostname() and not _pid_alive(run.pid):
        return "interrupted"
    if (now or _now()) - run.heartbeat_at > STALE_AFTER:
        return "interrupted"
    return "running"


@dataclass(frozen=True)
class RunRow:
    """A run as :func:`list_runs` reads it; ``started_at`` / ``finished_at`` are aware UTC datetimes."""

    id: int
    kind: str
    env_id: str
    env_params: dict
    policy: str
    surrogate: str | None
    checkpoint_sha256: str | None
    seed: int | None
    status: str
    n_steps: int
    started_at: dt.datetime
    finished_at: dt.datetime | None
    error: str | None
    #: the policy's settings (e.g. a BO policy's ``n_init``, where its initial design ends)
    policy_params: dict = field(default_factory=dict)


def list_runs(db: str = DEFAULT_URL, kind: str | None = None) -> list[RunRow]:
    """Every run (optionally of one kind), oldest first, with its effective status.

    Reads only (see :func:`open_db` ``readonly``): a missing database is a
    :class:`StorageError`, never a new empty file."""
    engine = open_db(db, readonly=True)
    if not _has_schema(engine):
        return []
    query = select(Run).order_by(Run.id)
    if kind is not None:
        query = query.where(Run.kind == kind)
    with _storage_errors(str(db), "read runs"), engine.connect() as conn:
        runs = conn.execute(query).all()
    # n_steps is updated in the same transaction as the step inserts, so it counts committed steps
    return [RunRow(r.id, r.kind, r.env_id, r.env_params, r.policy, r.surrogate, r.checkpoint_sha256, r.seed,
                   effective_status(r), r.n_steps, _read_time(r.started_at), _read_time(r.finished_at), r.error,
                   r.policy_params or {})
            for r in runs]


def run_steps(db: str, run_id: int) -> list[dict[str, Any]]:
    """The committed steps of a run, in order of t (reads only, as :func:`list_runs`);
    ``submitted_at`` / ``finished_at`` are aware UTC datetimes."""
    engine = open_db(db, readonly=True)
    if not _has_schema(engine):
        return []
    with _storage_errors(str(db), "read steps"), engine.connect() as conn:
        rows = conn.execute(select(Step).where(Step.run_id == run_id).order_by(Step.t)).mappings().all()
    return [{**r, **{key: _read_time(r[key]) for key in _STEP_TIMES}} for r in rows]
