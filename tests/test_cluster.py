"""npbandit.cluster.run_jobs on plain executors (Dask's is in test_dask.py)."""

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from npbandit import cluster
from npbandit.cluster import run_jobs

_running = []
_lock = threading.Lock()


def _job(i, seconds):
    with _lock:
        _running.append(1)
        busy = len(_running)
    time.sleep(seconds)
    with _lock:
        _running.pop()
    return i * 10, busy


def test_every_job_runs_once_and_alone_in_its_process():
    # BO runs seed torch's process-wide generator: two at once in one process would not be
    # reproducible, so even a 4-thread pool runs one job at a time
    with ThreadPoolExecutor(4) as ex:
        out = dict(run_jobs(_job, [(i, 0.05) for i in range(6)], ex, progress=False))
    assert sorted(out) == list(range(6))
    assert [out[i][0] for i in range(6)] == [0, 10, 20, 30, 40, 50]
    assert max(busy for _, busy in out.values()) == 1


_started = []


def _fail_on(bad, i):
    _started.append(i)
    time.sleep(0.05)
    if i == bad:
        raise RuntimeError(f"job {i} failed")
    return i


def test_the_first_failure_is_raised_and_jobs_not_started_are_cancelled():
    _started.clear()
    seen = []
    with ThreadPoolExecutor(1) as ex:
        with pytest.raises(RuntimeError, match="job 1 failed"):
            for _, value in run_jobs(_fail_on, [(1, i) for i in range(20)], ex, progress=False):
                seen.append(value)
    # job 0 finished, job 1 failed; of the 18 queued behind it at most the next had started
    assert seen == [0] and len(_started) <= 3


def test_arguments_are_checked():
    with pytest.raises(TypeError, match="executor"):
        list(run_jobs(_job, [(0, 0)], object()))
    with ThreadPoolExecutor(1) as ex, pytest.raises(TypeError, match="argument tuples"):
        list(run_jobs(_job, [[0, 0]], ex))


def test_dask_executor_names_the_extra_when_dask_is_missing(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "distributed", None)  # import distributed -> ImportError
    with pytest.raises(ImportError, match=r"npbandit\[dask\]"):
        with cluster.dask_executor("tcp://127.0.0.1:8786"):
            pass
    with pytest.raises(ValueError, match="address"):
        with cluster.dask_executor(""):
            pass
