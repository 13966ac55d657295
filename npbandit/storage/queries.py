"""Reading runs back: :func:`list_runs` (one :class:`RunRow` per run, with its effective
status), :func:`run_steps` (a run's committed steps), :func:`run_evaluations` (every
evaluation a black-box run saw: the points it was given, following a chain of continued
runs back, then its own steps), :func:`completed_runs` (the completed runs by
:func:`run_key`, what a sweep need not run again), :func:`running_runs` (the runs still
running, by the key they will have, what a sweep must not start twice), both from one read
(:func:`runs_by_key`), :func:`run_totals` (a run's cumulative regret and failed steps, counted in the database),
:func:`fixed_steps` (how many of a run's steps held values the caller fixed) and
:func:`step_params` (a black-box step's point by name, also from a database that predates
steps' ``params``). All only read."""

from __future__ import annotations

import datetime as dt
import difflib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, NamedTuple

import numpy as np
from sqlalchemy import func, inspect, select
from sqlalchemy.engine import Connection

from npbandit.space import SearchSpace, as_search_space
from npbandit.storage.engine import DEFAULT_URL, _has_schema, _read, open_db
from npbandit.storage.heartbeat import interruption
from npbandit.storage.models import (
    _STEP_TIMES,
    RECOMMENDED,
    RUN_KINDS,
    STOPPED_EARLY,
    Run,
    Step,
    _read_time,
    stored_json,
)
from npbandit.storage.urls import _normalise_url, _sqlite_file, display_url
from npbandit.validation import check_int, json_default

__all__ = ["RunRow", "list_runs", "run_steps", "run_evaluations", "RunEvaluations", "INITIAL", "INITIAL_FROM",
           "run_key", "SOURCE_PARAMS", "RunsByKey", "runs_by_key", "completed_runs",
           "running_runs", "run_totals", "fixed_steps", "step_params"]

#: the policy setting that counts the points a run was given (``optimize(initial=...)``, failed ones included)
INITIAL = "initial"
#: the policy setting that names the run a run continues (``optimize(initial=RUN_ID)``): the
#: points it was given are the first :data:`INITIAL` of the evaluations that run saw
INITIAL_FROM = "initial_from"


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
    #: the error the run recorded; for a run shown ``interrupted`` that recorded none (its process
    #: killed outright, a stale heartbeat), why it counts so (:func:`~npbandit.storage.heartbeat.interruption`)
    error: str | None
    #: the policy's settings (e.g. a BO policy's ``n_init``, where its initial design ends)
    policy_params: dict = field(default_factory=dict)
    #: a completed black-box run's recommendation, the evaluated point its model believes best:
    #: ``{"t": first evaluation of the point (None: a point given to the run, not evaluated in it),
    #: "params": the point by name in the user's units, "value": the model's posterior mean there
    #: in the objective's units}``; ``None`` for other runs and runs without a model (Sobol)
    recommended: dict | None = None
    #: how a run its stop rule ended before its budget (``optimize``'s callbacks) says so:
    #: ``"by its stop rule after 13 of 30 evaluations"``; ``None`` for every other run
    stopped_early: str | None = None
    #: the versions of npbandit, torch, Python and the numerical packages the run was made with
    #: (:data:`~npbandit.storage.logger.RECORDED_PACKAGES`; runs stored by older versions record fewer)
    versions: dict = field(default_factory=dict)


