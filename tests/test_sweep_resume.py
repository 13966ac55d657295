"""A bandit sweep run again runs only what its database does not hold completed
(:func:`npbandit.storage.completed_runs`, :func:`npbandit.storage.run_key`)."""

import hashlib
import threading
import time

import numpy as np
import pytest
from sqlalchemy import update

from npbandit.cli import main
from npbandit.envs import WheelBanditEnv
from npbandit.loop import bandit_sweep, run_episode, run_wheel_bandits
from npbandit.policies import LinUCBPolicy
from npbandit.storage import Run, RunLogger, completed_runs, list_runs, open_db, run_key, run_steps, running_runs

POLICIES = ["uniform", "linucb"]


def _combinations(db):
    return sorted((r.policy, r.seed, r.policy_params.get("alpha"), r.n_steps) for r in list_runs(db))


def test_an_interrupted_sweep_run_again_runs_only_the_runs_not_completed(tmp_path):
    db, lines = str(tmp_path / "runs.db"), []

    def stop_after_two(line):  # the sweep is stopped between its second and third runs
        lines.append(line)
        if len(lines) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_wheel_bandits(POLICIES, [0.5], [0, 1, 2], 5, db=db, say=stop_after_two)
    first = {(r.policy, r.seed): r.id for r in list_runs(db)}
    assert set(first) == {("uniform", 0), ("linucb", 0)}
    # a run recorded interrupted (here the third combination's, as if stopped in its last step) runs again
    third = run_episode(WheelBanditEnv(delta=0.5, horizon=5), LinUCBPolicy(), seed=1, logger=RunLogger(db),
                        run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                  "env_params": {"delta": 0.5, "horizon": 5}})
    with open_db(db).begin() as conn:
        conn.execute(update(Run).where(Run.id == third.run_id).values(status="interrupted"))

    lines = []
    results = run_wheel_bandits(POLICIES, [0.5], [0, 1, 2], 5, db=db, say=lines.append)
    assert lines[0] == (f"skipping 2 of 6 runs: {db} holds them completed (the same policy, settings, delta, "
                        "seed and steps); rerun=True (--rerun on the command line) runs them again")
    assert len(lines) == 5  # the skip, then one line per run made
    runs = {r.id: r for r in list_runs(db)}
    assert [(runs[r.run_id].policy, runs[r.run_id].seed) for r in results] == [
        (p, s) for s in (0, 1, 2) for p in POLICIES]  # every combination, in sweep order
    assert [r.run_id for r in results[:2]] == [first["uniform", 0], first["linucb", 0]]  # found, not run
    assert third.run_id not in {r.run_id for r in results}
    completed = [(r.policy, r.seed) for r in runs.values() if r.status == "completed"]
    assert sorted(completed) == sorted((p, s) for s in (0, 1, 2) for p in POLICIES)  # each once
    for result in results[:2]:  # a skipped combination's result is its stored run's
        steps = run_steps(db, result.run_id)
        assert result.cumulative_regret == pytest.approx(steps[-1]["cumulative_regret"]) and result.n_steps == 5

    # all done: nothing runs
    lines = []
    again = run_wheel_bandits(POLICIES, [0.5], [0, 1, 2], 5, db=db, say=lines.append)
    assert [r.run_id for r in again] == [r.run_id for r in results] and len(lines) == 1
    assert len(list_runs(db)) == 7


def test_a_changed_setting_is_another_run_and_rerun_repeats_the_completed_ones(tmp_path):
    db = str(tmp_path / "runs.db")
    run_wheel_bandits(POLICIES, [0.5], [0], 5, db=db, say=None)
    # linucb's alpha (beta) is a setting it records: another run; uniform records none of it: the same run
    run_wheel_bandits(POLICIES, [0.5], [0], 5, beta=2.0, db=db, say=None)
    assert _combinations(db) == [("linucb", 0, 1.0, 5), ("linucb", 0, 2.0, 5), ("uniform", 0, None, 5)]
    run_wheel_bandits(["uniform"], [0.5], [0], 6, db=db, say=None)  # other steps
    run_wheel_bandits(["uniform"], [0.9], [0], 5, db=db, say=None)  # another delta
    assert [(r.policy, r.env_params["delta"], r.n_steps) for r in list_runs(db)][3:] == [("uniform", 0.5, 6),
                                                                                         ("uniform", 0.9, 5)]
    lines = []
    run_wheel_bandits(["uniform"], [0.5], [0], 5, db=db, say=lines.append, rerun=True)
    assert len(list_runs(db)) == 6 and not any(line.startswith("skipping") for line in lines)
    with pytest.raises(TypeError, match="rerun must be a bool"):
        run_wheel_bandits(["uniform"], [0.5], [0], 5, db=db, rerun="yes")


