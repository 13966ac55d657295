"""npbandit.cluster.run_jobs on plain executors (Dask's is in test_dask.py)."""

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

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
_yielded, _raised = threading.Event(), threading.Event()


def _fail_on(bad, i):
    """Job ``i`` of a sweep whose job ``bad`` fails. Each waits for the test (a minute at most,
    however slow the machine): the failing job until the jobs before it have reached the test,
    those behind it until the failure has."""
    _started.append(i)
    if i == bad:
        _yielded.wait(60)
        raise RuntimeError(f"job {i} failed")
    if i > bad:
        _raised.wait(60)
    return i


def test_the_first_failure_is_raised_and_jobs_not_started_are_cancelled():
    # the order is the test's, not the clock's: with fixed sleeps, a driver thread descheduled for
    # longer than one found jobs 0 and 1 both done (as_completed yields those in any order) or let
    # a fourth job start before the cancellation
    _started.clear()
    _yielded.clear()
    _raised.clear()
    seen = []
    with ThreadPoolExecutor(1) as ex:
        try:
            with pytest.raises(RuntimeError, match="job 1 failed"):
                for _, value in run_jobs(_fail_on, [(1, i) for i in range(20)], ex, progress=False):
                    seen.append(value)
                    _yielded.set()
        finally:
            _raised.set()
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
    with pytest.raises(ImportError, match=r"pip install -e '\.\[dask\]'"):
        with cluster.dask_executor("tcp://127.0.0.1:8786"):
            pass
    with pytest.raises(ValueError, match="address"):
        with cluster.dask_executor(""):
            pass


# ---- process_pool: local workers that die with the process driving them ----------------------

def _group_members(pgid):
    """Pids of the live (non-zombie) processes of process group ``pgid``, read from /proc."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # ended while we looked
            continue
        state, _ppid, group = stat.rsplit(")", 1)[1].split()[:3]  # fields 3-5, after "pid (comm)"
        if int(group) == pgid and state != "Z":  # a zombie holds no memory and no files
            members.append(int(entry.name))
    return members


def _sigkill_the_driver_and_expect_no_orphan(proc, out, workers):
    """Once ``workers`` processes have written ``started-PID`` under ``out``, SIGKILL the driver
    ``proc`` (a session leader) alone; its output pipes must close and its process group empty
    within a bounded wait. The group is killed afterwards whatever happened."""
    try:
        deadline = time.monotonic() + 180
        while len(list(out.glob("started-*"))) < workers:
            assert proc.poll() is None, f"the driver ended early: {proc.communicate(timeout=60)}"
            assert time.monotonic() < deadline, "the workers never started their calls"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)  # the driver alone: no chance to clean up
        try:  # EOF on stdout and stderr: no worker or resource tracker holds them any more
            proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            pytest.fail(f"the driver's pipes stayed open after it died: held by {_group_members(proc.pid)}")
        deadline = time.monotonic() + 60
        while _group_members(proc.pid):
            assert time.monotonic() < deadline, f"processes orphaned by the driver: {_group_members(proc.pid)}"
            time.sleep(0.1)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)  # the group this test started, if anything is left


BLOCKING = """
import os, pathlib, time
def f(x):
    pathlib.Path({out!r}, f"started-{{os.getpid()}}").touch()
    time.sleep(600)
    return 0.0
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table from /proc")
def test_sigkill_of_optimize_with_workers_leaves_no_worker_and_closes_its_pipes(tmp_path):
    # the spawned workers (and multiprocessing's resource tracker) once outlived a SIGKILLed
    # driver: re-parented to PID 1, ignoring SIGTERM, holding its stdout/stderr open
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "blocking.py").write_text(BLOCKING.format(out=str(out)))
    proc = subprocess.Popen([sys.executable, "-m", "npbandit.cli", "optimize", "--objective", "blocking:f",
                             "--bounds", "[[0, 0], [1, 1]]", "--surrogate", "random", "--budget", "20",
                             "--workers", "2", "--db", str(tmp_path / "runs.db")],
                            cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    _sigkill_the_driver_and_expect_no_orphan(proc, out, workers=2)


POOL_SCRIPT = """
import ctypes, os, pathlib, sys, time
from npbandit.cluster import process_pool

def job(out):
    if sys.platform.startswith("linux"):  # PR_SET_PDEATHSIG 0: only the pipe can tell the driver is gone
        ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)
    pathlib.Path(out, f"started-{{os.getpid()}}").touch()
    time.sleep(600)

if __name__ == "__main__":
    with process_pool(2) as pool:
        for future in [pool.submit(job, {out!r}) for _ in range(2)]:
            future.result()
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the process table from /proc")
def test_process_pool_workers_see_the_driver_die_through_the_pipe_alone(tmp_path):
    # the portable half: with the parent-death signal cleared, the end of the driver's pipe ends them
    out = tmp_path / "out"
    out.mkdir()
    script = tmp_path / "pool.py"
    script.write_text(POOL_SCRIPT.format(out=str(out)))
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    _sigkill_the_driver_and_expect_no_orphan(proc, out, workers=2)


def _square_in(x):
    return x * x, os.getpid()


def _sleep_and_tell(seconds):
    time.sleep(seconds)
    return os.getpid()


def test_process_pool_runs_calls_on_its_workers_which_leave_stop_signals_to_the_driver():
    with cluster.process_pool(2) as pool:
        assert isinstance(pool, ProcessPoolExecutor)
        out = list(pool.map(_square_in, range(6)))
        assert [value for value, _ in out] == [0, 1, 4, 9, 16, 25]
        pids = {pid for _, pid in out}
        assert os.getpid() not in pids and len(pids) <= 2
        os.kill(next(iter(pids)), signal.SIGTERM)  # ignored: `kill -- -PGID` is the driver's to handle
        assert pool.submit(_square_in, 3).result()[0] == 9
    for pid in pids:  # a normal exit waited for the workers
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_leaving_a_process_pool_by_an_exception_abandons_the_running_calls():
    with pytest.raises(KeyboardInterrupt), cluster.process_pool(1) as pool:
        running = pool.submit(_sleep_and_tell, 600)
        pool.submit(_sleep_and_tell, 0)  # queued behind it: cancelled
        while not running.running():
            time.sleep(0.01)
        raise KeyboardInterrupt
    with pytest.raises(BrokenProcessPool):  # its worker was killed, not waited for
        running.result(timeout=60)


def test_process_pool_checks_its_argument():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="workers must be a positive int"), cluster.process_pool(bad):
            pass