def list_runs(db: str = DEFAULT_URL, kind: str | None = None, *, after: int = 0) -> list[RunRow]:
    """Every run (optionally of one kind), oldest first, with its effective status.

    ``after``: only the runs of a greater id, the runs started since a look that saw the runs
    up to that id: a poll for new runs that reads only them (ids grow with each run started).
    Runs started before it that changed since (completed, failed) are not read again: a look
    at what is completed or running now reads every run (:func:`runs_by_key`).

    ``kind``: ``"bandit"`` or ``"bo"`` (:data:`~npbandit.storage.models.RUN_KINDS`), or a
    kind of one's own (``RunLogger.start(kind=...)``); ``None``: every run. A kind that looks
    like a slip for one of npbandit's (``"bandits"``, ``"BO"``) and that no run in ``db`` has
    is refused, where it would read as no runs.

    Reads only (see :func:`open_db` ``readonly``): a missing database is a
    :class:`StorageError`, never a new empty file.

    Raises:
        TypeError: ``kind`` is not a str or ``None``.
        ValueError: ``after`` is not an int >= 0; ``kind`` a slip for one of ``RUN_KINDS``
            (see above)."""
    after = check_int("after", after, minimum=0)
    _check_kind_type(kind)
    engine = open_db(db, readonly=True)
    query = select(Run).where(Run.id > after).order_by(Run.id)
    if kind is not None:
        query = query.where(Run.kind == kind)
    runs = _read(engine, str(db), "read runs", lambda conn: conn.execute(query).all() if _has_schema(conn) else [])
    if not runs and _mistyped(kind):  # asked only then: a kind of one's own that close is taken once a run has it
        kinds = _read(engine, str(db), "read runs", lambda conn: sorted(
            conn.execute(select(Run.kind).distinct()).scalars()) if _has_schema(conn) else [])
        if kind not in kinds:
            raise _unknown_kind(kind, kinds)
    return _as_rows(runs)


def _check_kind_type(kind: Any) -> None:
    if kind is not None and not isinstance(kind, str):
        raise TypeError(f"kind must be a str ({' or '.join(map(repr, RUN_KINDS))}) or None, got "
                        f"{type(kind).__name__} {kind!r}")


def _mistyped(kind: str | None) -> str | None:
    """The kind of :data:`~npbandit.storage.models.RUN_KINDS` that ``kind``, not one of them,
    looks like a slip for (``"bandits"``, ``"BO"``), else ``None``. A kind unlike both
    (``"bo_wide"``) may be one's own, which no run has yet: read as no runs."""
    if kind is None or kind in RUN_KINDS:
        return None
    close = difflib.get_close_matches(kind.strip().lower(), RUN_KINDS, n=1, cutoff=0.6)
    return close[0] if close else None


def _unknown_kind(kind: str, stored: list[str]) -> ValueError:
    """The error for a ``kind`` that looks like a slip for one of npbandit's and no stored run has."""
    own = [k for k in stored if k not in RUN_KINDS]
    logged = f" (or a kind this database's runs were logged with: {', '.join(map(repr, own))})" if own else ""
    return ValueError(f"kind must be {' or '.join(map(repr, RUN_KINDS))}{logged}, got {kind!r} -- did you mean "
                      f"{_mistyped(kind)!r}?")


def _as_rows(runs: Any) -> list[RunRow]:
    """Rows of the ``runs`` table as :class:`RunRow` s, each with its effective status."""
    # n_steps is updated in the same transaction as the step inserts, so it counts committed steps
    out = []
    for r in runs:
        settings = dict(r.policy_params or {})
        recommended, stopped_early = settings.pop(RECOMMENDED, None), settings.pop(STOPPED_EARLY, None)
        why = interruption(r)  # a run marked running whose process or heartbeat is gone: effective_status's rule
        out.append(RunRow(r.id, r.kind, r.env_id, r.env_params, r.policy, r.surrogate, r.checkpoint_sha256, r.seed,
                          r.status if why is None else "interrupted", r.n_steps, _read_time(r.started_at),
                          _read_time(r.finished_at), r.error if why is None else why,
                          settings, recommended, stopped_early, dict(r.versions or {})))
    return out


#: ``env_params`` a run records of where its task's data came from, not of the task: a CSV
#: file's absolute path and the SHA-256 of its bytes (:func:`npbandit.loop.csv_task`). Not part
#: of :func:`run_key`: the data the run played is (its ``data`` fingerprint, shape, file name and
#: label column), so one file reached by two paths (a copy, a hard link, another checkout), or
#: rewritten with the same data, is one task to a sweep as it is one to ``npbandit report``
SOURCE_PARAMS = ("csv_path", "csv_sha256")


