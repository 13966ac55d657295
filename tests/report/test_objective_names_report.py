"""`npbandit report` on runs of named objectives (``optimize(minimize={"cost": True, ...})``, the
names in ``env_params["objective_names"]``): each objective shown by its name where the report
shows objectives, and named objectives a problem apart from the same directions by position."""

import numpy as np

from npbandit import optimize
from npbandit.report import report_text
from npbandit.report.curves import panels
from npbandit.report.grouping import bo_groups
from npbandit.storage import list_runs


def two(x):
    x = np.asarray(x, dtype=np.float64)
    return float((x**2).sum()), float(1 - ((x - 1) ** 2).sum())


def log(db, minimize, seed=0):
    optimize(two, [[0, 0], [1, 1]], surrogate="random", budget=5, seed=seed, db=db, progress=False,
             minimize=minimize, name="two")


def test_the_report_shows_each_objective_by_its_name(tmp_path):
    db = str(tmp_path / "runs.db")
    log(db, {"cost": True, "accuracy": False})
    log(db, {"cost": True, "accuracy": False}, seed=1)
    text = report_text(db)
    assert "two  d=2  [0, 1]^2  minimise cost, maximise accuracy  budget 5" in text.splitlines()
    assert any(line.startswith("  reference point: cost=") and ", accuracy=" in line for line in text.splitlines())
    assert "  two d=2 cost min,accuracy max  " in text  # the runs list
    (panel,) = panels(db)
    title = " ".join(panel.title.split())  # the title is wrapped to the panel's width
    assert "minimise cost, maximise accuracy" in title and "reference cost=" in title and ", accuracy=" in title


def test_named_objectives_are_a_problem_apart_from_the_same_directions_by_position(tmp_path):
    db = str(tmp_path / "runs.db")
    log(db, {"cost": True, "accuracy": False})
    log(db, [True, False])
    log(db, {"f0": True, "f1": False})  # the positional names given: the list's problem
    groups = bo_groups(list_runs(db))
    assert sorted(p.direction() for p in groups) == ["minimise cost, maximise accuracy", "minimise f0, maximise f1"]
    assert sorted(len(runs) for runs in groups.values()) == [1, 2]
    text = report_text(db)
    assert "  two d=2 min,max  " in text and "reference point: f0=" in text  # as a list's runs were shown
