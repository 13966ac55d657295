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


SWEEP = """
import sys, time
from pathlib import Path
sys.path.insert(0, {benchmarks!r})
from common import run_jobs

def job(i):
    Path({out!r}, f"started-{{i}}").touch()
    time.sleep(2)
    Path({out!r}, f"finished-{{i}}").touch()

if __name__ == "__main__":
    try:
        run_jobs(job, [(i,) for i in range(8)], workers=1, desc="sweep")
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


@pytest.mark.parametrize("whole_group", [False, True])
@pytest.mark.integration
@pytest.mark.lab
@pytest.mark.slow
def test_a_sweep_sent_sigterm_starts_no_more_jobs_and_leaves_no_worker_behind(tmp_path, whole_group):
    # `kill PID` signals the driver alone; `kill -- -PGID`, `pkill -f` and Ctrl-C (SIGINT) reach its
    # pool workers too, which must leave the stopping to the driver (they once all waited forever)
    import os
    import signal
    import subprocess
    import sys

    from pathlib import Path

    script = tmp_path / "sweep.py"
    benchmarks = Path(__file__).resolve().parent.parent / "experiments" / "benchmarks"
    script.write_text(SWEEP.format(benchmarks=str(benchmarks), out=str(tmp_path)))
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "started-0").exists():
        assert time.monotonic() < deadline and proc.poll() is None, "the first job never started"
        time.sleep(0.05)
    if whole_group:
        os.killpg(proc.pid, signal.SIGTERM)  # start_new_session: the sweep leads its own group
    else:
        os.kill(proc.pid, signal.SIGTERM)  # the parent alone, as `kill PID` does
    out, _ = proc.communicate(timeout=30)
    assert "interrupted" in out
    assert (tmp_path / "finished-0").exists()  # the running job ended its work
    # nothing new began, bar the calls a process pool has already queued for its workers
    started = {p.name for p in tmp_path.glob("started-*")}
    assert len(started) <= 3 and {p.name.replace("finished", "started") for p in tmp_path.glob("finished-*")} == started
    time.sleep(0.5)
    alive = subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split()
    assert alive == [], f"processes left in the sweep's session: {alive}"
