"""optimize(parameter_constraints=...): every evaluated point inside, recorded, checked on warm starts, CLI."""

import json

import numpy as np
import pytest
from helpers import BOUNDS, sphere, tiny_checkpoint

from npbandit import optimize
from npbandit.acquisition.optimizers import CandidateSearch
from npbandit.cli import main
from npbandit.space import Float, Int
from npbandit.storage import list_runs

# BOUNDS is [-1, 1] x [0, 2]; the sphere's minimum (0.3, 1.2) lies outside the first constraint
LINEAR = ["x0 + x1 <= 1", "x1 >= 2*x0 - 0.5"]


def inside(x) -> bool:
    return x[0] + x[1] <= 1 and x[1] >= 2 * x[0] - 0.5


@pytest.mark.parametrize("model,settings", [("tnpd", {}), ("cmanp", {"trust_region": False}),
                                            ("cmanp", {"acquisition": "thompson"}),
                                            ("cmanp", {"acquisition": "qlognei", "trust_region": False})])
def test_every_evaluated_point_satisfies_the_linear_constraints(tmp_path, model, settings):
    card = tiny_checkpoint(tmp_path, model, "bo")
    result = optimize(sphere, BOUNDS, surrogate=str(card), budget=10, seed=0, db=None, progress=False,
                      parameter_constraints=LINEAR, **settings)
    assert len(result.history) == 10 and all(inside(h["x"]) for h in result.history)


