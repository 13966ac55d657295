"""Subspace strategies: a width-6 NP searching more inputs (npbandit.acquisition.subspace)."""

import numpy as np
import pytest
import torch
from helpers import tiny_checkpoint

from npbandit import load_surrogate
from npbandit.acquisition.subspace import (
    CoordinateSearch,
    CoordinateSubspace,
    CountSketch,
    CountSketchSearch,
    check_subspace,
)
from npbandit.acquisition.wide_spaces import default_subspace
from npbandit.models import NPModel
from npbandit.policies.bo import BOPolicy
from npbandit.policies.trust_region import TrustRegion

FAST = {"num_restarts": 2, "raw_samples": 32}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(tiny_checkpoint(tmp_path_factory.mktemp("tiny"), "cmanp", "bo"))


def test_count_sketch_bins_are_balanced_signed_and_fixed_by_the_seed():
    search = CountSketch().bind(20, 6, seed=3)
    assert isinstance(search, CountSketchSearch) and search.search_dim == search.active_dim == 6
    counts = torch.bincount(search.bins, minlength=6)
    assert counts.min() >= 3 and counts.max() <= 4  # 20 inputs in 6 bins
    again = CountSketch().bind(20, 6, seed=3)
    assert torch.equal(search.bins, again.bins) and torch.equal(search.signs, again.signs)
    other = CountSketch().bind(20, 6, seed=4)
    assert not (torch.equal(search.bins, other.bins) and torch.equal(search.signs, other.signs))
    assert CountSketch(d_e=3).bind(20, 6, 0).search_dim == 3 and CountSketch(d_e=9).bind(20, 6, 0).search_dim == 6


def test_count_sketch_lift_and_project_are_inverse_on_the_embedding():
    search = CountSketch().bind(11, 6, seed=0)
    Z = torch.rand(5, 6, dtype=torch.float64)
    X = search.lift(Z)
    assert X.shape == (5, 11) and ((X >= 0) & (X <= 1)).all()
    assert torch.allclose(search.project(X), Z, atol=1e-12)
    assert torch.allclose(search.lift(search.project(X)), X, atol=1e-12)
    # input i is z[bin] or 1 - z[bin], as its sign says
    i = int(torch.nonzero(search.signs < 0)[0])
    assert torch.allclose(X[:, i], 1 - Z[:, search.bins[i]])
    with pytest.raises(ValueError, match=r"Z must have shape \[n, 6\]"):
        search.lift(torch.rand(2, 5))


def test_coordinate_choice_is_reproducible_from_seed_and_history():
    search = CoordinateSubspace().bind(16, 6, seed=7)
    assert isinstance(search, CoordinateSearch) and search.search_dim == 16 and search.active_dim == 6
    X, Y = torch.rand(10, 16, dtype=torch.float64), torch.rand(10, 1, dtype=torch.float64)
    a = search.coordinates(X, Y, X[0], seed=5)
    assert a.shape == (6,) and len(set(a.tolist())) == 6 and torch.equal(a, torch.sort(a).values)
    assert torch.equal(a, CoordinateSubspace().bind(16, 6, seed=7).coordinates(X, Y, X[0], seed=5))
    assert any(not torch.equal(a, search.coordinates(X, Y, X[0], seed=s)) for s in range(6, 10))


