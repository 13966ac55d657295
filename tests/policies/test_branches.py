"""BranchBOPolicy: a conditional space searched with one BOPolicy per branch of its gate."""

import math

import numpy as np
import pytest
import torch

from npbandit import optimize
from npbandit.policies import BOPolicy
from npbandit.policies.branches import DESIGN_POINTS, MIN_BRANCH_TRIES, BranchBOPolicy, branch_spaces, gate_of
from npbandit.space import Choice, Float, Int, SearchSpace
from npbandit.storage import list_runs

SPACE = SearchSpace({"model": Choice(["svm", "rf"], dependents={"svm": ["C"], "rf": ["n", "depth"]}),
                     "C": Float(1e-3, 1e1, log=True), "n": Int(10, 200), "depth": Int(1, 10), "shared": Float(0, 1)})


def loss(p):
    if p["model"] == "svm":
        return (math.log10(p["C"]) + 0.5) ** 2 + 0.1 + (p["shared"] - 0.5) ** 2
    return abs(p["n"] - 120) / 100 + abs(p["depth"] - 3) / 10 + (p["shared"] - 0.5) ** 2


def branch_policy(space):
    return BOPolicy(space.dim, model="tnpd-bo", snap=None if space.continuous else space.snap)


def test_the_gate_is_the_first_top_level_choice_and_each_branch_holds_what_its_points_can_have():
    nested = SearchSpace({"shared": Float(0, 1),
                          "model": Choice(["linear", "tree"], dependents={"linear": ["C"], "tree": ["split", "depth"]}),
                          "C": Float(0, 1), "split": Choice(["gini", "entropy"], dependents={"entropy": ["smooth"]}),
                          "smooth": Float(0, 1), "depth": Int(1, 5)})
    assert gate_of(nested) == "model" and gate_of(SearchSpace({"x": Float(0, 1)})) is None
    spaces = branch_spaces(nested, "model")
    assert list(spaces["linear"]) == ["shared", "C"]
    assert list(spaces["tree"]) == ["shared", "split", "smooth", "depth"] and spaces["tree"].conditional
    assert branch_spaces(SearchSpace({"m": Choice(["a", "b"], dependents={"a": ["x"]}), "x": Float(0, 1)}),
                         "m")["b"] is None  # a value whose points have nothing else
    with pytest.raises(ValueError, match="conditional"):
        BranchBOPolicy(SearchSpace({"x": Float(0, 1)}), branch_policy)


def test_a_point_splits_into_its_branch_and_joins_back():
    policy = BranchBOPolicy(SPACE, branch_policy)
    for params in ({"model": "svm", "C": 0.5, "shared": 0.25}, {"model": "rf", "n": 40, "depth": 7, "shared": 0.75}):
        u = SPACE.encode(params)
        value, w = policy.split(u)
        assert value == params["model"] and policy.spaces[value].decode(w) == pytest.approx(
            {k: v for k, v in params.items() if k != "model"})
        assert np.array_equal(policy.join(value, w), u)


def test_the_design_then_every_branch_tried_then_one_branchs_proposal_the_others_withdrawn():
    policy = BranchBOPolicy(SPACE, branch_policy)
    policy.reset(seed=0)
    assert policy.n_init == DESIGN_POINTS
    for step in range(DESIGN_POINTS + 6):
        x = policy.act(None)
        assert np.array_equal(SPACE.snap(torch.as_tensor(x).unsqueeze(0))[0].numpy(), x)  # an encoded point
        waiting = {v: sum(len(h) for h in p.hand_outs.handed.values()) for v, p in policy.policies.items()}
        if step >= DESIGN_POINTS:  # from a branch's policy: that policy waits for it, no other waits for anything
            value, _ = policy.split(x)
            assert waiting == {v: int(v == value) for v in waiting}
        else:
            assert sum(waiting.values()) == 0
        policy.observe(None, x, -loss(SPACE.decode(x)), {})
    assert all(policy.tries[v] >= MIN_BRANCH_TRIES for v in policy.tries)
    assert sum(len(p.Y) for p in policy.policies.values()) == DESIGN_POINTS + 6
    found = policy.recommend()
    assert found is not None and found.action.shape == (SPACE.dim,)
    assert policy.params()["branches"] == "model" and policy.name == "branches-tnpd-bo-tr-logei"


def test_withdraw_gives_back_a_handed_out_point_and_refuses_any_other():
    policy = BOPolicy(2, model="tnpd-bo")
    policy.reset(seed=0)
    for _ in range(policy.n_init):
        x = policy.act(None)
        policy.observe(None, x, float(-np.sum((x - 0.3) ** 2)), {})
    spent = policy.hand_outs.spent
    x = policy.act(None)
    policy.withdraw(x)
    assert policy.hand_outs.spent == spent and not policy.hand_outs.handed
    with pytest.raises(ValueError, match="not handed out"):
        policy.withdraw(x)


def test_an_acquisition_value_is_in_the_rewards_units_whatever_scale_the_model_sees():
    rng = np.random.default_rng(0)
    X = rng.random((8, 2))
    values = []
    for c in (1.0, 1e-6):  # 1e-6: the values' range is small enough that the model sees them scaled by 2**k
        policy = BOPolicy(2, model="tnpd-bo")
        policy.reset(seed=0)
        for x in X:
            policy.observe(None, x, c * float(-np.sum((x - 0.3) ** 2)), {})
        values.append(policy.acquisition_value(np.array([0.3, 0.3]), best=max(policy.Y)))
    assert values[1] - values[0] == pytest.approx(math.log(1e-6), abs=1e-6)
    fresh = BOPolicy(2, model="tnpd-bo")
    fresh.reset(seed=0)
    assert fresh.acquisition_value(np.array([0.5, 0.5]), best=0.0) == -math.inf


