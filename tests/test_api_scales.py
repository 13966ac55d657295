"""optimize on objectives of extreme size: values too large for their spread's variance to be
held in float64 are seen by the surrogate scaled by one exact power of two per run, as
NPSampler sees a study's, and everything the caller reads stays in the objective's units."""

import math

import numpy as np
import pytest
from helpers import tiny_checkpoint

from npbandit import optimize
from npbandit.envs import ObjectiveError
from npbandit.storage import run_steps

BOX = [[0.0] * 3, [1.0] * 3]
HUGE = 2.0 ** 990  # 1e298: a bowl of values 1e298..1e300, whose spread's variance overflows float64


def bowl(x):
    return float(((np.asarray(x) - np.array([0.3, 0.6, 0.8])) ** 2).sum() + 1.0)


def scaled(factor):
    def objective(x):
        return factor * bowl(x)
    return objective


def points(result):
    return np.array([h["x"] for h in result.history])


def surrogate_of(name, directory):
    """``name`` as ``optimize`` takes it; ``"tiny-cmanp"``: a tiny random-weight CMANP checkpoint
    saved in ``directory`` (the streamed model's path, at a fraction of the shipped one's cost)."""
    return str(tiny_checkpoint(directory, "cmanp", "bo")) if name == "tiny-cmanp" else name


@pytest.mark.parametrize("surrogate,trust_region", [("tnpd", None), ("gp", None), ("tiny-cmanp", False)])
def test_a_1e300_objective_runs_and_sees_its_values_scaled_by_one_power_of_two(tmp_path, surrogate, trust_region):
    # the run of HUGE * bowl and that of 2 ** -120 times it (values near 1e262, as far past float64's
    # standardisable range) see the same numbers, whatever the surrogate (cmanp without a trust region:
    # a model streamed at one scale, rebuilt when a larger value changes it): the same points, bit for bit
    db = str(tmp_path / "bo.db")
    surrogate = surrogate_of(surrogate, tmp_path)
    runs = [optimize(scaled(factor), BOX, surrogate=surrogate, trust_region=trust_region, budget=14, seed=0,
                     db=db, progress=False) for factor in (HUGE, HUGE * 2.0 ** -120)]
    huge, smaller = runs
    assert points(huge).tobytes() == points(smaller).tobytes()
    # the result and the database in the objective's units: best_value is what the objective returned at best_x
    assert huge.best_value == scaled(HUGE)(huge.best_x) == 2.0 ** 120 * smaller.best_value
    assert huge.recommended_value == 2.0 ** 120 * smaller.recommended_value
    assert [s["value"] for s in run_steps(db, huge.run_id)] == [h["value"] for h in huge.history]
    assert [h["value"] for h in huge.history] == [2.0 ** 120 * h["value"] for h in smaller.history]


def test_the_default_surrogate_proposes_for_a_1e300_objective_what_it_does_at_unit_scale():
    # the NP standardises what it is given, and standardisation is exact under a power of two: the scaled
    # run is the run of the objective at unit scale
    plain = optimize(bowl, BOX, budget=14, seed=0, db=None, progress=False)
    huge = optimize(scaled(HUGE), BOX, budget=14, seed=0, db=None, progress=False)
    assert points(huge).tobytes() == points(plain).tobytes()
    assert huge.best_value == HUGE * plain.best_value and huge.recommended_value == HUGE * plain.recommended_value


def test_an_ordinary_objective_proposes_the_same_points_at_any_power_of_two_below_the_threshold():
    # below 2 ** 100 nothing is scaled (the factor is 1): each run is that of the objective as given, and
    # the default surrogate's standardisation makes it the same run at each of these sizes
    runs = [optimize(scaled(factor), BOX, budget=12, seed=3, db=None, progress=False)
            for factor in (1.0, 2.0 ** 40, 2.0 ** 97)]
    assert points(runs[1]).tobytes() == points(runs[0]).tobytes() == points(runs[2]).tobytes()


