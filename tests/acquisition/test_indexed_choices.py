"""A mixed space wider than the model, its unordered choices on one column each
(npbandit.acquisition.indexed_choices)."""

import numpy as np
import pytest
import torch
from helpers import tiny_checkpoint

import npbandit
from npbandit.acquisition.indexed_choices import (
    IndexedChoices,
    IndexedChoicesSearch,
    indexed_view,
)
from npbandit.acquisition.redealt_sketch import RedealtSketch
from npbandit.acquisition.subspace import CountSketch, CountSketchSearch
from npbandit.acquisition.wide_spaces import default_subspace
from npbandit.policies.bo import BOPolicy
from npbandit.space import Choice, Float, Int, SearchSpace

FAST = {"num_restarts": 2, "raw_samples": 32}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return str(tiny_checkpoint(tmp_path_factory.mktemp("tiny"), "cmanp", "bo"))


def mlp_space() -> SearchSpace:
    """Seven columns: an int, a 3-value choice (3), two floats, an int."""
    return SearchSpace({"hidden": Int(4, 128, log=True), "activation": Choice(["relu", "tanh", "logistic"]),
                        "alpha": Float(1e-6, 1.0, log=True), "lr": Float(1e-4, 1e-1, log=True),
                        "batch": Int(16, 64)})


def wide_space() -> SearchSpace:
    """Fifteen columns: six floats, choices of 4 and 3 values (7), an ordered choice, a bool-like choice."""
    floats = {f"f{i}": Float(0.0, 1.0) for i in range(6)}
    return SearchSpace({**floats, "kernel": Choice(["a", "b", "c", "d"]), "act": Choice(["x", "y", "z"]),
                        "size": Choice([8, 16, 32], ordered=True), "flag": Choice([False, True])})


def test_the_view_indexes_the_largest_choices_only_until_the_space_fits():
    space = SearchSpace({"a": Float(0, 1), "small": Choice(["p", "q", "r"]), "big": Choice(list("abcde")),
                         "b": Float(0, 1)})
    assert space.dim == 10
    view, indexed = indexed_view(space, 7)
    assert indexed == ["big"] and view.dim == 6  # indexing the 5-value choice alone fits 7
    view, indexed = indexed_view(space, 5)
    assert indexed == ["big", "small"] and view.dim == 4
    view, indexed = indexed_view(space, 10)
    assert indexed == [] and view.dim == 10  # it fits as it is: every choice keeps its one-hot columns
    view, indexed = indexed_view(space, 2)
    assert view.dim == 4  # every choice indexed and still too wide: the strategy sketches the rest
    with pytest.raises(TypeError, match="space must be a SearchSpace"):
        indexed_view({"a": Float(0, 1)}, 3)


