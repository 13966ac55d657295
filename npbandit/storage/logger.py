"""Writing runs: :class:`RunLogger` records one run and its steps, committing them in
transactions sized by the run's kind (:data:`COMMIT_EVERY`)."""

from __future__ import annotations

import math
import os
import socket
import threading
import time
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, insert, update

import npbandit.storage.heartbeat as heartbeat
from npbandit._version import __version__
from npbandit.exceptions import RunMadeElsewhere
from npbandit.storage.engine import (
    _RUN_START_LOCK,
    DEFAULT_URL,
    _check_writable_file,
    _one_at_a_time,
    _storage_errors,
    open_db,
)
from npbandit.storage.heartbeat import _heartbeat
from npbandit.storage.models import (
    _STEP_DEFAULTS,
    _STEP_FIELDS,
    _STEP_TIMES,
    RECOMMENDED,
    STATUSES,
    STOPPED_EARLY,
    Run,
    Step,
    _now,
    _stored_time,
    stored_json,
)
from npbandit.storage.queries import _made_already
from npbandit.storage.urls import _absolute_url, _normalise_url, _sqlite_file, display_url, refuse_in_memory
from npbandit.text import printable, shorten
from npbandit.validation import check_int, is_real

__all__ = ["RunLogger", "COMMIT_EVERY"]

#: steps per transaction when ``RunLogger(commit_every=None)``, by run kind (``"bo"``,
#: ``"bandit"``, ...); kinds not listed use ``COMMIT_EVERY["default"]``. Every kind commits
#: each step by default, so a process killed outright loses at most the step in flight; set an
#: entry (or pass ``commit_every``) to trade that for throughput
COMMIT_EVERY = {"default": 1}

# a flush's two statements, built once: building them per commit costs more than a commit
_INSERT_STEPS = insert(Step)
_COUNT_STEPS = (update(Run).where(Run.id == bindparam("run"))
                .values(heartbeat_at=bindparam("now"), n_steps=Run.n_steps + bindparam("added")))


#: the installed distributions whose releases change a run's numbers (their arithmetic, their defaults), by their
#: names on the package index; each run records their versions beside npbandit's, torch's and Python's
RECORDED_PACKAGES = ("numpy", "scipy", "botorch", "gpytorch", "linear_operator")


def _versions() -> dict[str, str]:
    """The versions a run records: npbandit, torch, Python and each of :data:`RECORDED_PACKAGES` that is
    installed, read from the installed metadata (no import)."""
    import importlib.metadata
    import platform

    out = {"npbandit": __version__, "torch": _torch_version(), "python": platform.python_version()}
    for name in RECORDED_PACKAGES:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:  # pragma: no cover - all are dependencies
            pass
    return out


def _torch_version() -> str:
    """torch's version: the loaded module's, else the installed metadata's (the same string), so that
    a process that only logs runs (a bandit sweep's writer) does not import torch, a second or more,
    to learn it; imported only where neither is to be had (a torch without installed metadata)."""
    import importlib.metadata
    import sys

    torch = sys.modules.get("torch")
    if torch is None:
        try:
            return importlib.metadata.version("torch")
        except importlib.metadata.PackageNotFoundError:
            import torch
    return torch.__version__


def _new_sqlite_file(url: str) -> bool:
    """Whether ``url`` (as :func:`~npbandit.storage.engine._normalise_url` returns it, its path
    relative where it was given so) names an SQLite file that does not exist yet and could be
    created (else :class:`StorageError`, as :func:`~npbandit.storage.open_db` would say)."""
    path = _sqlite_file(url)
    if path is None or path.exists():
        return False
    _check_writable_file(url, Path(path).absolute())
    return True


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):
        return value.tolist()
    return value


def _objective_values(values: Any) -> list[float] | None:
    """A step's ``values`` (after :func:`_jsonable`) as the column stores them: ``None``, or a
    list of floats; ``ValueError`` naming ``values`` for anything else (see :meth:`RunLogger.log_step`)."""
    if values is None:
        return None
    if (not isinstance(values, (list, tuple)) or not values
            or not all(is_real(v) and math.isfinite(v) for v in values)):
        raise ValueError("values must be None (a failed step, a run of one objective) or the objective values of "
                         "the step, a non-empty sequence of finite numbers, got "
                         + shorten(printable(repr(values)), 200))
    return [float(v) for v in values]


def _fixed_values(fixed: Any) -> dict[str, Any] | None:
    """A step's ``fixed`` as the column stores it: ``None`` when nothing was fixed (``None`` or
    an empty mapping), else the values by name as JSON reads them back (see :meth:`RunLogger.log_step`)."""
    if fixed is None:
        return None
    if not isinstance(fixed, Mapping) or not all(isinstance(name, str) for name in fixed):
        raise TypeError("fixed must be None or a mapping of parameter names (str) to the values they were held at, "
                        "got " + shorten(printable(repr(fixed)), 200))
    return stored_json("fixed", dict(fixed), finite=True) or None