def test_relevance_weights_favour_the_coordinate_the_values_follow():
    search = CoordinateSubspace(relevance=1.0).bind(8, 3, seed=0)
    X = torch.rand(30, 8, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = -((X[:, 2:3] - 0.5) ** 2)  # a bowl in input 2 alone
    weights = search.coordinate_weights(X, Y, torch.full((8,), 0.5, dtype=torch.float64))
    assert int(torch.argmax(weights)) == 2 and abs(float(weights.sum()) - 1) < 1e-12
    uniform = CoordinateSubspace().bind(8, 3, seed=0).coordinate_weights(X, Y, X[0])
    assert torch.allclose(uniform, torch.full((8,), 1 / 8, dtype=torch.float64))


def _spread(X, Y):
    """A global estimate for the tests: how far the best quarter of the points sits from the
    rest, per input."""
    best = Y[:, 0] >= Y[:, 0].quantile(0.75)
    return (X[best].mean(dim=0) - X[~best].mean(dim=0)).abs()


def test_injected_scores_choose_coordinates_from_every_observation():
    g = torch.Generator().manual_seed(0)
    X = torch.rand(30, 12, dtype=torch.float64, generator=g)
    Y = -((X[:, [3]] - 0.2) ** 2) - (X[:, [9]] - 0.7) ** 2  # inputs 3 and 9
    search = CoordinateSubspace(relevance=0.9, scores=_spread).bind(12, 4, seed=0)
    weights = search.coordinate_weights(X, Y, X[0])
    assert abs(float(weights.sum()) - 1) < 1e-12 and weights.min() >= 0.1 / 12 - 1e-15
    assert set(torch.topk(weights, 2).indices.tolist()) == {3, 9}
    # the whole history is scored, not only the region's points: the coordinates do not
    # change when a region hides most of the points from the model
    region = TrustRegion(12, length_init=0.05)
    view = search._view(region, X, Y, None, seed=5)
    assert len(view.X) < len(X) and {3, 9} <= set(view.coords.tolist())
    assert torch.equal(view.coords, search.coordinates(X, Y, X[int(torch.argmax(Y))], seed=5))
    # an injected estimate: a function of (X, Y); its scores are checked
    fixed = CoordinateSubspace(relevance=1.0, scores=lambda X, Y: torch.arange(12.0)).bind(12, 4, seed=0)
    assert torch.allclose(fixed.coordinate_weights(X, Y, X[0]), torch.arange(12.0, dtype=torch.float64) / 66)
    assert fixed.params()["subspace_scores"] == "<lambda>" and search.params()["subspace_scores"] == "_spread"
    broken = CoordinateSubspace(relevance=1.0, scores=lambda X, Y: -torch.ones(12)).bind(12, 4, seed=0)
    with pytest.raises(ValueError, match="scores must return"):
        broken.coordinate_weights(X, Y, X[0])


@pytest.mark.parametrize("returned, error, match", [
    (torch.ones(3), ValueError, r"\[12\] finite scores >= 0, got shape \(3,\)"),
    (torch.tensor([1.0] * 11 + [-0.5]), ValueError, r"got 1 negative or not finite: score\[11\] = -0.5"),
    (torch.tensor([1.0, float("nan")] * 6), ValueError, r"got 6 negative or not finite: score\[1\] = nan"),
    (None, TypeError, r"\[12\] finite scores >= 0 \(a tensor or an array\), got NoneType"),
])
def test_an_injected_relevance_s_scores_are_refused_saying_what_is_wrong_with_them(returned, error, match):
    from helpers import bowl_history

    from npbandit.acquisition import RedealtSketch

    X, Y = bowl_history(12)
    coordinates = CoordinateSubspace(relevance=1.0, scores=lambda X, Y: returned).bind(12, 4, seed=0)
    with pytest.raises(error, match="scores must return .*" + match):
        coordinates.coordinate_weights(X, Y, X[0])
    redealt = RedealtSketch(phase_start=10, relevance=lambda X, Y: returned).bind(12, 6, seed=0)
    with pytest.raises(error, match="relevance must return .*" + match):
        redealt.leaders(X[:10], Y[:10])
    fine = CoordinateSubspace(relevance=1.0, scores=lambda X, Y: np.arange(12.0)).bind(12, 4, seed=0)
    assert fine.coordinate_weights(X, Y, X[0]).sum().item() == pytest.approx(1.0)  # an array serves as well


def test_a_coordinate_proposal_holds_the_other_inputs_at_the_incumbent(tiny):
    surrogate = load_surrogate(tiny)
    search = CoordinateSubspace().bind(10, 6, seed=1)
    X = torch.rand(12, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    Y = -X.sum(dim=-1, keepdim=True)
    region = TrustRegion(10, length_init=0.4)
    seen = []

    def build(Xs, Ys):
        seen.append(Xs)
        return NPModel.from_pretrained(surrogate, Xs, Ys)

    x = search.propose(region, X, Y, build, "logei", seed=3, **FAST)
    center = X[int(torch.argmax(Y))]
    lower, upper = region.box(center)
    seen_lower, seen_upper = region.box(center, region.context_factor)
    inside = ((X >= seen_lower) & (X <= seen_upper)).all(dim=-1)
    coords = search.coordinates(X[inside], Y[inside], center, seed=3)
    held = torch.ones(10, dtype=torch.bool)
    held[coords] = False
    assert x.shape == (10,) and torch.equal(torch.as_tensor(x)[held], center[held])
    assert ((torch.as_tensor(x) >= lower) & (torch.as_tensor(x) <= upper)).all()
    assert seen[0].shape == (int(inside.sum()), 6) and ((seen[0] >= 0) & (seen[0] <= 1)).all()


def test_bo_policy_narrower_checkpoint_searches_the_default_embedding(tiny):
    policy = BOPolicy(9, model=tiny, budget=16, **FAST)
    assert isinstance(policy.subspace, type(default_subspace())) and policy.n_init == 13  # 2 d_e + 1
    actions = []
    for _ in range(2):
        policy.reset(0)
        run = []
        for _ in range(16):
            x = policy.act(None)
            assert x.shape == (9,) and ((x >= 0) & (x <= 1)).all()
            policy.observe(None, x, -float(((x - 0.3) ** 2).sum()), {})
            run.append(x)
        actions.append(np.array(run))
    np.testing.assert_array_equal(actions[0], actions[1])  # a run depends on its seed alone
    search = policy._search
    X = torch.as_tensor(actions[0])
    assert torch.allclose(search.lift(search.project(X)), X, atol=1e-12)  # every point in the embedding
    params = policy.params()
    # the default for a box: phase 0 of the re-dealt sketch (these 16 evaluations) is the count sketch's slice
    assert params["subspace"] == "redealt-sketch" and params["subspace_d_e"] == 6 and params["subspace_width"] == 6
    assert params["n_init"] == 13 and params["trust_region_failure_tolerance"] == 6


def test_bo_policy_takes_an_injected_coordinate_subspace(tiny):
    policy = BOPolicy(8, model=tiny, subspace=CoordinateSubspace(d_e=4, relevance=0.5), n_init=5, **FAST)
    policy.reset(2)
    for _ in range(7):
        x = policy.act(None)
        assert x.shape == (8,) and ((x >= 0) & (x <= 1)).all()
        policy.observe(None, x, -float(x.sum()), {})
    moved = np.abs(np.array(policy.X[5:]) - np.array(policy.X[:5])[np.argmax(policy.Y[:5])]) > 0
    assert moved[0].sum() <= 4  # the first proposal moves at most d_e inputs from the incumbent
    params = policy.params()
    assert (params["subspace"], params["subspace_d_e"], params["subspace_relevance"]) == ("coordinates", 4, 0.5)
    assert params["trust_region_failure_tolerance"] == 4


class _Binds(CountSketch):
    """A strategy of one's own whose bind returns ``made(dim, width, seed)``."""

    name = "test-binds"

    def __init__(self, made):
        super().__init__()
        self.made = made

    def bind(self, dim, width, seed):
        return self.made(dim, width, seed)


class _Unset(CountSketchSearch):
    """A search that forgot to set its dimensions (read from the class: unset)."""

    dim = search_dim = active_dim = None

    def __init__(self):
        pass


@pytest.mark.parametrize("made,error,match", [
    (lambda dim, width, seed: object(), TypeError,
     r"subspace: _Binds.bind\(8, 6, seed\) must return a SubspaceSearch .*got object"),
    (lambda dim, width, seed: _Unset(), ValueError,
     r"returned a _Unset whose dim is None, not 8, the problem.s inputs \(a search sets dim, search_dim and "),
    (lambda dim, width, seed: CountSketch().bind(dim - 1, width, seed), ValueError, r"whose dim is 7, not 8"),
])
def test_a_strategy_whose_bind_returns_no_search_of_the_problem_is_named(tiny, made, error, match):
    # was an AttributeError ("'object' object has no attribute 'search_dim'") from inside BOPolicy.reset
    policy = BOPolicy(8, model=tiny, subspace=_Binds(made), n_init=5, **FAST)
    with pytest.raises(error, match=match):
        policy.reset(0)
    with pytest.raises(error, match=match):
        policy.params()


def test_a_problem_the_checkpoint_takes_uses_no_subspace(tiny):
    policy = BOPolicy(3, model=tiny)
    assert policy.subspace is None and policy.n_init == 7
    assert not any(k.startswith("subspace") for k in policy.params())
    with pytest.raises(ValueError, match="needs its d_e"):
        BOPolicy(8, model="gp", subspace=CountSketch())
    assert BOPolicy(8, model="gp", subspace=CountSketch(d_e=3)).n_init == 7


@pytest.mark.parametrize("bad, match", [(lambda: CountSketch(d_e=0), "d_e"),
                                        (lambda: CoordinateSubspace(relevance=2), "relevance"),
                                        (lambda: CoordinateSubspace(scores="lasso"), "scores"),
                                        # a function the default relevance=0 would never call
                                        (lambda: CoordinateSubspace(scores=lambda X, Y: X.std(0)),
                                         r"scores='<lambda>' is read only with relevance > 0"),
                                        (lambda: check_subspace("count-sketch"), "SubspaceStrategy"),
                                        (lambda: CountSketch().bind(8, 6, seed=-1), "seed")])
def test_bad_arguments_are_named(bad, match):
    with pytest.raises((ValueError, TypeError), match=match):
        bad()


@pytest.mark.parametrize("subspace", [CountSketch(), CoordinateSubspace(relevance=0.5),
                                      CoordinateSubspace(relevance=0.9, scores=_spread)])
@pytest.mark.parametrize("acquisition", ["logei", "qlognei", "thompson"])
def test_pending_points_and_other_acquisitions_go_through_a_subspace(tiny, subspace, acquisition):
    policy = BOPolicy(8, model=tiny, subspace=subspace, acquisition=acquisition, n_init=4, thompson_candidates=64,
                      **FAST)
    policy.reset(1)
    for _ in range(4):
        x = policy.act(None)
        policy.observe(None, x, -float(x.sum()), {})
    first = policy.act(None)
    second = policy.act(None, pending=first[None])
    for x in (first, second):
        assert x.shape == (8,) and ((x >= 0) & (x <= 1)).all()


@pytest.mark.parametrize("strategy", [CountSketch(), CoordinateSubspace()], ids=["count-sketch", "coordinates"])
def test_a_subspace_shows_the_model_at_most_max_context_observations(tiny, strategy):
    surrogate = load_surrogate(tiny)
    search = strategy.bind(10, 6, seed=1)
    X = torch.rand(30, 10, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    Y = -X.sum(dim=-1, keepdim=True)
    region = TrustRegion(search.search_dim)  # the whole cube in view
    seen = []

    def build(Xs, Ys):
        seen.append((Xs, Ys))
        return NPModel.from_pretrained(surrogate, Xs, Ys)

    search.propose(region, X, Y, build, "logei", seed=0, max_context=8, **FAST)
    (Xs, Ys), = seen
    assert len(Xs) == 8 and float(Ys.max()) == float(Y.max())  # the incumbent always among them


def test_a_coordinate_view_of_a_mixed_space_reaches_every_choice_one_move_away():
    # a 3-choice categorical (one-hot: three columns) among 7 floats: a small region's box around the
    # incumbent holds its choice alone unless widened, as propose_in_region widens it
    from npbandit.space import Choice, Float, SearchSpace

    space = SearchSpace({"c": Choice(["a", "b", "c"]), **{f"x{i}": Float(0.0, 1.0) for i in range(7)}})
    floats = {f"x{i}": 0.5 for i in range(7)}
    codes = np.array([space.encode({"c": c, **floats}) for c in "abc"])
    cat = np.flatnonzero(codes.std(axis=0) > 0).tolist()  # the choice's one-hot columns
    assert space.dim == 10 and len(cat) == 3
    rng = np.random.default_rng(0)
    X = torch.tensor(np.array([space.encode({"c": str(rng.choice(["a", "b", "c"])),
                                             **{f"x{i}": float(rng.random()) for i in range(7)}}) for _ in range(12)]),
                     dtype=torch.float64)
    Y = -X.sum(dim=-1, keepdim=True)
    region = TrustRegion(10, length_init=0.05)
    search = CoordinateSubspace().bind(10, 6, seed=0)
    narrow = search._view(region, X, Y, None, seed=3)
    wide = search._view(region, X, Y, None, seed=3, snap=space.snap)
    for lower, upper in ((wide.lower, wide.upper), (wide.seen_lower, wide.seen_upper)):
        assert torch.equal(lower[cat], torch.zeros(3, dtype=torch.float64))
        assert torch.equal(upper[cat], torch.ones(3, dtype=torch.float64))
    assert (narrow.upper[cat] - narrow.lower[cat]).max() < 1  # without the space: the cube's side only
    rest = [i for i in range(10) if i not in cat]
    assert torch.equal(wide.lower[rest], narrow.lower[rest]) and torch.equal(wide.upper[rest], narrow.upper[rest])


@pytest.mark.parametrize("mixed", [False, True], ids=["continuous", "mixed"])
def test_a_coordinate_view_sees_the_box_and_observations_a_plain_proposal_s_model_sees(mixed):
    from npbandit.acquisition.mixed import TypedCube
    from npbandit.acquisition.proposal import region_view
    from npbandit.space import Choice, Float, SearchSpace

    space = SearchSpace({"c": Choice(["a", "b", "c"]), **{f"x{i}": Float(0.0, 1.0) for i in range(7)}})
    rng = np.random.default_rng(1)
    X = torch.tensor(np.array([space.encode({"c": str(rng.choice(["a", "b", "c"])),
                                             **{f"x{i}": float(rng.random()) for i in range(7)}}) for _ in range(40)]),
                     dtype=torch.float64)
    Y = torch.cat([-X.sum(dim=-1, keepdim=True), X[:, -1:] - 0.5], dim=-1)  # the objective, one constraint
    region = TrustRegion(10, length_init=0.8)
    search = CoordinateSubspace().bind(10, 6, seed=0)
    for max_context in (None, 3):
        view = search._view(region, X, Y, max_context, seed=2, constraints=1, snap=space.snap if mixed else None)
        plain = region_view(region, X, Y, max_context, cube=TypedCube(space) if mixed else None, constraints=1)
        assert len(plain.rows) > 1 and (max_context is None or len(plain.rows) == max_context)
        assert torch.equal(view.center, plain.center) and torch.equal(view.rows, plain.rows)
        assert torch.equal(view.seen_lower, plain.lower) and torch.equal(view.seen_upper, plain.upper)
        assert torch.equal(view.Y, plain.Y) and torch.equal(view.to_model(view.X), plain.X[:, view.coords])