def run_key(*, kind: str, env_id: str, env_params: dict[str, Any], policy: str,
            policy_params: dict[str, Any] | None = None, checkpoint: dict[str, Any] | None = None,
            seed: int | None = None, n_steps: int) -> str:
    """What makes two runs the same run, as one text: the arguments of
    :meth:`RunLogger.start <npbandit.storage.RunLogger.start>` (the dicts as the logger stores
    them, JSON values with their keys sorted; the checkpoint by its name and sha256) and the
    steps the run took. Two runs of one key are the same run when the policy and environment
    are deterministic given the seed, as npbandit's are; the package versions are not part of
    it (a run made by an older npbandit has the key of the same run made now), nor are the
    ``env_params`` that say where a task's data came from (:data:`SOURCE_PARAMS`).

    Raises:
        TypeError / ValueError: a dict that the logger could not store (a value JSON cannot
            hold; :func:`~npbandit.storage.models.stored_json`), named as the logger names it;
            ``checkpoint`` not a mapping (its ``name`` and ``sha256``) or ``None``.
    """
    if checkpoint is not None and not isinstance(checkpoint, Mapping):
        raise TypeError(f"checkpoint must be a mapping (the checkpoint's name and sha256) or None, got "
                        f"{type(checkpoint).__name__} {checkpoint!r}")
    checkpoint = checkpoint or {}
    # the dicts as stored (tuples are lists, arrays nested lists, keys strings), then in one order
    task = stored_json("env_params", env_params)
    if isinstance(task, dict):
        task = {k: v for k, v in task.items() if k not in SOURCE_PARAMS}
    record = {"kind": kind, "env_id": env_id, "env_params": task, "policy": policy,
              "policy_params": stored_json(f"policy_params (policy {policy!r}: what its params() returns)",
                                           policy_params or {}),
              "surrogate": checkpoint.get("name"), "checkpoint_sha256": checkpoint.get("sha256"), "seed": seed,
              "n_steps": n_steps}
    return json.dumps(record, sort_keys=True, default=json_default)


def _row_key(row: RunRow) -> str:
    checkpoint = {"name": row.surrogate, "sha256": row.checkpoint_sha256}
    return run_key(kind=row.kind, env_id=row.env_id, env_params=row.env_params, policy=row.policy,
                   policy_params=row.policy_params, checkpoint=checkpoint, seed=row.seed, n_steps=row.n_steps)


class RunsByKey(NamedTuple):
    """One look at a database's runs by :func:`run_key` (:func:`runs_by_key`): what a sweep
    need not run again and what it must not start a second time."""

    #: the completed runs by their key, the earliest where several share one
    completed: dict[str, RunRow]
    #: the runs still running (their effective status) by the key each will have once
    #: complete (:func:`running_runs`), the earliest where several share one
    running: dict[str, RunRow]


def runs_by_key(db: str = DEFAULT_URL, kind: str | None = None) -> RunsByKey:
    """``db``'s completed runs and its runs still running (optionally of one kind), each by
    its :func:`run_key`, from one read of the runs (:func:`list_runs`: one query, each run's
    liveness checked once): :func:`completed_runs` and :func:`running_runs` at once, as a
    sweep looks at a database.

    Reads only; an SQLite file that does not exist yet holds no runs (both empty, and no
    file is created), since a sweep's first run creates it. ``kind`` as :func:`list_runs`
    takes it (an unknown one refused)."""
    _check_kind_type(kind)
    path = _sqlite_file(_normalise_url(db))
    found = RunsByKey({}, {})
    if path is not None and not path.exists():
        if _mistyped(kind):  # no runs, so none of that kind either
            raise _unknown_kind(kind, [])
        return found
    for row in list_runs(db, kind=kind):
        key = _key_once_complete(row)
        if key is not None:
            (found.completed if row.status == "completed" else found.running).setdefault(key, row)
    return found


def completed_runs(db: str = DEFAULT_URL, kind: str | None = None) -> dict[str, RunRow]:
    """``db``'s completed runs (optionally of one kind) by their :func:`run_key`, the earliest
    where several share one: what a sweep finds done and need not run again
    (:func:`npbandit.loop.run_bandit_sweep`). A run's policy settings are read without its
    recommendation and early stop (:class:`RunRow`), so they are the settings it started with.

    Reads only, as :func:`list_runs`; an SQLite file that does not exist yet holds no runs
    (``{}``, and no file is created), since a sweep's first run creates it. With
    :func:`running_runs`, one read: :func:`runs_by_key`."""
    return runs_by_key(db, kind).completed


