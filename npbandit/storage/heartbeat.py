"""Liveness of runs: a background thread writes an open run's heartbeat every
:data:`HEARTBEAT_EVERY` seconds, and :func:`effective_status` reports a ``running`` run
whose process is gone or whose heartbeat is older than :data:`STALE_AFTER` as
``interrupted``.

Both settings are read from this module when used (``RunLogger()`` reads
``HEARTBEAT_EVERY``, ``effective_status`` reads ``STALE_AFTER``), so set them here.
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import threading
import warnings
import weakref
from typing import Any

from sqlalchemy import update
from sqlalchemy.exc import SQLAlchemyError

from npbandit.storage.models import Run, _now
from npbandit.storage.urls import display_url

__all__ = ["HEARTBEAT_EVERY", "STALE_AFTER", "effective_status", "interruption"]

#: seconds between two heartbeats of an open run (a background thread writes them)
HEARTBEAT_EVERY = 60.0
#: a ``running`` run whose heartbeat is older than this is shown as ``interrupted``
STALE_AFTER = dt.timedelta(minutes=30)


def _heartbeat(ref: weakref.ref[Any], stop: threading.Event) -> None:
    """A run's heartbeat, in its own thread so that it does not wait for steps: an
    evaluation that takes longer than ``STALE_AFTER`` must not make a live run look dead.

    ``ref`` is a weak reference to the run's :class:`~npbandit.storage.logger.RunLogger`;
    the thread ends when ``stop`` is set or the logger is gone."""
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
    its heartbeat is older than ``STALE_AFTER`` (:func:`interruption` says which), else
    ``running``.

    Raises:
        TypeError: ``run`` is not a run (a row with a ``status``: a ``Run``, a ``RunRow``), or
            ``now`` not a ``datetime.datetime``."""
    if not hasattr(run, "status"):
        raise TypeError(f"run must be a run (a Run, or a RunRow from list_runs), got {type(run).__name__} {run!r}")
    if now is not None and not isinstance(now, dt.datetime):
        raise TypeError(f"now must be a datetime.datetime or None, got {type(now).__name__} {now!r}")
    if run.status != "running":
        return run.status
    return "running" if interruption(run, now) is None else "interrupted"


def interruption(run: Run | Any, now: dt.datetime | None = None) -> str | None:
    """Why a run still marked ``running`` counts as ``interrupted``: its process ended
    without closing the run (same host; a run stopped by SIGINT / SIGTERM or by an error
    closes itself and records why, so this is a process killed outright, by SIGKILL or for
    memory, or a machine that stopped), or its heartbeat is older than ``STALE_AFTER``.
    ``None`` for a live run and for any run not marked ``running``."""
    if run.status != "running":
        return None
    if run.host == socket.gethostname() and not _pid_alive(run.pid):
        return (f"its process {run.pid} ended without closing the run: killed outright (SIGKILL, out of memory) "
                "or the machine stopped")
    beat = run.heartbeat_at
    if (now or _now()) - beat > STALE_AFTER:
        return (f"no heartbeat from {run.host} since {beat:%Y-%m-%d %H:%M:%S} UTC: its process stopped without "
                "closing the run, or lost the database")
    return None
