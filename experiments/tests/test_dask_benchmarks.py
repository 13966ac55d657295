"""experiments/benchmarks/bo.py and batch_bo.py on Dask distributed: a sweep sent to a cluster runs
the runs a local one does, and the batch benchmark measures what it reports.

One in-process cluster (worker threads, a TCP scheduler) serves the module, as in the library's
Dask tests; a benchmark run as a subprocess connects to it like a remote client."""

import os
import subprocess
import sys

import pytest

from .helpers import LAB, ROOT, completed_runs, dask_client, load_benchmark, tiny_checkpoint

distributed = pytest.importorskip("distributed", reason="Dask distributed (the 'dask' extra) is not installed")

pytestmark = [pytest.mark.dask, pytest.mark.integration, pytest.mark.lab]


@pytest.fixture(scope="module")
def client():
    with dask_client() as c:
        yield c


@pytest.mark.slow
def test_bo_benchmark_sweep_on_dask_matches_the_local_one(tmp_path, client, monkeypatch):
    """experiments/benchmarks/bo.py with --dask-scheduler runs the same BO runs as with --workers."""
    # the cluster's scheduler and workers are this process's threads, and the jobs the script sends name its
    # neighbours by bare name (common), as the script's own sys.path set-up finds them: so must this process,
    # whether or not another test loaded a benchmark first
    monkeypatch.syspath_prepend(str(LAB / "benchmarks"))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]),
           "OMP_NUM_THREADS": "1"}
    # budget 7: the 5-point initial design (2d + 1) and two model-based steps, so the model's state
    # carried from one step to the next is compared too; the model a tiny random-weight CMANP card (a
    # column may name one), streamed as the shipped cmanp-bo is, at a fraction of its cost
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    common = [sys.executable, str(LAB / "benchmarks" / "bo.py"), "--functions", "branin", "--seeds", "2",
              "--budget", "7", "--methods", card, "sobol", "--no-write"]
    local = subprocess.run([*common, "--workers", "1", "--db", str(tmp_path / "local.db")], env=env,
                           capture_output=True, text=True, timeout=300)
    assert local.returncode == 0, local.stderr[-3000:]
    with distributed.get_task_stream(client) as tasks:
        remote = subprocess.run([*common, "--dask-scheduler", client.scheduler.address, "--db",
                                 str(tmp_path / "dask.db")], env=env, capture_output=True, text=True, timeout=300)
    assert remote.returncode == 0, remote.stderr[-3000:]
    assert len(tasks.data) == 4  # the four runs were the cluster's tasks
    local, remote = completed_runs(str(tmp_path / "local.db")), completed_runs(str(tmp_path / "dask.db"))
    assert len(local) == 4 and local == remote


@pytest.mark.slow
def test_the_batch_bo_benchmark_measures_what_it_reports(tmp_path, capsys):
    bench = load_benchmark("batch_bo")
    db = str(tmp_path / "batch.db")
    bench.main(["--functions", "branin", "--qs", "1", "2", "--seeds", "1", "--budget", "6", "--sleep", "0.1",
                "--no-optuna", "--no-write", "--db", db])
    out = capsys.readouterr().out
    assert "Command: `python experiments/benchmarks/batch_bo.py --functions branin --qs 1 2 --seeds 1 --budget 6" in out
    runs = bench.collect(f"sqlite:///{db}", 6, 0.1, "tnpd", "believer")  # optimize's default liar
    assert sorted(runs) == [("branin", m) for m in ("q=1", "q=2", "sobol q=1", "sobol q=2")]
    # runs of another surrogate or liar are other rows' (kept out of this table)
    for surrogate, liar in (("cmanp", "believer"), ("tnpd", "mean")):
        assert sorted(bench.collect(f"sqlite:///{db}", 6, 0.1, surrogate, liar)) == [
            ("branin", "sobol q=1"), ("branin", "sobol q=2")]
    # each run's wall time is read back from its steps: first submission to last result spans
    # at least the sleeps, 6 x 0.1 s one at a time, 3 rounds of 0.1 s two at a time
    (one,), (two,) = runs[("branin", "sobol q=1")], runs[("branin", "sobol q=2")]
    assert one["wall_s"] >= 0.6 and two["wall_s"] >= 0.3
    summary = bench.summarise(runs, ["branin"], 1, [1, 2])
    assert summary["branin/sobol q=2"]["wall_ratio"] == pytest.approx(two["wall_s"] / one["wall_s"])
