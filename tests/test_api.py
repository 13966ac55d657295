"""npbandit.optimize and the optimize / bandit / report commands."""

import numpy as np
import pytest
import torch

from npbandit import optimize
from npbandit.cli import main
from npbandit.storage import list_runs, run_steps

from helpers import tiny_checkpoint

BOUNDS = [[-1.0, 0.0], [1.0, 2.0]]


def sphere(x):
    return float(((np.asarray(x) - np.array([0.3, 1.2])) ** 2).sum())


def test_optimize_with_an_np_checkpoint(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    db = str(tmp_path / "bo.db")
    result = optimize(sphere, BOUNDS, surrogate=str(card), budget=9, seed=0, db=db, progress=False)
    assert len(result.history) == 9 and result.run_id is not None
    assert np.all(result.best_x >= [-1, 0]) and np.all(result.best_x <= [1, 2])
    assert result.best_value == min(h["value"] for h in result.history) == pytest.approx(sphere(result.best_x))
    (run,) = list_runs(db)
    assert run.status == "completed" and run.surrogate == "cmanp-bo" and run.n_steps == 9
    assert [s["t"] for s in run_steps(db, run.id)] == list(range(9))


@pytest.mark.parametrize("surrogate,acquisition", [("random", "logei"), ("gp", "logei"), ("gp", "ucb")])
def test_optimize_baselines(tmp_path, surrogate, acquisition):
    result = optimize(sphere, BOUNDS, surrogate=surrogate, acquisition=acquisition, budget=8, seed=1, db=None,
                      progress=False)
    assert len(result.history) == 8 and result.run_id is None


def test_optimize_same_seed_same_initial_design(tmp_path):
    a = optimize(sphere, BOUNDS, surrogate="random", budget=5, seed=3, db=None, progress=False)
    b = optimize(sphere, BOUNDS, surrogate="gp", budget=5, seed=3, db=None, progress=False)
    assert all(np.allclose(h1["x"], h2["x"]) for h1, h2 in zip(a.history, b.history))  # 5 = 2d + 1 Sobol points


def test_optimize_thompson_and_torch_points_and_maximise(tmp_path):
    card = tiny_checkpoint(tmp_path, "cmanp", "bo")
    seen = []

    def f(x):
        seen.append(type(x))
        return float(-(x ** 2).sum())

    result = optimize(f, BOUNDS, surrogate=str(card), acquisition="thompson", budget=7, minimize=False,
                      point_type="torch", db=None, progress=False)
    assert set(seen) == {torch.Tensor} and result.best_value == max(h["value"] for h in result.history)


def test_optimize_reports_failures(tmp_path):
    def bad(x):
        return float("inf") if x[0] > 0 else sphere(x)

    with pytest.raises(Exception, match="inf"):
        optimize(bad, BOUNDS, surrogate="random", budget=10, db=None, progress=False)
    result = optimize(bad, BOUNDS, surrogate="random", budget=10, db=None, on_error="skip", progress=False)
    assert any(h["failed"] for h in result.history) and np.isfinite(result.best_value)


@pytest.mark.parametrize("kwargs,error,match", [
    ({"bounds": [[1, 0], [0, 1]]}, ValueError, "lower bound"),
    ({"bounds": [[0, 0]]}, ValueError, "2 x d"),
    ({"objective": "sphere"}, TypeError, "callable"),
    ({"surrogate": "no-such-model"}, ValueError, "surrogate"),
    ({"acquisition": "pi"}, ValueError, "acquisition"),
    ({"budget": 0}, ValueError, "budget"),
])
def test_optimize_validates_arguments(kwargs, error, match):
    args = {"objective": sphere, "bounds": BOUNDS, "db": None, "progress": False, **kwargs}
    with pytest.raises(error, match=match):
        optimize(**args)


def test_cli_optimize_bandit_report(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "6", "--db", db]) == 0
    card = tiny_checkpoint(tmp_path, "cmanp", "wheel")
    assert main(["bandit", "--policies", str(card.with_suffix("")), "uniform", "linucb", "--deltas", "0.9",
                 "--seeds", "0", "1", "--steps", "60", "--db", db]) == 0
    png = tmp_path / "regret.png"
    assert main(["report", "--db", db, "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "Wheel bandit" in out and "uniform" in out and "100.00" in out and "branin" in out
    assert png.exists() and png.stat().st_size > 1000
    assert main(["optimize", "--function", "nope", "--db", db]) == 2
    assert main(["optimize", "--objective", "math:nothing", "--bounds", "[[0],[1]]", "--db", db]) == 2
    assert main(["bandit", "--policies", "bogus", "--db", db]) == 2
