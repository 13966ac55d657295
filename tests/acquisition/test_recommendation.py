"""The model's recommendation (npbandit.acquisition.recommend, BOPolicy.recommend): the model a
proposal would build, on every observation (a subspace search: on its view), and the evaluated
point of its best mean (an NPModel's de-noised mean at its observations)."""

import numpy as np
import pytest
import torch
from helpers import tiny_checkpoint

from npbandit import load_surrogate
from npbandit.acquisition.recommend import best_mean, recommend, recommend_in_box
from npbandit.acquisition.subspace import CoordinateSearch, CountSketch, SubspaceSearch
from npbandit.models import NPModel
from npbandit.policies.bo import BOPolicy
from npbandit.policies.factories import NPModelFactory
from npbandit.policies.trust_region import TrustRegion
from npbandit.transforms import YeoJohnson


@pytest.fixture(scope="module")
def surrogate(tmp_path_factory):
    return load_surrogate(str(tiny_checkpoint(tmp_path_factory.mktemp("tiny"), "cmanp", "bo")))


class MeanOfFirstInput:
    """A stand-in model whose posterior mean at a point is its first input: which point it
    recommends is known in advance. Records the data it was built on."""

    def __init__(self, X, Y):
        self.X, self.Y = X, Y

    def posterior(self, X):
        return type("Posterior", (), {"mean": X[..., :1]})()


def observed(policy, X, Y):
    for x, y in zip(X, Y):
        policy.observe(None, np.asarray(x, dtype=np.float64), float(y), {})


def noisy(n, d, seed=0):
    g = np.random.default_rng(seed)
    X = g.random((n, d))
    return X, -((X - 0.4) ** 2).sum(-1) + g.normal(0, 0.5, n)


def test_best_mean_picks_the_highest_mean_among_the_candidates_given():
    X = torch.tensor([[0.2, 0.0], [0.9, 0.0], [0.9, 1.0], [0.5, 0.0]], dtype=torch.float64)
    model = MeanOfFirstInput(X, None)
    assert best_mean(model, X, torch.arange(4), torch.tensor([7, 8, 9, 10])) == (8, 0.9)  # the first of equal means
    assert best_mean(model, X, torch.tensor([0, 3]), torch.tensor([7, 10])) == (10, 0.5)  # of the candidates only
    empty = torch.tensor([], dtype=torch.long)
    assert best_mean(model, X, empty, empty) is None
    # failed points (the rows past n_observed), which the model sees at a value, are no candidates
    assert recommend(MeanOfFirstInput, X, torch.zeros(4, 1, dtype=torch.float64), n_observed=1) == (0, 0.2)


@pytest.mark.parametrize("max_context", [None, 12])
def test_a_trust_region_run_s_recommendation_is_made_by_a_model_on_every_observation(surrogate, max_context):
    policy = BOPolicy(2, model=NPModelFactory(surrogate), trust_region=True, max_context=max_context)
    policy.reset(0)
    X, Y = noisy(30, 2)
    observed(policy, X, Y)
    policy.region.length = 0.3  # as after a few halvings: a proposal's model sees only some of the points
    found = policy.recommend()
    # recomputed apart: every observation on the whole cube (of more than max_context, those
    # nearest the best one), each evaluated point's mean de-noised
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y).unsqueeze(-1)
    seen = torch.arange(30)
    if max_context is not None:
        distance = torch.linalg.vector_norm(Xt - Xt[int(np.argmax(Y))], dim=-1)
        seen = torch.sort(torch.argsort(distance, stable=True)[:max_context]).values
    model = NPModel.from_pretrained(surrogate, Xt[seen], Yt[seen])
    mean = model.observed_mean().reshape(-1)
    best = int(torch.argmax(mean))
    assert np.array_equal(found.action, X[int(seen[best])])
    assert found.reward == pytest.approx(float(mean[best]), rel=1e-6)  # float32 network


def test_a_streamed_run_s_recommendation_is_made_by_a_model_built_on_the_observations_then_the_failures(surrogate):
    # the streamed model holds a failure among the observations, in the order of arrival;
    # the recommendation's model is built on the observations, then the failures at the worst value
    policy = BOPolicy(2, model=NPModelFactory(surrogate), trust_region=False)
    policy.reset(0)
    X, Y = noisy(12, 2, seed=4)
    observed(policy, X[:5], Y[:5])
    policy.observe_failure(None, np.array([0.5, 0.5]), "raised")
    observed(policy, X[5:], Y[5:])
    found = policy.recommend()
    Xt = torch.from_numpy(np.concatenate([X, [[0.5, 0.5]]]))
    Yt = torch.from_numpy(np.append(Y, Y[:5].min())).unsqueeze(-1)  # the worst value when it failed
    mean = NPModel.from_pretrained(surrogate, Xt, Yt).observed_mean().reshape(-1)[:12]
    best = int(torch.argmax(mean))
    assert np.array_equal(found.action, X[best])
    assert found.reward == pytest.approx(float(mean[best]), rel=1e-6)


