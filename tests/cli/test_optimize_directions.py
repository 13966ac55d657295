"""``npbandit optimize --directions``: an objective of several values -- what is refused and
how, an objective that returns several numbers without it, what a run prints (its Pareto
front), and ``--initial-from`` of such a run."""

import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import npbandit.api
import npbandit.warm_start
from npbandit.cli import main
from npbandit.optimize_result import ParetoResult
from npbandit.storage import list_runs, run_steps

BOX = ["--bounds", "[[0, 0], [1, 1]]"]
RANDOM = ["--surrogate", "random"]


@pytest.fixture
def two_costs(tmp_path, monkeypatch):
    """A module ``two_costs`` on the import path: ``f`` returns the squared distances to (0, 0)
    and to (1, 1); ``one`` returns their sum."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "two_costs", raising=False)  # this one, not another test's of that name
    (tmp_path / "two_costs.py").write_text(textwrap.dedent("""
        def f(x):
            return float((x ** 2).sum()), float(((x - 1) ** 2).sum())
        def one(x):
            return float((x ** 2).sum() + ((x - 1) ** 2).sum())
        def limits(x):
            return [float(x[0] - 0.9)]
    """))
    return str(tmp_path / "runs.db")


def err_line(capsys):
    """stderr as one line (no progress bar draws outside a terminal); asserts it is one."""
    lines = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(("args", "message"), [
    (["--directions", "minimize", "maximize", "--maximize"], "--maximize is for one objective; with --directions "
     "give each objective's direction there"),
    (["--directions", "min"], "--directions needs at least two directions, one per value the objective returns; "
     "got 1"),
    (["--directions", "min", "max", "--acquisition", "ucb"], "--acquisition 'ucb' is for a search of one objective; "
     "with several (--directions [...])"),
    (["--directions", "min", "max", "--output-warp", "yeo-johnson"], "--output-warp 'yeo-johnson' is for a search of "
     "one objective"),
    (["--directions", "min", "max", "--trust-region"], "--trust-region is for a search of one objective"),
    (["--directions", "min", "max", "--liar", "worst"], "--liar 'worst' is for a search of one objective"),
    (["--directions", "min", "max", "--optimal-value", "0"], "--optimal-value 0.0 is for a search of one objective"),
])
def test_what_several_objectives_cannot_take_is_one_line_and_status_2_before_any_run(two_costs, capsys, args,
                                                                                        message):
    assert main(["optimize", "--objective", "two_costs:f", *BOX, *RANDOM, "--budget", "3", "--db", two_costs,
                 *args]) == 2
    line = err_line(capsys)
    assert line.startswith("npbandit optimize: ") and message in line
    assert not Path(two_costs).exists()  # refused before a run was started: no database was made


def test_a_named_function_has_one_objective(tmp_path, capsys):
    db = str(tmp_path / "runs.db")
    assert main(["optimize", "--function", "branin", *RANDOM, "--directions", "min", "max", "--db", db]) == 2
    assert "--directions is for an --objective returning one value per direction; a named --function has one " \
           "objective" in err_line(capsys)


def test_directions_take_optunas_words_and_their_short_forms_and_refuse_others(two_costs, monkeypatch, capsys):
    seen = []

    def fake_optimize(objective, bounds, **kwargs):  # the minimize the command hands to optimize
        seen.append(kwargs["minimize"])
        values = [0.0] * len(kwargs["minimize"])
        return ParetoResult.of_history([{"t": 0, "x": np.zeros(2), "values": values, "failed": False}],
                                       tuple(kwargs["minimize"]), 1, db=two_costs, seed=0)

    monkeypatch.setattr(npbandit.api, "optimize", fake_optimize)
    for words in (["minimize", "maximize"], ["min", "max"], ["MAX", "Min", "max"]):
        assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", *words]) == 0
    assert seen == [[True, False], [True, False], [False, True, False]]
    with pytest.raises(SystemExit) as stopped:
        main(["optimize", "--objective", "two_costs:f", *BOX, "--directions", "minimize", "up"])
    assert stopped.value.code == 2
    assert "argument --directions: expected minimize or maximize (or min / max), got 'up'" in capsys.readouterr().err


@pytest.mark.parametrize("on_error", ["raise", "skip"])
def test_several_numbers_without_directions_is_one_line_that_names_directions(two_costs, capsys, on_error):
    assert main(["optimize", "--objective", "two_costs:f", *BOX, *RANDOM, "--budget", "3", "--db", two_costs,
                 "--on-error", on_error]) == 2
    line = err_line(capsys)
    (run,) = list_runs(two_costs)
    assert "must return a float, got tuple (" in line
    assert "for several objectives give one direction per value, e.g. --directions minimize maximize, or return one " \
           "number that weighs them" in line
    assert "minimize=[" not in line and "--initial-from" not in line  # neither Python's words nor a continuation
    assert run.status == "failed"
    if on_error == "raise":  # the error's subject is the flag
        assert line.startswith("npbandit optimize: --objective must return a float")
        assert line.endswith(f"(run {run.id} is recorded as failed)")
    else:
        assert line.startswith("npbandit optimize: every one of the 3 evaluations failed")


def test_one_objective_prints_as_before_without_directions(two_costs, capsys):
    assert main(["optimize", "--objective", "two_costs:one", *BOX, *RANDOM, "--budget", "3", "--db", two_costs]) == 0
    line, where = capsys.readouterr().out.splitlines()
    assert line.startswith("run 1: best value ") and line.endswith(" after 3 evaluations")
    assert where == f"runs saved in {two_costs}; see them with: npbandit report --db {two_costs}"


HISTORY = [  # minimised, maximised: t 0 and 2 are the front (t 1 worse than t 0 in both, t 3 failed)
    {"t": 0, "x": np.array([0.25, 0.5]), "values": [0.125, 3.5], "failed": False},
    {"t": 1, "x": np.array([0.5, 0.5]), "values": [0.5, 1.0], "failed": False},
    {"t": 2, "x": np.array([1.0, 0.125]), "values": [1.5, 12.25], "failed": False},
    {"t": 3, "x": np.array([0.0, 1.0]), "values": None, "failed": True, "error": "objective raised"},
]


def test_a_run_of_several_objectives_prints_its_front_with_each_direction(two_costs, monkeypatch, capsys):
    calls = []

    def fake_optimize(objective, bounds, **kwargs):
        calls.append(kwargs)
        seed = 12345 if kwargs["seed"] is None else kwargs["seed"]  # as optimize draws one for seed=None
        return ParetoResult.of_history(HISTORY, (True, False), 7, db=f"sqlite:///{two_costs}", seed=seed)

    monkeypatch.setattr(npbandit.api, "optimize", fake_optimize)
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "minimize",
                 "maximize"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "run 7: 2 evaluations on the Pareto front after 4 evaluations (1 failed)",
        "  t  value 1 (minimize)  value 2 (maximize)  point",
        "  0               0.125                 3.5  x0=0.25, x1=0.5",
        "  2                 1.5               12.25  x0=1, x1=0.125",
        f"runs saved in {two_costs}; see them with: npbandit report --db {two_costs}",
    ]
    assert calls[0]["minimize"] == [True, False] and calls[0]["initial"] is None
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min", "max",
                 "--seed", "none"]) == 0
    assert calls[1]["seed"] is None  # handed on: optimize draws one, and the run prints it
    assert capsys.readouterr().out.splitlines()[-2] == "seed 12345 (drawn; --seed 12345 repeats the run)"


def test_a_front_of_none_feasible_says_so(two_costs, monkeypatch, capsys):
    infeasible = [{**h, "constraints": [1.0], "feasible": False} for h in HISTORY if not h["failed"]]
    monkeypatch.setattr(npbandit.api, "optimize", lambda objective, bounds, **kwargs: ParetoResult.of_history(
        infeasible, (True, True), 3, db=two_costs, seed=0))
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min",
                 "min"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "run 3: no evaluation satisfied the constraints, so no Pareto front, after 3 evaluations",
        f"runs saved in {two_costs}; see them with: npbandit report --db {two_costs}"]


def test_initial_from_hands_the_earlier_run_on_and_prints_its_evaluations_on_the_front_of_both(
        two_costs, monkeypatch, capsys):
    earlier = [  # run 4's steps as run_evaluations reads them: t 5 beats this run's t 2, t 6 beats none, t 0 beats t 7
        {"run_id": 4, "t": 5, "params": {"x0": 0.75, "x1": 0.5}, "values": [1.0, 13.0], "failed": False},
        {"run_id": 4, "t": 6, "params": {"x0": 0.5, "x1": 0.25}, "values": [0.0625, 3.0], "failed": False},
        {"run_id": 4, "t": 7, "params": {"x0": 0.5, "x1": 0.75}, "values": [2.0, 0.0], "failed": False},
        {"run_id": 4, "t": 8, "params": {"x0": 0.0, "x1": 0.0}, "values": None, "failed": True},
    ]
    earlier_steps = [dict(step) for step in earlier]
    asked, given = [], []

    def fake_continued_run(db, run, name, problem, same=None, said=None):
        asked.append((run, name, problem["minimize"]))
        return earlier

    def fake_optimize(objective, bounds, **kwargs):
        given.append(kwargs["initial"])
        return ParetoResult.of_history(HISTORY, (True, False), 9, db=two_costs, seed=0)

    monkeypatch.setattr(npbandit.warm_start, "continued_run", fake_continued_run)
    monkeypatch.setattr(npbandit.api, "optimize", fake_optimize)
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min", "max",
                 "--initial-from", "4"]) == 0
    assert asked == [(4, "--initial-from", [True, False])] and given == [earlier]
    assert capsys.readouterr().out.splitlines()[4:] == [
        "the front of these and the 4 evaluations it continues also holds 2 of those, which beat 1 of this run's "
        "front:",
        "  run  t  value 1 (minimize)  value 2 (maximize)  point",
        "    4  5                   1                  13  x0=0.75, x1=0.5",
        "    4  6              0.0625                   3  x0=0.5, x1=0.25",
        f"runs saved in {two_costs}; see them with: npbandit report --db {two_costs}",
    ]
    # the earlier evaluations all beaten by this run's front: nothing more is printed
    earlier[:] = [{**earlier[2]}]
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min", "max",
                 "--initial-from", "4"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 5  # the run's line, the header, its front's two, where
    # with constraints, an infeasible earlier evaluation is on no front (t 5 here); a feasible one is (t 6)
    earlier[:] = [{**earlier_steps[0], "constraints": [1.0]}, {**earlier_steps[1], "constraints": [-1.0]}]
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min", "max",
                 "--constraints", "two_costs:limits", "--initial-from", "4"]) == 0
    assert capsys.readouterr().out.splitlines()[4:-1] == [
        "the front of these and the 2 evaluations it continues also holds 1 of those:",
        "  run  t  value 1 (minimize)  value 2 (maximize)  point",
        "    4  6              0.0625                   3  x0=0.5, x1=0.25",
    ]


def test_a_run_of_several_objectives_is_logged_and_prints_the_front_of_its_steps(two_costs, capsys):
    assert main(["optimize", "--objective", "two_costs:f", *BOX, *RANDOM, "--budget", "8", "--db", two_costs,
                 "--directions", "minimize", "minimize"]) == 0
    (run,) = list_runs(two_costs)
    steps = run_steps(two_costs, run.id)
    assert run.env_params["minimize"] == [True, True] and all(len(s["values"]) == 2 for s in steps)
    values = np.array([s["values"] for s in steps])
    front = [s for s, v in zip(steps, values) if not any((w <= v).all() and (w < v).any() for w in values)]
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == (f"run {run.id}: {len(front)} evaluation{'' if len(front) == 1 else 's'} on the Pareto front "
                        "after 8 evaluations")
    assert lines[1] == "  t  value 1 (minimize)  value 2 (minimize)  point"
    assert [int(line.split()[0]) for line in lines[2:-1]] == [s["t"] for s in front]
    assert lines[-1] == f"runs saved in {two_costs}; see them with: npbandit report --db {two_costs}"


def test_a_run_of_several_objectives_goes_on_from_an_earlier_one(two_costs, capsys):
    base = ["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min", "max"]
    assert main([*base, *RANDOM, "--budget", "4"]) == 0
    (first,) = list_runs(two_costs)
    assert main([*base, "--surrogate", "gp", "--budget", "1", "--n-init", "3", "--initial-from", str(first.id)]) == 0
    later = [r for r in list_runs(two_costs) if r.id != first.id][0]
    assert later.policy_params["initial"] == 4 and later.n_steps == 1  # the four not evaluated again
    capsys.readouterr()
    assert main([*base[:-2], "max", "min", *RANDOM, "--budget", "1", "--initial-from", str(first.id)]) == 2
    assert ("directions are --directions minimize maximize, this one's --directions maximize minimize"
            in err_line(capsys))
