"""npbandit.acquisition.mixed: proposals over a mixed search space, judged where the objective
would be evaluated (snapped restarts, a discrete local search, the continuous columns polished)."""

import itertools

import numpy as np
import pytest
import torch
from botorch.models.deterministic import GenericDeterministicModel

from npbandit.acquisition import propose, propose_in_region
from npbandit.acquisition.mixed import TypedCube
from npbandit.policies.gp import fit_single_task_gp
from npbandit.policies.trust_region import TrustRegion
from npbandit.space import Choice, Float, Int, SearchSpace

FAST = {"num_restarts": 4, "raw_samples": 64}
SPACE = SearchSpace({"x": Float(0, 1), "n": Int(0, 6), "c": Choice(["a", "b", "c"])})  # columns: x | n | a b c
PEAK = 0.41  # n's column: between the centres of n = 2 (0.357) and n = 3 (0.5), in n = 2's interval


def toy(u: torch.Tensor) -> torch.Tensor:
    """``[..., 5] -> [..., 1]``: separable; x best at 0.37; n's column steep below PEAK and
    shallow above it, so the relaxed optimum rounds to n = 2 while n = 3 is better; the
    one-hot columns best relaxed at (1, 1, 1), which decodes to "a", while "c" is the best choice."""
    x, v, a, b, c = u.unbind(-1)
    g = -10 * torch.relu(PEAK - v) - torch.relu(v - PEAK)
    h = 1.0 * a + 0.9 * b - 2 * (c - 1) ** 2
    return (-(x - 0.37) ** 2 + g + h).unsqueeze(-1)


def toy_model():
    return GenericDeterministicModel(toy, num_outputs=1)  # UCB's value is the function itself


def grid(space: SearchSpace, x: float) -> list[dict]:
    return [{"x": x, "n": n, "c": c} for n, c in itertools.product(range(7), "abc")]


def score(params: dict) -> float:
    return float(toy(torch.tensor(SPACE.encode(params))))


def fixed(space: SearchSpace, point: np.ndarray) -> bool:
    return torch.equal(space.snap(torch.as_tensor(point)), torch.as_tensor(point))


def test_the_typed_optimiser_finds_the_best_grid_point_where_rounding_the_relaxation_does_not():
    best = max(grid(SPACE, 0.37), key=score)
    assert (best["n"], best["c"]) == (3, "c")  # brute force over the 21 grid points
    point = propose(toy_model(), "ucb", dim=SPACE.dim, best_f=0.0, seed=0, beta=0.0, space=SPACE, **FAST)
    assert fixed(SPACE, point)
    found = SPACE.decode(point)
    assert (found["n"], found["c"]) == (3, "c") and found["x"] == pytest.approx(0.37, abs=1e-3)
    relaxed = propose(toy_model(), "ucb", dim=SPACE.dim, best_f=0.0, seed=0, beta=0.0, **FAST)
    rounded = SPACE.decode(SPACE.snap(torch.as_tensor(relaxed)))
    assert (rounded["n"], rounded["c"]) == (2, "a") and score(rounded) < score(found) - 0.4


def test_observed_grid_points_are_not_proposed_the_best_new_one_is():
    space = SearchSpace({"n": Int(0, 6), "c": Choice(["a", "b", "c"])})
    model = GenericDeterministicModel(lambda u: toy(torch.cat([torch.full_like(u[..., :1], 0.37), u], -1)), 1)
    points = {(n, c): space.encode({"n": n, "c": c}) for n, c in itertools.product(range(7), "abc")}
    values = {k: float(model.posterior(torch.tensor(u).reshape(1, -1)).mean) for k, u in points.items()}
    ranked = sorted(values, key=values.get, reverse=True)
    observed = torch.tensor(np.array([points[ranked[0]], points[ranked[1]]]))
    point = propose(model, "ucb", dim=space.dim, best_f=0.0, seed=0, beta=0.0, observed=observed, space=space,
                    **FAST)
    assert fixed(space, point) and space.decode(point) == {"n": ranked[2][0], "c": ranked[2][1]}


@pytest.fixture(scope="module")
def gp():
    X = SPACE.snap(torch.rand(10, SPACE.dim, generator=torch.Generator().manual_seed(0), dtype=torch.float64))
    return fit_single_task_gp(X, toy(X)), X


@pytest.mark.parametrize("acquisition", ["logei", "ucb", "thompson", "marginal-thompson", "qlognei"])
def test_every_acquisitions_proposal_is_a_fixed_point_of_snap(gp, acquisition):
    model, X = gp
    q = 2 if acquisition == "qlognei" else 1
    point = propose(model, acquisition, dim=SPACE.dim, best_f=toy(X).max(), seed=1, observed=X, space=SPACE, q=q,
                    thompson_candidates=256, **FAST)
    assert point.shape == ((q, SPACE.dim) if q > 1 else (SPACE.dim,)) and fixed(SPACE, point)
    assert not (torch.cdist(torch.as_tensor(point).reshape(q, -1), X).amin() < 1e-3 and q == 1)
    # the space's own snap brings its structure, as space= does
    again = propose(model, acquisition, dim=SPACE.dim, best_f=toy(X).max(), seed=1, observed=X, snap=SPACE.snap,
                    q=q, thompson_candidates=256, **FAST)
    assert np.array_equal(point, again)


