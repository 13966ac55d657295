"""How a failed evaluation failed: ``ObjectiveError.kind``, recorded with its step as
``error_kind`` (in ``optimize``'s history, the run's steps and the database, where a
database from before the column reads ``None``), and ``optimize``'s warning about
evaluations that returned no number, which reads that kind, never the error's text."""

import warnings
from fractions import Fraction

import numpy as np
import pytest
from helpers import forget_engines
from sqlalchemy import text, update

import npbandit.envs.blackbox as blackbox
from npbandit import optimize
from npbandit.exceptions import ObjectiveReturnError
from npbandit.storage import SCHEMA_VERSION, Meta, list_runs, open_db, run_steps

BOX = [[0.0, 0.0], [1.0, 1.0]]
#: how the messages of a wrong return began, which optimize's warning once matched
OLD_PREFIXES = ("objective must return", "constraints must return", "constraints returned")


def _second_fails(bad):
    """A function of the point whose second call raises ``bad`` (an exception) or returns it;
    every other call returns ``ok``."""
    calls = []

    def f(x, ok=None):
        calls.append(1)
        if len(calls) == 2:
            if isinstance(bad, Exception):
                raise bad
            return bad
        return float(np.sum(x)) if ok is None else ok
    return f


def _run(objective, db=None, **kwargs):
    """``optimize`` for 3 evaluations, skipping failures; the result and the messages of the
    warnings about evaluations that returned no number."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = optimize(objective, BOX, surrogate="random", budget=3, db=db, progress=False, on_error="skip",
                          **kwargs)
    return result, [str(w.message) for w in caught if "returned no number" in str(w.message)]


@pytest.mark.parametrize("bad,kind", [
    (ValueError("objective must return a float"), "raised"),  # a raised error, whatever its text
    (float("nan"), "nonfinite"),
    (float("-inf"), "nonfinite"),
    ("1.5", "returned"),
    (None, "returned"),
    (np.array([1.0, 2.0]), "returned"),
    (-(10 ** 400), "nonfinite"),  # an int no float64 holds is infinite, not an OverflowError out of the run
], ids=["raised", "nan", "-inf", "str", "None", "2-array", "huge-int"])
def test_a_failed_evaluation_records_its_kind_in_the_history_and_the_database(tmp_path, bad, kind):
    db = str(tmp_path / "runs.db")
    for where in (None, db):
        result, warned = _run(_second_fails(bad), db=where)
        assert [h.get("error_kind") for h in result.history] == [None, kind, None]
        assert [h["failed"] for h in result.history] == [False, True, False]
        assert len(warned) == (kind == "returned")  # the warning is for wrong returns only
    (run,) = list_runs(db)
    steps = run_steps(db, run.id)
    assert [s["error_kind"] for s in steps] == [None, kind, None]
    assert steps[1]["error"] == result.history[1]["error"]


@pytest.mark.parametrize("bad,kind", [
    (RuntimeError("sensor offline"), "raised"),
    # "constraints returned [nan] ...": a text the old prefixes took for a wrong return
    ([float("nan")], "nonfinite"),
    ("0.5", "returned"),
    ([], "returned"),
    ([[-1.0]], "returned"),
    ([Fraction(10 ** 400)], "nonfinite"),
], ids=["raised", "nan", "str", "empty", "nested", "huge-fraction"])
def test_a_failed_constraints_call_records_its_kind(bad, kind):
    constraints = _second_fails(bad)
    result, warned = _run(lambda x: float(np.sum(x)), constraints=lambda x: constraints(x, ok=[-1.0]))
    assert [h.get("error_kind") for h in result.history] == [None, kind, None]
    assert "constraints" in result.history[1]["error"]
    assert len(warned) == (kind == "returned")


def test_the_warning_reads_the_kind_not_the_message(monkeypatch):
    # a wrong return whose message is worded as no earlier one was: still a wrong return
    def reworded(out, x):
        if isinstance(out, str):
            raise ObjectiveReturnError(f"a number was expected, and came back as the text {out!r}", x)
        return float(out)

    monkeypatch.setattr(blackbox, "objective_value", reworded)
    result, warned = _run(_second_fails("1.5"))
    error = result.history[1]["error"]
    assert not error.startswith(OLD_PREFIXES) and result.history[1]["error_kind"] == "returned"
    assert warned == [f"1 of 3 evaluations returned no number and counted as failed (on_error='skip'); "
                      f"the first: {error}"]


def test_the_error_raised_with_on_error_raise_carries_the_kind_of_the_step_it_stopped_at(tmp_path):
    db = str(tmp_path / "runs.db")
    with pytest.raises(ObjectiveReturnError) as caught:
        optimize(_second_fails("1.5"), BOX, surrogate="random", budget=3, db=db, progress=False)
    (run,) = list_runs(db)
    assert caught.value.kind == "returned"
    assert run.status == "failed" and [s["error_kind"] for s in run_steps(db, run.id)] == [None, "returned"]


def _version(db):
    with open_db(db, readonly=True).connect() as conn:
        return conn.execute(text("SELECT value FROM npbandit_meta")).scalar_one()


def test_a_database_from_before_error_kind_is_read_as_it_is_and_upgraded_by_a_writer(tmp_path):
    db = str(tmp_path / "runs.db")
    _run(_second_fails("1.5"), db=db)
    with open_db(db).begin() as conn:  # as an npbandit of schema version 4 left it
        conn.execute(text("ALTER TABLE steps DROP COLUMN error_kind"))
        conn.execute(update(Meta).where(Meta.key == "schema_version").values(value="4"))
    forget_engines()
    (old,) = list_runs(db)
    steps = run_steps(db, old.id)
    assert [s["error_kind"] for s in steps] == [None, None, None]  # the column is absent: read as None
    assert [s["failed"] for s in steps] == [False, True, False] and "must return a float" in steps[1]["error"]
    assert _version(db) == "4"  # readers never write
    forget_engines()
    _run(_second_fails(float("nan")), db=db)  # a writer adds the column, then records the kind
    assert _version(db) == str(SCHEMA_VERSION)
    first, second = list_runs(db)
    assert [s["error_kind"] for s in run_steps(db, first.id)] == [None, None, None]  # the old steps as they were
    assert [s["error_kind"] for s in run_steps(db, second.id)] == [None, "nonfinite", None]
    forget_engines()


def test_a_value_past_float64_told_or_given_is_infinite_not_an_overflow():
    from npbandit import Optimizer

    opt = Optimizer(BOX, surrogate="random", budget=2, db=None)
    opt.tell(opt.ask(), 10 ** 400)  # told: a failed evaluation, as inf is
    assert opt.history[0]["failed"] and opt.history[0]["error_kind"] == "nonfinite"
    with pytest.raises(ValueError, match=r"initial\[0\]: the value must be a finite real number"):
        optimize(lambda x: 1.0, BOX, surrogate="random", budget=1, db=None, progress=False,
                 initial=[([0.5, 0.5], 10 ** 400)])
    with pytest.raises(ValueError, match="optimal_value must be finite"):
        optimize(lambda x: 1.0, BOX, surrogate="random", budget=1, db=None, progress=False, optimal_value=10 ** 400)
