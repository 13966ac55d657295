"""Conditional (hierarchical) search spaces: a Choice's dependents exist only under the values listing them."""

import json

import numpy as np
import pytest
import torch

from npbandit.acquisition.mixed import TypedCube
from npbandit.space import Choice, Float, Int, SearchSpace, as_search_space


def classifier_space(**extra) -> SearchSpace:
    return SearchSpace({"model": Choice(["svm", "rf"], dependents={"svm": ["C"], "rf": ["n", "depth"]}),
                        "C": Float(1e-3, 1e3, log=True), "n": Int(10, 200), "depth": Int(1, 10),
                        "shared": Float(0.0, 1.0), **extra})


def test_a_point_has_the_parameters_its_choices_make_active_and_the_cube_pins_the_others():
    space = classifier_space()
    assert space.conditional and not space.continuous and space.dim == 5
    svm = {"model": "svm", "C": 2.0, "shared": 0.3}
    u = space.encode(svm)
    assert space.decode(u) == pytest.approx(svm) and list(space.decode(u)) == ["model", "C", "shared"]
    # the inactive n and depth sit at the encoding of their centre values, whatever the point
    assert u[2] == space["n"].encode(space["n"].decode(np.array([0.5])))[0]
    assert u[3] == space["depth"].encode(space["depth"].decode(np.array([0.5])))[0]
    rf = {"model": "rf", "n": 50, "depth": 3, "shared": 0.9}
    assert space.decode(space.encode(rf)) == pytest.approx(rf)
    assert space.active(rf) == ["model", "n", "depth", "shared"] and space.active(svm) == ["model", "C", "shared"]


def test_params_must_name_exactly_the_active_parameters_and_the_message_says_when_each_exists():
    space = classifier_space()
    with pytest.raises(ValueError, match=r"inactive \['n'\] \(n exists only when model is 'rf'\)"):
        space.check({"model": "svm", "C": 1.0, "n": 20, "shared": 0.5})
    with pytest.raises(ValueError, match=r"missing \['n', 'depth'\]"):
        space.check({"model": "rf", "shared": 0.5})
    with pytest.raises(ValueError, match=r"params\['model'\]"):
        space.check({"model": "knn", "shared": 0.5})