def test_optimize_searches_a_conditional_space_by_branch_unless_told_not_to(tmp_path):
    db = f"sqlite:///{tmp_path / 'runs.db'}"
    for branches in (None, False):
        result = optimize(loss, SPACE, budget=14, seed=0, db=db, progress=False, branches=branches)
        assert len(result.history) == 14 and {h["x"]["model"] for h in result.history} == {"svm", "rf"}
    by_branch, whole = sorted(list_runs(db), key=lambda r: r.id)
    assert by_branch.policy.startswith("branches-") and by_branch.policy_params["branches"] == "model"
    assert not whole.policy.startswith("branches-")


def test_a_branch_without_parameters_is_one_point_evaluated_once_after_the_design():
    space = SearchSpace({"m": Choice(["a", "b", "c"], dependents={"a": ["x"], "b": ["y"]}),
                         "x": Float(0, 1), "y": Float(0, 1)})
    policy = BranchBOPolicy(space, branch_policy, n_init=2)
    policy.reset(seed=0)
    seen = []
    for _ in range(12):
        x = policy.act(None)
        params = space.decode(x)
        seen.append(params["m"])
        policy.observe(None, x, -{"a": params.get("x", 0.0) + 0.1, "b": 0.2, "c": 0.3}[params["m"]], {})
    assert seen.count("c") == 1 and policy.spaces["c"] is None


def test_the_design_passes_over_points_already_evaluated():
    space = SearchSpace({"m": Choice(["a", "b"], dependents={"a": ["k"]}), "k": Int(0, 2)})  # four points in all
    policy = BranchBOPolicy(space, branch_policy, n_init=4)
    policy.reset(seed=0)
    given = space.encode({"m": "b"})
    policy.observe(None, given, 0.0, {})  # a warm start's point
    handed = [policy.act(None) for _ in range(3)]
    keys = {x.tobytes() for x in handed}
    assert len(keys) == 3 and given.tobytes() not in keys


@pytest.mark.parametrize("settings, match", [
    ({"branches": "yes"}, "branches must be None, True or False"),
    ({"branches": 1}, "branches must be None, True or False"),
    ({"branches": True, "space": None, "bounds": [[0.0], [1.0]]}, "branches=True needs a conditional space"),
    ({"branches": True, "space": {"x": Float(0, 1)}}, "branches=True needs a conditional space"),
    ({"branches": True, "surrogate": "random"}, "surrogate='random'"),
    ({"branches": True, "output_warp": "yeo-johnson"}, "output_warp"),
    ({"branches": True, "minimize": {"a": True, "b": True}}, "several objectives"),
])
def test_optimize_refuses_a_branches_it_cannot_honour_before_evaluating_anything(settings, match):
    calls = []
    settings = {"space": SPACE, **settings}
    if settings["space"] is None:
        del settings["space"]

    def objective(p):
        calls.append(p)
        return loss(p)

    with pytest.raises((TypeError, ValueError), match=match):
        optimize(objective, budget=12, db=None, progress=False, **settings)
    assert calls == []


def test_a_branch_whose_parameters_have_one_value_each_is_one_point():
    space = SearchSpace({"model": Choice(["fixed", "tuned"], dependents={"fixed": ["kind"], "tuned": ["x"]}),
                         "kind": Choice(["default"]), "x": Float(0, 1)})
    assert branch_spaces(space, "model")["fixed"] is None
    result = optimize(lambda p: p.get("x", 0.25), space, budget=12, seed=0, db=None, progress=False)
    fixed = [h["x"] for h in result.history if h["x"]["model"] == "fixed"]
    assert fixed and all(x == {"model": "fixed", "kind": "default"} for x in fixed)
    two_points = {"model": Choice(["fixed", "default"], dependents={"fixed": ["kind"]}), "kind": Choice(["default"])}
    result = optimize(lambda p: 1.0 if p["model"] == "fixed" else 2.0, two_points, budget=2, seed=0, db=None,
                      progress=False)  # no branch to search: one model over the whole cube
    assert sorted(h["value"] for h in result.history) == [1.0, 2.0]
    with pytest.raises(ValueError, match="every value of 'model' is one point"):
        optimize(lambda p: 1.0, two_points, budget=2, db=None, progress=False, branches=True)


def test_the_value_model_is_built_once_per_set_of_observations():
    policy = BOPolicy(2, model="tnpd-bo")
    policy.reset(seed=0)
    for x in np.random.default_rng(0).random((5, 2)):
        policy.observe(None, x, float(-np.sum((x - 0.3) ** 2)), {})
    first = policy.acquisition_value(np.array([0.3, 0.3]), best=0.0)
    model = policy._value_model[1]
    assert policy.acquisition_value(np.array([0.3, 0.3]), best=0.0) == first and policy._value_model[1] is model
    policy.observe(None, np.array([0.3, 0.3]), 0.0, {})
    policy.acquisition_value(np.array([0.5, 0.5]), best=0.0)
    assert policy._value_model[1] is not model  # a new observation: built again