def test_lift_and_project_are_a_bijection_between_evaluable_points():
    space = mlp_space()
    search = IndexedChoices(space).bind(space.dim, 6, seed=0)
    assert isinstance(search, IndexedChoicesSearch) and search.then is None
    assert search.indexed == ["activation"] and search.search_dim == search.active_dim == 5
    Z = torch.rand(50, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    X = search.lift(Z)
    assert X.shape == (50, 7)
    one_hot = X[:, 1:4]
    assert torch.equal(one_hot.sum(dim=-1), torch.ones(50, dtype=torch.float64))
    assert set(one_hot.unique().tolist()) == {0.0, 1.0}
    # the index column decodes to the value whose interval holds it
    assert torch.equal(one_hot.argmax(dim=-1), (Z[:, 1] * 3).floor().long())
    # the other columns are carried over exactly
    assert torch.equal(X[:, [0, 4, 5, 6]], Z[:, [0, 2, 3, 4]])
    # project then lift returns every lifted point exactly; project sees values at their centres
    U = search.project(X)
    assert torch.equal(search.lift(U), X)
    assert set(U[:, 1].tolist()) <= {1 / 6, 0.5, 5 / 6}
    for x in X[:10]:  # the decoded parameters are the same through either cube
        params = space.decode(x)
        assert params["activation"] == ["relu", "tanh", "logistic"][int(torch.argmax(x[1:4]))]
    with pytest.raises(ValueError, match=r"X must have shape \[n, 7\]"):
        search.project(torch.rand(2, 5))


def test_every_value_of_every_choice_can_be_proposed():
    space = wide_space()
    search = IndexedChoices(space).bind(space.dim, 6, seed=3)
    # indexed: kernel and act (one column each); still 10 columns, so a count sketch of the view
    assert search.indexed == ["kernel", "act"] and isinstance(search.then, CountSketchSearch)
    assert search.search_dim == 6 and search.params()["subspace_then"]["subspace"] == "count-sketch"
    Z = torch.rand(4000, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(1))
    X = search.lift(Z)
    seen = [space.decode(x) for x in X]
    for name in ("kernel", "act", "size", "flag"):
        assert {p[name] for p in seen} == set(space[name].values), name
    for name in ("kernel", "act"):  # an indexed choice's columns are a one-hot code, whatever its bin holds
        columns = X[:, space.columns(name)]
        assert torch.equal(columns.sum(dim=-1), torch.ones(len(X), dtype=torch.float64))
    assert search.project(X).shape == (4000, 6)


def test_default_subspace_depends_on_the_space():
    assert isinstance(default_subspace(), RedealtSketch)
    assert isinstance(default_subspace(SearchSpace({f"x{i}": Float(0, 1) for i in range(9)})), RedealtSketch)
    two_valued = SearchSpace({**{f"x{i}": Float(0, 1) for i in range(8)}, "b": Choice([0, 1])})
    # a two-valued choice is one column already (nothing to index); with it the space is not
    # continuous, so the slice cannot be re-dealt exactly: a fixed count sketch
    assert isinstance(default_subspace(two_valued), CountSketch)
    ints = SearchSpace({**{f"x{i}": Float(0, 1) for i in range(4)}, **{f"n{i}": Int(0, 9) for i in range(4)}})
    assert type(default_subspace(ints)) is CountSketch
    assert isinstance(default_subspace(mlp_space()), IndexedChoices)
    with pytest.raises(ValueError, match="dim must be the space's 7 columns"):
        IndexedChoices(mlp_space()).bind(9, 6, 0)
    assert IndexedChoices(dict(mlp_space().items())).space == mlp_space()  # a dict, as optimize takes it
    with pytest.raises(TypeError, match="space must be a SearchSpace or a dict"):
        IndexedChoices([Float(0, 1)])
    with pytest.raises(TypeError, match="subspace must be a SubspaceStrategy"):
        IndexedChoices(mlp_space(), then="count-sketch")


def test_bo_policy_on_a_wide_mixed_space_searches_the_indexed_view(tiny):
    space = mlp_space()
    policy = BOPolicy(space.dim, model=tiny, snap=space.snap, budget=14, **FAST)
    assert isinstance(policy.subspace, IndexedChoices) and policy.n_init == 11  # 2 x 5 + 1
    policy.reset(0)
    for _ in range(14):
        x = policy.act(None)
        assert x.shape == (7,)
        assert torch.equal(space.snap(torch.as_tensor(x)), torch.as_tensor(x))  # a point the objective takes
        params = space.decode(x)
        policy.observe(None, x, -abs(np.log10(params["alpha"]) + 3) - (params["activation"] != "tanh"), {})
    params = policy.params()
    assert params["subspace"] == "indexed-choices" and params["subspace_indexed"] == ["activation"]
    assert params["subspace_d_e"] == 5 and params["subspace_width"] == 6


def test_optimize_takes_a_subspace_and_refuses_one_where_it_means_nothing(tiny):
    space = mlp_space()

    def objective(p):
        return (np.log10(p["alpha"]) + 3) ** 2 + (p["activation"] != "tanh")

    result = npbandit.optimize(objective, space=space, surrogate=tiny, budget=13, db=None, progress=False, seed=0,
                               subspace=CountSketch(), acq_optimizer=None)
    assert len(result.history) == 13
    with pytest.raises(TypeError, match="subspace must be a SubspaceStrategy"):
        npbandit.optimize(objective, space=space, budget=3, db=None, progress=False, subspace="count-sketch")
    for surrogate in ("gp", "random"):
        with pytest.raises(ValueError, match=f"surrogate='{surrogate}' takes any number"):
            npbandit.optimize(objective, space=space, surrogate=surrogate, budget=3, db=None, progress=False,
                              subspace=CountSketch())


def test_npsampler_searches_a_wide_categorical_space_through_the_indexed_view(tiny):
    optuna = pytest.importorskip("optuna")
    from npbandit.integrations.optuna import NPSampler

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    sampler = NPSampler(checkpoint=tiny, seed=0, n_startup_trials=4, **FAST)

    def objective(trial):
        act = trial.suggest_categorical("act", ["relu", "tanh", "logistic", "elu"])
        return sum(trial.suggest_float(f"x{i}", 0.0, 1.0) for i in range(4)) + (act == "tanh")

    study = optuna.create_study(sampler=sampler)
    study.optimize(objective, n_trials=7)
    space, search = sampler._space(study.trials[-1].distributions)
    assert space.dim == 8 and isinstance(search, IndexedChoicesSearch) and search.indexed == ["act"]
    assert all(t.params["act"] in ("relu", "tanh", "logistic", "elu") for t in study.trials)


def test_an_indexed_view_of_another_space_is_refused_or_taken_in_the_samplers_order(tiny):
    space = mlp_space()
    shuffled = SearchSpace({n: space[n] for n in reversed(list(space))})  # the same parameters, other columns
    with pytest.raises(ValueError, match="IndexedChoices of another space"):
        BOPolicy(space.dim, model=tiny, snap=space.snap, subspace=IndexedChoices(shuffled))
    optuna = pytest.importorskip("optuna")
    from npbandit.integrations.optuna import NPSampler

    sampler = NPSampler(checkpoint=tiny, seed=0, subspace=IndexedChoices(space))  # the user's order
    distributions = {"hidden": optuna.distributions.IntDistribution(4, 128, log=True),
                     "activation": optuna.distributions.CategoricalDistribution(["relu", "tanh", "logistic"]),
                     "alpha": optuna.distributions.FloatDistribution(1e-6, 1.0, log=True),
                     "lr": optuna.distributions.FloatDistribution(1e-4, 1e-1, log=True),
                     "batch": optuna.distributions.IntDistribution(16, 64)}
    sorted_space, search = sampler._space(distributions)
    assert list(sorted_space) == sorted(space) and search.space == sorted_space  # taken in the sampler's order
    other = NPSampler(checkpoint=tiny, seed=0, subspace=IndexedChoices({**dict(space.items()), "extra": Float(0, 1)}))
    with pytest.raises(ValueError, match="IndexedChoices of another space"):
        other._space(distributions)
