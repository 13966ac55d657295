"""Trajectory storage: every run and every step, in any SQLAlchemy database.

The default is an SQLite file (``sqlite:///npbandit.db``); any SQLAlchemy URL works
(PostgreSQL for many writers on many machines). Two tables:

- ``runs``: what ran (kind, environment id and parameters, policy and its
  parameters, surrogate checkpoint name and sha256, seed), its status
  (``running`` / ``completed`` / ``failed`` / ``interrupted``), start, end and
  heartbeat times, host and pid, package versions and the error text of a failed run; a
  completed black-box run's ``policy_params`` also hold its model's recommendation (the
  evaluated point of the best posterior mean), read back apart as ``RunRow.recommended``;
- ``steps``: one row per step (run, t, action, reward, regret, cumulative regret,
  expected regret, objective value, whether the step failed, timings and, for a
  black-box step, ``params``: the point by name in the user's units, beside ``action``
  in the unit cube; for a step of a run of several objectives, whose ``env_params``
  record ``minimize`` as a list of directions (and, where they were given, the objectives'
  names in that order, ``objective_names``), ``values``: the objective values in the
  user's units and sense, in that order, with ``value``, ``best_value`` and ``reward`` NULL;
  for a step whose point held values the caller fixed (``Optimizer.ask(fixed=...)``),
  ``fixed``: those values by name), unique on ``(run_id, t)``.

When steps are committed (:class:`RunLogger`): every step of every run is committed as
it is logged, so a process killed outright (SIGKILL, a crash) loses at most the step in
flight. A bandit sweep whose steps cost microseconds may batch them instead
(``RunLogger(commit_every=N)``, ``run_wheel_bandits(commit_every=N)``, ``npbandit bandit
--commit-every N``): a batch is committed when it is full and at least every
``max_wait_s`` seconds, and a kill loses the uncommitted batch.
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
SQLite file is opened read-only and never created, and no file is made beside it (no
``-wal`` / ``-shm`` file a reader of another user would own, see
:mod:`~npbandit.storage.sqlite_files`); a PostgreSQL session is read-only.

A database holding tables but none of npbandit's belongs to another application: readers
and writers refuse it (:class:`StorageError` naming ``db`` and the tables found), a writer
before it changes anything (no tables added, an SQLite file's journal mode untouched).

Schema version: the table ``npbandit_meta`` records ``schema_version``
(:data:`SCHEMA_VERSION`), written by the first writer and checked whenever a database is
opened, so an npbandit that lays out its tables differently refuses the database
(:class:`SchemaVersionError`, naming both versions) instead of misreading or corrupting it.
The one exception: a database of an older version that lacks only columns added since
(from :data:`~npbandit.storage.models.OLDEST_UPGRADABLE` on) is read as it is and upgraded
in place by a writer (:mod:`~npbandit.storage.engine`).

The package, by concern (every name below is importable from ``npbandit.storage``):

- :mod:`~npbandit.storage.models`: the tables (:class:`Run`, :class:`Step`, :class:`Meta`),
  :data:`SCHEMA_VERSION`, :data:`STATUSES`;
- :mod:`~npbandit.storage.urls`: :func:`display_url`, :func:`shared_url`, how a path or URL
  is read and checked;
- :mod:`~npbandit.storage.engine`: :func:`open_db`, :data:`DEFAULT_URL`, the schema check;
- :mod:`~npbandit.storage.sqlite_files`: how a reader opens an SQLite file without writing;
- :mod:`~npbandit.storage.heartbeat`: the heartbeat thread, :func:`effective_status`,
  :data:`HEARTBEAT_EVERY`, :data:`STALE_AFTER`;
- :mod:`~npbandit.storage.logger`: :class:`RunLogger`, :data:`COMMIT_EVERY`;
  ``RunLogger(claim=True)`` starts a run only if no process has made it or is making it
  (what a bandit sweep's runs do, so that two sweeps of the same runs make each once),
  else raises :class:`RunMadeElsewhere` naming that run;
- :mod:`~npbandit.storage.queries`: :func:`list_runs`, :func:`run_steps`, :class:`RunRow`,
  :func:`run_evaluations` (a black-box run's given points, a chain of continued runs
  followed back, and its own steps), :class:`RunEvaluations`, :data:`INITIAL`, :data:`INITIAL_FROM`,
  :func:`run_key`, :func:`completed_runs` (the completed runs by what they ran: what a
  sweep need not run again) and :func:`running_runs` (the live ones, by what they will
  have run: what a sweep must not start twice), both from one read: :func:`runs_by_key`
  (a :class:`RunsByKey`), :func:`run_totals` (a run's cumulative regret and failed steps),
  :func:`fixed_steps` (how many of a run's steps held values the caller fixed),
  :func:`step_params` (a black-box step's point by name, decoded from its action in a database from before
  steps recorded it).

The settings are read from their own module when used: change
``npbandit.storage.heartbeat.HEARTBEAT_EVERY`` or ``...heartbeat.STALE_AFTER`` there
(assigning ``npbandit.storage.HEARTBEAT_EVERY`` rebinds only this package's copy of the name);
:data:`COMMIT_EVERY` is one dict, shared, so changing its entries works through either name.
"""

from npbandit.exceptions import RunMadeElsewhere, SchemaVersionError, StorageError
from npbandit.storage.engine import DEFAULT_URL, open_db
from npbandit.storage.heartbeat import HEARTBEAT_EVERY, STALE_AFTER, effective_status
from npbandit.storage.logger import COMMIT_EVERY, RunLogger
from npbandit.storage.models import SCHEMA_VERSION, STATUSES, Base, Meta, Run, Step
from npbandit.storage.queries import (
           INITIAL,
           INITIAL_FROM,
           RunEvaluations,
           RunRow,
           RunsByKey,
           completed_runs,
           fixed_steps,
           list_runs,
           run_evaluations,
           run_key,
           run_steps,
           run_totals,
           running_runs,
           runs_by_key,
           step_params,
)
from npbandit.storage.urls import display_url, shared_url

__all__ = ["DEFAULT_URL", "Run", "Step", "Meta", "open_db", "RunLogger", "list_runs", "run_steps", "effective_status",
           "display_url", "shared_url", "StorageError", "SchemaVersionError", "STATUSES", "STALE_AFTER",
           "HEARTBEAT_EVERY", "COMMIT_EVERY", "SCHEMA_VERSION", "RunRow", "Base", "run_evaluations",
           "RunEvaluations", "INITIAL", "INITIAL_FROM", "run_key", "completed_runs", "running_runs",
           "RunsByKey", "runs_by_key", "RunMadeElsewhere",
           "run_totals", "fixed_steps", "step_params"]
