"""Trajectory storage: every run and every step, in any SQLAlchemy database.

The default is an SQLite file (``sqlite:///npbandit.db``); any SQLAlchemy URL works
(PostgreSQL for many writers on many machines). Two tables:

- ``runs``: what ran (kind, environment id and parameters, policy and its
  parameters, surrogate checkpoint name and sha256, seed), its status
  (``running`` / ``completed`` / ``failed``), start, end and heartbeat times, host
  and pid, package versions and the error text of a failed run;
- ``steps``: one row per step (run, t, action, reward, regret, cumulative regret,
  expected regret, objective value, whether the step failed, timings), unique on
  ``(run_id, t)``.

Steps are written in batches (``commit_every``); a crash loses at most the steps not
yet committed. A run whose process died leaves ``status = 'running'``; queries report
it as ``interrupted`` when its process is gone (same host) or its heartbeat is older
than ``STALE_AFTER``. SQLite runs in WAL mode with a busy timeout and takes its write
lock at ``BEGIN IMMEDIATE``, so several processes can log to one file without
"database is locked" errors.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
from dataclasses import dataclass
from typing import Any

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
    select,
    update,
)
from sqlalchemy.engine import Engine
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

__all__ = ["DEFAULT_URL", "Run", "Step", "open_db", "RunLogger", "list_runs", "run_steps", "effective_status",
           "STALE_AFTER"]

DEFAULT_URL = "sqlite:///npbandit.db"
STALE_AFTER = dt.timedelta(minutes=30)


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
    status: Mapped[str] = mapped_column(String(16), default="running", index=True)
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


_STEP_FIELDS = {c.name for c in Step.__table__.columns} - {"id", "run_id"}
_STEP_DEFAULTS = {"failed": False, "act_s": 0.0, "env_s": 0.0, "observe_s": 0.0}


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc).replace(tzinfo=None)


_ENGINES: dict[str, Engine] = {}


def open_db(url: str = DEFAULT_URL) -> Engine:
    """An engine for ``url`` with the schema created (idempotent, cached per URL).

    A bare path (``runs.db``) is taken as an SQLite file."""
    if not isinstance(url, str) or not url:
        raise ValueError(f"db must be an SQLAlchemy URL or a file path, got {url!r}")
    if "://" not in url:
        url = f"sqlite:///{url}"
    if url in _ENGINES:
        return _ENGINES[url]
    is_sqlite = url.startswith("sqlite")
    engine = create_engine(url, connect_args={"timeout": 60} if is_sqlite else {})
    if is_sqlite:
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

    Base.metadata.create_all(engine)
    _ENGINES[url] = engine
    return engine


def _versions() -> dict[str, str]:
    import platform

    import torch

    from npbandit import __version__

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
        db: SQLAlchemy URL (or SQLite path).
        commit_every: steps buffered per transaction (1 = commit every step).
    """

    def __init__(self, db: str = DEFAULT_URL, commit_every: int = 50) -> None:
        if not isinstance(commit_every, int) or commit_every < 1:
            raise ValueError(f"commit_every must be a positive int, got {commit_every!r}")
        self.engine = open_db(db)
        self.commit_every = commit_every
        self.run_id: int | None = None
        self._buffer: list[dict[str, Any]] = []
        self.rows_written = 0

    def start(self, *, kind: str, env_id: str, env_params: dict[str, Any], policy: str,
              policy_params: dict[str, Any] | None = None, checkpoint: dict[str, Any] | None = None,
              seed: int | None = None) -> int:
        now = _now()
        values = dict(kind=kind, env_id=env_id, env_params=json.loads(json.dumps(env_params, default=_jsonable)),
                      policy=policy, policy_params=json.loads(json.dumps(policy_params or {}, default=_jsonable)),
                      surrogate=None if checkpoint is None else checkpoint.get("name"),
                      checkpoint_sha256=None if checkpoint is None else checkpoint.get("sha256"),
                      seed=seed, status="running", started_at=now, heartbeat_at=now, n_steps=0,
                      host=socket.gethostname(), pid=os.getpid(), versions=_versions())
        with self.engine.begin() as conn:
            self.run_id = int(conn.execute(insert(Run).values(**values)).inserted_primary_key[0])
        return self.run_id

    def log_step(self, **row: Any) -> None:
        """Buffer one step (``t``, ``action``, ``reward``, ... as in :class:`Step`)."""
        if self.run_id is None:
            raise RuntimeError("start() the run before logging steps")
        unknown = set(row) - _STEP_FIELDS
        if unknown:
            raise ValueError(f"unknown step field(s) {sorted(unknown)}; expected some of {sorted(_STEP_FIELDS)}")
        # every row carries every column, so a batch is one executemany
        row = {k: _jsonable(row.get(k, _STEP_DEFAULTS.get(k))) for k in _STEP_FIELDS}
        row["run_id"] = self.run_id
        self._buffer.append(row)
        if len(self._buffer) >= self.commit_every:
            self.flush()

    def flush(self) -> None:
        """Commit buffered steps (and the heartbeat) in one transaction."""
        if self.run_id is None or not self._buffer:
            return
        rows, self._buffer = self._buffer, []
        with self.engine.begin() as conn:
            conn.execute(insert(Step), rows)
            conn.execute(update(Run).where(Run.id == self.run_id)
                         .values(heartbeat_at=_now(), n_steps=Run.n_steps + len(rows)))
        self.rows_written += len(rows)

    def finish(self, status: str = "completed", error: str | None = None) -> None:
        if status not in ("completed", "failed"):
            raise ValueError(f"status must be 'completed' or 'failed', got {status!r}")
        if self.run_id is None:
            return
        self.flush()
        with self.engine.begin() as conn:
            conn.execute(update(Run).where(Run.id == self.run_id)
                         .values(status=status, finished_at=_now(), heartbeat_at=_now(), error=error))

    def __enter__(self) -> "RunLogger":
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            self.finish("completed")
        else:
            self.finish("failed", f"{exc_type.__name__}: {exc}")


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def effective_status(run: Run | Any, now: dt.datetime | None = None) -> str:
    """``running`` / ``completed`` / ``failed``, or ``interrupted`` for a run whose
    process is gone (same host) or whose heartbeat is older than ``STALE_AFTER``."""
    if run.status != "running":
        return run.status
    if run.host == socket.gethostname() and not _pid_alive(run.pid):
        return "interrupted"
    if (now or _now()) - run.heartbeat_at > STALE_AFTER:
        return "interrupted"
    return "running"


@dataclass(frozen=True)
class RunRow:
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


def list_runs(db: str = DEFAULT_URL, kind: str | None = None) -> list[RunRow]:
    """Every run (optionally of one kind), oldest first, with its effective status."""
    engine = open_db(db)
    query = select(Run).order_by(Run.id)
    if kind is not None:
        query = query.where(Run.kind == kind)
    with engine.connect() as conn:
        runs = conn.execute(query).all()
    # n_steps is updated in the same transaction as the step inserts, so it counts committed steps
    return [RunRow(r.id, r.kind, r.env_id, r.env_params, r.policy, r.surrogate, r.checkpoint_sha256, r.seed,
                   effective_status(r), r.n_steps, r.started_at, r.finished_at, r.error) for r in runs]


def run_steps(db: str, run_id: int) -> list[dict[str, Any]]:
    """The committed steps of a run, in order of t."""
    engine = open_db(db)
    with engine.connect() as conn:
        rows = conn.execute(select(Step).where(Step.run_id == run_id).order_by(Step.t)).mappings().all()
    return [dict(r) for r in rows]
