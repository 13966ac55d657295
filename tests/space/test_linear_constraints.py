"""npbandit.space.linear_constraints: parsing parameter_constraints and the unit cube's polytope."""

import json

import numpy as np
import pytest
import torch

from npbandit.space import Choice, Float, Int, SearchSpace
from npbandit.space.linear_constraints import LinearConstraints, as_linear_constraints, parse_constraint

NAMES = ["x0", "x1", "lr", "momentum"]


@pytest.mark.parametrize("text,coefficients,bound", [
    ("x0 + 2*x1 <= 3", {"x0": 1.0, "x1": 2.0}, 3.0),
    ("lr <= 2*momentum", {"lr": 1.0, "momentum": -2.0}, 0.0),
    ("-x0 - .5 * x1 >= -1e1", {"x0": 1.0, "x1": 0.5}, 10.0),
    ("3 >= x1*2 - x0 + 1", {"x0": -1.0, "x1": 2.0}, 2.0),
    ("x0 + x0 - x1 <= 1", {"x0": 2.0, "x1": -1.0}, 1.0),
])
def test_linear_constraints_parse_sums_of_scaled_names_on_either_side(text, coefficients, bound):
    assert parse_constraint(text, NAMES, "c") == (coefficients, bound)


@pytest.mark.parametrize("text,message", [
    ("x0*x1 <= 1", "not linear"),
    ("x0**2 <= 1", "'\\*\\*'"),
    ("x0 < 1", "'<' is not supported"),
    ("x0 == 1", "exactly one"),
    ("y + x0 <= 1", "unknown parameter 'y'"),
    ("xx0 <= 1", "unknown parameter 'xx0'"),
    ("2x0 <= 1", "a product is written with"),
    ("x0 - x0 <= 1", "constrains no parameter"),
    ("x0 + <= 1", "ends without a term"),
    ("(x0) <= 1", "unexpected '\\('"),
    ("x0 <= 1e400", "not finite in float64"),
])
def test_linear_constraints_refuse_what_is_not_one_linear_inequality(text, message):
    with pytest.raises(ValueError, match=message):
        parse_constraint(text, NAMES, "c")


def test_linear_constraints_refuse_parameters_on_which_the_cube_is_not_linear_naming_why():
    space = SearchSpace({"a": Float(0, 1), "b": Float(1e-3, 1, log=True), "n": Int(1, 4),
                         "c": Choice(["u", "v", "w"]), "s": Float(0, 1, step=0.1)})
    for name, why in (("b", "non-linear in the log scale"), ("n", "an int"), ("c", "a choice"),
                      ("s", "a stepped float")):
        with pytest.raises(ValueError, match=rf"parameter_constraints\[1\] .*names '{name}', .*{why}"):
            LinearConstraints(["a <= 0.5", f"a + {name} <= 1"], space)
    conditional = SearchSpace({"kind": Choice(["p", "q"], dependents={"p": ["r"]}), "r": Float(0, 1),
                               "a": Float(0, 1)})
    with pytest.raises(ValueError, match="conditional"):
        LinearConstraints(["a + r <= 1"], conditional)
    assert LinearConstraints(["a <= 0.5"], conditional).polytope.A.shape == (1, conditional.dim)


def test_linear_constraints_refuse_sets_no_point_of_the_box_satisfies():
    space = SearchSpace.from_bounds([[-5, 0], [10, 15]])
    with pytest.raises(ValueError, match="no point of the space's box satisfies"):
        LinearConstraints(["x0 + x1 <= -10"], space)
    with pytest.raises(ValueError, match="no point of the space's box satisfies"):  # an equality, as two
        LinearConstraints(["x0 + x1 <= 5", "x0 + x1 >= 5"], space)
    with pytest.raises(TypeError, match="list of strings"):
        LinearConstraints("x0 <= 1", space)


