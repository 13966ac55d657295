"""Dask distributed as the engine: optimize's evaluations and whole sweeps on a LocalCluster.

One in-process cluster (worker threads, a TCP scheduler) serves the module: it starts in
a fraction of a second, still pickles every task (a closure's side effects do not reach
the test), and a subprocess can connect to it like a remote client.
"""

import os
import time

import numpy as np
import pytest
from helpers import completed_runs, dask_client, tiny_checkpoint

from npbandit import optimize
from npbandit.cli import main
from npbandit.envs import BlackBoxEnv
from npbandit.loop import run_episode
from npbandit.policies.base import Policy
from npbandit.storage import list_runs, run_steps

distributed = pytest.importorskip("distributed", reason="Dask distributed (the 'dask' extra) is not installed")

pytestmark = [pytest.mark.dask, pytest.mark.integration]

BOUNDS = [[-1.0, 0.0], [1.0, 2.0]]


@pytest.fixture(scope="module")
def client():
    with dask_client() as c:
        yield c


def sphere(x):
    return float(((np.asarray(x) - np.array([0.3, 1.2])) ** 2).sum())


def slow_sphere(x):
    time.sleep(0.3)
    return sphere(x)


def test_optimize_keeps_q_evaluations_in_flight_on_dask_workers(tmp_path, client):
    card = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    db = str(tmp_path / "dask.db")
    result = optimize(slow_sphere, BOUNDS, surrogate=card, budget=12, n_init=3, seed=0, db=db, progress=False,
                      batch_size=4, executor=client.get_executor())
    history = result.history
    assert len(history) == 12 and not any(h["failed"] for h in history)
    # nothing lost: every evaluation is in the database, in completion order, with its value
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert run.status == "completed" and [s["t"] for s in steps] == list(range(12))
    assert [s["value"] for s in steps] == pytest.approx([sphere(h["x"]) for h in history])
    # who evaluated what: a Dask worker's address, as the scheduler knows it, and several of them
    addresses = set(client.scheduler_info()["workers"])
    assert all(s["worker"].split()[0] in addresses for s in steps)
    assert [s["worker"] for s in steps] == [h["worker"] for h in history]
    assert len({s["worker"].split()[0] for s in steps}) >= 2
    # when: exactly four in flight at the busiest, never more, and the first four all before any finished
    spans = [(s["submitted_at"], s["finished_at"]) for s in steps]
    assert all(start <= end for start, end in spans)
    in_flight = [sum(a <= start < b for a, b in spans) for start, _ in spans]
    assert max(in_flight) == 4
    first_finish = min(end for _, end in spans)
    assert sum(start < first_finish for start, _ in spans) == 4


def test_cli_optimize_on_a_dask_scheduler(tmp_path, client, capsys):
    db = str(tmp_path / "cli.db")
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "6", "--batch-size", "3",
                 "--dask-scheduler", client.scheduler.address, "--db", db]) == 0
    assert "after 6 evaluations" in capsys.readouterr().out
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    addresses = set(client.scheduler_info()["workers"])
    assert len(steps) == 6 and all(s["worker"].split()[0] in addresses for s in steps)


class _SamePoint(Policy):
    """Proposes the centre of the box every time: two evaluations of one point in flight."""

    name, checkpoint = "same-point", None

    def act(self, obs, pending=None):
        return np.full(2, 0.5)

    def observe(self, obs, action, reward, info):
        pass

    def params(self):
        return {}


def _logged_sphere(path, x):
    with open(path, "a") as f:
        f.write(f"{x.tolist()}\n")
    time.sleep(0.2)
    return sphere(x)


def test_one_point_in_flight_twice_is_evaluated_twice(tmp_path, client):
    # Dask's executor merges calls with equal arguments into one task by default (pure):
    # a noisy objective must be measured twice, so each evaluation carries its own key
    import functools

    log = tmp_path / "calls.txt"
    env = BlackBoxEnv(objective=functools.partial(_logged_sphere, str(log)), bounds=np.array(BOUNDS), budget=4)
    result = run_episode(env, _SamePoint(), seed=0, executor=client.get_executor(), batch_size=2)
    assert len(result.steps) == 4 and not result.failed_steps
    assert len(log.read_text().splitlines()) == 4


