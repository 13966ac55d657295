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
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

__all__ = ["dask_executor", "leave_stop_signals_to_the_driver", "run_jobs"]

DASK_MISSING = ("Dask distributed is not installed; it is the optional 'dask' extra: "
                "pip install 'npbandit[dask]' (or pip install 'dask[distributed]')")

#: held while a job runs: one job per process at a time (see the module docstring)
_ONE_JOB = threading.Lock()


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
