"""Stopping a run on SIGINT / SIGTERM without losing a finished evaluation.

:func:`stop_on_signals` turns SIGINT (Ctrl-C) and SIGTERM into :class:`RunInterrupted`
inside its block. The loop then *holds* them while a step that has been evaluated is
written: a signal arriving meanwhile is kept pending and raised once the write has
committed (:meth:`StopSignals.held`; or, for a step, from :meth:`StopSignals.hold_step`,
called where the objective returned, to the end of the :meth:`StopSignals.step` block that
writes it). So an evaluation is either abandoned while it runs or saved,
never returned and then dropped.

This module imports nothing from the library, so any module may use it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from typing import Any

__all__ = ["RunInterrupted", "StopSignals", "stop_on_signals", "stopped_by"]


class RunInterrupted(KeyboardInterrupt):
    """A run was stopped by SIGINT or SIGTERM, or by a ``KeyboardInterrupt``; its steps are saved
    and its status is ``interrupted``.

    Attributes:
        signum: the signal (``signal.SIGINT`` or ``signal.SIGTERM``) the run's handler turned into
            this; ``None`` for a ``KeyboardInterrupt`` it did not see come from a signal (raised by
            the objective, a callback or a policy; or Ctrl-C where the run had no handler of its own
            installed, as in an ask-and-tell loop between calls): the run records
            ``KeyboardInterrupt``, not a signal it cannot know was sent.
        run_id: the run's id in the database (``None`` without a logger).
        steps: the steps taken before the signal.
        unit: what the message calls a step: ``"step"`` (a bandit run, whose length is its
            steps), ``"evaluation"`` (a black-box run, whose budget counts evaluations).
        saved: the steps the database holds for the run (``None`` without a logger).
        records: the records of those steps, as ``run_episode`` returns them (empty when it
            keeps none): without a database, the only record of the run.
        history: ``optimize``'s ``history`` of those steps (set by ``optimize``; else ``None``).
    """

    def __init__(self, signum: int | None, run_id: int | None = None, steps: int = 0, saved: int | None = None,
                 records: list | None = None, unit: str = "step") -> None:
        self.signum, self.run_id, self.steps, self.unit = signum, run_id, steps, unit
        self.records = [] if records is None else records
        self.history: list | None = None
        self.saved = steps if saved is None and run_id is not None else saved
        where = ""
        if run_id is not None:
            count = f"all {self.saved}" if self.saved == steps else f"{self.saved} of them"
            where = f"; run {run_id} saved {count} and is recorded as interrupted"
        super().__init__(f"stopped by {stopped_by(signum)} after {steps} {unit}(s){where}")

    def __reduce__(self):
        # rebuilt from its own arguments, not its message (a process pool, Dask, sends it back), with
        # what was added since (optimize's history)
        return type(self), (self.signum, self.run_id, self.steps, self.saved, self.records, self.unit), \
            dict(self.__dict__)


def stopped_by(signum: int | None) -> str:
    """What stopped a run, as its record and :class:`RunInterrupted` say it: the signal's name
    (``SIGINT``), or ``KeyboardInterrupt`` for none (see :attr:`RunInterrupted.signum`)."""
    return "KeyboardInterrupt" if signum is None else signal.Signals(signum).name


class StopSignals:
    """SIGINT / SIGTERM -> :class:`RunInterrupted`, held back while a step is written.

    Installed only from the main thread (Python delivers signals there) and only over
    the default handlers: a handler the caller installed is left alone. Without this,
    SIGTERM would end the process on the spot, dropping the buffered steps and leaving
    the run ``running``.

    Attributes:
        pending: the signal that arrived while held (the first one), else ``None``.
    """

    def __init__(self) -> None:
        self.pending: int | None = None
        self._holding = 0
        self._step_held = False
        self.previous: dict[int, Any] = {}
        self._pid = os.getpid()

    @property
    def holding(self) -> bool:
        """Whether a signal arriving now would be held rather than raised."""
        return self._holding > 0

    def install(self) -> None:
        """Handle SIGINT / SIGTERM here (main thread only, over the default handlers only, or
        over a run's handler this process inherited by fork, which acts as the default here)."""
        if threading.current_thread() is not threading.main_thread():
            return
        self._pid = os.getpid()
        for signum, default in ((signal.SIGINT, signal.default_int_handler), (signal.SIGTERM, signal.SIG_DFL)):
            current = signal.getsignal(signum)
            owner = getattr(current, "__self__", None)  # a run's handler inherited by fork acts as the default
            if current is default or (isinstance(owner, StopSignals) and owner._pid != self._pid):
                self.previous[signum] = signal.signal(signum, self._handle)

    def restore(self) -> None:
        """Put back the handlers :meth:`install` replaced."""
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)
        self.previous.clear()

    def _handle(self, signum: int, _frame: Any) -> None:
        if os.getpid() != self._pid:  # a process forked inside the run (a process pool's worker): not the run
            self._as_default(signum)
        if self._holding:
            if self.pending is None:
                self.pending = signum
            return
        raise RunInterrupted(signum)

    @staticmethod
    def _as_default(signum: int) -> None:
        """What the signal does without a handler: a forked process inherits this one, and a
        SIGTERM sent to a pool's worker must end that worker (the run sees a lost worker),
        not stop the evaluation in it as the run's own interruption."""
        if signum == signal.SIGINT:
            raise KeyboardInterrupt
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)

    def _release(self, deliver: bool) -> None:
        self._holding -= 1
        if self.pending is not None and not self._holding:
            signum, self.pending = self.pending, None
            if deliver:
                raise RunInterrupted(signum)

    @contextlib.contextmanager
    def held(self, deliver: bool = True) -> Iterator[None]:
        """Hold signals during the block; then raise a held one (``deliver``) or drop it.

        A block left by an exception never raises the held signal over it (the exception
        is the run's outcome); the signal is then dropped."""
        self._holding += 1
        try:
            yield
        except BaseException:
            self._release(deliver=False)
            raise
        self._release(deliver)

    @contextlib.contextmanager
    def step(self) -> Iterator[None]:
        """The block that evaluates and records one step. A signal raises inside it as
        anywhere (abandoning an evaluation in progress) until :meth:`hold_step`; from then on
        it is held until the block ends, and raised there -- or dropped if the block raised
        (that exception is the run's outcome)."""
        try:
            yield
        except BaseException:
            self._end_step(deliver=False)
            raise
        self._end_step(deliver=True)

    def hold_step(self) -> None:
        """Hold signals until the :meth:`step` block ends (idempotent within it): called
        where an evaluation has returned, so that it cannot be lost before it is written."""
        if not self._step_held:
            self._step_held = True
            self._holding += 1

    def _end_step(self, deliver: bool) -> None:
        if self._step_held:
            self._step_held = False
            self._release(deliver)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[StopSignals]:
    """SIGINT / SIGTERM raise :class:`RunInterrupted` inside the block (in the main thread,
    where no handler of the caller's is installed); the previous handlers come back after.

    The one way this package turns a signal into an orderly stop: a run writes what it
    evaluated (``signals.held()`` around a write), a sweep cancels the jobs not yet started.
    """
    signals = StopSignals()
    signals.install()
    try:
        yield signals
    finally:
        signals.restore()