def test_sobol_search_and_a_mixed_space_keep_to_the_constraints_and_the_run_records_them(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    random = optimize(sphere, BOUNDS, surrogate="random", budget=12, seed=1, db=db, progress=False,
                      parameter_constraints=LINEAR)
    assert all(inside(h["x"]) for h in random.history)
    space = {"a": Float(0.0, 1.0), "n": Int(1, 3), "b": Float(0.0, 2.0)}
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    mixed = optimize(lambda p: (p["a"] - 0.9) ** 2 + p["n"] + (p["b"] - 1.5) ** 2, space, surrogate=str(card),
                     budget=10, seed=0, db=db, progress=False, parameter_constraints=["a + b <= 1.2"],
                     acq_optimizer=CandidateSearch(raw_samples=64, rounds=2))
    assert all(h["x"]["a"] + h["x"]["b"] <= 1.2 for h in mixed.history)
    runs = {run.id: run for run in list_runs(db)}
    assert runs[random.run_id].env_params["parameter_constraints"] == LINEAR
    assert runs[mixed.run_id].env_params["parameter_constraints"] == ["a + b <= 1.2"]
    assert main(["report", "--db", db]) == 0
    assert "where x0 + x1 <= 1, x1 >= 2*x0 - 0.5" in capsys.readouterr().out


def test_warm_starts_must_satisfy_the_constraints_and_continue_a_run_of_the_same_ones(tmp_path):
    with pytest.raises(ValueError, match=r"initial\[1\]: the point .* violates parameter_constraints "
                                         r"\['x0 \+ x1 <= 1'\]"):
        optimize(sphere, BOUNDS, surrogate="random", budget=3, db=None, progress=False, parameter_constraints=LINEAR,
                 initial=[(np.array([0.0, 0.5]), 1.0), (np.array([0.5, 1.5]), 2.0)])
    db = str(tmp_path / "runs.db")
    first = optimize(sphere, BOUNDS, surrogate="random", budget=3, seed=0, db=db, progress=False,
                     parameter_constraints=LINEAR)
    more = optimize(sphere, BOUNDS, surrogate="random", budget=3, seed=0, db=db, progress=False,
                    parameter_constraints=LINEAR, initial=first.run_id)
    assert all(inside(h["x"]) for h in more.history)
    rewritten = ["2*x0 - x1 <= 0.5", "-x0-x1 >= -1", "x0 + x1 <= 1"]  # the same rows, written otherwise
    again = optimize(sphere, BOUNDS, surrogate="random", budget=2, seed=0, db=db, progress=False,
                     parameter_constraints=rewritten, initial=more.run_id)
    assert len(again.history) == 2
    with pytest.raises(ValueError, match=r"that run's parameter_constraints are \['x0 \+ x1 <= 1', .*this one's "
                                         r"\['x0 <= 0.5'\]"):
        optimize(sphere, BOUNDS, surrogate="random", budget=3, db=db, progress=False,
                 parameter_constraints=["x0 <= 0.5"], initial=first.run_id)


def test_combinations_not_supported_are_refused_before_anything_is_evaluated(tmp_path):
    def never(x):
        raise AssertionError("evaluated")

    class OwnOptimizer:
        def maximise(self, acq, bounds, seed):
            raise AssertionError("called")

        def params(self):
            return {"name": "own"}

    with pytest.raises(ValueError, match="no point of the space's box"):
        optimize(never, BOUNDS, surrogate="random", budget=3, db=None, progress=False,
                 parameter_constraints=["x0 + x1 <= -5"])
    with pytest.raises(ValueError, match="one objective only"):
        optimize(never, BOUNDS, surrogate="random", budget=3, db=None, progress=False, minimize=[True, True],
                 parameter_constraints=LINEAR)
    with pytest.raises(ValueError, match="takes the keyword polytope"):
        optimize(never, BOUNDS, surrogate="gp", budget=3, db=None, progress=False, acq_optimizer=OwnOptimizer(),
                 parameter_constraints=LINEAR)
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")  # 6 inputs: a 7-d box is searched in a subspace
    with pytest.raises(ValueError, match="not supported with a subspace"):
        optimize(never, [[0.0] * 7, [1.0] * 7], surrogate=str(card), budget=3, db=None, progress=False,
                 parameter_constraints=["x0 + x6 <= 1"])


def test_cli_takes_parameter_constraints_by_flag_and_in_a_space_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "lincon_objective.py").write_text("def f(p):\n    return (p['lr'] - 0.05) ** 2 + p['momentum']\n")
    space = {"lr": {"type": "float", "low": 0.0, "high": 0.1}, "momentum": {"type": "float", "low": 0.0, "high": 0.99},
             "parameter_constraints": ["lr <= 0.1 * momentum"]}
    (tmp_path / "space.json").write_text(json.dumps(space))
    db = str(tmp_path / "cli.db")
    assert main(["optimize", "--objective", "lincon_objective:f", "--space", "space.json", "--surrogate", "random",
                 "--budget", "6", "--db", db]) == 0
    assert main(["optimize", "--function", "branin", "--parameter-constraint", "x0 + x1 <= 5", "--surrogate", "random",
                 "--budget", "4", "--db", db]) == 0
    assert main(["optimize", "--objective", "lincon_objective:f", "--space", "space.json", "--parameter-constraint",
                 "lr <= 0.05", "--budget", "2", "--db", db]) != 0
    assert "give them in one place" in capsys.readouterr().err
    assert main(["optimize", "--function", "branin", "--parameter-constraint", "x0 <= 3", "--parameter-constraint",
                 "x9 <= 5", "--budget", "2", "--db", db]) != 0  # the refusal names the flag as typed
    assert "--parameter-constraint value 2: unknown parameter 'x9'" in capsys.readouterr().err
    spaced, boxed = sorted(list_runs(db), key=lambda run: run.id)
    assert spaced.env_params["parameter_constraints"] == ["lr <= 0.1 * momentum"]
    assert boxed.env_params["parameter_constraints"] == ["x0 + x1 <= 5"]


def test_ask_and_tell_hands_out_points_inside_the_constraints(tmp_path):
    from npbandit import Optimizer

    opt = Optimizer(BOUNDS, surrogate=str(tiny_checkpoint(tmp_path, "cmanp", "bo")), budget=7, n_init=3, db=None,
                    parameter_constraints=LINEAR)
    for _ in range(7):
        trial = opt.ask()
        assert inside(trial.x)
        opt.tell(trial, sphere(trial.x))


def test_a_simplex_of_many_inputs_too_thin_for_rejection_is_searched_inside():
    # x0 + ... + x7 <= 1 keeps 1/8! (about 2.5e-5) of the cube: Sobol rejection finds no point in its
    # draws, so the design draws by hit-and-run; every point handed out is inside
    d = 8
    simplex = [" + ".join(f"x{i}" for i in range(d)) + " <= 1"]
    result = optimize(lambda x: float(((x - 0.1) ** 2).sum()), [[0.0] * d, [1.0] * d], surrogate="gp", budget=6,
                      n_init=4, seed=0, db=None, progress=False, parameter_constraints=simplex)
    X = np.array([h["x"] for h in result.history])
    assert len(X) == 6 and (X.sum(axis=1) <= 1.0).all() and len({tuple(x) for x in X}) == 6