def test_the_bandit_command_skips_what_its_database_holds_and_reruns_with_rerun(tmp_path, capsys):
    db = ["--db", str(tmp_path / "runs.db")]
    args = ["bandit", "--policies", "uniform", "lin-ts", "--steps", "5", *db]
    assert main(args) == 0 and len(list_runs(db[1])) == 2
    capsys.readouterr()
    assert main(args) == 0 and len(list_runs(db[1])) == 2
    assert capsys.readouterr().out.startswith("skipping 2 of 2 runs")
    assert main([*args, "--rerun"]) == 0 and len(list_runs(db[1])) == 4


def test_run_key_reads_the_settings_as_stored_and_completed_runs_only_reads(tmp_path):
    base = {"kind": "bandit", "env_id": "e", "env_params": {"delta": 0.5, "horizon": 3}, "policy": "p", "seed": 0,
            "n_steps": 3}
    # the logger stores tuples and arrays as lists: the same run
    assert (run_key(**base, policy_params={"bounds": (0.0, 1.0)})
            == run_key(**base, policy_params={"bounds": np.array([0.0, 1.0])}))
    for change in ({"seed": 1}, {"n_steps": 4}, {"env_params": {"delta": 0.9, "horizon": 3}},
                   {"checkpoint": {"name": "c", "sha256": "ab"}}):
        assert run_key(**{**base, **change}) != run_key(**base), change
    assert (run_key(**base, checkpoint={"name": "c", "sha256": "ab"})
            != run_key(**base, checkpoint={"name": "c", "sha256": "cd"}))  # a retrained checkpoint
    missing = tmp_path / "none.db"
    assert completed_runs(str(missing)) == {} and not missing.exists()  # nothing created


def _write_csv(path, rows):
    path.write_text("width,height,kind\n" + "".join(f"{w},{h},{k}\n" for w, h, k in rows), encoding="utf-8")


CSV_ROWS = [(1.0, 2.0, "a"), (2.5, 0.5, "b"), (0.2, 1.1, "a"), (3.0, 3.0, "c"), (1.7, 0.1, "b"), (0.9, 2.2, "c")]


