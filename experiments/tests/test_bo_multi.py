"""experiments/benchmarks/bo_multi.py: the hypervolume arithmetic on cases worked by hand, the
recorder's hypervolume after each trial, the BoTorch peer's budget and seed, and a tiny run of
the harness end to end (stored, resumed, tabulated)."""

import math
import os
import subprocess
import sys

import pytest

from npbandit.storage import list_runs

from .helpers import LAB, ROOT, load_benchmark

pytestmark = pytest.mark.lab


@pytest.fixture(scope="module")
def bench():
    return load_benchmark("bo_multi")


def test_the_hypervolume_of_points_worked_by_hand(bench):
    hv = bench.hypervolume
    # two points of the unit square below the reference (1, 1): two 0.5 x 1 strips that share a 0.5 x 0.5 corner
    assert hv([[0.0, 0.5], [0.5, 0.0]], [1.0, 1.0]) == pytest.approx(0.75, abs=1e-12)
    # a dominated point, one on the reference's edge and one beyond it add nothing
    more = [[0.0, 0.5], [0.5, 0.0], [0.6, 0.6], [1.0, 0.0], [-1.0, 2.0]]
    assert hv(more, [1.0, 1.0]) == pytest.approx(0.75, abs=1e-12)
    assert hv([[0.25, 0.25]], [1.0, 2.0]) == pytest.approx(0.75 * 1.75, abs=1e-12)
    assert hv([[0.0, 0.0, 0.0]], [1.0, 2.0, 3.0]) == pytest.approx(6.0, abs=1e-12)
    assert hv([], [1.0, 1.0]) == 0.0 and hv([[2.0, 2.0]], [1.0, 1.0]) == 0.0
    with pytest.raises(ValueError, match="points must be rows of 2 objectives"):
        hv([[0.0, 0.0, 0.0]], [1.0, 1.0])
    with pytest.raises(ValueError, match="ref_point"):
        hv([[0.0]], [1.0])
    with pytest.raises(ValueError, match="points must be finite"):
        hv([[math.nan, 0.0]], [1.0, 1.0])


def test_every_problem_is_botorchs_with_its_reference_point_and_maximum(bench):
    problems = bench.all_problems()
    assert [lab for lab, p in problems.items() if p.group == bench.CHOOSING_GROUP] == [
        "branin-currin", "dtlz2-d4m2", "gmm-m4", "dtlz4-d6m4"]
    assert len(problems) == 11 and all(p.dim <= 7 and p.max_hv > 0 for p in problems.values())
    assert (problems["dtlz4-d6m4"].dim, problems["dtlz4-d6m4"].num_objectives) == (6, 4)
    # GMM states no maximum for four objectives: the grid's stated one is at least a coarser grid's hypervolume
    gmm = problems["gmm-m4"]
    grid = [[a / 99, b / 99] for a in range(100) for b in range(100)]
    coarse = bench.hypervolume([gmm({"x0": a, "x1": b}) for a, b in grid], gmm.ref_point)
    assert gmm.num_objectives == 4 and 0.9 * gmm.max_hv < coarse < gmm.max_hv
    assert (problems["dtlz2-d6m3"].dim, problems["dtlz2-d6m3"].num_objectives) == (6, 3)
    assert problems["car-side-impact"].num_objectives == 4
    for p in problems.values():
        centre = {q.name: (q.low + q.high) / 2 for q in p.space}
        values = p(centre)
        assert len(values) == len(p.ref_point) == p.num_objectives and all(map(math.isfinite, values))
    assert bench.expand(["mo-choosing", "zdt1-d6"]) == ["zdt1-d6", "branin-currin", "dtlz2-d4m2", "gmm-m4",
                                                        "dtlz4-d6m4"]
    with pytest.raises(ValueError, match="unknown"):
        bench.expand(["zdt9"])


def test_the_recorder_keeps_the_hypervolume_of_every_trial_so_far(bench):
    prob = bench.all_problems()["branin-currin"]
    record = bench.Recorder(prob, 4)
    points = [{"x0": 0.1, "x1": 0.9}, {"x0": 0.5, "x1": 0.5}, {"x0": 0.9, "x1": 0.1}, {"x0": 0.5, "x1": 0.5}]
    for params in points:
        record(params)
    hvs = [row["best_value"] for row in record.rows]
    for n, row in enumerate(record.rows, start=1):
        assert row["best_value"] == pytest.approx(bench.hypervolume(record.points[:n], prob.ref_point), abs=1e-12)
        assert row["regret"] == pytest.approx(prob.max_hv - row["best_value"], abs=1e-12)
    assert hvs == sorted(hvs) and hvs[3] == hvs[2]  # a repeated point adds nothing
    with pytest.raises(RuntimeError, match="budget of 4"):
        record(points[0])