def test_the_count_sketch_recommendation_is_made_in_the_embedding(surrogate):
    policy = BOPolicy(9, model=NPModelFactory(surrogate), trust_region=False)
    policy.reset(1)
    Z, Y = noisy(15, 6)
    X = policy._search.lift(torch.from_numpy(Z)).numpy()  # points of the run: images of their z
    observed(policy, X, Y)
    found = policy.recommend()
    model = NPModel.from_pretrained(surrogate, torch.from_numpy(Z), torch.from_numpy(Y).unsqueeze(-1))
    mean = model.observed_mean().reshape(-1)
    best = int(torch.argmax(mean))
    assert np.array_equal(found.action, X[best]) and found.reward == pytest.approx(float(mean[best]), rel=1e-6)


@pytest.mark.parametrize("length, max_context", [(None, None), (0.7, None), (0.7, 4)],
                         ids=["whole-cube", "region", "region-max-context"])
def test_a_count_sketch_search_recommends_as_a_plain_box_does_on_the_embedded_points(length, max_context):
    search = CountSketch(d_e=3).bind(7, 3, seed=2)
    Z, Y = noisy(12, 3, seed=1)
    Z, Y = torch.from_numpy(Z), torch.from_numpy(Y).unsqueeze(-1)
    X = search.lift(Z)
    region = None if length is None else TrustRegion(3, length_init=length)
    for n_observed in (12, 8):  # the rows past n_observed failed: seen by the model, no candidates
        found = search.recommend(region, X, Y, MeanOfFirstInput, n_observed=n_observed, seed=0,
                                 max_context=max_context)
        plain = recommend_in_box(region, Z, Y, MeanOfFirstInput, n_observed=n_observed, max_context=max_context)
        assert found is not None and found[0] == plain[0] and found[1] == pytest.approx(plain[1], abs=1e-12)


def test_a_warped_model_s_mean_is_taken_back_through_the_warp(surrogate):
    policy = BOPolicy(2, model=NPModelFactory(surrogate), trust_region=False, output_warp="yeo-johnson")
    policy.reset(0)
    X, Y = noisy(12, 2)
    Y = np.exp(3 * Y)  # skewed values, which the warp reshapes
    observed(policy, X, Y)
    found = policy.recommend()
    Yt = torch.from_numpy(Y).unsqueeze(-1)
    warp = YeoJohnson.fit(Yt)
    model = NPModel.from_pretrained(surrogate, torch.from_numpy(X), warp.forward(Yt))
    mean = model.observed_mean().reshape(-1)
    best = int(torch.argmax(mean))
    assert np.array_equal(found.action, X[best])
    assert found.reward == pytest.approx(float(warp.untransform(mean[best].reshape(1, 1))), rel=1e-5)


def test_a_coordinate_subspace_recommends_only_points_its_drawn_inputs_tell_apart():
    search = CoordinateSearch(4, d_e=2, relevance=0.0, seed=0)
    X = torch.tensor([[0.5, 0.5, 0.5, 0.5],      # the incumbent
                      [0.99, 0.99, 0.99, 0.99],  # the best mean whichever inputs are drawn, but it differs
                      [0.5, 0.5, 0.5, 0.5]],     # from the incumbent in the held ones too: no candidate
                     dtype=torch.float64)
    Y = torch.tensor([[1.0], [0.0], [0.5]], dtype=torch.float64)
    for seed in range(5):
        row, _ = search.recommend(None, X, Y, MeanOfFirstInput, n_observed=3, seed=seed)
        assert row == 0  # of the incumbent's two copies, the first


def test_recommending_leaves_the_run_s_generators_and_data_as_they_were(surrogate):
    policy = BOPolicy(2, model=NPModelFactory(surrogate), trust_region=False)
    policy.reset(0)
    assert policy.recommend() is None  # no values: no model
    X, Y = noisy(6, 2)
    observed(policy, X, Y)
    state, torch_state = policy.rng.bit_generator.state, torch.random.get_rng_state()
    first = policy.recommend()
    assert policy.rng.bit_generator.state == state and torch.equal(torch.random.get_rng_state(), torch_state)
    again = policy.recommend()
    assert np.array_equal(first.action, again.action) and first.reward == again.reward
    assert len(policy.X) == 6 and policy.act(None).shape == (2,)