def test_a_data_set_sweep_skips_what_its_database_holds_and_a_changed_csv_file_runs_again(tmp_path):
    from npbandit.loop import csv_task, dataset_task, run_bandit_sweep

    db, path, lines = str(tmp_path / "runs.db"), tmp_path / "own.csv", []
    _write_csv(path, CSV_ROWS)
    tasks = [dataset_task("iris"), csv_task(path, "kind")]
    first = run_bandit_sweep(POLICIES, tasks, [0, 1], 4, db=db, say=lines.append)
    runs = {r.id: r for r in list_runs(db)}
    assert [(runs[r.run_id].policy, runs[r.run_id].seed, runs[r.run_id].env_params.get("dataset"),
             runs[r.run_id].env_params.get("csv")) for r in first] == [
        (p, s, "iris", None) for s in (0, 1) for p in POLICIES] + [(p, s, None, "own.csv") for s in (0, 1)
                                                                   for p in POLICIES]
    assert lines[-1].startswith(f"run {first[-1].run_id}: linucb") and "dataset=own.csv seed=1" in lines[-1]
    recorded = runs[first[-1].run_id].env_params
    assert recorded["csv_path"] == str(path.resolve()) and recorded["label_column"] == "kind"
    assert recorded["csv_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert (recorded["context_dim"], recorded["n_arms"], recorded["horizon"]) == (2, 3, 4)
    assert all(runs[r.run_id].status == "completed" and len(run_steps(db, r.run_id)) == 4 for r in first)

    lines = []  # the same sweep again: nothing runs
    again = run_bandit_sweep(POLICIES, [dataset_task("iris"), csv_task(path, "kind")], [0, 1], 4, db=db,
                             say=lines.append)
    assert lines == [f"skipping 8 of 8 runs: {db} holds them completed (the same policy, settings, data set, seed "
                     "and steps); rerun=True (--rerun on the command line) runs them again"]
    assert [r.run_id for r in again] == [r.run_id for r in first] and len(list_runs(db)) == 8

    # the file changed (one label): its runs are other runs, iris's are still done
    _write_csv(path, [*CSV_ROWS[:-1], (0.9, 2.2, "a")])
    lines = []
    changed = run_bandit_sweep(POLICIES, [dataset_task("iris"), csv_task(path, "kind")], [0, 1], 4, db=db,
                               say=lines.append)
    assert lines[0].startswith("skipping 4 of 8 runs") and len(lines) == 5
    assert [r.run_id for r in changed[:4]] == [r.run_id for r in first[:4]]
    new = [r for r in list_runs(db) if r.id not in runs]
    assert len(new) == 4
    assert {r.env_params["csv_sha256"] for r in new} == {hashlib.sha256(path.read_bytes()).hexdigest()}
    assert recorded["csv_sha256"] not in {r.env_params["csv_sha256"] for r in new}

    run_bandit_sweep(["uniform"], [dataset_task("iris")], [0], 4, db=db, say=None, rerun=True)
    assert len(list_runs(db)) == 13


def test_a_sweep_refuses_what_is_no_task_and_a_policy_that_cannot_serve_one_before_any_run(tmp_path):
    from npbandit.loop import BanditTask, dataset_task, run_bandit_sweep

    db = str(tmp_path / "runs.db")
    with pytest.raises(TypeError, match=r"tasks\[1\] must be a BanditTask"):
        run_bandit_sweep(POLICIES, [dataset_task("iris"), "wine"], [0], 4, db=db)
    with pytest.raises(ValueError, match="tasks is empty"):
        run_bandit_sweep(POLICIES, [], [0], 4, db=db)
    with pytest.raises(ValueError, match="dataset must be one of iris, wine"):
        dataset_task("mnist")
    # a wheel checkpoint fits the wheel's shape alone: refused on iris (4-D contexts, 3 arms), nothing run
    with pytest.raises(ValueError, match="needs a 'wheel' checkpoint with 4 inputs and 3 outputs"):
        run_bandit_sweep(["uniform", "cmanp-wheel"], [dataset_task("iris")], [0], 4, db=db)
    with pytest.raises(ValueError, match="must not hold 'horizon'"):
        BanditTask("npbandit/WheelBandit-v0", {"delta": 0.5, "horizon": 3})
    # a policy of one's own is a factory env -> Policy: anything else, or a factory that builds no Policy, is refused
    with pytest.raises(TypeError, match=r"policies\[1\] must be a policy name or a factory env -> Policy, got int"):
        run_bandit_sweep(["uniform", 3], [dataset_task("iris")], [0], 4, db=db)
    with pytest.raises(TypeError, match=r"policies\[1\] must return a Policy .*got ABCMeta"):
        run_bandit_sweep(["uniform", lambda env: LinUCBPolicy], [dataset_task("iris")], [0], 4, db=db)  # the class
    assert not (tmp_path / "runs.db").exists()  # refused before any run: no database made


class _UnrecordedSetting(LinUCBPolicy):
    """LinUCB whose params() holds a value JSON cannot: a run could not record it."""

    name = "linucb-unrecorded"

    def params(self):
        return {**super().params(), "schedule": object()}


def test_a_policy_whose_params_a_run_cannot_record_is_refused_naming_it_before_anything_is_written(tmp_path):
    from npbandit.loop import run_bandit_sweep, wheel_task

    db = tmp_path / "runs.db"
    pattern = r"policy_params \(policy 'linucb-unrecorded': what its params\(\) returns\) must hold JSON values.*object"
    with pytest.raises(TypeError, match=pattern):  # the sweep's run key
        run_bandit_sweep([lambda env: _UnrecordedSetting(n_arms=5, context_dim=2)], [wheel_task(0.5)], [0], 3,
                         db=str(db), say=None)
    with pytest.raises(TypeError, match=pattern):  # one run logged by hand
        run_episode(WheelBanditEnv(delta=0.5, horizon=3), _UnrecordedSetting(n_arms=5, context_dim=2), seed=0,
                    logger=RunLogger(str(db)))
    with pytest.raises(TypeError, match="env_params must hold JSON values"):
        run_key(kind="bandit", env_id="e", env_params={"data": {1, 2}}, policy="p", n_steps=1)
    looped: dict = {}
    looped["self"] = looped
    with pytest.raises(ValueError, match=r"policy_params \(policy 'p'.* must hold JSON values"):
        run_key(kind="bandit", env_id="e", env_params={}, policy="p", policy_params=looped, n_steps=1)
    assert not db.exists()  # refused before a database was made


def test_an_executor_given_as_a_function_is_entered_only_once_the_sweep_s_checks_pass(tmp_path):
    # npbandit bandit --dask-scheduler passes its cluster so: a sweep the checks refuse never reaches it
    import concurrent.futures as cf
    import contextlib

    from npbandit.loop import dataset_task, run_bandit_sweep, wheel_task

    events = []

    @contextlib.contextmanager
    def cluster():
        events.append("entered")
        with cf.ThreadPoolExecutor(1) as pool:
            yield pool
        events.append("left")

    db = str(tmp_path / "runs.db")
    with pytest.raises(ValueError, match="needs a 'wheel' checkpoint with 4 inputs and 3 outputs"):
        run_bandit_sweep(["uniform", "cmanp-wheel"], [dataset_task("iris")], [0], 4, db=db, executor=cluster)
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor, a function"):
        run_bandit_sweep(["uniform"], [wheel_task(0.5)], [0], 4, db=db, executor="tcp://127.0.0.1:8786")
    assert events == [] and not (tmp_path / "runs.db").exists()
    here = run_bandit_sweep(["uniform", "linucb"], [wheel_task(0.5)], [0, 1], 6, db=str(tmp_path / "here.db"),
                            say=None)
    there = run_bandit_sweep(["uniform", "linucb"], [wheel_task(0.5)], [0, 1], 6, db=db, say=None, executor=cluster)
    assert events == ["entered", "left"]  # once for the sweep, and left when its runs are through
    assert [r.cumulative_regret for r in there] == [r.cumulative_regret for r in here]
    assert len(list_runs(db)) == 4


def _held_linucb_run(db, release, fail=False):
    """The sweep's (linucb, seed 0) combination started in a thread, its policy held on ``release``
    (then failing, with ``fail``): a run still running when the sweep looks."""

    class Held(LinUCBPolicy):
        def act(self, observation):
            release.wait(30)
            if fail:
                raise RuntimeError("the worker went away")
            return super().act(observation)

    outcome = {}

    def run():
        try:
            outcome["result"] = run_episode(WheelBanditEnv(delta=0.5, horizon=5), Held(), seed=0, logger=RunLogger(db),
                                            run_info={"kind": "bandit", "env_id": "npbandit/WheelBandit-v0",
                                                      "env_params": {"delta": 0.5, "horizon": 5}})
        except RuntimeError as err:
            outcome["error"] = err

    thread = threading.Thread(target=run)
    thread.start()
    for _ in range(400):
        if running_runs(db):  # reads nothing until the run's file exists
            break
        time.sleep(0.05)
    live = running_runs(db)
    assert len(live) == 1  # keyed by the steps it was started for, as the sweep's job is
    return thread, outcome, next(iter(live.values())).id


@pytest.mark.parametrize("fail", [False, True])
def test_a_run_still_running_elsewhere_is_waited_for_not_started_twice(tmp_path, monkeypatch, fail):
    db, lines, release = str(tmp_path / "runs.db"), [], threading.Event()
    thread, outcome, live_id = _held_linucb_run(db, release, fail)
    monkeypatch.setattr(bandit_sweep, "LIVE_POLL_S", 0.05)

    def say(line):
        lines.append(line)
        if line.startswith("waiting"):
            release.set()

    try:
        results = run_wheel_bandits(POLICIES, [0.5], [0], 5, db=db, say=say)
    finally:
        release.set()
        thread.join(30)
    assert lines[1].startswith(f"waiting for 1 run(s) still running elsewhere (run {live_id})")
    assert sum(line.startswith("waiting") for line in lines) == 1  # said once, not at every look
    runs = {r.id: r for r in list_runs(db)}
    completed = sorted((r.policy, r.seed) for r in runs.values() if r.status == "completed")
    assert completed == [("linucb", 0), ("uniform", 0)]  # each once
    if fail:  # it stopped without completing: run here, as a new run
        assert runs[live_id].status == "failed" and "error" in outcome
        assert results[1].run_id not in (live_id, results[0].run_id)
    else:  # taken as it completed
        assert results[1].run_id == live_id == outcome["result"].run_id
        assert results[1].cumulative_regret == pytest.approx(outcome["result"].cumulative_regret)
    # rerun=True starts everything again, running or not
    assert len(run_wheel_bandits(POLICIES, [0.5], [0], 5, db=db, say=None, rerun=True)) == 2
    assert len(list_runs(db)) == len(runs) + 2


def test_a_run_another_sweep_started_after_this_one_looked_is_not_made_twice(tmp_path):
    """Two sweeps of the same runs at once (two operators, two shells): a run the other one
    made, or is making, after this one first looked at the database is found before it is started."""
    db, lines = str(tmp_path / "runs.db"), []

    def say(line):  # once this sweep's first run is through, another process makes its next one, seed 1
        lines.append(line)
        if len(lines) == 1:
            run_wheel_bandits(["uniform"], [0.5], [1], 5, db=db, say=None)

    results = run_wheel_bandits(["uniform"], [0.5], [0, 1, 2], 5, db=db, say=say)
    runs = list_runs(db)
    assert sorted(r.seed for r in runs) == [0, 1, 2]  # each once
    by_seed = {r.seed: r.id for r in runs}
    assert [r.run_id for r in results] == [by_seed[0], by_seed[1], by_seed[2]]
    assert results[1].cumulative_regret is not None and results[1].n_steps == 5


@pytest.mark.parametrize(("policies", "deltas", "seeds", "match"), [
    (["uniform"], [0.5], [0, 1, 0], r"seeds\[2\] repeats seed 0"),
    (["linucb", "uniform", "linucb"], [0.5], [0], r"policies\[0\] 'linucb' on delta=0\.5 and policies\[2\] "
                                                 r"'linucb' on delta=0\.5 are the same run"),
    (["uniform"], [0.5, 0.5], [0], r"^deltas\[1\] repeats delta 0\.5: each delta's runs would be made"),
])
def test_a_sweep_that_would_make_one_run_twice_is_refused_before_any_run(tmp_path, policies, deltas, seeds, match):
    """``npbandit bandit --seeds 0 0`` (or a policy given twice) ran the same run twice, and
    the report counted both in its mean and sd."""
    db = tmp_path / "runs.db"
    with pytest.raises(ValueError, match=match):
        run_wheel_bandits(policies, deltas, seeds, 5, db=str(db), say=None)
    assert not db.exists()


def test_the_bandit_command_names_a_repeated_seed_in_one_line(tmp_path, capsys):
    assert main(["bandit", "--policies", "uniform", "--seeds", "0", "0", "--steps", "5",
                 "--db", str(tmp_path / "runs.db")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("npbandit bandit: --seeds value 2 repeats seed 0") and err.count("\n") == 1


def test_a_look_at_the_runs_reads_them_once(tmp_path):
    """A sweep's look at what is completed and what is running is one read of the runs (it
    was two, completed_runs and running_runs, each listing every run and checking each
    one's liveness), and a sweep with nothing running elsewhere looks once."""
    from sqlalchemy import event

    from npbandit.storage import runs_by_key

    db, release = str(tmp_path / "runs.db"), threading.Event()
    run_wheel_bandits(["uniform"], [0.5], [0], 5, db=db, say=None)
    thread, _, live_id = _held_linucb_run(db, release)
    reads = []

    def count(conn, cursor, statement, *args):
        if "runs.heartbeat_at" in statement:  # a read of the runs' rows (not a run's totals by its id)
            reads.append(statement)

    engine = open_db(db, readonly=True)
    event.listen(engine, "before_cursor_execute", count)
    try:
        found = runs_by_key(db, kind="bandit")
        assert len(reads) == 1
        assert found.completed == completed_runs(db, kind="bandit")
        assert found.running == running_runs(db, kind="bandit")
        assert [r.id for r in found.running.values()] == [live_id]
        assert [r.policy for r in found.completed.values()] == ["uniform"]
        release.set()
        thread.join(30)
        reads.clear()
        results = run_wheel_bandits(POLICIES, [0.5], [0, 1], 5, db=db, say=None)
    finally:
        release.set()
        thread.join(30)
        event.remove(engine, "before_cursor_execute", count)
    assert len(reads) == 1  # the first look; each run's claim is its writer's own narrow look, in its insert
    assert results[1].run_id == live_id and len(list_runs(db)) == 4


@pytest.mark.parametrize("on_executor", [False, True], ids=["both-here", "one-on-an-executor"])
def test_two_sweeps_that_start_the_same_runs_at_the_same_moment_make_each_once(tmp_path, monkeypatch, on_executor):
    """Two sweeps of the same runs at once (two processes, one SQLite file), each having
    looked at the database before either wrote a run (a barrier in the task's run_info, asked
    by both for each run key and again just before each start, after the sweep has decided to
    start the run): each run is claimed as it starts, in the sweep's process or on the
    executor's worker, so one sweep makes it and the other takes it (waiting while it runs)."""
    import concurrent.futures as cf

    from npbandit.loop import BanditTask, run_bandit_sweep
    from npbandit.loop.bandit_tasks import WHEEL_ID

    db = str(tmp_path / "runs.db")
    monkeypatch.setattr(bandit_sweep, "LIVE_POLL_S", 0.01)
    together = threading.Barrier(2, timeout=60)

    class Together(BanditTask):
        def run_info(self, steps):
            together.wait()
            return super().run_info(steps)

    task = Together(WHEEL_ID, {"delta": 0.5}, {"delta": 0.5}, label="delta=0.5", what="delta")
    outcomes, lines = {}, {"a": [], "b": []}

    def sweep(name, executor):
        try:
            outcomes[name] = run_bandit_sweep(POLICIES, [task], [0, 1], 5, db=db, say=lines[name].append,
                                              executor=executor)
        except BaseException as err:  # noqa: BLE001 - shown by the assertion below
            outcomes[name] = err
            together.abort()

    # two sweeps on executors would share npbandit.cluster's one-job-at-a-time lock and meet at the barrier
    with cf.ThreadPoolExecutor(1) as pool:
        threads = [threading.Thread(target=sweep, args=("a", pool if on_executor else None)),
                   threading.Thread(target=sweep, args=("b", None))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    assert all(isinstance(outcome, list) for outcome in outcomes.values()), outcomes
    runs = list_runs(db)
    assert sorted((r.policy, r.seed) for r in runs) == [("linucb", 0), ("linucb", 1), ("uniform", 0), ("uniform", 1)]
    assert all(r.status == "completed" and r.n_steps == 5 for r in runs)
    a, b = outcomes["a"], outcomes["b"]
    assert [r.run_id for r in a] == [r.run_id for r in b] and sorted(r.run_id for r in a) == [r.id for r in runs]
    assert [r.cumulative_regret for r in a] == [r.cumulative_regret for r in b]
    assert [r.failed_steps for r in a] == [r.failed_steps for r in b] == [0] * 4
    assert len(lines["a"]) >= 4 and len(lines["b"]) >= 4  # every run told by both, made or taken


def test_a_run_another_process_starts_after_the_sweep_looked_is_found_by_its_claim_and_waited_for(tmp_path,
                                                                                                  monkeypatch):
    db, lines, release, held = str(tmp_path / "runs.db"), [], threading.Event(), {}
    monkeypatch.setattr(bandit_sweep, "LIVE_POLL_S", 0.01)

    def say(line):  # once the first run (uniform) is through, another process starts the next one, linucb
        lines.append(line)
        if len(lines) == 1:
            held["thread"], held["outcome"], held["id"] = _held_linucb_run(db, release)
        if line.startswith("waiting"):
            release.set()

    try:
        results = run_wheel_bandits(POLICIES, [0.5], [0], 5, db=db, say=say)
    finally:
        release.set()
        if "thread" in held:
            held["thread"].join(30)
    assert lines[1].startswith(f"waiting for 1 run(s) still running elsewhere (run {held['id']})")
    assert results[1].run_id == held["id"] == held["outcome"]["result"].run_id
    assert sorted((r.policy, r.status) for r in list_runs(db)) == [("linucb", "completed"), ("uniform", "completed")]


def _pool_that_first_makes(db, competitor):
    """An executor as a function (the sweep enters it after its first look at ``db``) that
    calls ``competitor`` before yielding a thread pool: a run made elsewhere after the look."""
    import concurrent.futures as cf
    import contextlib

    @contextlib.contextmanager
    def cluster():
        competitor()
        with cf.ThreadPoolExecutor(2) as pool:
            yield pool

    return cluster


@pytest.mark.parametrize("running", [False, True])
def test_a_job_on_an_executor_claims_its_run_and_takes_the_one_made_elsewhere(tmp_path, monkeypatch, running):
    """A sweep's jobs on an executor are handed out after its first look: a run another
    sweep made (or is making) since is found by the job's claim, which writes nothing, and
    the sweep takes it, completed, or waits for it, running; each run is made once."""
    db, lines, release, other = str(tmp_path / "runs.db"), [], threading.Event(), {}
    monkeypatch.setattr(bandit_sweep, "LIVE_POLL_S", 0.01)

    def competitor():  # another process's run of (linucb, seed 0), after the sweep looked
        if running:
            other["thread"], other["outcome"], other["id"] = _held_linucb_run(db, release)
        else:
            (made,) = run_wheel_bandits(["linucb"], [0.5], [0], 5, db=db, say=None)
            other["id"] = made.run_id

    def say(line):
        lines.append(line)
        if line.startswith("waiting"):
            release.set()

    try:
        results = run_wheel_bandits(POLICIES, [0.5], [0], 5, db=db, say=say,
                                    executor=_pool_that_first_makes(db, competitor))
    finally:
        release.set()
        if "thread" in other:
            other["thread"].join(30)
    assert not any(line.startswith("skipping") for line in lines)  # the first look found nothing: the claim did
    runs = list_runs(db)
    assert sorted((r.policy, r.seed, r.status) for r in runs) == [("linucb", 0, "completed"),
                                                                  ("uniform", 0, "completed")]  # each once
    assert results[1].run_id == other["id"] and results[1].n_steps == 5
    assert results[1].cumulative_regret == pytest.approx(run_steps(db, other["id"])[-1]["cumulative_regret"])
    assert sum(line.startswith(f"run {other['id']}: linucb") for line in lines) == 1  # told once, taken
    assert sum(line.startswith("waiting for 1 run(s)") for line in lines) == running
    # rerun=True runs everything again on the executor too, claiming nothing
    import concurrent.futures as cf

    with cf.ThreadPoolExecutor(1) as pool:
        again = run_wheel_bandits(POLICIES, [0.5], [0], 5, db=db, say=None, rerun=True, executor=pool)
    assert len(list_runs(db)) == 4 and not {r.run_id for r in again} & {r.id for r in runs}