class RunLogger:
    """Writes one run and its steps; use as a context manager or call ``finish``.

    Args:
        db: SQLAlchemy URL (or SQLite path). Checked here, so a database that cannot
            be written fails before anything runs (:class:`StorageError`); an SQLite file
            that does not exist yet is created only when a run starts (:meth:`start`), so a
            run that never starts leaves no empty database behind.
        commit_every: steps buffered per transaction (1 = commit every step). ``None``
            (default) chooses by the run's kind at :meth:`start` (``COMMIT_EVERY``: every
            step, unless changed). With batches, a process killed by SIGKILL (or a power
            loss) loses the steps of the batch not yet committed; SIGINT / SIGTERM still
            commit them (:func:`npbandit.loop.run_episode`).
        max_wait_s: a buffered step is committed at the latest with the first step
            logged this many seconds after it, so batching never holds back the steps
            of a run whose steps turn out slow.
        heartbeat_every: seconds between heartbeats (default ``HEARTBEAT_EVERY``),
            written by a daemon thread from :meth:`start` to :meth:`finish`.
        claim: :meth:`start` starts the run only if ``db`` holds no run of the same
            :func:`~npbandit.storage.run_key` (its steps counted as its ``env_params``'
            ``horizon``, which a claimed run must record) that is completed or running in a
            live process (:func:`~npbandit.storage.running_runs`' rule); else it raises
            :class:`~npbandit.exceptions.RunMadeElsewhere` naming that run, having written
            nothing. The look and the insert are one transaction, and claims take their
            transactions one at a time (an SQLite file's write lock; on PostgreSQL an advisory
            lock), so of several processes that claim one run at the same moment exactly one
            starts it and the others find it. On another database the look and the insert are
            not serialised, and two claims at the same moment may both start the run. A run
            started without a claim is not refused, but a claim finds it. A bandit sweep
            claims its runs (:func:`npbandit.loop.run_bandit_sweep`).
    """

    def __init__(self, db: str = DEFAULT_URL, commit_every: int | None = None, max_wait_s: float = 5.0,
                 heartbeat_every: float | None = None, *, claim: bool = False) -> None:
        if commit_every is not None:  # a NumPy integer too, as an int from then on
            commit_every = check_int("commit_every", commit_every, minimum=1)
        if not isinstance(max_wait_s, (int, float)) or not max_wait_s > 0:
            raise ValueError(f"max_wait_s must be a positive number of seconds, got {max_wait_s!r}")
        # read from its module on each call, so that a changed setting applies to the next logger
        heartbeat_every = heartbeat.HEARTBEAT_EVERY if heartbeat_every is None else heartbeat_every
        if not isinstance(heartbeat_every, (int, float)) or not heartbeat_every > 0:
            raise ValueError(f"heartbeat_every must be a positive number of seconds, got {heartbeat_every!r}")
        if not isinstance(claim, bool):
            raise TypeError(f"claim must be a bool, got {claim!r}")
        given = _normalise_url(db)
        refuse_in_memory(given, db)
        self.url = _absolute_url(given)  # the file named now, wherever the run starts
        self.engine = None if _new_sqlite_file(given) else open_db(self.url)
        self.commit_every = commit_every
        self.claim = claim
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
        """Insert the run (status ``running``), start the heartbeat; returns the run id.

        Raises:
            TypeError / ValueError: ``policy_params`` or ``env_params`` holds a value JSON
                cannot, a NaN or an infinity among them
                (:func:`~npbandit.storage.models.stored_json`; checked before a database is
                opened), or ``policy_params`` a key the run's end writes; with ``claim``,
                ``env_params`` holds no ``horizon`` that is an int >= 1.
            RunMadeElsewhere: with ``claim``, ``db`` holds the same run completed or running
                (nothing written; :meth:`finish` does nothing then).
        """
        if self.run_id is not None:
            raise RuntimeError(f"this logger already holds run {self.run_id}; use one RunLogger per run")
        policy_params = stored_json(f"policy_params (policy {policy!r}: what its params() returns)",
                                    policy_params or {}, finite=True)
        env_params = stored_json("env_params", env_params, finite=True)
        horizon = env_params.get("horizon") if isinstance(env_params, dict) else None
        if self.claim and (not isinstance(horizon, int) or isinstance(horizon, bool) or horizon < 1):
            raise ValueError(f"claim=True needs the run's horizon: env_params['horizon'] must be an int >= 1, got "
                             f"{horizon!r} (the steps the run takes, which make it the same run as another)")
        if self.commit_every is None:
            self.commit_every = COMMIT_EVERY.get(kind, COMMIT_EVERY["default"])
        if self.engine is None:
            self.engine = open_db(self.url)
        now = _now()
        self._policy_params = policy_params
        if STOPPED_EARLY in self._policy_params:
            raise ValueError(f"policy_params must not hold {STOPPED_EARLY!r}: how an early stop ended the run goes "
                             "there when it finishes")
        if RECOMMENDED in self._policy_params:
            raise ValueError(f"policy_params must not hold {RECOMMENDED!r}: the run's recommendation goes there when "
                             "it finishes (finish(recommended=...))")
        values = dict(kind=kind, env_id=env_id, env_params=env_params,
                      policy=policy, policy_params=self._policy_params,
                      surrogate=None if checkpoint is None else checkpoint.get("name"),
                      checkpoint_sha256=None if checkpoint is None else checkpoint.get("sha256"),
                      seed=seed, status="running", started_at=now, heartbeat_at=now, n_steps=0,
                      host=socket.gethostname(), pid=os.getpid(), versions=_versions())
        # with claim, the look and the insert in one transaction, one claim at a time
        transaction = _one_at_a_time(self.engine, _RUN_START_LOCK) if self.claim else self.engine.begin()
        with _storage_errors(self.url, "record the run"), transaction as conn:
            if self.claim:
                found = _made_already(conn, values)
                if found is not None:
                    raise RunMadeElsewhere(f"run {found.id} of {display_url(self.url)} is the same run, "
                                           f"{found.status}: not started again", found)
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
        ``submitted_at`` / ``finished_at``: aware datetimes (any zone), or naive ones in UTC.
        ``values``: a step of a run of several objectives, its objective values (a sequence,
        array or tensor of finite numbers, one per objective, in the user's sense), ``None``
        for a failed step and for runs of one objective. ``fixed``: the parameters the step's
        point held at the caller's values, ``{name: value}`` in the user's units (``None`` or
        ``{}``: none, stored as ``None``).

        Raises:
            ValueError: a field :class:`Step` does not have; ``values`` neither ``None`` nor
                a non-empty flat sequence of finite real numbers (JSON has no NaN, and
                PostgreSQL's JSON columns refuse one: a failed step records ``None``);
                ``fixed`` holding a NaN or an infinity.
            TypeError: ``fixed`` not ``None`` or a mapping of names (str) to JSON values."""
        if self.run_id is None:
            raise RuntimeError("start() the run before logging steps")
        unknown = set(row) - _STEP_FIELDS
        if unknown:
            raise ValueError(f"unknown step field(s) {sorted(unknown)}; expected some of {sorted(_STEP_FIELDS)}")
        # every row carries every column, so a batch is one executemany
        row = {k: _jsonable(row.get(k, _STEP_DEFAULTS.get(k))) for k in _STEP_FIELDS}
        row["values"] = _objective_values(row["values"])
        row["fixed"] = _fixed_values(row["fixed"])
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
            conn.execute(_INSERT_STEPS, rows)
            conn.execute(_COUNT_STEPS, {"run": self.run_id, "now": _now(), "added": len(rows)})
        del self._buffer[:len(rows)]
        self.rows_written += len(rows)

    def finish(self, status: str = "completed", error: str | None = None, *,
               recommended: dict[str, Any] | None = None, stopped_early: str | None = None) -> None:
        """Commit what is buffered, stop the heartbeat and record the final status
        (``completed``, ``failed`` or ``interrupted``) and error text.

        ``recommended``: a JSON-serialisable record of the point the run's model recommends
        (:class:`~npbandit.loop.EpisodeResult`'s), stored in the run's ``policy_params`` under
        :data:`~npbandit.storage.models.RECOMMENDED` (read back as :attr:`RunRow.recommended`);
        only with ``completed``. ``stopped_early``: for a run its stop rule ended before its
        budget, how (e.g. ``"by its stop rule after 13 of 30 evaluations"``), stored under
        :data:`~npbandit.storage.models.STOPPED_EARLY` (read back as :attr:`RunRow.stopped_early`);
        only with ``completed``.

        If the buffered steps cannot be written, the status is still recorded, with
        the reason in the error text, and the write error is raised."""
        if status not in STATUSES[1:]:
            raise ValueError(f"status must be one of {STATUSES[1:]}, got {status!r}")
        if recommended is not None:
            if status != "completed":
                raise ValueError(f"recommended goes with status 'completed', got {status!r}")
            if not isinstance(recommended, dict):
                raise TypeError(f"recommended must be a dict or None, got {type(recommended).__name__}")
            recommended = stored_json("recommended", recommended)
        if stopped_early is not None:
            if status != "completed":
                raise ValueError(f"stopped_early goes with status 'completed', got {status!r}")
            if not isinstance(stopped_early, str):
                raise TypeError(f"stopped_early must be a str or None, got {type(stopped_early).__name__}")
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
        values = dict(status=status, finished_at=_now(), heartbeat_at=_now(), error=error)
        if status == "completed" and (recommended is not None or stopped_early is not None):
            ended = {RECOMMENDED: recommended} if recommended is not None else {}
            ended |= {STOPPED_EARLY: stopped_early} if stopped_early is not None else {}
            values["policy_params"] = {**self._policy_params, **ended}
        with _storage_errors(self.url, "record the run's status"), self.engine.begin() as conn:
            conn.execute(update(Run).where(Run.id == self.run_id).values(**values))
        self.status = status
        if unsaved is not None:
            raise unsaved

    def __enter__(self) -> RunLogger:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc is None:
            self.finish("completed")
        else:
            self.finish("interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
                        f"{exc_type.__name__}: {exc}")