def _hang_once(marker, release, x):
    """Hangs the first time it is called (a file marks that it was) until `release` exists, then a sphere.

    The marker is created atomically (``O_EXCL``): two calls starting at once on two workers
    must not both find it missing and both hang."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        pass
    else:
        deadline = time.monotonic() + 60.0
        while not os.path.exists(release) and time.monotonic() < deadline:
            time.sleep(0.05)
    return sphere(x)


def test_a_hanging_evaluation_times_out_and_the_run_goes_on(tmp_path, client):
    """The hung evaluation is released as soon as its timeout is recorded (a callback sees it).

    A timed-out call keeps its worker thread, and Dask's scheduler, once the future is
    cancelled, counts that worker free: an evaluation sent there afterwards would wait behind
    the hung one and could time out too. Releasing the hang at the timeout leaves only the
    hung evaluation able to reach it, however slow the machine.
    """
    import functools

    db = str(tmp_path / "timeout.db")
    release = tmp_path / "release"

    def release_on_failure(history):
        if any(h["failed"] for h in history):
            release.touch()

    try:
        result = optimize(functools.partial(_hang_once, str(tmp_path / "hung"), str(release)), BOUNDS,
                          surrogate="random", budget=5, seed=0, db=db, progress=False, batch_size=2,
                          executor=client.get_executor(), eval_timeout=3.0, on_error="skip",
                          callbacks=release_on_failure)
    finally:
        release.touch()  # frees the worker thread the hung evaluation holds
    (failed,) = [h for h in result.history if h["failed"]]
    assert failed["worker"] is None and failed["error_kind"] == "timeout" and len(result.history) == 5
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert run.status == "completed" and [s["failed"] for s in steps].count(True) == 1
    assert all(s["worker"] for s in steps if not s["failed"])


def _check_the_dask_sweep_matches_the_local_one(args, runs, tmp_path, client, capsys):
    """``npbandit args`` run here and on ``client``'s cluster: each of the ``runs`` runs a task
    there, the same completed runs (by run key) in both databases, a line for each run."""
    assert main([*args, "--db", str(tmp_path / "local.db")]) == 0
    with distributed.get_task_stream(client) as tasks:
        assert main([*args, "--db", str(tmp_path / "dask.db"), "--dask-scheduler", client.scheduler.address]) == 0
    assert len(tasks.data) == runs  # every run was a task on the cluster
    local, remote = completed_runs(str(tmp_path / "local.db")), completed_runs(str(tmp_path / "dask.db"))
    assert len(local) == runs and local == remote
    assert capsys.readouterr().out.count("cumulative regret") == 2 * runs


@pytest.mark.slow
def test_bandit_sweep_on_dask_matches_the_local_one(tmp_path, client, capsys):
    args = ["bandit", "--policies", "uniform", "linucb", "cmanp-wheel", "--deltas", "0.5", "0.9", "--seeds", "0", "1",
            "--steps", "25"]
    _check_the_dask_sweep_matches_the_local_one(args, 12, tmp_path, client, capsys)


def test_a_data_set_sweep_on_dask_matches_the_local_one(tmp_path, client, capsys):
    """A CSV file's data travels with its runs (pickled arrays): the workers read no file."""
    csv = tmp_path / "own.csv"
    csv.write_text("w,h,kind\n1,2,a\n2.5,0.5,b\n0.2,1.1,a\n3,3,c\n1.7,0.1,b\n", encoding="utf-8")
    args = ["bandit", "--datasets", "iris", str(csv), "--label-column", "kind", "--policies", "uniform", "linucb",
            "--seeds", "0", "1", "--steps", "6"]
    _check_the_dask_sweep_matches_the_local_one(args, 8, tmp_path, client, capsys)


def test_run_wheel_bandits_on_an_executor_returns_runs_in_sweep_order(tmp_path, client):
    from npbandit.loop import run_wheel_bandits

    args = (["linucb", "uniform"], [0.5], [0, 1, 2], 15)
    here = run_wheel_bandits(*args, db=str(tmp_path / "here.db"), say=None)
    lines = []
    there = run_wheel_bandits(*args, db=str(tmp_path / "there.db"), say=lines.append,
                              executor=client.get_executor())
    assert [r.cumulative_regret for r in there] == [r.cumulative_regret for r in here]
    # the results carry no steps (a protocol sweep would hold millions); the databases have them
    assert all(r.steps == [] for r in here + there)
    assert ([[s["action"] for s in run_steps(str(tmp_path / "there.db"), r.run_id)] for r in there]
            == [[s["action"] for s in run_steps(str(tmp_path / "here.db"), r.run_id)] for r in here])
    assert len(lines) == 6 and len(list_runs(str(tmp_path / "there.db"))) == 6