@pytest.mark.parametrize("surrogate,trust_region", [("tnpd", None), ("gp", None), ("tiny-cmanp", False)])
def test_an_objective_of_tiny_range_is_searched_at_the_same_numbers_whatever_its_units(tmp_path, surrogate,
                                                                                      trust_region):
    # values spanning under 2 ** -10 are seen multiplied by the power of two that brings their range into
    # [1, 2): two runs of one objective in units 2 ** 20 apart see the same numbers, so the same points, bit
    # for bit (unscaled, the model's variance in these units meets gpytorch's 1e-10 floor and the search
    # changed with the units); what the caller reads stays in the objective's units
    surrogate = surrogate_of(surrogate, tmp_path)
    tiny, tinier = (optimize(scaled(factor), BOX, surrogate=surrogate, trust_region=trust_region, budget=14,
                             seed=0, db=None, progress=False) for factor in (2.0 ** -16, 2.0 ** -36))
    assert points(tiny).tobytes() == points(tinier).tobytes()
    assert tiny.best_value == scaled(2.0 ** -16)(tiny.best_x) == 2.0 ** 20 * tinier.best_value
    assert [h["value"] for h in tiny.history] == [2.0 ** 20 * h["value"] for h in tinier.history]


def test_an_objective_of_subnormal_size_runs():
    # values near 1e-310 span a range that only a factor past float64's largest power of two, 2 ** 1023,
    # would bring to 1: the run is seen scaled by 2 ** 1023 and goes on (it stopped with an OverflowError)
    result = optimize(scaled(1e-310), BOX, budget=8, seed=0, db=None, progress=False)
    assert result.best_value == scaled(1e-310)(result.best_x) == min(h["value"] for h in result.history)


@pytest.mark.parametrize("trust_region", [False, True])
def test_a_huge_value_arriving_late_rescales_the_run_and_keeps_the_users_units(tmp_path, trust_region):
    # a streamed model (cmanp, no trust region) was built at scale 1; a value past 2 ** 100 for a bad
    # point changes the run's scale, and the model is rebuilt in the new one
    def cliff(x):
        return 1e300 if x[0] > 0.9 else bowl(x)

    result = optimize(cliff, BOX, surrogate=surrogate_of("tiny-cmanp", tmp_path), trust_region=trust_region,
                      budget=16, seed=0, db=None, progress=False)
    values = [h["value"] for h in result.history]
    assert 1e300 in values and result.best_value == cliff(result.best_x) == min(values) < 2.0


def test_constraint_values_of_extreme_size_are_scaled_too():
    result = optimize(bowl, BOX, budget=12, seed=0, db=None, progress=False,
                      constraints=lambda x: [1e300 * (x[1] - 0.7)])
    assert result.feasible and result.best_x[1] <= 0.7
    assert result.best_value == bowl(result.best_x)


@pytest.mark.parametrize("value", [math.inf, -math.inf])
def test_an_infinite_value_is_refused_with_a_clear_error(value):
    # no scaling brings an infinity into range: it is a failed evaluation, named as such
    def objective(x):
        return value if x[0] > 0.5 else bowl(x)

    with pytest.raises(ObjectiveError, match="inf"):
        optimize(objective, BOX, budget=8, seed=0, db=None, progress=False)


def test_values_whose_spread_overflows_float64_are_searched_once_scaled():
    # from -1.5e308 to 1.5e308: not even their difference is a float64; scaled, they are 2 ** 100 apart
    def cliff(x):
        return (1.0 if x[0] > 0.5 else -1.0) * (bowl(x) / 2.5) * 1.5e308

    result = optimize(cliff, BOX, budget=12, seed=0, db=None, progress=False)
    values = [h["value"] for h in result.history]
    assert np.isinf(max(values) - min(values))
    assert result.best_value == cliff(result.best_x) == min(values) < -1e307


@pytest.mark.parametrize("pairs", [[(0, 1)] * 3, [(-5, 5), (-1, 1)]])
def test_scipy_style_bounds_are_refused_with_the_transpose_and_the_space_argument_named(pairs):
    # optimize's own way to name inputs is part of the hint, at d = 3 as at the d = 2 the hint began with
    with pytest.raises(ValueError, match=r"pass the transpose, bounds=\[\[.*\]\]; or name each input with "
                                         r"space=\{'x0': Float\(low, high\), \.\.\.\} \(npbandit\.space\)$"):
        optimize(bowl, pairs, budget=4, db=None, progress=False)