def running_runs(db: str = DEFAULT_URL, kind: str | None = None) -> dict[str, RunRow]:
    """``db``'s runs still running (their effective status, :mod:`npbandit.storage.heartbeat`:
    a live process on this host, or a fresh heartbeat from another), by the :func:`run_key`
    each will have once complete: its steps counted as its ``env_params``' ``horizon`` (the
    rounds it was started for; a run that records none is left out, as its key cannot be
    known before it ends). What a sweep run again must not start a second time
    (:func:`npbandit.loop.run_bandit_sweep` waits for them).

    Reads only, as :func:`completed_runs`; with it, one read: :func:`runs_by_key`."""
    return runs_by_key(db, kind).running


def _key_once_complete(row: RunRow) -> str | None:
    """The :func:`run_key` of a completed run, and the one a running run will have once
    complete (its steps counted as its ``env_params``' ``horizon``); ``None`` for a running
    run that records no horizon and for a run of any other status."""
    if row.status == "completed":
        return _row_key(row)
    horizon = (row.env_params or {}).get("horizon") if row.status == "running" else None
    if isinstance(horizon, int) and not isinstance(horizon, bool):
        return _row_key(replace(row, n_steps=horizon))
    return None


def _made_already(conn: Connection, run: dict[str, Any]) -> RunRow | None:
    """The run of ``conn``'s database that a run about to start (``run``: the row's values,
    as :meth:`RunLogger.start <npbandit.storage.RunLogger.start>` writes them, its
    ``env_params`` holding its ``horizon``) would make a second time: the earliest run of the
    same :func:`run_key` (its steps counted as the horizon) that is completed or running (its
    effective status, :func:`_as_rows`); ``None`` when there is none. One query, narrowed to
    the runs of the same kind, environment, policy and seed."""
    seed = Run.seed.is_(None) if run["seed"] is None else Run.seed == run["seed"]
    query = (select(Run).where(Run.kind == run["kind"], Run.env_id == run["env_id"], Run.policy == run["policy"],
                               seed, Run.status.in_(("running", "completed"))).order_by(Run.id))
    key = run_key(kind=run["kind"], env_id=run["env_id"], env_params=run["env_params"], policy=run["policy"],
                  policy_params=run["policy_params"],
                  checkpoint={"name": run["surrogate"], "sha256": run["checkpoint_sha256"]}, seed=run["seed"],
                  n_steps=run["env_params"]["horizon"])
    return next((row for row in _as_rows(conn.execute(query).all()) if _key_once_complete(row) == key), None)


def _check_run_id(run_id: Any, name: str = "run_id") -> int:
    """``run_id`` as an int: a NumPy integer too (the database driver binds it as no integer,
    and the run would not be found); ``TypeError`` naming it ``name`` for anything else."""
    if isinstance(run_id, (bool, np.bool_)) or not isinstance(run_id, (int, np.integer)):
        raise TypeError(f"{name} must be a run's id (an int), got {type(run_id).__name__} {run_id!r}")
    return int(run_id)


