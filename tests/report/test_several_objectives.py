"""`npbandit report` on runs of several objectives (``env_params["minimize"]`` a list, each
step's objective values in ``values``): a problem of its own, named by each objective's
direction, summarised and drawn by the hypervolume of each run's feasible Pareto front against
one reference point for every run of the problem, never by a best value.

The runs are logged by hand as ``optimize`` records them (tests/helpers.log_objectives_run).
Objective 0 is minimised and objective 1 maximised unless a test says otherwise."""

import subprocess
import sys
from dataclasses import replace

import numpy as np
import pytest
from helpers import log_objectives_run

from npbandit.report import bo_summary, regret_figures, report_text
from npbandit.report.curves import panels
from npbandit.report.grouping import Problem, bo_groups, problem, problem_key
from npbandit.report.hypervolume import group_reference, hypervolume
from npbandit.storage import RunLogger, list_runs, run_steps

#: two runs of one problem: the front of all their feasible evaluations is (0, 0), (0.5, 1),
#: (1, 2), (1.5, 2.5), (2, 4), its nadir (2, 0); the evaluations range over 3 in f0 (0 to 3)
#: and 4 in f1 (0 to 4), so the reference point is (2 + 0.3, 0 - 0.4)
FIRST = [[1.0, 2.0], None, [0.5, 1.0], [2.0, 4.0]]
SECOND = [[1.0, 1.0], [0.0, 0.0], [3.0, 3.0], [1.5, 2.5]]
REFERENCE = (2.3, -0.4)


def _area(points, reference=REFERENCE):
    """The area a front of (minimised f0, maximised f1) points dominates above ``reference``,
    summed rectangle by rectangle, from the point best in f0 to the one best in f1."""
    r0, r1 = reference
    area, height = 0.0, r1
    for f0, f1 in sorted(points):
        if f0 < r0 and f1 > height:
            area += (r0 - f0) * (f1 - height)
            height = f1
    return area


def test_a_run_of_several_objectives_is_a_problem_named_by_each_objective_s_direction(tmp_path):
    db = str(tmp_path / "runs.db")
    log_objectives_run(db, FIRST)
    log_objectives_run(db, FIRST, minimize=(False, True))
    key = problem_key(list_runs(db)[0])
    assert key[3] == (True, False)
    solved = problem(key)
    assert solved.objectives == 2 and solved.regret(1.0) is None
    assert solved.label() == "pair  d=2  [0, 1]^2  minimise f0, maximise f1"
    assert [p.direction() for p in bo_groups(list_runs(db))] == ["maximise f0, minimise f1",
                                                                 "minimise f0, maximise f1"]
    # one objective keeps its plain direction; a caller's own list of something else is unknown
    assert Problem("f", 1, None, True).objectives == 1 and Problem("f", 1, None, True).direction() == "minimise"
    run = list_runs(db)[0]
    assert problem_key(replace(run, env_params={**run.env_params, "minimize": ["min", "max"]}))[3] is None
    lines = report_text(db).splitlines()
    assert "  pair d=2 min,max  " in lines[4] and "  pair d=2 max,min  " in lines[5]  # the runs list


def test_the_reference_point_is_the_group_front_s_nadir_moved_a_tenth_of_each_range():
    solved = Problem("pair", 2, None, (True, False))
    steps = [[{"t": t, "failed": v is None, "values": v} for t, v in enumerate(run)] for run in (FIRST, SECOND)]
    assert group_reference(steps, solved) == pytest.approx(REFERENCE, rel=1e-12)
    # maximising f0 and minimising f1 the front is (0, 0), (1, 1), (1.5, 2.5), (3, 3), its nadir (0, 3)
    assert group_reference(steps, Problem("pair", 2, None, (False, True))) == pytest.approx((-0.3, 3.4), rel=1e-12)
    # no range in an objective: moved by a tenth of one of its units (whatever its value: a shift moves it alike)
    flat = [[{"t": 0, "failed": False, "values": [1.0, -5.0]}, {"t": 1, "failed": False, "values": [2.0, -5.0]}]]
    # the front is (1, -5) alone (it dominates (2, -5)); f0 ranges over 1 among the evaluations
    assert group_reference(flat, solved) == pytest.approx((1.1, -5.1), rel=1e-12)
    zero = [[{"t": 0, "failed": False, "values": [1.0, 0.0]}, {"t": 1, "failed": False, "values": [3.0, 0.0]}]]
    assert group_reference(zero, solved) == pytest.approx((1.2, -0.1), rel=1e-12)
    assert group_reference([[{"t": 0, "failed": True, "values": None}]], solved) is None


