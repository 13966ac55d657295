"""``npbandit optimize --directions``: an objective of several values -- what is refused and
how, and what a run prints (its Pareto front)."""

import textwrap
from pathlib import Path

import numpy as np
import pytest

import npbandit.api
from npbandit.cli import main
from npbandit.optimize_result import ParetoResult
from npbandit.storage import list_runs, run_steps

BOX = ["--bounds", "[[0, 0], [1, 1]]"]
RANDOM = ["--surrogate", "random"]
# a run of several objectives stores each step's values (branch mostore), which the storage here lacks
NEEDS_STORED_VALUES = pytest.mark.xfail(strict=True, raises=AssertionError,  # the command's status 2
                                        reason="the storage here has no steps.values (unknown step field(s) "
                                               "['values']): a run of several objectives cannot be logged yet")


@pytest.fixture
def two_costs(tmp_path, monkeypatch):
    """A module ``two_costs`` on the import path: ``f`` returns the squared distances to (0, 0)
    and to (1, 1); ``one`` returns their sum."""
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "two_costs.py").write_text(textwrap.dedent("""
        def f(x):
            return float((x ** 2).sum()), float(((x - 1) ** 2).sum())
        def one(x):
            return float((x ** 2).sum() + ((x - 1) ** 2).sum())
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
    (["--directions", "min", "max", "--trust-region"], "--trust-region True is for a search of one objective"),
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


def test_one_objective_prints_as_before_without_directions(two_costs, capsys):
    assert main(["optimize", "--objective", "two_costs:one", *BOX, *RANDOM, "--budget", "3", "--db", two_costs]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    assert line.startswith("run 1: best value ") and line.endswith(" after 3 evaluations")


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
        f"run 7: 2 evaluations on the Pareto front after 4 evaluations (1 failed); db sqlite:///{two_costs}",
        "  t  value 1 (minimize)  value 2 (maximize)  point",
        "  0               0.125                 3.5  x0=0.25, x1=0.5",
        "  2                 1.5               12.25  x0=1, x1=0.125",
    ]
    assert calls[0]["minimize"] == [True, False] and calls[0]["initial"] is None
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min", "max",
                 "--seed", "none"]) == 0
    assert calls[1]["seed"] is None  # handed on: optimize draws one, and the run prints it
    assert capsys.readouterr().out.splitlines()[-1] == "seed 12345 (drawn; --seed 12345 repeats the run)"


def test_a_front_of_none_feasible_says_so(two_costs, monkeypatch, capsys):
    infeasible = [{**h, "constraints": [1.0], "feasible": False} for h in HISTORY if not h["failed"]]
    monkeypatch.setattr(npbandit.api, "optimize", lambda objective, bounds, **kwargs: ParetoResult.of_history(
        infeasible, (True, True), 3, db=two_costs, seed=0))
    assert main(["optimize", "--objective", "two_costs:f", *BOX, "--db", two_costs, "--directions", "min",
                 "min"]) == 0
    assert capsys.readouterr().out.splitlines() == [
        f"run 3: no evaluation satisfied the constraints, so no Pareto front, after 3 evaluations; db {two_costs}"]


@NEEDS_STORED_VALUES
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
                        f"after 8 evaluations; db {two_costs}")
    assert lines[1] == "  t  value 1 (minimize)  value 2 (minimize)  point"
    assert [int(line.split()[0]) for line in lines[2:]] == [s["t"] for s in front]
