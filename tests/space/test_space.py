"""Search spaces: each parameter's values, its place in the unit cube, and the space's record."""

import json
import math

import numpy as np
import pytest
import torch

from npbandit.space import Choice, Float, Int, SearchSpace, as_search_space


def mixed() -> SearchSpace:
    return SearchSpace({"lr": Float(1e-4, 1e-1, log=True), "depth": Int(2, 10), "width": Int(8, 512, log=True),
                        "drop": Float(0.0, 0.5, step=0.1), "act": Choice(["relu", "tanh", "gelu"]),
                        "bias": Choice([True, False]), "units": Choice([16, 32, 64], ordered=True),
                        "fixed": Choice(["only"])})


def test_columns_sit_side_by_side_in_the_order_given():
    space = mixed()
    assert space.names == ["lr", "depth", "width", "drop", "act", "bias", "units", "fixed"]
    assert space.dim == 1 + 1 + 1 + 1 + 3 + 1 + 1 + 0
    assert space.columns("act") == slice(4, 7)
    assert space.columns("fixed") == slice(9, 9)
    assert not space.continuous and SearchSpace.from_bounds([[0, -1], [1, 1]]).continuous


def test_encode_then_decode_gives_the_parameters_back():
    space = mixed()
    params = {"lr": 3e-3, "depth": 7, "width": 100, "drop": 0.3, "act": "gelu", "bias": False, "units": 64,
              "fixed": "only"}
    u = space.encode(params)
    assert u.shape == (space.dim,) and ((0 <= u) & (u <= 1)).all()
    back = space.decode(u)
    assert back["lr"] == pytest.approx(3e-3, rel=1e-12)
    assert {k: v for k, v in back.items() if k != "lr"} == {k: v for k, v in params.items() if k != "lr"}
    assert type(back["depth"]) is int and type(back["bias"]) is bool