def test_each_run_s_hypervolume_is_against_the_one_reference_of_its_problem(tmp_path):
    db = str(tmp_path / "runs.db")
    first, second = log_objectives_run(db, FIRST, seed=0), log_objectives_run(db, SECOND, seed=1)
    (row,) = bo_summary(db)
    assert row["reference"] == pytest.approx(REFERENCE, rel=1e-12)
    volumes = [_area([(1.0, 2.0), (0.5, 1.0), (2.0, 4.0)]), _area([(1.0, 1.0), (0.0, 0.0), (3.0, 3.0), (1.5, 2.5)])]
    assert volumes == pytest.approx([4.42, 3.42], rel=1e-12)  # (1.8 x 1.4 + 1.3 x 1 + 0.3 x 2), ...
    assert row["hypervolume"] == pytest.approx(volumes, rel=1e-12)
    assert row["front"] == [3, 4]  # (3, 3) lies beyond the reference in f0: on its run's front, adding nothing
    assert (row["best"], row["simple_regret"], row["best_point"], row["recommended"]) == (None, None, None, None)
    assert (row["runs"], row["evals"], row["failed"], row["steps"], row["infeasible_runs"]) == (2, 4, 1, 8, 0)
    assert row["failures"] == [("objective raised RuntimeError: boom", 1)]
    assert hypervolume(run_steps(db, first), row["problem"], REFERENCE) == pytest.approx(volumes[0], rel=1e-12)
    assert hypervolume(run_steps(db, second), row["problem"], (0.0, 10.0)) == 0.0  # nothing dominates it


def test_the_text_shows_hypervolume_front_evaluations_failures_and_the_reference_once(tmp_path):
    db = str(tmp_path / "runs.db")
    log_objectives_run(db, FIRST, seed=0)
    log_objectives_run(db, SECOND, seed=1)
    text = report_text(db)
    assert "Black-box optimisation (" not in text  # no section of one objective, no best value
    section = text[text.index("Black-box optimisation, several objectives"):].splitlines()
    assert "hypervolume = the volume a run's Pareto front" in section[1] and "a tenth of each" in section[1]
    assert section[3:] == [
        "pair  d=2  [0, 1]^2  minimise f0, maximise f1  budget 4",
        "  reference point: f0=2.3, f1=-0.4",
        f"  {'policy':<24}  runs  {'hypervolume':>30}  {'front':>16}  evals   s/eval     failed",
        f"  {'sobol':<24}     2  {'3.92 [3.67, 4.17]':>30}  {'3.5 [3.25, 3.75]':>16}      4    0.000        1/8",
        "    1 failed: objective raised RuntimeError: boom"]


def test_constraints_count_only_feasible_evaluations(tmp_path):
    db = str(tmp_path / "runs.db")
    # the infeasible (0, 9) would dominate everything and stretch the ranges: it counts nowhere
    log_objectives_run(db, [([1.0, 1.0], [-1.0]), ([0.0, 9.0], [0.5]), ([2.0, 2.0], [0.0])], constraints="disc")
    log_objectives_run(db, [([0.0, 9.0], [1.0]), None], constraints="disc", seed=1, budget=3)
    (row,) = bo_summary(db)
    assert row["reference"] == pytest.approx((2.1, 0.9), rel=1e-12)  # front (1, 1), (2, 2); ranges 1 and 1
    assert row["hypervolume"] == pytest.approx([_area([(1.0, 1.0), (2.0, 2.0)], (2.1, 0.9)), 0.0], rel=1e-12)
    assert (row["runs"], row["feasible"], row["evaluated"], row["front"]) == (2, 2, 4, [2, 0])
    assert row["infeasible_runs"] == 1
    text = report_text(db)
    assert "pair  d=2  [0, 1]^2  minimise f0, maximise f1  subject to disc  budget 3" in text
    assert f"{'feasible':>12}  {'failed':>9}" in text and f"{'2/4':>12}  {'1/5':>9}" in text


def test_runs_without_a_feasible_point_have_an_empty_front(tmp_path):
    db = str(tmp_path / "runs.db")
    log_objectives_run(db, [([1.0, 1.0], [1.0]), ([2.0, 0.0], [-1.0])], constraints="c", seed=0)
    log_objectives_run(db, [([1.0, 1.0], [1.0]), ([0.0, 0.0], [2.0])], constraints="c", seed=1)
    (row,) = bo_summary(db)
    assert row["hypervolume"] == pytest.approx([0.1 * 0.1, 0.0], rel=1e-12) and row["front"] == [1, 0]
    assert row["infeasible_runs"] == 1
    assert "  (1 of its 2 runs found no feasible point: an empty front, hypervolume 0)" in report_text(db)
    none = str(tmp_path / "none.db")
    log_objectives_run(none, [([1.0, 1.0], [1.0])], constraints="c")
    (row,) = bo_summary(none)
    assert row["reference"] is None and row["hypervolume"] is None
    text = report_text(none)
    assert "  reference point: none (no run found a feasible point: no hypervolume)" in text
    assert f"{'-':>30}  {'0':>16}" in text
    (panel,) = panels(none)
    assert np.isnan(panel.lines[0].curves).all() and "reference none" in panel.title