def test_the_botorch_peer_spends_its_budget_inside_the_box_and_repeats_with_its_seed(bench, keep_threads):
    pytest.importorskip("botorch")
    methods = sys.modules["bo_multi_methods"]
    prob = bench.all_problems()["branin-currin"]
    trials = 2 * (prob.dim + 1) + 2  # two proposals by the model

    def trace():
        seen = []

        def evaluate(params):
            seen.append(params)
            return prob(params)
        return seen, methods.run("botorch", prob, 0, trials, evaluate)

    seen, facts = trace()
    assert len(seen) == trials and facts["n_init"] == 2 * (prob.dim + 1)
    assert all(q.low <= params[q.name] <= q.high for params in seen for q in prob.space)
    assert trace()[0] == seen


def test_the_optimize_row_spends_its_budget_inside_the_box_and_repeats_with_its_seed(bench, keep_threads):
    methods = sys.modules["bo_multi_methods"]
    prob = bench.all_problems()["branin-currin"]
    trials = 2 * prob.dim + 1 + 2  # optimize's design, then two proposals by the NP

    def trace():
        seen = []

        def evaluate(params):
            seen.append(dict(params))
            return prob(params)
        return seen, methods.run("np-optimize", prob, 0, trials, evaluate)

    seen, facts = trace()
    assert len(seen) == trials and 1 <= facts["front"] <= trials
    assert all(q.low <= params[q.name] <= q.high for params in seen for q in prob.space)
    assert trace()[0] == seen


def test_a_tiny_run_is_stored_resumed_and_tabulated(bench, tmp_path, capsys):
    """The script as a user runs it (its pool worker takes the runs by the script's module name),
    then again in this process: nothing left to run, the table from the stored runs."""
    pytest.importorskip("optuna")
    db = str(tmp_path / "multi.db")
    args = ["--problems", "branin-currin", "dh1-d5", "--methods", "random", "np-sampler", "--seeds", "1",
            "--trials", "6", "--db", db, "--no-write"]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(LAB / "benchmarks" / "bo_multi.py"), *args], capture_output=True,
                          text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "0 runs already" in done.stdout and "4 to go" in done.stdout
    runs, notes, _ = bench.collect(db, 6)
    assert set(runs) == {(lab, m) for lab in ("branin-currin", "dh1-d5") for m in ("random", "np-sampler")}
    assert not notes  # NPSampler takes a study of several objectives
    stored = list_runs(db, kind=bench.KIND)
    assert len(stored) == 4 and all("source" in r.policy_params for r in stored)  # the commit that made each run
    for (label, _), (run,) in runs.items():
        prob = bench.all_problems()[label]
        assert len(run["curve"]) == 6 and run["curve"] == sorted(run["curve"], reverse=True)
        assert run["curve"][0] <= math.log10(prob.max_hv) + 1e-12
    bench.main(args)  # resumed: nothing left to run
    text = capsys.readouterr().out
    assert "4 runs already" in text and "0 to go" in text
    assert "| branin-currin | 2 | 2 | 59.36 |" in text and "| dh1-d5 | 5 | 2 |" in text
    assert "(chooses defaults; not a result)" in text and "**mo-report**" in text
    # no trial of these seeds' 6 dominates DH1's reference point (1.1, 1.1)
    assert "dh1-d5: every run ended with the whole maximum hypervolume" in text
    assert "| np-sampler against | random |" in text and "| dh1-d5 | " in text.split("np-sampler against")[1]


def test_a_method_keeps_its_colour_on_a_panel_without_another(bench):
    """A panel that lacks a method (not run on that problem) once gave the next method the
    missing one's colour, so the legend of the first panel named the wrong curves."""
    import matplotlib.pyplot as plt

    wide = sys.modules["bo_wide"]
    cell = {"quartile_curves": [[1.0, 1.0, 1.0], [0.5, 0.5, 0.5]]}
    summary = {"a/m1": cell, "a/m2": cell, "a/m3": cell, "b/m1": cell, "b/m3": cell}
    fig = wide.curves_figure(summary, ["a", "b"], ["m1", "m2", "m3"], lambda lab: "gap", lambda lab: False)
    try:
        colours = [{line.get_label(): line.get_color() for line in ax.get_lines()} for ax in fig.axes[:2]]
    finally:
        plt.close(fig)
    assert colours[1] == {"m1": colours[0]["m1"], "m3": colours[0]["m3"]} and colours[0]["m2"] != colours[0]["m3"]
