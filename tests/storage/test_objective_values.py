"""Runs of several objectives in the database: each step's objective values in ``steps.values``
(schema 6), written by the logger and read back by ``run_steps`` / ``run_evaluations``; a
database of schema 5 read as it is and upgraded in place by a writer; a run's key with its
list of directions."""

import math

import numpy as np
import pytest
from helpers import forget_engines, log_objectives_run
from sqlalchemy import inspect, select, text, update

from npbandit.exceptions import RunMadeElsewhere
from npbandit.storage import (
    SCHEMA_VERSION,
    Meta,
    RunLogger,
    list_runs,
    open_db,
    run_evaluations,
    run_key,
    run_steps,
)
from npbandit.storage.models import ADDED_COLUMNS

EVALUATIONS = [[1.0, 2.0], None, [0.5, -3.25]]


def _version_and_step_columns(db):
    with open_db(db, readonly=True).connect() as conn:
        version = conn.execute(select(Meta.value).where(Meta.key == "schema_version")).scalar_one()
        return version, {c["name"] for c in inspect(conn).get_columns("steps")}


def test_schema_6_adds_the_steps_values():
    assert SCHEMA_VERSION >= 6 and ADDED_COLUMNS[6] == [("steps", "values")]


def test_a_step_s_objective_values_are_written_and_read_back(tmp_path):
    db = str(tmp_path / "runs.db")
    run_id = log_objectives_run(db, EVALUATIONS, minimize=(True, False))
    (run,) = list_runs(db)
    assert run.env_params["minimize"] == [True, False] and run.env_params["objectives"] == 2
    steps = run_steps(db, run_id)
    assert [s["values"] for s in steps] == EVALUATIONS  # in the user's sense, as given; a failed step None
    assert [(s["value"], s["best_value"], s["reward"]) for s in steps] == [(None, None, None)] * 3
    assert [s["failed"] for s in steps] == [False, True, False]
    assert [s["values"] for s in run_evaluations(db, run_id)] == EVALUATIONS


def test_arrays_and_tensors_of_values_are_stored_as_lists_of_floats(tmp_path):
    import torch

    db = str(tmp_path / "runs.db")
    logger = RunLogger(db)
    logger.start(kind="bo", env_id="npbandit/BlackBox-v0", env_params={"minimize": [True, True]}, policy="p")
    logger.log_step(t=0, action=[0.0], values=np.array([1.5, 2]))
    logger.log_step(t=1, action=[0.0], values=torch.tensor([0.25, -1.0], dtype=torch.float64))
    logger.log_step(t=2, action=[0.0], values=(3, 4.0))
    logger.finish()
    assert [s["values"] for s in run_steps(db, logger.run_id)] == [[1.5, 2.0], [0.25, -1.0], [3.0, 4.0]]


@pytest.mark.parametrize("bad", [[], [1.0, math.nan], [math.inf, 0.0], [True, 1.0], ["1.0", 2.0], [[1.0, 2.0]],
                                 1.5, "1.0, 2.0", np.array([[1.0, 2.0]])],
                         ids=["empty", "nan", "inf", "bool", "str", "nested", "scalar", "text", "2-d array"])
def test_values_that_are_not_finite_numbers_are_refused_naming_them(tmp_path, bad):
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db)
    logger.start(kind="bo", env_id="npbandit/BlackBox-v0", env_params={"minimize": [True, True]}, policy="p")
    with pytest.raises(ValueError, match="values must be None .* a non-empty sequence of finite numbers, got"):
        logger.log_step(t=0, action=[0.0], values=bad)
    logger.finish()
    assert run_steps(db, logger.run_id) == []  # nothing written


def test_a_run_of_one_objective_reads_values_none(tmp_path):
    from npbandit import optimize

    db = str(tmp_path / "runs.db")
    result = optimize(lambda x: float(np.sum(x)), [[0.0], [1.0]], surrogate="random", budget=2, db=db,
                      progress=False)
    assert [s["values"] for s in run_steps(db, result.run_id)] == [None, None]


def test_a_database_of_schema_5_is_read_as_it_is_and_upgraded_in_place_by_a_writer(tmp_path):
    db = str(tmp_path / "runs.db")
    old = log_objectives_run(db, [[1.0, 2.0], [0.5, 3.0]])
    with open_db(db).begin() as conn:  # as an npbandit of schema version 5 left it
        conn.execute(text('ALTER TABLE steps DROP COLUMN "values"'))
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="5"))
    forget_engines()
    steps = run_steps(db, old)
    assert [s["values"] for s in steps] == [None, None]  # the column is absent: read as None
    assert [s["params"] for s in steps] == [{"x0": 0.0, "x1": 0.0}, {"x0": 0.5, "x1": 0.5}]  # the rest as stored
    version, columns = _version_and_step_columns(db)
    assert version == "5" and "values" not in columns  # readers never write
    forget_engines()
    new = log_objectives_run(db, [[4.0, 5.0]], seed=1)  # a writer adds the column, then records the values
    version, columns = _version_and_step_columns(db)
    assert version == str(SCHEMA_VERSION) and "values" in columns
    assert [r.id for r in list_runs(db)] == [old, new]
    assert [s["values"] for s in run_steps(db, old)] == [None, None]  # the old steps kept as they were
    assert [s["params"] for s in run_steps(db, old)] == [s["params"] for s in steps]
    assert [s["values"] for s in run_steps(db, new)] == [[4.0, 5.0]]
    forget_engines()


def _key(minimize):
    return run_key(kind="bo", env_id="npbandit/BlackBox-v0", env_params={"objective": "pair", "minimize": minimize},
                   policy="sobol", seed=0, n_steps=3)


def test_a_run_s_key_holds_its_directions_in_order():
    assert _key((True, False)) == _key([True, False]) == _key(np.array([True, False]))  # as the logger stores them
    assert len({_key([True, False]), _key([False, True]), _key([True, True]), _key(True)}) == 4


def test_a_claim_finds_the_same_run_of_several_objectives_and_only_that(tmp_path):
    db = str(tmp_path / "runs.db")
    params = {"objective": "pair", "minimize": [True, False], "objectives": 2, "horizon": 1}

    def claimed(minimize):
        logger = RunLogger(db, claim=True)
        logger.start(kind="bo", env_id="npbandit/BlackBox-v0", env_params={**params, "minimize": minimize},
                     policy="sobol", seed=0)
        logger.log_step(t=0, action=[0.5], values=[1.0, 2.0])
        logger.finish()
        return logger.run_id

    first = claimed([True, False])
    with pytest.raises(RunMadeElsewhere) as found:
        claimed((True, False))
    assert found.value.run.id == first
    assert claimed([False, True]) != first  # other directions: another run
    assert len(list_runs(db)) == 2