def test_a_trust_regions_proposal_is_a_fixed_point_with_its_continuous_columns_in_the_box(gp):
    model, X = gp
    region = TrustRegion(SPACE.dim)
    region.length = 0.25
    Y = toy(X)
    center = X[int(torch.argmax(Y))]
    lower, upper = region.box(center)

    def build(X_box, Y_box):
        return fit_single_task_gp(X_box, Y_box)

    point = propose_in_region(region, X, Y, build, "logei", seed=0, space=SPACE, **FAST)
    assert fixed(SPACE, point)
    assert lower[0] <= point[0] <= upper[0]
    # every discrete value proposed is one some point of the searched box decodes to
    box_values = {SPACE.decode(u)["n"] for u in lower + (upper - lower) * torch.rand(2000, SPACE.dim,
                                                                                     dtype=torch.float64)}
    assert SPACE.decode(point)["n"] in box_values


def test_a_small_trust_region_still_reaches_every_choice_and_the_next_grid_values():
    # the incumbent has c = "a" and n = 3; the model prefers c = "c" and n as large as it can be:
    # a 0.05-wide cube around the incumbent holds neither, the widened region holds both one move away
    X = torch.tensor(np.array([SPACE.encode({"x": 0.5, "n": 3, "c": "a"}), SPACE.encode({"x": 0.1, "n": 0, "c": "b"})]),
                     dtype=torch.float64)
    Y = torch.tensor([[1.0], [0.0]], dtype=torch.float64)
    region = TrustRegion(SPACE.dim)
    region.length = 0.05
    lower, upper = region.box(X[0])
    wide_lower, wide_upper = TypedCube(SPACE).reaching_one_move(lower, upper, X[0])
    assert torch.equal(wide_lower[:1], lower[:1]) and torch.equal(wide_upper[:1], upper[:1])  # x: the cube's side
    assert torch.equal(wide_lower[2:], torch.zeros(3, dtype=torch.float64))  # every choice
    assert torch.equal(wide_upper[2:], torch.ones(3, dtype=torch.float64))
    n_codes = [SPACE.encode({"x": 0.5, "n": n, "c": "a"})[1] for n in (2, 4)]  # the next grid values either side
    assert wide_lower[1] <= min(n_codes) and wide_upper[1] >= max(n_codes)
    seen = []

    def build(X_box, Y_box):
        seen.append(X_box)
        return GenericDeterministicModel(lambda u: u[..., 1:2] + 2.0 * u[..., 4:5])  # n's column, then c = "c"

    point = propose_in_region(region, X, Y, build, "ucb", seed=0, space=SPACE, avoid_repeats=False, **FAST)
    assert SPACE.decode(point)["c"] == "c" and SPACE.decode(point)["n"] == 4 and fixed(SPACE, point)
    assert abs(point[0] - 0.5) <= region.length / 2 + 1e-12


def test_a_continuous_space_changes_nothing(gp):
    model, X = gp
    box = SearchSpace.from_bounds([[0.0] * SPACE.dim, [1.0] * SPACE.dim])
    for acquisition in ("logei", "thompson"):
        plain = propose(model, acquisition, dim=SPACE.dim, best_f=0.0, seed=2, observed=X, thompson_candidates=256,
                        **FAST)
        typed = propose(model, acquisition, dim=SPACE.dim, best_f=0.0, seed=2, observed=X, space=box,
                        thompson_candidates=256, **FAST)
        assert np.array_equal(plain, typed)


def test_neighbours_are_one_move_and_limited_to_what_the_box_reaches():
    cube = TypedCube(SPACE)
    point = torch.tensor(SPACE.encode({"x": 0.5, "n": 3, "c": "b"})).reshape(1, -1)
    whole = torch.tensor([[0.0] * 5, [1.0] * 5], dtype=torch.float64)
    moved, rows = cube.neighbours(point, whole)
    assert sorted((p["n"], p["c"]) for p in map(SPACE.decode, moved)) == [(2, "b"), (3, "a"), (3, "c"), (4, "b")]
    assert rows.tolist() == [0] * 4 and (moved[:, 0] == 0.5).all()
    # a box that reaches n = 2..3 only (its n column in n = 2's and 3's intervals) and c's "a" column
    # no higher than the others' lower edge: "a" cannot win the argmax inside it
    narrow = whole.clone()
    narrow[:, 1] = torch.tensor([0.3, 0.45])
    narrow[1, 2] = 0.2
    narrow[0, 3:] = 0.3
    moved, _ = cube.neighbours(point, narrow)
    assert sorted((p["n"], p["c"]) for p in map(SPACE.decode, moved)) == [(2, "b"), (3, "c")]
    # seen through a box's map, the moves are the same points of the space
    local = cube.through(torch.full((5,), 0.25, dtype=torch.float64), torch.full((5,), 0.5, dtype=torch.float64))
    moved_local, _ = local.neighbours((point - 0.25) / 0.5, (whole - 0.25) / 0.5)
    torch.testing.assert_close(0.25 + 0.5 * moved_local, cube.neighbours(point, whole)[0])


def test_bad_spaces_are_refused(gp):
    model, _ = gp
    with pytest.raises(TypeError, match="space must be a SearchSpace"):
        propose(model, "logei", dim=SPACE.dim, best_f=0.0, seed=0, space={"x": (0, 1)})
    with pytest.raises(ValueError, match="5 columns, the proposal's dim is 4"):
        propose(model, "logei", dim=4, best_f=0.0, seed=0, space=SPACE)
    with pytest.raises(ValueError, match="not both"):
        propose(model, "logei", dim=SPACE.dim, best_f=0.0, seed=0, space=SPACE, snap=lambda u: u)
