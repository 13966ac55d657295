"""Which values of a step were fixed (``Optimizer.ask(fixed=...)``) in the database: each step's
``steps.fixed`` (schema 7), written when the trial is told and read back by ``run_steps`` /
``run_evaluations``, in ``history[i]["fixed"]``, counted by ``npbandit report``; a database of
schema 6 read as it is and upgraded in place by a writer; a run with fixed trials continued."""

import numpy as np
import pytest
from helpers import BOUNDS, forget_engines, sphere
from sqlalchemy import inspect, select, text, update

from npbandit import Optimizer, optimize
from npbandit.report import report_text
from npbandit.space import Choice, Float, Int
from npbandit.storage import SCHEMA_VERSION, Meta, RunLogger, list_runs, open_db, run_evaluations, run_steps
from npbandit.storage.models import ADDED_COLUMNS

SPACE = {"lr": Float(1e-4, 1e-1, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh", "gelu"]),
         "drop": Float(0.0, 0.5)}


def _version_and_step_columns(db):
    with open_db(db, readonly=True).connect() as conn:
        version = conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one()
        return version, {c["name"] for c in inspect(conn).get_columns("steps")}


def _told(opt, fixed_by_trial):
    """Ask ``opt`` once per entry (``fixed`` as given, ``None``: asked in full) and tell sphere's value."""
    trials = []
    for fixed in fixed_by_trial:
        trial = opt.ask(fixed=fixed)
        opt.tell(trial, sphere(trial.x))
        trials.append(trial)
    return trials


FIXED = [{"x1": 0.7}, None, {"x0": 0.1 + 0.2, "x1": 1.7}, None]


def test_schema_7_adds_the_steps_fixed():
    assert SCHEMA_VERSION >= 7 and ADDED_COLUMNS[7] == [("steps", "fixed")]


def test_a_told_trial_s_fixed_values_are_stored_and_read_back_after_reopening(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="random", budget=4, seed=0, db=db)
    trials = _told(opt, FIXED)
    opt.close()
    forget_engines()  # a reader of its own, as a later process would open it
    steps = run_steps(db, opt.run_id)
    assert [s["fixed"] for s in steps] == [{"x1": 0.7}, None, {"x0": 0.1 + 0.2, "x1": 1.7}, None]
    for step, trial in zip(steps, trials):  # the point the objective got, fixed values exactly as given
        assert step["params"] == {"x0": trial.x[0], "x1": trial.x[1]}
    assert steps[2]["params"]["x0"] == 0.1 + 0.2 and steps[0]["params"]["x1"] == 0.7
    assert [s["fixed"] for s in run_evaluations(db, opt.run_id)] == [s["fixed"] for s in steps]


def test_a_space_s_fixed_values_are_stored_in_the_user_s_units(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(space=SPACE, surrogate="random", budget=2, seed=1, db=db)
    trial = opt.ask(fixed={"act": "gelu", "lr": 0.003, "layers": 3.0})  # a whole float is the int
    opt.tell(trial, 1.0)
    opt.tell(opt.ask(), 2.0)
    first, second = run_steps(db, opt.run_id)
    assert first["fixed"] == {"act": "gelu", "lr": 0.003, "layers": 3} and second["fixed"] is None
    assert type(first["fixed"]["layers"]) is int
    assert {k: first["params"][k] for k in first["fixed"]} == first["fixed"]


def test_history_holds_each_evaluation_s_fixed_values_empty_when_none(tmp_path):
    opt = Optimizer(BOUNDS, surrogate="random", budget=4, seed=0, db=None)
    trials = _told(opt, FIXED)
    assert [h["fixed"] for h in opt.history] == [t.fixed for t in trials] == [
        {"x1": 0.7}, {}, {"x0": 0.1 + 0.2, "x1": 1.7}, {}]
    assert all(np.array_equal(h["x"], t.x) for h, t in zip(opt.history, trials))  # the fixed values exactly
    assert [h["fixed"] for h in opt.result().history] == [h["fixed"] for h in opt.history]
    attached = Optimizer(BOUNDS, surrogate="random", budget=1, seed=0, db=None)
    attached.tell(attached.attach([0.5, 1.0]), 1.0)
    assert attached.history[0]["fixed"] == {}


def test_an_optimize_run_records_none_and_its_history_has_no_such_key(tmp_path):
    db = str(tmp_path / "runs.db")
    result = optimize(sphere, BOUNDS, surrogate="random", budget=3, db=db, progress=False)
    assert not any("fixed" in h for h in result.history)  # optimize proposes every point in full
    assert [s["fixed"] for s in run_steps(db, result.run_id)] == [None, None, None]
    assert "fixed values" not in report_text(db)


def test_the_report_counts_a_run_s_evaluations_with_fixed_values(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="random", budget=4, seed=0, db=db, name="rig")
    _told(opt, FIXED)
    opt.close()
    plain = optimize(sphere, BOUNDS, surrogate="random", budget=3, db=db, progress=False, seed=1)
    lines = report_text(db).splitlines()
    (line,) = [line for line in lines if line.lstrip().startswith(f"{opt.run_id} ")]
    assert line.endswith("completed  (fixed values in 2 of 4 evaluations)")
    (other,) = [line for line in lines if line.lstrip().startswith(f"{plain.run_id} ")]
    assert "fixed" not in other


def test_a_run_with_fixed_trials_is_continued(tmp_path):
    db = str(tmp_path / "runs.db")
    first = Optimizer(BOUNDS, surrogate="gp", budget=4, n_init=3, seed=0, db=db, name="rig")
    _told(first, FIXED)
    first.close()
    more = Optimizer(BOUNDS, surrogate="gp", budget=3, seed=1, db=db, name="rig", initial=first.run_id)
    trials = _told(more, [None, {"x0": -0.5}, None])
    assert trials[1].x[0] == -0.5
    result = more.close()
    assert [h["fixed"] for h in result.history] == [{}, {"x0": -0.5}, {}]  # this run's evaluations alone
    again = Optimizer(BOUNDS, surrogate="random", budget=1, seed=2, db=None, initial=result.history)  # with fixed
    _told(again, [{"x1": 0.25}])
    assert again.history[0]["fixed"] == {"x1": 0.25}
    seen = run_evaluations(db, more.run_id)
    assert [s["fixed"] for s in seen] == [{"x1": 0.7}, None, {"x0": 0.1 + 0.2, "x1": 1.7}, None,
                                          None, {"x0": -0.5}, None]
    assert [s["run_id"] for s in seen] == [first.run_id] * 4 + [more.run_id] * 3
    (run,) = [r for r in list_runs(db) if r.id == more.run_id]
    assert run.policy_params["initial"] == 4 and run.status == "completed"
    line = next(line for line in report_text(db).splitlines() if line.lstrip().startswith(f"{more.run_id} "))
    assert "continues run" in line and line.endswith("(fixed values in 1 of 3 evaluations)")


def test_a_database_of_schema_6_is_read_as_it_is_and_upgraded_in_place_by_a_writer(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="random", budget=2, seed=0, db=db)
    _told(opt, [{"x0": 0.5}, None])
    opt.close()
    old = opt.run_id
    with open_db(db).begin() as conn:  # as an npbandit of schema version 6 left it
        conn.execute(text("ALTER TABLE steps DROP COLUMN fixed"))
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="6"))
    forget_engines()
    steps = run_steps(db, old)
    assert [s["fixed"] for s in steps] == [None, None]  # the column is absent: read as None
    assert steps[0]["params"]["x0"] == 0.5  # the rest as stored
    assert "fixed values" not in report_text(db)
    version, columns = _version_and_step_columns(db)
    assert version == "6" and "fixed" not in columns  # readers never write
    forget_engines()
    more = Optimizer(BOUNDS, surrogate="random", budget=1, seed=1, db=db)  # a writer adds the column
    _told(more, [{"x1": 1.5}])
    more.close()
    version, columns = _version_and_step_columns(db)
    assert version == str(SCHEMA_VERSION) and "fixed" in columns
    assert [s["fixed"] for s in run_steps(db, old)] == [None, None]  # the old steps kept as they were
    assert [s["fixed"] for s in run_steps(db, more.run_id)] == [{"x1": 1.5}]
    forget_engines()


