"""A sweep's seeds and deltas as NumPy gives them: ``seeds=np.arange(3)`` (a 1-D int array, or
NumPy ints in a list) runs as ``[0, 1, 2]``; floats, bools, negatives and arrays of another
shape are refused by name. A float32 delta whose value is not the decimal it prints as
(``np.float32(0.9)`` holds 0.8999999761581421) is refused: its runs would be a wheel task apart
from 0.9's, a report row of their own."""

import numpy as np
import pytest

from npbandit.loop import run_bandit_sweep, run_wheel_bandits, wheel_task
from npbandit.storage import list_runs


def test_seeds_may_be_a_1d_int_array_or_numpy_ints(tmp_path):
    db = str(tmp_path / "runs.db")
    results = run_bandit_sweep(["uniform"], [wheel_task(0.5)], np.arange(3), 4, db=db, say=None)
    assert [r.seed for r in list_runs(db)] == [0, 1, 2] and len(results) == 3
    again = run_bandit_sweep(["uniform"], [wheel_task(0.5)], [np.int32(0), np.int64(2)], 4, db=db, say=None)
    assert [r.run_id for r in again] == [1, 3]  # the same runs, found completed


@pytest.mark.parametrize("seeds,match", [
    (np.array([0.0, 1.0]), r"seeds\[0\] must be an int >= 0, got np.float64\(0.0\)"),
    (np.array([True, False]), r"seeds\[0\] must be an int >= 0, got np.True_"),
    (np.array([0, -1]), r"seeds\[1\] must be an int >= 0, got np.int64\(-1\)"),
    (np.array([[0, 1]]), r"seeds must be 1-D \(a list, tuple or 1-D array\), got an array of shape \(1, 2\)"),
    (np.array([], dtype=int), "seeds is empty"),
])
def test_seeds_of_another_kind_are_refused_by_name(tmp_path, seeds, match):
    with pytest.raises(ValueError, match=match):
        run_bandit_sweep(["uniform"], [wheel_task(0.5)], seeds, 4, db=str(tmp_path / "runs.db"), say=None)
    assert not (tmp_path / "runs.db").exists()


def test_a_set_of_seeds_is_still_refused(tmp_path):
    with pytest.raises(TypeError, match=r"seeds must be a sequence \(a list, tuple or 1-D NumPy array\), got set"):
        run_bandit_sweep(["uniform"], [wheel_task(0.5)], {0, 1}, 4, db=str(tmp_path / "runs.db"), say=None)


def test_a_float32_delta_that_is_not_its_decimal_is_refused_naming_it(tmp_path):
    db = str(tmp_path / "runs.db")
    with pytest.raises(ValueError, match=r"deltas\[1\] is a numpy.float32 whose value is 0.8999999761581421, "
                                         r"not 0.9: .*pass a Python float \(0.9\)"):
        run_wheel_bandits(["uniform"], [0.5, np.float32(0.9)], [0], 4, db=db, say=None)
    with pytest.raises(ValueError, match=r"deltas\[0\] is a numpy.float32"):
        run_wheel_bandits(["uniform"], np.array([0.9], dtype=np.float32), [0], 4, db=db, say=None)
    with pytest.raises(ValueError, match=r"^delta is a numpy.float16 whose value is 0.0999755859375, not 0.1"):
        wheel_task(np.float16(0.1))
    assert not (tmp_path / "runs.db").exists()


def test_deltas_that_are_exact_run_as_the_floats_they_are(tmp_path):
    db = str(tmp_path / "runs.db")
    # a float32 0.5 is 0.5; a float64 array's entries are Python floats' values
    run_wheel_bandits(["uniform"], [np.float32(0.5)], [0], 4, db=db, say=None)
    run_wheel_bandits(["uniform"], np.array([0.5, 0.9]), [0], 4, db=db, say=None)
    assert [r.env_params["delta"] for r in list_runs(db)] == [0.5, 0.9]  # 0.5's run found completed, not rerun