def run_steps(db: str, run_id: int) -> list[dict[str, Any]]:
    """The committed steps of a run, in order of t (reads only, as :func:`list_runs`);
    ``submitted_at`` / ``finished_at`` are aware UTC datetimes. ``params`` is the evaluated
    point by name in the user's units, ``values`` a run of several objectives' objective
    values, and ``fixed`` the values the caller held in the point (``Optimizer.ask(fixed=...)``;
    ``None`` when none) (:class:`~npbandit.storage.Step`); a column a database of an older schema lacks
    (it is read as it is: :mod:`~npbandit.storage.engine`) reads ``None``, as ``params`` does
    for other environments' steps.

    Raises:
        TypeError: ``run_id`` is not an int (a Python or NumPy integer).
        ValueError: ``db`` holds no run ``run_id`` (a run that has committed no step yet
            gives ``[]``).
    """
    run_id = _check_run_id(run_id)
    engine = open_db(db, readonly=True)

    def read(conn: Connection) -> list[Any] | None:
        if not _has_schema(conn):
            return None
        present = {c["name"] for c in inspect(conn).get_columns(Step.__tablename__)}
        columns = [c for c in Step.__table__.columns if c.name in present]
        query = select(*columns).where(Step.run_id == run_id).order_by(Step.t)
        rows = conn.execute(query).mappings().all()
        if rows or conn.execute(select(Run.id).where(Run.id == run_id)).first() is not None:
            return rows
        return None

    rows = _read(engine, str(db), "read steps", read)
    if rows is None:
        raise ValueError(f"run_id: {display_url(str(db))} holds no run {run_id!r}")
    absent = dict.fromkeys(c.name for c in Step.__table__.columns)
    return [{**absent, **r, **{key: _read_time(r[key]) for key in _STEP_TIMES}} for r in rows]


def run_totals(db: str, run_id: int) -> tuple[float | None, int]:
    """A run's cumulative regret as its last committed step records it (``None``: no step,
    or a last step without one) and how many of its steps failed, counted in the database
    instead of reading every step back (a sweep resumed over long runs asks this of each).

    Raises:
        TypeError: ``run_id`` is not an int (a Python or NumPy integer).
        ValueError: ``db`` holds no run ``run_id``."""
    run_id = _check_run_id(run_id)
    engine = open_db(db, readonly=True)

    def read(conn: Connection) -> tuple[float | None, int] | None:
        if not _has_schema(conn) or conn.execute(select(Run.id).where(Run.id == run_id)).first() is None:
            return None
        last = conn.execute(select(Step.cumulative_regret).where(Step.run_id == run_id)
                            .order_by(Step.t.desc()).limit(1)).scalar()
        failed = conn.execute(select(func.count()).select_from(Step)
                              .where(Step.run_id == run_id, Step.failed.is_(True))).scalar()
        return last, int(failed or 0)

    totals = _read(engine, str(db), "read run totals", read)
    if totals is None:
        raise ValueError(f"run_id: {display_url(str(db))} holds no run {run_id!r}")
    return totals


def fixed_steps(db: str, run_ids: list[int]) -> dict[int, int]:
    """How many steps of each run of ``run_ids`` held values the caller fixed
    (``Optimizer.ask(fixed=...)``: a step whose ``fixed`` records any), ``{run_id: count}``
    for the runs with at least one; one read of that column alone, not of the steps
    (``npbandit report`` asks it of every run it lists). ``{}`` from a database of a
    schema before steps recorded them.

    Raises:
        TypeError: ``run_ids`` is not a collection of run ids, or one is not an int (a Python
            or NumPy integer)."""
    if isinstance(run_ids, (str, bytes, Mapping)) or not isinstance(run_ids, Iterable):
        raise TypeError(f"run_ids must be a list of run ids (ints), got {type(run_ids).__name__} {run_ids!r}")
    ids = sorted({_check_run_id(run_id, f"run_ids[{i}]") for i, run_id in enumerate(run_ids)})
    if not ids:
        return {}
    engine = open_db(db, readonly=True)

    def read(conn: Connection) -> dict[int, int]:
        if not _has_schema(conn) or "fixed" not in {c["name"] for c in inspect(conn).get_columns(Step.__tablename__)}:
            return {}
        counts: dict[int, int] = {}
        for run_id, fixed in conn.execute(select(Step.run_id, Step.fixed).where(Step.run_id.in_(ids))):
            if fixed:  # NULL, JSON null or {}: nothing was fixed
                counts[run_id] = counts.get(run_id, 0) + 1
        return counts

    return _read(engine, str(db), "read steps", read)


