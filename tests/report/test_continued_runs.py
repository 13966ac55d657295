"""`npbandit report` on runs that continued another (``optimize(initial=RUN_ID)``,
``--initial-from``): the runs list says which run and how many given points, and the figure
counts a continued run's evaluations from its given points, starting at their best with a
marker."""

import math

import numpy as np

from npbandit import optimize
from npbandit.report import regret_figure, report_text
from npbandit.report.curves import panels
from npbandit.report.figures import GIVEN_LABEL
from npbandit.storage import run_steps

BOX = [[-1.0, -1.0], [1.0, 1.0]]


def _sphere(x):
    return float(np.sum(np.asarray(x) ** 2))


def _run(db, budget, initial=None):
    return optimize(_sphere, BOX, surrogate="random", budget=budget, seed=0, db=db, progress=False,
                    optimal_value=0.0, name="sphere", initial=initial)


def test_the_runs_list_says_which_run_a_run_continues_and_how_many_points_it_was_given(tmp_path):
    db = str(tmp_path / "runs.db")
    first = _run(db, 3)
    _run(db, 2, initial=first.run_id)
    _run(db, 2, initial=[([0.5, 0.5], 0.5)])  # pairs: no run to name
    lines = {line.split()[0]: line for line in report_text(db).splitlines()[4:7]}
    assert lines["1"].endswith("completed")
    assert lines["2"].endswith("completed  (continues run 1, 3 given points)")
    assert lines["3"].endswith("completed  (1 given point)")


def test_a_continued_run_s_curve_starts_at_its_given_points_best_with_a_marker(tmp_path):
    db = str(tmp_path / "runs.db")
    first = _run(db, 3)
    second = _run(db, 2, initial=first.run_id)
    _run(db, 2, initial=second.run_id)
    (panel,) = panels(db)
    by_given = {line.given: line for line in panel.lines}
    assert sorted(by_given) == [0, 3, 5]
    given_best = min(s["value"] for s in run_steps(db, first.run_id))
    curve = by_given[3].curves[0]  # regret against the optimum 0: the best value found so far
    assert curve.shape == (3 + 2,) and np.isnan(curve[:2]).all() and curve[2] == given_best
    own = [s["value"] for s in run_steps(db, second.run_id)]
    assert curve[3:].tolist() == [min(given_best, own[0]), min(given_best, *own)]  # the given ones counted
    assert by_given[5].curves[0][4] == curve[-1]  # run 3 starts where run 2 left the best
    fig = regret_figure(db)
    (ax,) = [ax for ax in fig.axes if ax.get_visible()]
    markers = [line for line in ax.get_lines() if line.get_marker() == "o"]
    assert sorted(m.get_xdata()[0] for m in markers) == [3, 5]
    assert math.isclose(markers[0].get_ydata()[0] if markers[0].get_xdata()[0] == 3 else markers[1].get_ydata()[0],
                        given_best)
    (legend,) = fig.legends
    assert GIVEN_LABEL in [t.get_text() for t in legend.get_texts()]
