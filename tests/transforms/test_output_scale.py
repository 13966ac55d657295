"""output_scale: the one power of two per output that brings values of extreme size into the
range float64 standardises (what optimize's BO policy and NPSampler both give their models)."""

import math

import pytest
import torch

from npbandit.transforms.standardize import MAX_MAGNITUDE_EXPONENT, output_scale, standardization


def test_values_under_the_threshold_are_multiplied_by_exactly_one():
    Y = torch.tensor([[1e-300, -3.0], [2.0 ** MAX_MAGNITUDE_EXPONENT * 0.99, 5e29]], dtype=torch.float64)
    assert output_scale(Y).tolist() == [1.0, 1.0]
    assert output_scale(torch.empty(0, 3, dtype=torch.float64)).tolist() == [1.0, 1.0, 1.0]


def test_larger_values_are_brought_under_it_by_a_power_of_two_per_column():
    Y = torch.tensor([[1.0, -1e300], [2.0, 3.0], [-2.0 ** 100, math.nan]], dtype=torch.float64)
    scale = output_scale(Y)
    for column, factor in enumerate(scale.tolist()):
        mantissa, _ = math.frexp(factor)
        assert mantissa == 0.5 and factor < 1.0  # an exact power of two
        largest = (Y[:, column].nan_to_num(0.0).abs() * factor).max()
        assert 2.0 ** (MAX_MAGNITUDE_EXPONENT - 1) <= largest < 2.0 ** MAX_MAGNITUDE_EXPONENT
    # the spread's statistics are finite once scaled, and scaling back gives the values exactly
    scaled = Y[:, 1:].nan_to_num(0.0) * scale[1]
    assert all(torch.isfinite(s).all() for s in standardization(scaled))
    assert torch.equal(scaled / scale[1], Y[:, 1:].nan_to_num(0.0))


def test_non_finite_entries_are_passed_over():
    Y = torch.tensor([[math.inf, math.nan], [1e300, 2.0]], dtype=torch.float64)
    assert output_scale(Y).tolist() == [math.ldexp(1.0, MAX_MAGNITUDE_EXPONENT - math.frexp(1e300)[1]), 1.0]


@pytest.mark.parametrize("bad", [torch.ones(3, dtype=torch.float64), torch.ones(2, 2, dtype=torch.int64), [[1.0]]])
def test_anything_but_a_2d_float_tensor_is_refused(bad):
    with pytest.raises(ValueError, match=r"Y must be a 2-D floating-point tensor \[n, m\]"):
        output_scale(bad)


def test_a_column_of_tiny_range_is_brought_to_a_range_in_one_to_two_and_others_are_left():
    from npbandit.transforms.standardize import MIN_RANGE_EXPONENT

    edge = 2.0 ** MIN_RANGE_EXPONENT
    Y = torch.tensor([[5.0, -3e-9, 7.0, 1.0, 0.0],
                      [5.0 + 2.0 ** -20, 4e-9, 7.0, 1.0 + edge, math.nan],
                      [5.0, math.inf, 7.0, 1.0, 0.0]], dtype=torch.float64)
    scale = output_scale(Y).tolist()
    assert scale[0] == 2.0 ** 20  # a range of exactly 2 ** -20 becomes exactly 1
    assert math.frexp(scale[1])[0] == 0.5 and 1.0 <= 7e-9 * scale[1] < 2.0  # non-finite entries passed over
    assert scale[2:] == [1.0, 1.0, 1.0]  # constant, a range at the threshold, one finite value
    # what decides it is each column's smallest and largest finite value: those two rows give the same factors
    rows = torch.stack([Y.nan_to_num(nan=math.inf).amin(0), Y.nan_to_num(nan=-math.inf, posinf=-math.inf).amax(0)])
    assert output_scale(rows[:, :4]).tolist() == scale[:4]


@pytest.mark.parametrize("tiny", [2.0 ** -1024, 1e-310, 5e-324])
def test_a_range_too_small_for_a_float64_power_of_two_to_reach_one_is_scaled_by_the_largest_one(tiny):
    # a range near float64's smallest (subnormal) values would need a factor past 2 ** 1023, which has
    # no float64: the column is scaled by 2 ** 1023, the largest power of two there is, its range then as
    # near [1, 2) as that brings it, and the values still exact multiples of the ones given
    Y = torch.tensor([[0.0], [tiny]], dtype=torch.float64)
    scale = output_scale(Y)
    assert scale.tolist() == [2.0 ** 1023]
    assert torch.equal((Y * scale) / scale, Y)
    assert 0.0 < float(Y[1, 0] * scale[0]) < 2.0
