"""Public functions refuse a careless user's arguments naming the argument and what was
expected, and take NumPy scalars where they take Python numbers: cases a probe of the public
API found crashing deep inside, accepted when they make no sense, or refused when reasonable."""

import numpy as np
import pytest

from npbandit.space import Choice, Float


@pytest.mark.parametrize("make,match", [
    (lambda: Float(0.0, 10**400), r"Float: high must be a finite real number"),  # was OverflowError
    (lambda: Float(-10**400, 0.0), r"Float: low must be a finite real number"),
    (lambda: Float(-1e308, 1e308), r"Float: high - low must be a finite float64"),  # was NaN on decode
    (lambda: Float(0.0, 1.0, step=10**400), r"Float: step must be a finite real number"),
])
def test_a_float_range_float64_cannot_hold_is_refused_naming_the_setting(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_a_float_value_past_float64_is_refused_as_a_value():
    with pytest.raises(TypeError, match="value must be a finite real number"):
        Float(0.0, 1.0).check(10**400)


@pytest.mark.parametrize("values,hint", [({"b", "a"}, "sorted"), (frozenset({1, 2}), "sorted"),
                                         ({"a": 1, "b": 2}, "list")])
def test_choice_refuses_a_set_or_mapping_of_values(values, hint):
    # a set's order differs between processes (str hashing is salted) and places the values in
    # the cube; a mapping would silently keep its keys and drop its values
    with pytest.raises(TypeError, match=rf"Choice: values must be a sequence in a fixed order.*{hint}"):
        Choice(values)


@pytest.mark.parametrize("values", [["a", "b"], ("a", "b"), range(3), np.array([1, 2, 3]), iter(["x", "y"])])
def test_choice_still_takes_ordered_iterables(values):
    assert len(Choice(values).values) in (2, 3)


def test_float_ranges_that_float64_holds_are_unchanged():
    assert Float(-1e307, 1e307).decode(np.array([0.5])) == 0.0
    assert Float(0.0, 1.0).check(np.float32(0.5)) == 0.5