def test_every_point_of_the_cube_decodes_to_a_valid_value_and_snap_is_its_encoding():
    space = mixed()
    points = torch.rand(200, space.dim, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    points[:3] = torch.tensor([0.0, 1.0, 0.5], dtype=torch.float64)[:, None]  # faces and the centre
    snapped = space.snap(points)
    for u, s in zip(points, snapped):
        params = space.check(space.decode(u))  # raises if anything decoded is not a valid value
        assert np.allclose(space.encode(params)[1:], s.numpy()[1:], atol=1e-12)  # lr is continuous: kept
        assert space.decode(s) == params
    assert torch.equal(space.snap(snapped), snapped)


def test_grid_values_own_equal_intervals_so_the_ends_are_not_starved():
    depth = Int(2, 4)
    u = np.linspace(0, 1, 3001)[1:-1]
    counts = np.bincount([depth.decode(np.array([x])) for x in u])[2:]
    assert counts.max() - counts.min() <= 2
    assert [depth.encode(v)[0] for v in (2, 3, 4)] == pytest.approx([1 / 6, 0.5, 5 / 6])


def test_log_scale_places_the_geometric_middle_at_the_centre():
    assert Float(1e-4, 1.0, log=True).decode(np.array([0.5])) == pytest.approx(1e-2, rel=1e-12)
    assert Float(1e-4, 1.0, log=True).decode(np.array([1.0])) == 1.0  # never a rounding error outside


def test_one_hot_choice_decodes_to_its_largest_column():
    act = Choice(["a", "b", "c"])
    assert act.columns == 3 and act.decode(np.array([0.2, 0.9, 0.4])) == "b"
    assert act.snap(torch.tensor([[0.2, 0.9, 0.4]])).tolist() == [[0.0, 1.0, 0.0]]
    assert Choice(["x", "y"]).columns == 1 and Choice(["x"]).columns == 0


def test_choices_of_equal_python_value_but_other_type_stay_apart():
    flag = Choice([1, True, "1"])
    assert [flag.check(v) for v in (1, True, "1")] == [1, True, "1"]
    assert type(flag.check(True)) is bool
    with pytest.raises(ValueError, match="distinct"):
        Choice(["a", "a"])


@pytest.mark.parametrize(("make", "match"), [
    (lambda: Float(2.0, 1.0), r"Float: need low <= high, got low=2.0, high=1.0$"),
    (lambda: Float(0.0, 1.0, log=True), "log=True needs low > 0"),
    (lambda: Int(0, 10, log=True), r"Int: log=True needs low >= 1, got low=0$"),
    (lambda: Float(0.0, 1.0, step=0.3), "whole number of steps"),
    (lambda: Float(0.0, math.inf), "high must be a finite"),
    (lambda: Int(0, 10, step=3), "multiple of step"),
    (lambda: Int(0, 1.5), "high must be an int"),
    (lambda: Int(1, 65, log=True, step=2), "log=True needs step=1"),
    (lambda: Int(2**62, 2**62 + 10), r"Int: low must lie within \+-2\*\*53"),  # a ZeroDivisionError when encoded
    (lambda: Int(0, 2**54), r"Int: high must lie within"),
    (lambda: Float(1e-3, 1.0, log=True, step=1e-3), r"Float: step=0.001 and log=True cannot go together"),
    (lambda: as_search_space({"lr": {"type": "float", "low": 1e-3, "high": 1.0, "log": True, "step": 1e-3}}),
     "step=0.001 and log=True"),
    (lambda: Choice([]), "must not be empty"),
    (lambda: Choice("abc"), "sequence of values"),
    (lambda: Choice([[1, 2]]), "each value must be"),
    (lambda: SearchSpace({}), "at least one parameter"),
    (lambda: SearchSpace({"": Float(0, 1)}), "non-empty printable"),
    (lambda: SearchSpace({"a": (0, 1)}), "must be a Float, Int or Choice"),
    (lambda: SearchSpace({"a": Choice(["only"])}), "nothing to search"),
    (lambda: SearchSpace({"a": Choice(["only"]), "b": Int(3, 3)}), "fixed: a one-value Choice or a range with low"),
])
def test_bad_settings_are_refused_naming_what_was_expected(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_params_are_checked_naming_the_parameter():
    space = mixed()
    good = {"lr": 1e-3, "depth": 3, "width": 8, "drop": 0.0, "act": "relu", "bias": True, "units": 16,
            "fixed": "only"}
    assert space.check({**good, "depth": 3.0})["depth"] == 3
    for bad, match in [({**good, "depth": 11}, r"params\['depth'\].*\[2, 10\]"),
                       ({**good, "drop": 0.25}, r"params\['drop'\].*step"),
                       ({**good, "act": "elu"}, r"params\['act'\].*one of"),
                       ({k: v for k, v in good.items() if k != "lr"}, r"missing \['lr'\]"),
                       ({**good, "extra": 1}, r"unknown \['extra'\]")]:
        with pytest.raises((ValueError, TypeError), match=match):
            space.encode(bad)
    with pytest.raises(ValueError, match=r"shape \[9\]"):
        space.decode(np.zeros(3))


def test_a_description_read_back_names_the_parameter_it_refuses():
    # a space read from a record (npbandit optimize --space file.json) of many parameters
    record = {"lr": {"type": "float", "low": 1e-4, "high": 0.1, "log": True},
              "layers": {"type": "int", "low": 9, "high": 4}, "act": {"type": "activation"}}
    with pytest.raises(ValueError, match=r"^space\['layers'\]: Int: need low <= high, got low=9, high=4$"):
        as_search_space(record)
    with pytest.raises(ValueError, match=r"^space\['act'\]: description's type must be"):
        as_search_space({"act": {"type": "activation"}})


@pytest.mark.parametrize("fixed", [Float(0.5, 0.5), Float(1e-3, 1e-3, log=True), Float(2.0, 2.0, step=0.5),
                                   Int(3, 3), Int(8, 8, log=True)])
def test_a_range_with_low_equal_to_high_is_a_fixed_parameter_without_a_column(fixed):
    space = SearchSpace({"x": Float(0.0, 1.0), "k": fixed})
    assert fixed.columns == 0 and space.dim == 1 and space.columns("k") == slice(1, 1)
    assert fixed.encode(fixed.low).shape == (0,) and fixed.neighbours(fixed.low) == []
    for u in (0.0, 0.3, 1.0):
        params = space.decode(np.array([u]))
        assert params["k"] == fixed.low and type(params["k"]) is type(fixed.low)
        assert space.encode(params).tolist() == [u]
    with pytest.raises(ValueError, match=r"params\['k'\].*value must lie in"):
        space.encode({"x": 0.5, "k": fixed.low + 1})
    assert as_search_space(json.loads(json.dumps(space.describe()))) == space


def test_the_record_is_json_and_reads_back_equal():
    space = mixed()
    record = json.loads(json.dumps(space.describe()))
    assert as_search_space(record) == space
    assert as_search_space({"x": Float(0, 1)}) == SearchSpace({"x": Float(0, 1)})
    assert record["lr"] == {"type": "float", "low": 1e-4, "high": 1e-1, "log": True}


def test_a_box_is_the_space_of_its_floats():
    space = SearchSpace.from_bounds([[-5.0, 0.0], [10.0, 15.0]])
    assert space.names == ["x0", "x1"] and space.dim == 2
    assert space.decode([0.5, 0.2]) == {"x0": 2.5, "x1": 3.0}


def test_neighbours_are_the_values_one_move_away():
    assert Int(2, 10).neighbours(2) == [3] and Int(0, 20, step=4).neighbours(8) == [4, 12]
    assert Float(0.0, 0.5, step=0.1).neighbours(0.3) == [0.2, 0.4]  # on the grid decode gives, not 0.30000000000000004
    assert Float(0.0, 1.0).neighbours(0.3) == [] and Int(1, 64, log=True).neighbours(64) == [63]
    assert Choice(["relu", "tanh", "gelu"]).neighbours("tanh") == ["relu", "gelu"]
    assert Choice([16, 32, 64], ordered=True).neighbours(16) == [32]
    assert Choice([True, False]).neighbours(True) == [False]
    assert Choice(["only"]).neighbours("only") == []
    space = mixed()
    for name, parameter in space.items():  # every neighbour is a valid value other than the one moved from
        value = space.decode(np.full(space.dim, 0.5))[name]
        assert all(parameter.check(v) == v and v != value for v in parameter.neighbours(value))


def test_a_choice_takes_numpy_scalars_as_the_python_values_they_hold():
    choice = Choice(np.array([16, 32, 64]))
    assert choice.values == (16, 32, 64) and all(type(v) is int for v in choice.values)
    assert Choice(np.array(["a", "b"])).values == ("a", "b") and choice.check(np.int64(32)) == 32
