"""Optimizer.ask(fixed=...): one trial with some parameters held at given values, the rest proposed."""

import numpy as np
import pytest
import torch
from helpers import BOUNDS, drive, sphere, tiny_checkpoint

from npbandit import Optimizer
from npbandit.acquisition.pinned import Pinned, PinnedAcquisition
from npbandit.acquisition.proposal import propose
from npbandit.space import Choice, Float, Int

SPACE = {"lr": Float(1e-4, 1e-1, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh", "gelu"]),
         "drop": Float(0.0, 0.5)}


def tuned(p):
    return (np.log10(p["lr"]) + 2) ** 2 + (p["layers"] - 2) ** 2 + (p["act"] != "relu") + p["drop"]


def asked(opt, objective, fixed_every=2, fixed=None):
    """Drive ``opt`` to its end, every ``fixed_every``-th trial asked with ``fixed``; the trials."""
    trials = []
    while opt.status != "completed":
        trial = opt.ask(fixed=fixed if len(trials) % fixed_every == 0 else None)
        opt.tell(trial, objective(trial.x))
        trials.append(trial)
    return trials


@pytest.mark.parametrize("surrogate", ["gp", "random", "tiny-np"])
def test_fixed_values_come_back_exactly_in_the_design_and_after_it(tmp_path, surrogate):
    surrogate = str(tiny_checkpoint(tmp_path, "cmanp", "bo")) if surrogate == "tiny-np" else surrogate
    opt = Optimizer(BOUNDS, surrogate=surrogate, budget=10, n_init=3, seed=0, db=None)
    value = 0.1 + 0.2  # not a number the cube's arithmetic gives back exactly
    trials = asked(opt, sphere, fixed={"x1": value})
    for trial in trials[::2]:
        assert trial.x[1] == value and trial.fixed == {"x1": value}
        assert -1.0 <= trial.x[0] <= 1.0
    assert all(t.fixed == {} for t in trials[1::2])
    assert [h["x"][0] for h in opt.history[::2]] == [t.x[0] for t in trials[::2]]


def test_a_space_s_fixed_values_come_back_exactly_and_the_others_are_its_values():
    opt = Optimizer(space=SPACE, surrogate="gp", budget=12, n_init=4, seed=1, db=None)
    fixed = {"act": "gelu", "lr": 0.003, "layers": 3.0}  # a whole float is the int
    trials = asked(opt, tuned, fixed=fixed)
    for trial in trials[::2]:
        assert {k: trial.x[k] for k in fixed} == {"act": "gelu", "lr": 0.003, "layers": 3}
        assert isinstance(trial.x["layers"], int) and 0.0 <= trial.x["drop"] <= 0.5
        assert trial.fixed == {"act": "gelu", "lr": 0.003, "layers": 3}


def test_a_fixed_design_trial_is_the_next_design_point_with_the_values_set():
    free = Optimizer(BOUNDS, surrogate="gp", budget=6, seed=4, db=None).ask()
    fixed = Optimizer(BOUNDS, surrogate="gp", budget=6, seed=4, db=None).ask(fixed={"x0": -0.5})
    assert fixed.x[0] == -0.5 and fixed.x[1] == free.x[1]


def test_after_the_design_the_free_parameters_are_proposed_by_the_model_not_drawn():
    # the same run as a Sobol search would make, and the proposal is not the Sobol point
    bo = Optimizer(BOUNDS, surrogate="gp", budget=8, n_init=5, seed=2, db=None)
    sobol = Optimizer(BOUNDS, surrogate="random", budget=8, seed=2, db=None)
    for _ in range(5):
        for opt in (bo, sobol):
            trial = opt.ask()
            opt.tell(trial, sphere(trial.x))
    proposed, drawn = bo.ask(fixed={"x1": 1.2}), sobol.ask(fixed={"x1": 1.2})
    assert proposed.x[1] == drawn.x[1] == 1.2 and abs(proposed.x[0] - drawn.x[0]) > 1e-3


def test_the_proposal_maximises_the_acquisition_over_the_free_columns_with_the_pinned_ones_set():
    from botorch.acquisition import LogExpectedImprovement
    from botorch.models import SingleTaskGP

    X = torch.rand(12, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    Y = -((X - torch.tensor([0.3, 0.7], dtype=torch.float64)) ** 2).sum(-1, keepdim=True)
    model = SingleTaskGP(X, Y)
    pinned = Pinned(torch.tensor([1]), torch.tensor([0.1], dtype=torch.float64))
    point = propose(model, "logei", dim=2, best_f=Y.max(), seed=0, pinned=pinned)
    assert point[1] == 0.1
    acq = LogExpectedImprovement(model, best_f=Y.max())
    grid = torch.stack([torch.linspace(0, 1, 401, dtype=torch.float64), torch.full((401,), 0.1,
                                                                                    dtype=torch.float64)], -1)
    with torch.no_grad():
        best_on_slice = acq(grid[:, None]).max()
        at_point = acq(torch.as_tensor(point)[None, None])[0]
    assert at_point >= best_on_slice - 1e-3  # the slice's maximum, to the grid's resolution
    wrapped = PinnedAcquisition(acq, pinned)
    with torch.no_grad():
        assert torch.equal(wrapped(X[:, None]), acq(pinned.apply(X)[:, None]))


def test_a_fixed_value_outside_the_trust_region_is_held_and_the_others_stay_in_the_cube(tmp_path):
    ckpt = str(tiny_checkpoint(tmp_path, "cmanp", "bo"))
    opt = Optimizer(BOUNDS, surrogate=ckpt, budget=16, n_init=4, seed=0, db=None, trust_region=True)
    drive(opt, sphere, 14)  # the region has shrunk around the incumbent near (0.3, 1.2)
    trial = opt.ask(fixed={"x0": -1.0})  # the box's far face
    assert trial.x[0] == -1.0 and 0.0 <= trial.x[1] <= 2.0
    opt.tell(trial, sphere(trial.x))
    assert opt.ask().x[0] != -1.0  # the next trial is free again


def test_the_same_seed_and_asks_give_the_same_points():
    def run():
        opt = Optimizer(space=SPACE, surrogate="gp", budget=8, n_init=4, seed=5, db=None)  # model: 4-7, 6 fixed
        return [t.x for t in asked(opt, tuned, fixed_every=3, fixed={"act": "tanh", "drop": 0.25})]

    assert run() == run()


@pytest.mark.parametrize("fixed, error, match", [
    ({"x2": 0.5}, ValueError, r"fixed: unknown parameter 'x2'; the parameters are \['x0', 'x1'\]"),
    ({"x0": 1.5}, ValueError, r"fixed\['x0'\]: .*1\.5"),
    ({"x1": "high"}, TypeError, r"fixed\['x1'\]: value must be a finite real number"),
    ([("x0", 0.5)], TypeError, "fixed must be a mapping of parameter names to values, got list"),
    ({0: 0.5}, ValueError, "fixed: unknown parameter 0"),
])
def test_bad_fixed_values_are_refused_naming_fixed_and_nothing_is_asked(fixed, error, match):
    opt = Optimizer(BOUNDS, surrogate="gp", budget=4, n_init=2, seed=0, db=None)
    with pytest.raises(error, match=match):
        opt.ask(fixed=fixed)
    assert opt.status == "new" and opt.ask().number == 0


def test_a_space_s_values_are_checked_as_its_parameters_check_them():
    opt = Optimizer(space=SPACE, surrogate="gp", budget=4, n_init=2, seed=0, db=None)
    with pytest.raises(ValueError, match=r"fixed\['act'\]: .*'selu'"):
        opt.ask(fixed={"act": "selu"})
    with pytest.raises(ValueError, match=r"fixed\['layers'\]"):
        opt.ask(fixed={"layers": 5})


def test_unsupported_combinations_are_refused_naming_them(tmp_path):
    conditional = {"model": Choice(["svm", "forest"], dependents={"svm": ["C"], "forest": ["trees"]}),
                   "C": Float(0.01, 10.0), "trees": Int(10, 100), "scale": Float(0.0, 1.0)}
    with pytest.raises(ValueError, match="conditional space searched by branch; give branches=False"):
        Optimizer(space=conditional, surrogate="gp", budget=4, n_init=2, db=None).ask(fixed={"scale": 0.5})
    flat = Optimizer(space=conditional, surrogate="gp", budget=4, n_init=2, db=None, branches=False)
    for name, value in (("C", 1.0), ("model", "svm")):
        with pytest.raises(ValueError, match=rf"fixed\['{name}'\]: a parameter of a conditional space's choices"):
            flat.ask(fixed={name: value})
    assert flat.ask(fixed={"scale": 0.5}).x["scale"] == 0.5  # one no choice lists, with one model
    linear = Optimizer(BOUNDS, surrogate="gp", budget=4, n_init=2, db=None, parameter_constraints=["x0 + x1 <= 2"])
    with pytest.raises(ValueError, match=r"fixed \['x1'\] with parameter_constraints on them is not supported"):
        linear.ask(fixed={"x1": 1.0})
    wide = Optimizer([[0.0] * 8, [1.0] * 8], surrogate=str(tiny_checkpoint(tmp_path, "cmanp", "bo")), budget=4,
                     n_init=2, db=None)
    with pytest.raises(ValueError, match=r"not supported with a subspace search \(8 columns for a model of 6\)"):
        wide.ask(fixed={"x0": 0.5})


def test_linear_constraints_on_other_parameters_leave_a_fixed_one_free_to_be_fixed():
    space = {"a": Float(0.0, 1.0), "b": Float(0.0, 1.0), "c": Float(0.0, 1.0)}
    opt = Optimizer(space=space, surrogate="gp", budget=9, n_init=4, seed=0, db=None,
                    parameter_constraints=["a + b <= 0.5"])
    trials = asked(opt, lambda p: p["a"] - p["b"] + p["c"], fixed={"c": 0.75})
    assert all(t.x["c"] == 0.75 and t.x["a"] + t.x["b"] <= 0.5 for t in trials[::2])


@pytest.mark.parametrize("settings", [{"minimize": [True, False]}, {"acquisition": "qlognei"}])
def test_several_objectives_and_qlognei_hold_fixed_values(settings):
    several = isinstance(settings.get("minimize"), list)
    opt = Optimizer(BOUNDS, surrogate="gp", budget=7, n_init=3, seed=0, db=None, **settings)  # 4 and 6 fixed
    trials = asked(opt, (lambda x: [sphere(x), float(x[0])]) if several else sphere, fixed={"x0": 0.25})
    assert all(t.x[0] == 0.25 for t in trials[::2])
