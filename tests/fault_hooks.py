"""The parts of test_faults.py's fault injection that run in a spawned worker process.

A pool worker imports the module of the function it is sent; kept here, apart from the test
module (which imports ``npbandit.api``, hence torch and BoTorch), a worker starts in a
fraction of a second instead of importing all that for a call that only sums its input.
"""

import os
import threading

import numpy as np

AT = 3  # the evaluation each phase is hit at


def send(signum):
    os.kill(os.getpid(), signum)


class SignalWhenRead(float):
    """A float the objective returns that sends a signal when ``step`` reads it: after the
    objective returned, before its step is written."""

    signum = None

    def __float__(self):
        send(self.signum)
        return float.__float__(self)

    def __reduce__(self):  # from a worker process: rebuilt in the driver, where it is read
        return _signal_when_read, (float.__float__(self), self.signum)


def _signal_when_read(value, signum):
    out = SignalWhenRead(value)
    out.signum = signum
    return out


class FileCount:
    """Counts returned evaluations as lines appended to a file, which outlives a SIGKILL."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)

    def add(self):
        os.write(self.fd, b"x\n")


def in_a_worker(phase, signum, folder, x):
    """``sum(x)`` in a worker process of a pool: at evaluation ``AT`` it signals the driver (its
    parent) and then holds its worker until the run has stopped (``evaluation``), or returns a
    :class:`SignalWhenRead` the driver reads (``returned``). Calls and returns are counted as
    lines of files in ``folder``, which every process sees."""
    calls = FileCount(os.path.join(folder, "calls"))
    calls.add()
    n = os.fstat(calls.fd).st_size // 2
    value = float(np.sum(x))
    if n == AT and phase == "evaluation":
        os.kill(os.getppid(), signum)
        threading.Event().wait(60)  # the driver kills its workers when the run stops
    if n == AT and phase == "returned":
        value = _signal_when_read(value, signum)
    FileCount(os.path.join(folder, "returned")).add()
    return value