def test_a_gp_recommendation_depends_on_the_run_alone():
    X, Y = noisy(8, 2)
    found = []
    for _ in range(2):
        torch.manual_seed(len(found))  # what ran before in the process does not matter
        policy = BOPolicy(2, model="gp")
        policy.reset(3)
        observed(policy, X, Y)
        found.append(policy.recommend())
    assert np.array_equal(found[0].action, found[1].action) and found[0].reward == found[1].reward
    assert any(np.array_equal(found[0].action, x) for x in X)


def test_a_search_of_its_own_makes_no_recommendation_unless_it_implements_one():
    class Identity(SubspaceSearch):  # implements what a search must, and not recommend
        dim = search_dim = active_dim = 3

        def lift(self, Z):
            return Z

        def project(self, X):
            return X

        def propose(self, *args, **kwargs):
            raise AssertionError("not called")

        def params(self):
            return {}

    X = torch.rand(4, 3, dtype=torch.float64)
    assert Identity().recommend(None, X, torch.rand(4, 1, dtype=torch.float64), MeanOfFirstInput, n_observed=4,
                                seed=0) is None


def test_on_a_mixed_space_the_trust_region_s_model_sees_the_widened_box_its_proposal_sees():
    from npbandit.acquisition.proposal import region_view
    from npbandit.acquisition.recommend import recommend_in_region
    from npbandit.policies.trust_region import TrustRegion
    from npbandit.space import Choice, Float, SearchSpace

    space = SearchSpace({"x": Float(0.0, 1.0), "c": Choice(["a", "b", "c"])})
    X = torch.tensor(np.array([space.encode({"x": 0.5, "c": "a"}), space.encode({"x": 0.5, "c": "c"}),
                               space.encode({"x": 0.9, "c": "a"})]), dtype=torch.float64)
    Y = torch.tensor([[1.0], [0.5], [0.0]], dtype=torch.float64)
    region = TrustRegion(space.dim)
    region.length = 0.05  # a cube around the incumbent holds its choice alone; widened, every choice
    assert region_view(region, X, Y).rows.tolist() == [0]
    seen = []

    def build(X_box, Y_box):
        seen.append(X_box)
        return MeanOfFirstInput(X_box, Y_box)

    recommend_in_region(region, X, Y, build, n_observed=3, snap=space.snap)
    assert len(seen[0]) == 2  # the incumbent and the other choice one move away; x = 0.9 stays out



class ObjectiveAndConstraint:
    """A stand-in two-output model: the objective's mean is the first input, the constraint's
    the second input minus 0.5 (feasible where it is <= 0.5)."""

    def __init__(self, X, Y):
        self.X, self.Y = X, Y

    def posterior(self, X):
        return type("Posterior", (), {"mean": torch.stack([X[..., 0], X[..., 1] - 0.5], dim=-1)})()


def test_with_constraints_only_points_the_model_predicts_feasible_are_candidates():
    X = torch.tensor([[0.9, 0.9],    # the best objective, predicted infeasible
                      [0.6, 0.2],    # the best predicted feasible
                      [0.3, 0.1]], dtype=torch.float64)
    Y = torch.tensor([[0.9, 0.4], [0.6, -0.3], [0.3, -0.4]], dtype=torch.float64)
    model = ObjectiveAndConstraint(X, Y)
    assert best_mean(model, X, torch.arange(3), torch.arange(3)) == (0, 0.9)
    assert best_mean(model, X, torch.arange(3), torch.arange(3), constraints=1) == (1, 0.6)
    assert best_mean(model, X, torch.arange(1), torch.arange(1), constraints=1) is None  # none predicted feasible
    assert recommend(ObjectiveAndConstraint, X, Y, n_observed=3, constraints=1) == (1, 0.6)


def test_an_np_model_built_on_other_rows_is_read_at_the_candidates_not_by_position(surrogate):
    X, Y = noisy(10, 2, seed=5)
    Xt, Yt = torch.from_numpy(X), torch.from_numpy(Y).unsqueeze(-1)
    model = NPModel.from_pretrained(surrogate, Xt, Yt)
    own = best_mean(model, Xt, torch.arange(10), torch.arange(10))
    denoised = model.observed_mean().reshape(-1)
    assert own == (int(torch.argmax(denoised)), pytest.approx(float(denoised.max()), rel=1e-12))
    order = torch.arange(9, -1, -1)  # the same points in another order: positions mean nothing to the model
    with torch.no_grad():
        mean = model.posterior(Xt[order].unsqueeze(-2)).mean.reshape(-1)
    assert best_mean(model, Xt[order], torch.arange(10), order) == (int(order[torch.argmax(mean)]),
                                                                   pytest.approx(float(mean.max()), rel=1e-12))
