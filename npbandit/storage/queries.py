"""Reading runs back: :func:`list_runs` (one :class:`RunRow` per run, with its effective
status) and :func:`run_steps` (a run's committed steps). Both only read."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import inspect, select
from sqlalchemy.engine import Connection

from npbandit.storage.engine import DEFAULT_URL, _has_schema, _read, open_db
from npbandit.storage.heartbeat import effective_status
from npbandit.storage.models import _STEP_TIMES, RECOMMENDED, Run, Step, _read_time

__all__ = ["RunRow", "list_runs", "run_steps"]


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
    #: a completed black-box run's recommendation, the evaluated point its model believes best:
    #: ``{"t": first evaluation of the point (None: a point given to the run, not evaluated in it),
    #: "params": the point by name in the user's units, "value": the model's posterior mean there
    #: in the objective's units}``; ``None`` for other runs and runs without a model (Sobol)
    recommended: dict | None = None


def list_runs(db: str = DEFAULT_URL, kind: str | None = None) -> list[RunRow]:
    """Every run (optionally of one kind), oldest first, with its effective status.

    Reads only (see :func:`open_db` ``readonly``): a missing database is a
    :class:`StorageError`, never a new empty file."""
    engine = open_db(db, readonly=True)
    query = select(Run).order_by(Run.id)
    if kind is not None:
        query = query.where(Run.kind == kind)
    runs = _read(engine, str(db), "read runs", lambda conn: conn.execute(query).all() if _has_schema(conn) else [])
    # n_steps is updated in the same transaction as the step inserts, so it counts committed steps
    out = []
    for r in runs:
        settings = dict(r.policy_params or {})
        recommended = settings.pop(RECOMMENDED, None)
        out.append(RunRow(r.id, r.kind, r.env_id, r.env_params, r.policy, r.surrogate, r.checkpoint_sha256, r.seed,
                          effective_status(r), r.n_steps, _read_time(r.started_at), _read_time(r.finished_at), r.error,
                          settings, recommended))
    return out


def run_steps(db: str, run_id: int) -> list[dict[str, Any]]:
    """The committed steps of a run, in order of t (reads only, as :func:`list_runs`);
    ``submitted_at`` / ``finished_at`` are aware UTC datetimes. ``params`` is the evaluated
    point by name in the user's units (``None`` for other environments' steps, and in a
    database of an older schema, read as it is: :mod:`~npbandit.storage.engine`)."""
    engine = open_db(db, readonly=True)

    def read(conn: Connection) -> list[Any]:
        if not _has_schema(conn):
            return []
        present = {c["name"] for c in inspect(conn).get_columns(Step.__tablename__)}
        columns = [c for c in Step.__table__.columns if c.name in present]
        query = select(*columns).where(Step.run_id == run_id).order_by(Step.t)
        return conn.execute(query).mappings().all()

    rows = _read(engine, str(db), "read steps", read)
    absent = dict.fromkeys(c.name for c in Step.__table__.columns)
    return [{**absent, **r, **{key: _read_time(r[key]) for key in _STEP_TIMES}} for r in rows]