def test_a_newer_schema_is_refused(tmp_path):
    from npbandit.storage import SchemaVersionError

    db = str(tmp_path / "runs.db")
    RunLogger(db)
    with open_db(db).begin() as conn:
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value=str(SCHEMA_VERSION + 1)))
    forget_engines()
    with pytest.raises(SchemaVersionError, match="newer npbandit"):
        list_runs(db)
    forget_engines()


@pytest.mark.parametrize(("bad", "error", "said"), [
    (["x0"], TypeError, "fixed must be None or a mapping"),
    ({0: 1.0}, TypeError, "fixed must be None or a mapping"),
    ({"x0": float("nan")}, ValueError, "fixed must hold JSON values only"),
    ({"x0": object()}, TypeError, "fixed must hold JSON values only"),
], ids=["list", "int name", "nan", "object"])
def test_the_logger_refuses_fixed_values_it_cannot_store_naming_them(tmp_path, bad, error, said):
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db)
    logger.start(kind="bo", env_id="npbandit/BlackBox-v0", env_params={}, policy="p")
    with pytest.raises(error, match=said):
        logger.log_step(t=0, action=[0.0], params={"x0": 0.0}, fixed=bad)
    logger.log_step(t=0, action=[0.0], params={"x0": 0.0}, fixed={})  # empty: nothing was fixed
    logger.log_step(t=1, action=[0.0], params={"x0": np.float64(0.25)}, fixed={"x0": np.float64(0.25)})
    logger.finish()
    assert [s["fixed"] for s in run_steps(db, logger.run_id)] == [None, {"x0": 0.25}]
