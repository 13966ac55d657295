"""Optimizer.attach: a point of the caller's own, held in flight as an asked one and told as any."""

import numpy as np
import pytest
from helpers import BOUNDS, drive, sphere

from npbandit import Optimizer
from npbandit.space import Choice, Float, Int
from npbandit.storage import list_runs, run_steps

OPTIMUM = np.array([0.3, 1.2])  # sphere's minimum, value 0


def test_an_attached_point_is_evaluated_recorded_and_learnt_from(tmp_path):
    db = str(tmp_path / "runs.db")
    opt = Optimizer(BOUNDS, surrogate="gp", budget=7, n_init=3, seed=0, db=db)
    drive(opt, sphere, 3)
    mine = opt.attach(OPTIMUM.tolist())
    assert mine.number == 3 and np.allclose(mine.x, OPTIMUM, rtol=0, atol=1e-12)  # through the unit cube
    asked = opt.ask()  # proposed with the attached point in flight
    assert [t.number for t in opt.pending] == [3, 4] and asked.x.tolist() != mine.x.tolist()
    opt.tell(mine, sphere(mine.x))
    opt.tell(asked, sphere(asked.x))
    opt.tell(opt.attach({"x0": 1.0, "x1": 2.0}), 1.0)  # a box's point by name, as a run records it
    result = opt.close()
    assert result.best_x.tolist() == mine.x.tolist() and result.best_value == sphere(mine.x)
    # the recommendation is the model's (best posterior mean among evaluated points): it saw the point
    assert result.recommended_by == "model" and result.recommended_x.tolist() == mine.x.tolist()
    steps = run_steps(db, opt.run_id)
    assert [s["t"] for s in steps] == list(range(6))
    assert steps[3]["params"] == {"x0": mine.x[0], "x1": mine.x[1]} and steps[3]["act_s"] == 0.0
    assert list_runs(db)[0].n_steps == 6


def test_a_space_takes_params_dicts_and_a_point_outside_is_refused_naming_attach():
    space = {"lr": Float(1e-4, 1e-1, log=True), "layers": Int(1, 4), "act": Choice(["relu", "tanh"])}
    opt = Optimizer(space=space, surrogate="random", budget=3, seed=0, db=None)
    trial = opt.attach({"lr": 0.01, "layers": 2, "act": "tanh"})
    assert trial.x == {"lr": pytest.approx(0.01, rel=1e-12, abs=0), "layers": 2, "act": "tanh"}
    for point, error in [({"lr": 0.5, "layers": 2, "act": "tanh"}, ValueError),
                         ({"lr": 0.01, "layers": 2}, ValueError),
                         ({"lr": 0.01, "layers": 2, "act": "gelu"}, ValueError)]:
        with pytest.raises(error, match=r"^attach\(x\): "):
            opt.attach(point)
    box = Optimizer(BOUNDS, surrogate="random", budget=2, seed=0, db=None)
    with pytest.raises(ValueError, match=r"attach\(x\): x is outside the bounds: x\[1\] = 3.0 is not in \[0.0, 2.0\]"):
        box.attach([0.0, 3.0])
    with pytest.raises(ValueError, match=r"attach\(x\): x must be a finite point of shape \[2\]"):
        box.attach([0.0, float("nan")])
    assert [t.number for t in opt.pending] == [0] and not box.pending  # nothing refused is held


def test_attached_points_count_against_the_budget():
    opt = Optimizer(BOUNDS, surrogate="random", budget=2, seed=0, db=None)
    opt.attach([0.0, 1.0])
    opt.ask()
    with pytest.raises(RuntimeError, match="budget of 2 evaluations is spent: 0 recorded and 2 in flight"):
        opt.attach([0.5, 1.0])
    for trial in opt.pending:
        opt.tell(trial, sphere(trial.x))
    assert opt.status == "completed" and len(opt.history) == 2


def test_an_attached_point_must_satisfy_the_linear_input_constraints():
    opt = Optimizer(BOUNDS, surrogate="random", budget=3, seed=0, db=None, parameter_constraints=["x0 + x1 <= 1.5"])
    with pytest.raises(ValueError, match=r"attach\(x\): the point \{'x0': 1.0, 'x1': 1.0\} violates "
                                         r"parameter_constraints \['x0 \+ x1 <= 1.5'\]"):
        opt.attach([1.0, 1.0])
    assert not opt.pending
    assert opt.attach([0.5, 1.0]).number == 0  # on the constraint's face: inside