def test_values_of_another_length_are_left_out_and_said(tmp_path):
    db = str(tmp_path / "runs.db")
    log_objectives_run(db, [[1.0, 1.0], [0.0, 0.0, 0.0]])
    (row,) = bo_summary(db)
    assert row["unreadable"] == 1 and row["front"] == [1]
    assert "  (1 successful evaluation(s) recorded no 2 finite objective values: left out of the fronts)" in \
        report_text(db)


def test_the_figure_draws_each_run_s_hypervolume_after_each_evaluation(tmp_path):
    db = str(tmp_path / "runs.db")
    log_objectives_run(db, FIRST, seed=0)
    log_objectives_run(db, SECOND, seed=1)
    (panel,) = panels(db)
    assert panel.quantity == "bo-hypervolume" and panel.title.endswith("reference f0=2.3, f1=-0.4")
    (line,) = panel.lines
    expected = [[_area(points) for points in ([(1.0, 2.0)], [(1.0, 2.0)], [(1.0, 2.0), (0.5, 1.0)],
                                              [(1.0, 2.0), (0.5, 1.0), (2.0, 4.0)])],
                [_area(points) for points in ([(1.0, 1.0)], [(1.0, 1.0), (0.0, 0.0)],
                                              [(1.0, 1.0), (0.0, 0.0), (3.0, 3.0)],
                                              [(1.0, 1.0), (0.0, 0.0), (3.0, 3.0), (1.5, 2.5)])]]
    np.testing.assert_allclose(line.curves, expected, rtol=1e-12)
    figures = regret_figures(db)
    assert list(figures) == ["bo-hypervolume"]
    (ax,) = [ax for ax in figures["bo-hypervolume"].axes if ax.get_visible()]
    assert "hypervolume" in figures["bo-hypervolume"].get_suptitle()
    assert ax.get_yscale() == "linear"


def test_a_continued_run_s_curve_starts_at_its_given_points_front(tmp_path):
    db = str(tmp_path / "runs.db")
    first = log_objectives_run(db, [[1.0, 1.0], [2.0, 3.0]], budget=2)
    log_objectives_run(db, [[0.0, 0.0], [3.0, 4.0]], seed=1, budget=2,
                       policy_params={"initial": 2, "initial_from": first})
    (panel,) = panels(db)
    by_given = {line.given: line for line in panel.lines}
    reference = bo_summary(db)[0]["reference"]
    assert sorted(by_given) == [0, 2]
    given = _area([(1.0, 1.0), (2.0, 3.0)], reference)
    np.testing.assert_allclose(by_given[2].curves[0], [np.nan, given, _area([(1.0, 1.0), (2.0, 3.0), (0.0, 0.0)],
                                                                            reference),
                                                       _area([(1.0, 1.0), (2.0, 3.0), (0.0, 0.0), (3.0, 4.0)],
                                                             reference)], rtol=1e-12)


def test_runs_of_one_and_of_several_objectives_are_reported_apart(tmp_path):
    from npbandit import optimize

    db = str(tmp_path / "runs.db")
    optimize(lambda x: float(np.sum(x)), [[0.0, 0.0], [1.0, 1.0]], surrogate="random", budget=3, db=db,
             progress=False, name="sum")
    one = report_text(db)
    log_objectives_run(db, FIRST)
    both = report_text(db)
    head = one.split("\n\n", 2)[2]  # past the runs list, which now lists both runs
    assert both.split("\n\n", 2)[2].startswith(head + "\n\nBlack-box optimisation, several objectives")
    assert [r["problem"].objectives for r in bo_summary(db)] == [2, 1]  # by name: pair, sum
    assert sorted(p.quantity for p in panels(db)) == ["bo-hypervolume", "bo-value"]


def test_a_report_of_one_objective_does_not_load_torch(tmp_path):
    # the hypervolume's helpers load torch and BoTorch, only for runs of several objectives
    db = str(tmp_path / "runs.db")
    logger = RunLogger(db)
    logger.start(kind="bo", env_id="npbandit/BlackBox-v0", policy="sobol",
                 env_params={"objective": "f", "dim": 1, "bounds": [[0.0], [1.0]], "minimize": True, "budget": 1})
    logger.log_step(t=0, action=[0.5], params={"x0": 0.5}, value=1.0, best_value=1.0, reward=-1.0)
    logger.finish()
    code = ("import sys\nfrom npbandit.report import report_text\nfrom npbandit.report.curves import panels\n"
            f"assert 'f  d=1' in report_text({db!r}) and panels({db!r})\n"
            "assert 'torch' not in sys.modules, 'torch loaded'")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