def step_params(run: RunRow, step: dict[str, Any]) -> dict[str, Any] | None:
    """A black-box step's point by name in the user's units: the ``params`` it recorded or,
    for a step written before steps recorded them (schema 2), its ``action`` decoded through
    the run's recorded space or bounds (names ``x0 ...``); ``None`` when neither can be read.
    ``run`` is the step's run.

    Raises:
        TypeError: ``run`` is not a :class:`RunRow`, or ``step`` not a step record (a mapping,
            as :func:`run_steps` reads them)."""
    if not isinstance(run, RunRow):
        raise TypeError(f"run must be the step's run, a RunRow (list_runs), got {type(run).__name__}")
    if not isinstance(step, Mapping):
        raise TypeError(f"step must be a step record, a dict as run_steps reads it, got {type(step).__name__}")
    if step.get("params") is not None:
        return step["params"]
    try:
        if run.env_params.get("space") is not None:
            space = as_search_space(run.env_params["space"])
        elif run.env_params.get("bounds") is not None:
            space = SearchSpace.from_bounds(run.env_params["bounds"])
        else:
            return None
        return space.decode(step["action"])
    except (TypeError, ValueError, KeyError):  # a record this npbandit cannot read: shown as unknown
        return None


class RunEvaluations(list):
    """Every evaluation a black-box run saw (:func:`run_evaluations`): a list of step records
    as :func:`run_steps` reads them (each with its ``run_id`` and ``t``), that also says whose
    they are.

    Attributes:
        run_id: the run they are the evaluations of (the run a continuation continues).
        db: the database they were read from, as given.
        run: that run's :class:`RunRow`.
        source: how the run was named, first in messages (``"initial=7"``, ``"--initial-from 7"``).
        first: the first run of the chain (``run_id`` itself when it continued none).
        unheld: how many points ``first`` was given in a form no run holds (pairs, a history,
            arrays, a list of steps; 0 when none): not among the evaluations.
    """

    def __init__(self, steps: list[dict[str, Any]], run: RunRow, db: str, source: str, first: int,
                 unheld: int) -> None:
        super().__init__(steps)
        self.run_id, self.run, self.db, self.source, self.first, self.unheld = run.id, run, db, source, first, unheld


def run_evaluations(db: str, run: int | RunRow, name: str = "run") -> RunEvaluations:
    """Every evaluation the black-box run ``run`` of ``db`` saw, in order: the points it was
    given, then its own steps (:func:`run_steps`' records, failed ones included, each step's
    ``params`` read from its action where its database predates them: :func:`step_params`). A run that
    continued another (:data:`INITIAL_FROM` in its policy settings) was given the first
    :data:`INITIAL` of that run's evaluations, found the same way, so a chain of continued
    runs is followed back to its first run. Points the first run was given in another form
    are in no run: they are left out and counted (:attr:`RunEvaluations.unheld`). Reads only.

    Args:
        db: the database (SQLAlchemy URL or SQLite path).
        run: the run's id, or its :class:`RunRow`.
        name: what the run was given as, first in every message (``"run"`` reads
            ``run=7: ...``, ``"initial"`` reads ``initial=7: ...``, ``"--initial-from"`` reads
            ``--initial-from 7: ...``).

    Raises:
        TypeError: ``run`` is not an int or a ``RunRow``.
        ValueError: ``db`` holds no black-box run ``run``; a ``RunRow`` that is not ``db``'s
            run of its id (one read from another database: a setting it holds of the run,
            :data:`_IDENTITY`, differs); or a run of the chain continues a
            run ``db`` holds no longer, was given more evaluations than the run it continues
            holds, records a source that is not a run id, or continues a run the chain has
            already passed (a cycle).
    """
    if not isinstance(name, str) or not name.strip():
        raise TypeError(f"name must be a non-empty str (what the run was given as: 'run', 'initial', "
                        f"'--initial-from'), got {type(name).__name__} {name!r}")
    row = run if isinstance(run, RunRow) else None
    if row is not None:
        run = row.id
    if isinstance(run, bool) or not isinstance(run, (int, np.integer)):
        raise TypeError(f"{name} must be a run's id (int) or its RunRow, got {type(run).__name__}")
    run = int(run)
    source = f"{name} {run}" if name.startswith("-") else f"{name}={run}"
    runs = {r.id: r for r in list_runs(db, kind="bo")}
    if run not in runs:
        raise ValueError(f"{source}: {display_url(db)} holds no black-box run {run}"
                         + ("" if row is None else " (was the RunRow read from another database?)"))
    if row is not None:
        _check_same_row(row, runs[run], source, db)
    chain = [runs[run]]  # the run, then the run it continues, and so on back
    while (earlier := _continues(chain[-1], source)) is not None:
        said = ", which continues ".join(f"run {r.id}" for r in chain)
        if earlier in {r.id for r in chain}:
            raise ValueError(f"{source}: the runs' records go round in a cycle: {said}, which continues run "
                             f"{earlier} again")
        if earlier not in runs:
            raise ValueError(f"{source}: {said}, which continues run {earlier}, but {display_url(db)} holds no "
                             f"black-box run {earlier}: the {_given(chain[-1])} points run {chain[-1].id} was given "
                             "cannot be read")
        chain.append(runs[earlier])
    seen = _steps_with_params(db, chain[-1])
    for later, before in zip(reversed(chain[:-1]), reversed(chain[1:])):
        given = _given(later)
        if len(seen) < given:
            raise ValueError(f"{source}: run {later.id} was given {given} evaluations of run {before.id}, which "
                             f"holds {len(seen)} now")
        seen = seen[:given] + _steps_with_params(db, later)
    return RunEvaluations(seen, runs[run], db, source, chain[-1].id, _given(chain[-1]))


