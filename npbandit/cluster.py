"""Work on more than one core or machine: sweeps of runs on any ``concurrent.futures`` executor.

Dask distributed is the tested engine (the ``dask`` extra): :func:`dask_executor` connects to
a running scheduler (``dask scheduler``, then ``dask worker ADDRESS`` on each machine) and
hands out its workers as an executor. The same executor serves ``optimize(executor=...)``
(evaluations of one objective) and :func:`run_jobs` (whole runs of a sweep, as
``npbandit bandit --dask-scheduler`` runs them).

Reproducibility: a run of a sweep depends on its seed alone, wherever it runs, as long as
no two runs share a process at the same time. BO runs seed torch's process-wide generator
around each proposal, so two runs in two threads of one worker would draw from one
generator in turn. :func:`run_jobs` therefore runs one job at a time per process (a Dask
worker with several threads queues the others); start workers with ``--nthreads 1`` and
as many processes as cores (``--nworkers N``) to use every core.

On one machine, :func:`process_pool` gives a process pool whose workers end with the
process that drives it, even one killed by SIGKILL (see its docstring).
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import ctypes
import multiprocessing
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["dask_executor", "leave_stop_signals_to_the_driver", "process_pool", "run_jobs"]

DASK_MISSING = ("Dask distributed is not installed; it is the optional 'dask' extra: "
                "pip install -e '.[dask]' in the clone (or pip install 'dask[distributed]')")

#: held while a job runs: one job per process at a time (see the module docstring)
_ONE_JOB = threading.Lock()

#: ``prctl`` option: the signal a process receives when the thread that created it ends (Linux)
_PR_SET_PDEATHSIG = 1

#: seconds :func:`process_pool` waits for its workers to start before giving up
_START_TIMEOUT = 300.0

#: a worker's copy of its pool's start barrier (set by :func:`_bind_to_driver`)
_START_BARRIER: Any = None


@contextlib.contextmanager
def dask_executor(address: str, *, timeout: float = 30.0) -> Iterator[cf.Executor]:
    """A :class:`concurrent.futures.Executor` on the workers of the Dask scheduler at ``address``.

    Every submission is a task of its own (``pure=False``): two evaluations of the same
    point, or two identical jobs, each run. The client is closed on leaving the block.

    Args:
        address: the scheduler's address, e.g. ``"tcp://10.0.0.5:8786"`` (what ``dask
            scheduler`` prints), or a ``LocalCluster``'s ``scheduler_address``.
        timeout: seconds to wait for the scheduler to answer.

    Yields:
        The client's executor (``Client.get_executor(pure=False)``).

    Raises:
        ValueError: ``address`` is not a non-empty string.
        ImportError: Dask distributed is not installed (naming the extra).
        OSError: no scheduler answers at ``address`` within ``timeout``.
    """
    if not isinstance(address, str) or not address:
        raise ValueError(f"address must be a Dask scheduler address such as 'tcp://host:8786', got {address!r}")
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(DASK_MISSING) from None
    client = Client(address, timeout=timeout)
    try:
        yield client.get_executor(pure=False)
    finally:
        client.close()


def run_jobs(fn: Callable[..., Any], jobs: Sequence[tuple], executor: cf.Executor, *,
             desc: str | None = None, progress: bool = True) -> Iterator[tuple[int, Any]]:
    """Run ``fn(*job)`` for every job on ``executor``; yields ``(index, result)`` as each finishes.

    Each job runs alone in its process (see the module docstring). The first job that
    raises is re-raised here, after the jobs not yet started are cancelled (those already
    running finish on their workers: no executor can stop a running call).

    Args:
        fn: a picklable function (module level, or any function Dask's cloudpickle takes).
        jobs: argument tuples, one per job.
        executor: a process pool, :func:`dask_executor`'s executor, any ``concurrent.futures``
            executor.
        desc, progress: the progress bar's label, and whether to show it.

    Yields:
        ``(index, result)``: the job's position in ``jobs`` and ``fn``'s return value, in
        order of completion.

    Raises:
        TypeError: ``executor`` is not a ``concurrent.futures.Executor``, or ``jobs`` is
            not a sequence of tuples.
        Exception: the first exception a job raised, re-raised.
    """
    if not isinstance(executor, cf.Executor):
        raise TypeError(f"executor must be a concurrent.futures.Executor, got {type(executor).__name__}")
    if isinstance(jobs, (str, bytes)) or not all(isinstance(job, tuple) for job in jobs):
        raise TypeError("jobs must be a sequence of argument tuples")
    from tqdm import tqdm

    futures = {executor.submit(_alone, fn, *job): i for i, job in enumerate(jobs)}
    try:
        for future in tqdm(cf.as_completed(futures), total=len(futures), desc=desc, disable=not progress):
            yield futures[future], future.result()
    finally:
        for future in futures:
            future.cancel()


def _alone(fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(*args)`` with no other job running in this process (on the executor's worker)."""
    with _ONE_JOB:
        return fn(*args)


def leave_stop_signals_to_the_driver() -> None:
    """Initializer of a local process pool's workers: SIGINT and SIGTERM are ignored there.

    Ctrl-C, ``kill -- -PGID`` and ``pkill -f`` signal the pool's workers with the process
    that drives the sweep. A forked worker would otherwise inherit the driver's handler
    (:func:`npbandit.loop.stop_on_signals`) and raise in the middle of its job or its wait
    for the next one, and the driver, joining it, would wait forever. Ignoring them, a
    worker finishes its running job and then stops when the driver shuts the pool down
    (SIGKILL still ends it).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)


@contextlib.contextmanager
def process_pool(workers: int) -> Iterator[cf.ProcessPoolExecutor]:
    """A local pool of ``workers`` spawned processes that end with the process driving it.

    Spawned, not forked: the driver holds torch's thread pools, which a forked child
    inherits broken. Each worker leaves SIGINT and SIGTERM to the driver
    (:func:`leave_stop_signals_to_the_driver`), and ends itself when the driver is gone,
    however it went (SIGKILL and out-of-memory kills included), so no worker (nor
    multiprocessing's resource tracker, which ends once no process holds its pipe)
    outlives the driver holding its memory and its stdout/stderr:

    - on Linux, the parent-death signal (``prctl(PR_SET_PDEATHSIG, SIGKILL)``): the kernel
      kills the worker when the thread that started it ends. All the workers are therefore
      started on entering the block, by the thread entering it, which outlives the pool;
    - everywhere, a pipe: the driver holds its only write end, the workers its read end;
      a daemon thread in each worker reads it and ends the process on end-of-file.

    On leaving the block normally the pool is shut down waiting for every call. Leaving it
    by an exception (an error, Ctrl-C, a stop signal the driver turned into one) does not
    wait: calls not started are cancelled and the workers are killed, abandoning the calls
    they were running (a hung call would otherwise keep the driver alive for ever).

    Args:
        workers: the number of worker processes, a positive int.

    Yields:
        The :class:`concurrent.futures.ProcessPoolExecutor`, its workers all started.

    Raises:
        ValueError: ``workers`` is not a positive int.
        concurrent.futures.process.BrokenProcessPool: a worker died while starting.
        threading.BrokenBarrierError: the workers did not all start within 300 seconds.
    """
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise ValueError(f"workers must be a positive int, got {workers!r}")
    ctx = multiprocessing.get_context("spawn")
    driver_gone, driver_alive = ctx.Pipe(duplex=False)  # read end to the workers; the write end stays here
    started = ctx.Barrier(workers)
    pool = cf.ProcessPoolExecutor(workers, mp_context=ctx, initializer=_bind_to_driver,
                                  initargs=(os.getpid(), driver_gone, started))
    try:
        try:
            # one call per worker, each waiting for all: the pool spawns every worker now, from this thread
            for future in [pool.submit(_wait_for_the_others) for _ in range(workers)]:
                future.result()
            yield pool
        except BaseException:
            _abandon(pool)
            raise
        pool.shutdown(wait=True)
    finally:
        driver_alive.close()  # any worker still running reads end-of-file and ends
        driver_gone.close()


def _abandon(pool: cf.ProcessPoolExecutor) -> None:
    """Shut ``pool`` down without waiting: cancel the calls not started, kill the workers."""
    processes = list(getattr(pool, "_processes", None) or {})  # pids; no public way before Python 3.14
    pool.shutdown(wait=False, cancel_futures=True)
    for pid in processes:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, getattr(signal, "SIGKILL", signal.SIGTERM))  # the workers ignore SIGINT / SIGTERM


def _bind_to_driver(driver_pid: int, driver_gone: Any, started: Any) -> None:
    """Initializer of :func:`process_pool`'s workers: leave stop signals to the driver, and
    end this process when the driver ``driver_pid`` is gone (its parent-death signal on
    Linux; everywhere, end-of-file on ``driver_gone``, the read end of the driver's pipe)."""
    global _START_BARRIER
    leave_stop_signals_to_the_driver()
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        if os.getppid() != driver_pid:  # the driver died before the signal was armed
            os._exit(1)
    threading.Thread(target=_exit_when_closed, args=(driver_gone,), name="npbandit-driver-watch",
                     daemon=True).start()
    _START_BARRIER = started


def _exit_when_closed(driver_gone: Any) -> None:
    """Block on the driver's pipe; end this process at once when the driver's end closes."""
    try:
        driver_gone.recv_bytes()
    except (EOFError, OSError):
        pass
    os._exit(1)


def _wait_for_the_others() -> None:
    """A worker's first call: wait until every worker of the pool has started."""
    _START_BARRIER.wait(_START_TIMEOUT)
