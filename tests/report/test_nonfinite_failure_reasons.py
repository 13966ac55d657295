"""The report groups the failures of evaluations that returned NaN or inf among several
values (objectives of a run of several, or constraints) by which value failed: their
finite values differ from one failure to the next, and each failure was listed alone."""

from __future__ import annotations

from npbandit import optimize
from npbandit.report import bo_summary
from npbandit.report.summary import failure_reason


def test_finite_values_are_read_finite():
    assert (failure_reason("objective returned [0.475, nan] at x=[0.4, 0.6] (NaN or infinite)")
            == "objective returned [finite, nan] (NaN or infinite)")
    assert (failure_reason("constraints returned [-inf, 0.25, 3.0] at x={'a': 1} (NaN or infinite)")
            == "constraints returned [-inf, finite, finite] (NaN or infinite)")


def test_other_reasons_keep_their_numbers():
    assert failure_reason("objective returned nan at x=[0.5]") == "objective returned nan"
    assert (failure_reason("objective raised ValueError: bad [1, 2] at x=[0.5]")
            == "objective raised ValueError: bad [1, 2]")


def test_a_run_of_two_objectives_lists_one_reason_for_its_nan_failures(tmp_path):
    db = f"sqlite:///{tmp_path / 'nan.db'}"

    def f(x):
        return [float(x[0]), float("nan") if x[1] > 0.3 else float(x[1])]

    result = optimize(f, [[0.0, 0.0], [1.0, 1.0]], minimize=[True, True], surrogate="random", budget=8, db=db,
                      progress=False, on_error="skip")
    failed = sum(h["failed"] for h in result.history)
    assert failed >= 2
    (row,) = bo_summary(db)
    assert row["failures"] == [("objective returned [finite, nan] (NaN or infinite)", failed)]