def _steps_with_params(db: str, run: RunRow) -> list[dict[str, Any]]:
    """``run``'s steps (:func:`run_steps`), each with its point by name (:func:`step_params`):
    a continuation reads the points of a run stored before steps recorded them too."""
    return [{**step, "params": step_params(run, step)} for step in run_steps(db, run.id)]


#: what a :class:`RunRow` holds of its run that stays as it was written when the run started
#: (its status, steps, end, error and recommendation change while it runs and when it ends)
_IDENTITY = ("started_at", "kind", "env_id", "env_params", "policy", "surrogate", "checkpoint_sha256", "seed")


def _check_same_row(given: RunRow, stored: RunRow, source: str, db: str) -> None:
    """``given`` must be ``db``'s run of its id, ``stored``: ``ValueError`` naming ``source``
    and the first setting of :data:`_IDENTITY` that differs (a RunRow of another database
    would otherwise continue whichever run ``db`` holds under that id)."""
    for key in _IDENTITY:
        mine, theirs = getattr(given, key), getattr(stored, key)
        if isinstance(mine, dict) and isinstance(theirs, dict):  # name the setting that differs, not all of them
            inner = next((k for k in sorted({*mine, *theirs}, key=str) if mine.get(k) != theirs.get(k)), None)
            if inner is not None:
                key, mine, theirs = f"{key}[{inner!r}]", mine.get(inner), theirs.get(inner)
        if mine != theirs:
            mine, theirs = (v.isoformat() if isinstance(v, dt.datetime) else repr(v) for v in (mine, theirs))
            raise ValueError(f"{source}: the RunRow given is not run {stored.id} of {display_url(db)}: its {key} is "
                             f"{mine}, that run's {theirs} (was it read from another database? give a RunRow "
                             f"of list_runs(db), or the run's id)")


def _given(run: RunRow) -> int:
    """How many points ``run`` was given (its :data:`INITIAL`; 0 when it records none)."""
    given = run.policy_params.get(INITIAL, 0)
    return int(given) if isinstance(given, int) and not isinstance(given, bool) and given > 0 else 0


def _continues(run: RunRow, source: str) -> int | None:
    """The run ``run`` continues (its :data:`INITIAL_FROM`), ``None`` when it continues none
    or was given no points; ``ValueError`` naming ``source`` for a record that is not a run id."""
    earlier = run.policy_params.get(INITIAL_FROM)
    if earlier is None or not _given(run):
        return None
    if isinstance(earlier, bool) or not isinstance(earlier, int):
        raise ValueError(f"{source}: run {run.id} records {INITIAL_FROM}={earlier!r}, which is not a run id")
    return earlier
