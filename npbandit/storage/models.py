"""The tables, as SQLAlchemy ORM classes: :class:`Run` (one row per run), :class:`Step`
(one row per step, unique on ``(run_id, t)``) and :class:`Meta` (facts about the database,
``schema_version`` among them), with the layout's version :data:`SCHEMA_VERSION`, and
:func:`stored_json`, a value as the JSON columns store it (what the logger writes and
:func:`~npbandit.storage.run_key` compares).

Every ``DateTime`` column holds naive UTC; :func:`_stored_time` and :func:`_read_time`
convert at the boundary.
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from npbandit.text import printable, shorten
from npbandit.validation import json_default

__all__ = ["Base", "Run", "Step", "Meta", "RUN_KINDS", "STATUSES", "SCHEMA_VERSION", "ADDED_COLUMNS", "WIDENED_COLUMNS",
           "OLDEST_UPGRADABLE", "RECOMMENDED", "STOPPED_EARLY", "stored_json"]

#: the kinds of run npbandit logs (``runs.kind``): a contextual-bandit run, a black-box (BO) run. A
#: run logged by hand (:class:`~npbandit.storage.RunLogger`) may carry a kind of its own
RUN_KINDS = ("bandit", "bo")
#: the statuses a run is stored with (``interrupted`` is also inferred for dead runs)
STATUSES = ("running", "completed", "failed", "interrupted")
#: the layout of the tables below; raise it with any change to them (a database records
#: the version that created it; see :mod:`npbandit.storage.engine` for which other versions
#: an npbandit opens, and how)
# 2: steps.worker / submitted_at / finished_at (batch and asynchronous BO); 3: steps.params, error;
# 4: steps.constraints (outcome constraints); 5: steps.error_kind; 6: steps.values (several objectives);
# 7: steps.fixed (the values a trial was asked with, Optimizer.ask(fixed=...))
SCHEMA_VERSION = 8
#: columns each schema version added to an existing table and nothing else: a writer adds them
#: to a database of an older version, at least :data:`OLDEST_UPGRADABLE`, and readers read such
#: a database as it is (the columns read as ``None``); {version: [(table, column), ...]}
ADDED_COLUMNS = {3: [("steps", "params"), ("steps", "error")], 4: [("steps", "constraints")],
                 5: [("steps", "error_kind")], 6: [("steps", "values")], 7: [("steps", "fixed")]}
#: integer columns each schema version widened to 64 bits and nothing else: a writer widens them in
#: a database of an older version where its integers are narrower (PostgreSQL's INTEGER; SQLite's
#: integers are 64-bit in any column), and readers read such a database as it is;
#: {version: [(table, column), ...]}
WIDENED_COLUMNS = {8: [("runs", "seed")]}
#: the oldest schema version a writer upgrades in place (by adding :data:`ADDED_COLUMNS`)
OLDEST_UPGRADABLE = 2
#: the key of ``runs.policy_params`` that holds, once a black-box run has completed, the point
#: its model recommends (``{"t", "params", "value"}``: :class:`~npbandit.loop.EpisodeResult`);
#: readers take it out of the policy's settings (:attr:`~npbandit.storage.RunRow.recommended`)
RECOMMENDED = "recommended"
#: the key of ``runs.policy_params`` that holds, once a run that its stop rule ended before its
#: budget (``optimize``'s callbacks) has completed, how: ``"by its stop rule after 13 of 30 evaluations"``;
#: read back apart (:attr:`~npbandit.storage.RunRow.stopped_early`)
STOPPED_EARLY = "stopped_early"


class Base(DeclarativeBase):
    pass


class Run(Base):
    __tablename__ = "runs"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(16))  # one of RUN_KINDS, or a kind of one's own
    env_id: Mapped[str] = mapped_column(String(128))
    env_params: Mapped[dict] = mapped_column(JSON, default=dict)
    policy: Mapped[str] = mapped_column(String(128))
    # the policy's settings; a completed black-box run's also hold its model's recommendation
    # (under RECOMMENDED, written with the final status: no schema change, read back apart)
    policy_params: Mapped[dict] = mapped_column(JSON, default=dict)
    surrogate: Mapped[str | None] = mapped_column(String(128), nullable=True)
    checkpoint_sha256: Mapped[str | None] = mapped_column(String(64), nullable=True)
    # 64-bit: any seed the library takes (validation.MAX_SEED); PostgreSQL's INTEGER holds 32 bits
    seed: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
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
    # the evaluated point in the user's units, by name (``{"lr": 0.01, "layers": 3, "act": "relu"}``;
    # ``{"x0": ..., "x1": ...}`` for a plain box), beside ``action``, the point in the unit cube the
    # policy searches; NULL for steps of other environments and of databases from before schema 3
    params: Mapped[dict | None] = mapped_column(JSON, nullable=True)
    # why a failed evaluation failed (the objective's exception, a non-finite value, a timeout),
    # as the error's text; NULL for steps that did not fail and for databases from before schema 3
    error: Mapped[str | None] = mapped_column(Text, nullable=True)
    # how it failed: "raised", "returned" (something other than a number), "nonfinite" (NaN or
    # inf) or "timeout" (ObjectiveError.kind); NULL for steps that did not fail, for a failure
    # whose error gave no kind and for databases from before schema 5
    error_kind: Mapped[str | None] = mapped_column(String(16), nullable=True)
    # the outcome-constraint values the evaluation returned (``optimize(constraints=...)``: a list
    # of floats, the point feasible when all are <= 0); NULL for unconstrained runs, failed steps
    # and databases from before schema 4
    constraints: Mapped[list | None] = mapped_column(JSON, nullable=True)
    # a run of several objectives (``env_params["minimize"]`` a list of m directions): the m
    # objective values the evaluation returned, in the user's units and sense (not negated), in
    # the objectives' order; such a step's ``value``, ``best_value`` and ``reward`` are NULL, as
    # one number cannot stand for the m. NULL for failed steps, for runs of one objective and for
    # databases from before schema 6
    values: Mapped[list | None] = mapped_column(JSON, nullable=True)
    # the parameters the caller held at values of its own in this step's point
    # (``Optimizer.ask(fixed={name: value})``), by name in the user's units as ask checked them
    # (``params`` holds each exactly); the others were proposed. NULL for points proposed in
    # full (every step of ``optimize``), for other environments' steps and for databases from
    # before schema 7
    fixed: Mapped[dict | None] = mapped_column(JSON, nullable=True)


class Meta(Base):
    """Facts about the database itself; ``schema_version`` is the one every open checks."""
    __tablename__ = "npbandit_meta"

    key: Mapped[str] = mapped_column(String(64), primary_key=True)
    value: Mapped[str] = mapped_column(String(255))


_STEP_FIELDS = {c.name for c in Step.__table__.columns} - {"id", "run_id"}
_STEP_DEFAULTS = {"failed": False, "act_s": 0.0, "env_s": 0.0, "observe_s": 0.0}
_STEP_TIMES = ("submitted_at", "finished_at")


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


# The DateTime columns hold naive UTC (SQLite has no time zones; PostgreSQL's "timestamp without time zone"
# would shift an aware value by the session's zone). What goes in is normalised to that, what comes out is
# aware UTC, so a reader never takes a UTC time for a local one.
def _stored_time(value: Any) -> Any:
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(dt.UTC).replace(tzinfo=None)
    return value


def _read_time(value: dt.datetime | None) -> dt.datetime | None:
    return None if value is None else value.replace(tzinfo=dt.UTC)


def stored_json(name: str, value: Any, *, finite: bool = False) -> Any:
    """``value`` as a run's record stores it: JSON read back (tuples as lists, NumPy values
    and tensors as their ``tolist()``). ``finite``: NaN and infinities are refused too (JSON
    has no such numbers; SQLite stores them, PostgreSQL's JSON columns refuse them, so a
    setting holding one would start a run on one database and fail on the other).

    Raises:
        TypeError: ``value`` holds something JSON cannot (an object, a set, a key that is no
            string or number), named ``name``.
        ValueError: ``value`` holds itself, or (``finite``) a NaN or an infinity.
    """
    try:
        return json.loads(json.dumps(value, default=json_default, allow_nan=not finite))
    except TypeError as err:
        raise TypeError(f"{name} must hold JSON values only (str, number, bool, None, list, dict; NumPy values and "
                        f"tensors are stored as lists), got {shorten(printable(repr(value)), 200)}: {err}") from None
    except ValueError as err:  # a container holding itself; a NaN or an infinity where finite
        raise ValueError(f"{name} must hold JSON values only" + (" (finite numbers)" if finite else "") +
                         f", got {shorten(printable(repr(value)), 200)}: {err}") from None