def test_snap_pins_the_inactive_columns_keeps_active_gradients_and_is_idempotent():
    space = classifier_space()
    u = torch.rand(64, space.dim, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    u.requires_grad_(True)
    snapped = space.snap(u)
    assert torch.equal(space.snap(snapped.detach()), snapped.detach())
    for row, point in zip(u.detach(), snapped.detach()):
        params = space.decode(point)
        assert np.allclose(space.encode(params), point.numpy())  # a snapped point is an encoded one
        assert params == space.decode(row) or params["model"] == space.decode(row)["model"]
    snapped[:, 4].sum().backward()  # "shared", always active, keeps its gradient through the pin
    assert torch.equal(u.grad[:, 4], torch.ones(64, dtype=torch.float64))
    inactive = space.inactive_columns(snapped.detach())
    svm = snapped.detach()[:, 0] < 0.5
    assert inactive[svm][:, 2:4].all() and not inactive[svm][:, :2].any()
    assert inactive[~svm][:, 1].all() and not inactive[~svm][:, 2:4].any()


def test_nested_dependents_need_every_choice_above_them_active():
    space = SearchSpace({"model": Choice(["linear", "tree"], dependents={"tree": ["split"]}),
                         "split": Choice(["gini", "entropy"], dependents={"entropy": ["smoothing"]}),
                         "smoothing": Float(0.0, 1.0)})
    assert space.active({"model": "linear"}) == ["model"]
    assert space.active({"model": "tree", "split": "gini"}) == ["model", "split"]
    assert space.active({"model": "tree", "split": "entropy"}) == ["model", "split", "smoothing"]
    # an "entropy" in the split's columns of a linear model is not read: the split itself is inactive
    u = space.encode({"model": "tree", "split": "entropy", "smoothing": 0.25})
    u[0] = space["model"].encode("linear")[0]
    assert space.decode(space.snap(torch.as_tensor(u).unsqueeze(0))[0]) == {"model": "linear"}


@pytest.mark.parametrize("parameters,match", [
    ({"m": Choice(["a", "b"], dependents={"a": ["x"]})}, "'x', which is not a parameter"),
    ({"m": Choice(["a", "b"], dependents={"a": ["m"]})}, "names the choice itself"),
    ({"m": Choice(["a", "b"], dependents={"a": ["x"]}), "k": Choice(["c", "d"], dependents={"c": ["x"]}),
      "x": Float(0, 1)}, "dependents of 'm' and of 'k'"),
    ({"m": Choice(["a", "b"], dependents={"a": ["k"]}), "k": Choice(["c", "d"], dependents={"c": ["m"]})},
     "cycle"),
])
def test_inconsistent_dependents_are_refused_naming_the_parameters(parameters, match):
    with pytest.raises(ValueError, match=match):
        SearchSpace(parameters)


@pytest.mark.parametrize("dependents,error,match", [
    (["x"], TypeError, "mapping of values"), ({"z": ["x"]}, ValueError, "'z' is not one of the values"),
    ({"a": "x"}, TypeError, r"dependents\['a'\] must be a list"), ({"a": [""]}, ValueError, "non-empty"),
    ({"a": ["x", "x"]}, ValueError, "twice"),
])
def test_a_choice_refuses_dependents_that_are_not_lists_of_names_under_its_values(dependents, error, match):
    with pytest.raises(error, match=match):
        Choice(["a", "b"], dependents=dependents)


def test_a_conditional_space_is_described_as_json_and_read_back_with_its_values_types():
    space = SearchSpace({"layers": Choice([1, 2, 3], dependents={2: ["width2"], 3: ["width2", "width3"]}),
                         "width2": Int(8, 64), "width3": Int(8, 64)})
    assert as_search_space(json.loads(json.dumps(space.describe()))) == space
    assert space.active({"layers": 2, "width2": 8}) == ["layers", "width2"]
    assert space["layers"] != Choice([1, 2, 3]) and hash(space["layers"]) != hash(Choice([1, 2, 3]))
    assert "dependents={2: ['width2'], 3: ['width2', 'width3']}" in repr(space["layers"])


def test_the_optimisers_moves_bring_a_branchs_parameters_in_and_pin_the_old_ones():
    space = classifier_space()
    cube = TypedCube(space)
    rf = torch.as_tensor(space.encode({"model": "rf", "n": 50, "depth": 3, "shared": 0.9})).unsqueeze(0)
    bounds = torch.stack([torch.zeros(space.dim), torch.ones(space.dim)]).to(torch.float64)
    moved, rows = cube.neighbours(rf, bounds)
    decoded = [space.decode(p) for p in moved]
    assert {"model": "svm", "C": space["C"].decode(np.array([0.5])), "shared": 0.9} in decoded
    assert all(torch.equal(space.snap(p.unsqueeze(0))[0], p) for p in moved)  # every move is an encoded point
    svm = torch.as_tensor(space.encode({"model": "svm", "C": 1.0, "shared": 0.9})).unsqueeze(0)
    moved, _ = cube.neighbours(svm, bounds)
    assert [space.decode(p)["model"] for p in moved] == ["rf"]  # no move of the inactive n or depth


def test_the_indexed_view_of_a_wide_conditional_space_is_conditional_too():
    from npbandit.acquisition.indexed_choices import indexed_view

    space = SearchSpace({"kind": Choice(["a", "b", "c"], dependents={"a": ["a1"], "b": ["b1", "b2"], "c": ["c1"]}),
                         **{n: Float(0, 1) for n in ("s", "a1", "b1", "b2", "c1")}})
    view, indexed = indexed_view(space, 6)
    assert indexed == ["kind"] and view.dim == 6 and view.conditional
    point = torch.as_tensor(view.encode({"kind": "b", "s": 0.2, "b1": 0.3, "b2": 0.4})).unsqueeze(0)
    point[0, view.columns("a1")] = 0.9  # a's parameter, not b's: pinned back
    assert view.decode(view.snap(point)[0]) == pytest.approx({"kind": "b", "s": 0.2, "b1": 0.3, "b2": 0.4})
    assert float(view.snap(point)[0, view.columns("a1")]) == 0.5


def test_an_objective_that_reads_a_parameter_its_point_lacks_is_told_when_that_parameter_exists():
    from npbandit import optimize
    from npbandit.exceptions import ObjectiveError

    space = classifier_space()
    with pytest.raises(ObjectiveError, match=r"KeyError: 'C' at x=\{'model': 'rf'.*\(C exists only when model is "
                                             r"'svm': a point holds its active parameters alone\)"):
        optimize(lambda p: p["C"] + p["n"], space, budget=12, seed=0, db=None, progress=False)
    # with on_error="skip" each failure records the same reason; a KeyError of the objective's own stays as it was
    result = optimize(lambda p: p["C"] if p["model"] == "svm" else {}["own"], space, budget=12, seed=0, db=None,
                      progress=False, on_error="skip")
    errors = {h["error"] for h in result.history if h.get("failed")}
    assert errors and all(e.startswith("objective raised KeyError: 'own' at x=") and e.endswith("}") for e in errors)


def test_json_dependents_keyed_by_a_non_string_value_are_refused_with_the_pairs_form_named():
    # a JSON object's keys are strings: {"16": [...]} cannot name the value 16, and the message says what can
    record = json.loads('{"width": {"type": "choice", "values": [16, 32], "dependents": {"16": ["dropout"]}}, '
                        '"dropout": {"type": "float", "low": 0, "high": 0.5}}')
    with pytest.raises(ValueError, match=r"space\['width'\]: .*'16' is not one of the values \[16, 32\].*"
                                         r"\[value, \[names\]\] pairs.*\[\[16, \[\"dropout\"\]\]\]"):
        as_search_space(record)
    record["width"]["dependents"] = [[16, ["dropout"]]]
    assert as_search_space(record).depends_on("dropout") == ("width", (16,))


def nested_space() -> SearchSpace:
    """Choices of every encoding gating parameters two and three levels down: one-hot (three
    values), one column (two values, and an ordered three), no column (one value)."""
    return SearchSpace({
        "model": Choice(["svm", "rf", "nn"], dependents={"svm": ["kernel", "C"], "rf": ["depth"],
                                                          "nn": ["width", "act"]}),
        "kernel": Choice(["rbf", "poly"], dependents={"poly": ["degree"], "rbf": ["gamma"]}),
        "degree": Choice([2, 3, 4], ordered=True, dependents={3: ["coef"], 4: ["coef"]}),
        "coef": Float(0.0, 1.0), "gamma": Float(1e-3, 1.0, log=True), "C": Float(0.1, 10.0),
        "depth": Int(1, 8), "width": Int(8, 64),
        "act": Choice(["relu", "tanh", "gelu"], dependents={"gelu": ["approx"]}),
        "approx": Choice(["tanh"], dependents={"tanh": ["slope"]}), "slope": Float(0.0, 1.0),
        "shared": Float(0.0, 1.0)})


def per_row_inactive(space: SearchSpace, u: torch.Tensor) -> torch.Tensor:
    """The reference: each row decoded on its own, its inactive parameters' columns marked."""
    rows = u.reshape(-1, u.shape[-1]).double().numpy()
    out = np.zeros(rows.shape, dtype=bool)
    for r, row in enumerate(rows):
        active = space.active({name: space[name].decode(row[space.columns(name)]) for name in space})
        for name in space:
            out[r, space.columns(name)] = name not in active
    return torch.from_numpy(out).reshape(u.shape)


@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_inactive_columns_of_a_batch_are_those_of_each_point_decoded_on_its_own(dtype):
    space = nested_space()
    g = torch.Generator().manual_seed(0)
    u = torch.rand(6, 50, space.dim, generator=g, dtype=torch.float64)
    u[0] = space.snap(u[0])  # points of the space, then edges: faces, outside the cube, one-hot ties
    u[1, :, :] = torch.randint(0, 5, u[1].shape, generator=g).double() / 4
    u[2] = u[2] * 1.6 - 0.3
    u[3, :, space.columns("model")] = 0.5
    u = u.to(dtype)
    inactive = space.inactive_columns(u)
    assert inactive.shape == u.shape and inactive.dtype == torch.bool
    assert torch.equal(inactive, per_row_inactive(space, u))
    assert inactive[..., space.columns("slope")].any() and not inactive[..., space.columns("slope")].all()
    assert torch.equal(space.inactive_columns(u[4, 7]), inactive[4, 7])  # one point, [D]


def test_inactive_columns_refuse_a_choice_coordinate_that_is_not_finite():
    space = nested_space()
    u = space.encode({"model": "rf", "depth": 3, "shared": 0.5})
    u[space.columns("kernel")] = np.nan  # a gate, even an inactive one, is read
    with pytest.raises(ValueError, match="u must be finite"):
        space.inactive_columns(torch.as_tensor(u))


def test_only_a_choice_has_dependents():
    gated = Float(0.0, 1.0)
    gated.dependents = {0.5: ["x"]}
    with pytest.raises(TypeError, match=r"space\['g'\]: only a Choice has dependents, got a Float"):
        SearchSpace({"g": gated, "x": Float(0.0, 1.0)})
