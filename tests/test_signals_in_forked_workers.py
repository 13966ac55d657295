"""A process forked inside a run (a process pool's worker, forked at its first submit)
inherits the run's SIGINT / SIGTERM handler: there a signal acts as it would without it, so
a worker sent SIGTERM ends (the run sees a lost worker, as after SIGKILL) instead of handing
the run a RunInterrupted that records the run itself as interrupted by SIGTERM."""

from __future__ import annotations

import contextlib
import os
import signal
import time

import pytest

from npbandit.stopping import RunInterrupted, stop_on_signals

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def _child_status(signum: int, own_run: bool = False) -> int:
    """Fork inside the run's handlers; the child (with ``own_run``, inside a run of its own)
    signals itself: exit 3 if it outlived the signal, 4 on a RunInterrupted, 5 on a plain
    KeyboardInterrupt; killed by it otherwise."""
    with stop_on_signals():
        pid = os.fork()
        if pid == 0:  # the child: never return into pytest
            try:
                with stop_on_signals() if own_run else contextlib.nullcontext():
                    os.kill(os.getpid(), signum)
                    time.sleep(5)
                os._exit(3)
            except RunInterrupted:
                os._exit(4)
            except KeyboardInterrupt:
                os._exit(5)
            except BaseException:
                os._exit(6)
        _, status = os.waitpid(pid, 0)
    return status


def test_sigterm_ends_a_forked_child():
    status = _child_status(signal.SIGTERM)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGTERM, status


def test_sigint_in_a_forked_child_is_a_plain_keyboard_interrupt():
    status = _child_status(signal.SIGINT)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 5, status


def test_the_run_itself_still_stops_with_run_interrupted():
    with pytest.raises(RunInterrupted), stop_on_signals():
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)


def test_a_run_inside_a_forked_child_stops_with_its_own_run_interrupted():
    """A run started in the child (a run of its own in a pool's worker) installs its handler
    over the inherited one, so a signal still stops it as a run."""
    status = _child_status(signal.SIGTERM, own_run=True)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 4, status