def test_a_sweep_on_an_executor_runs_only_the_runs_not_completed(tmp_path, client):
    from npbandit.loop import run_wheel_bandits

    db, lines = str(tmp_path / "runs.db"), []
    first = run_wheel_bandits(["linucb", "uniform"], [0.5], [0, 1], 10, db=db, say=None)
    with distributed.get_task_stream(client) as tasks:
        results = run_wheel_bandits(["linucb", "uniform"], [0.5], [0, 1, 2], 10, db=db, say=lines.append,
                                    executor=client.get_executor())
    assert len(tasks.data) == 2 and lines[0].startswith("skipping 4 of 6 runs") and len(lines) == 3
    runs = {r.id: r for r in list_runs(db)}
    assert len(runs) == 6 and [r.run_id for r in results[:4]] == [r.run_id for r in first]
    assert [(runs[r.run_id].policy, runs[r.run_id].seed) for r in results[4:]] == [("linucb", 2), ("uniform", 2)]


def test_the_cli_says_when_no_scheduler_answers(tmp_path, capsys, monkeypatch):
    from npbandit import cluster

    real = cluster.dask_executor
    monkeypatch.setattr(cluster, "dask_executor", lambda address: real(address, timeout=0.5))
    assert main(["bandit", "--policies", "uniform", "--steps", "5", "--db", str(tmp_path / "x.db"),
                 "--dask-scheduler", "tcp://127.0.0.1:9"]) == 2
    assert "tcp://127.0.0.1:9" in capsys.readouterr().err


def test_a_policy_factory_runs_on_the_cluster(tmp_path, client):
    """A policy of one's own goes into a sweep as a factory env -> Policy, pickled to the workers."""
    from npbandit.loop import run_bandit_sweep, wheel_task
    from npbandit.policies import LinUCBPolicy

    db = str(tmp_path / "own.db")
    with distributed.get_task_stream(client) as tasks:
        results = run_bandit_sweep([lambda env: LinUCBPolicy(alpha=0.5)], [wheel_task(0.5)], [0, 1], 10, db=db,
                                   say=None, executor=client.get_executor())
    assert len(tasks.data) == 2 and len(results) == 2
    runs = list_runs(db)
    assert sorted(r.seed for r in runs) == [0, 1] and {(r.policy, r.policy_params["alpha"]) for r in runs} == {
        ("linucb", 0.5)} and all(r.status == "completed" for r in runs)


def test_a_job_on_the_cluster_takes_the_run_another_sweep_made_since_the_sweep_looked(tmp_path, client):
    """The cluster's worker claims its job's run: one made since the sweep's first look (here
    by another sweep, as the sweep enters its executor) comes back from the worker as the run
    found, and the sweep takes it; each run is made once."""
    import contextlib

    from npbandit.loop import run_wheel_bandits

    db, lines, other = str(tmp_path / "runs.db"), [], {}

    @contextlib.contextmanager
    def cluster():  # entered after the sweep's first look at db
        (other["made"],) = run_wheel_bandits(["linucb"], [0.5], [1], 10, db=db, say=None)
        yield client.get_executor()

    with distributed.get_task_stream(client) as tasks:
        results = run_wheel_bandits(["linucb", "uniform"], [0.5], [0, 1], 10, db=db, say=lines.append,
                                    executor=cluster)
    assert len(tasks.data) == 4 and not any(line.startswith("skipping") for line in lines)  # all 4 sent out
    runs = list_runs(db)
    assert sorted((r.policy, r.seed) for r in runs) == [("linucb", 0), ("linucb", 1), ("uniform", 0), ("uniform", 1)]
    assert results[2].run_id == other["made"].run_id
    assert results[2].cumulative_regret == pytest.approx(other["made"].cumulative_regret)
    assert sorted(r.run_id for r in results) == [r.id for r in runs] and len(lines) == 4