def test_the_cube_polytope_holds_exactly_where_the_constraints_hold_in_the_users_units():
    space = SearchSpace({"a": Float(-2.0, 3.0), "n": Int(1, 4), "b": Float(10.0, 12.0)})
    linear = LinearConstraints(["a + 2*b <= 23", "b >= a + 9.5"], space)
    u = torch.rand(4000, space.dim, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    inside = linear.polytope.holds(u)
    violated = [bool(linear.violated(space.decode(p))) for p in u.numpy()]
    assert 0 < int(inside.sum()) < len(u)
    # away from the faces (by more than the search margin) the two agree point for point
    assert all(not v for v, i in zip(violated, inside.tolist()) if i)
    slack = torch.as_tensor(linear.polytope.b) - u @ torch.as_tensor(linear.polytope.A).T
    clear = (slack.abs() > 1e-6).all(dim=-1)
    assert all(v == (not i) for v, i, c in zip(violated, inside.tolist(), clear.tolist()) if c)


def test_the_polytope_seen_in_a_box_frame_samples_and_repairs_inside_it():
    space = SearchSpace.from_bounds([[0, 0], [1, 1]])
    polytope = LinearConstraints(["x0 + x1 <= 0.6"], space).polytope
    lower, upper = torch.tensor([0.2, 0.1], dtype=torch.float64), torch.tensor([0.7, 0.6], dtype=torch.float64)
    local = polytope.in_frame(lower, upper - lower)
    cube = torch.stack([torch.zeros(2), torch.ones(2)]).double()
    z = local.sample(64, cube, seed=3)
    assert len(z) == 64 and bool(polytope.holds(lower + z * (upper - lower)).all())
    outside = torch.tensor([[1.0, 1.0], [0.9, 0.0]], dtype=torch.float64)
    repaired = local.repair(outside, cube)
    assert bool(local.feasible(repaired).all()) and bool(((repaired >= 0) & (repaired <= 1)).all())
    # a box that misses the polytope: no interior
    far = polytope.in_frame(torch.tensor([0.5, 0.5]).double(), torch.tensor([0.5, 0.5]).double())
    assert far.interior(cube) is None and len(far.sample(8, cube, seed=0)) == 0


def test_linear_constraints_round_trip_through_their_record():
    space = SearchSpace({"lr": Float(0.0, 0.1), "momentum": Float(0.0, 0.99)})
    linear = LinearConstraints(["lr <= 0.1 * momentum", "lr + momentum >= 0.2"], space)
    record = json.loads(json.dumps({"space": space.describe(), "parameter_constraints": linear.describe()}))
    again = as_linear_constraints(record["parameter_constraints"], SearchSpace(
        {n: Float(d["low"], d["high"]) for n, d in record["space"].items()}))
    assert again.describe() == linear.describe() and again.rows == linear.rows
    assert np.array_equal(again.polytope.A, linear.polytope.A) and as_linear_constraints(None, space) is None
    assert linear.violated({"lr": 0.05, "momentum": 0.3}) == ["lr <= 0.1 * momentum"]


def test_a_fixed_parameter_in_a_constraint_is_a_constant_of_it():
    # the fixed c has no column of the cube: "a <= c" is a <= -0.3, i.e. 2 u <= 0.7 on a's column
    space = SearchSpace({"a": Float(-1.0, 1.0), "c": Float(-0.3, -0.3)})
    linear = LinearConstraints(["a <= c", "c <= 0.7"], space)
    assert linear.polytope.A.tolist() == [[2.0], [0.0]] and np.allclose(linear.polytope.b, [0.7, 1.0])
    # the constant row, which holds, is left out of what BoTorch's optimize_acqf is given
    [(indices, coefficients, rhs)] = linear.polytope.inequality_constraints()
    assert indices.tolist() == [0] and coefficients.tolist() == [-2.0] and rhs == pytest.approx(-0.7)
    assert linear.violated({"a": -0.2, "c": -0.3}) == ["a <= c"]


def test_a_fixed_int_or_log_scale_float_is_a_constant_too_while_a_ranged_one_is_refused():
    space = SearchSpace({"a": Float(0.0, 10.0), "n": Int(4, 4), "lr": Float(1e-3, 1e-3, log=True)})
    linear = LinearConstraints(["a + n <= 6", "a >= 1000 * lr"], space)
    assert linear.polytope.A.tolist() == [[10.0], [-10.0]] and np.allclose(linear.polytope.b, [2.0, -1.0])
    with pytest.raises(ValueError, match=r"parameter_constraints\[0\].*an int"):
        LinearConstraints(["a + n <= 6"], SearchSpace({"a": Float(0.0, 10.0), "n": Int(1, 4)}))


def test_a_range_narrow_beside_its_values_keeps_its_polytope_and_its_points_hold_in_the_users_units():
    # the search margin is relative to the constraint's scale (here about 2e6); at 1e-12 of it
    # the polytope keeps nearly all of a range 1e-3 wide, and every point inside it holds as written
    space = SearchSpace({"a": Float(1e6, 1e6 + 1e-3), "b": Float(1e6, 1e6 + 1e-3)})
    linear = LinearConstraints(["a <= b"], space)
    assert linear.polytope.interior() is not None
    u = torch.rand(2000, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    inside = linear.polytope.holds(u)
    assert 0.45 < float(inside.double().mean()) < 0.55  # the half-square a <= b, not an empty sliver
    assert not any(linear.violated(space.decode(p)) for p in u[inside].numpy())
