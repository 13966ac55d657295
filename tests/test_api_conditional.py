"""npbandit.optimize over a conditional search space (a Choice's dependents): the objective gets the
active parameters alone, every point handed out is an encoded one, runs record and read back
points of different parameters, warm starts and the report take them."""

import json

import pytest
import torch

from npbandit import optimize
from npbandit.cli import main
from npbandit.space import Choice, Float, Int, SearchSpace, as_search_space
from npbandit.storage import list_runs, run_steps

SPACE = SearchSpace({"model": Choice(["svm", "rf"], dependents={"svm": ["C"], "rf": ["n", "depth"]}),
                     "C": Float(1e-3, 1e1, log=True), "n": Int(10, 200), "depth": Int(1, 10), "shared": Float(0, 1)})


def loss(p):
    """The branch's own loss; refuses a parameter the branch does not have."""
    if p["model"] == "svm":
        assert set(p) == {"model", "C", "shared"}, p
        return (p["C"] - 0.3) ** 2 + 0.1 + (p["shared"] - 0.5) ** 2
    assert set(p) == {"model", "n", "depth", "shared"}, p
    return abs(p["n"] - 120) / 100 + abs(p["depth"] - 3) / 10 + (p["shared"] - 0.5) ** 2


@pytest.mark.parametrize("surrogate", ["tnpd", "gp", "random"])
def test_the_objective_gets_each_points_active_parameters_and_the_run_records_them(tmp_path, surrogate):
    db = str(tmp_path / "runs.db")
    result = optimize(loss, SPACE, surrogate=surrogate, budget=14, seed=0, db=db, progress=False)
    assert {h["x"]["model"] for h in result.history} == {"svm", "rf"}  # both branches evaluated
    assert result.best_value == pytest.approx(loss(result.best_x))
    (run,) = list_runs(db)
    assert as_search_space(run.env_params["space"]) == SPACE
    steps = run_steps(db, run.id)
    for step, h in zip(steps, result.history, strict=True):
        u = torch.as_tensor(step["action"], dtype=torch.float64)
        assert torch.equal(SPACE.snap(u.unsqueeze(0))[0], u)  # where the objective was evaluated, in the cube
        assert step["params"] == h["x"] == SPACE.decode(u)
    keys = [json.dumps(s["params"], sort_keys=True) for s in steps]
    assert len(set(keys)) == len(keys)  # no proposal repeats a point


def test_a_space_wider_than_the_checkpoint_is_searched_whole():
    space = {"kind": Choice(["a", "b", "c"], dependents={"a": ["a1"], "b": ["b1", "b2"], "c": ["c1", "c2", "c3"]}),
             **{n: Float(0, 1) for n in ("s", "a1", "b1", "b2", "c1", "c2", "c3")}}
    given = {"a": {"kind", "s", "a1"}, "b": {"kind", "s", "b1", "b2"}, "c": {"kind", "s", "c1", "c2", "c3"}}

    def f(p):
        assert set(p) == given[p["kind"]], p
        return sum((v - 0.3) ** 2 for k, v in p.items() if k != "kind") + {"a": 0.2, "b": 0.1, "c": 0.0}[p["kind"]]

    assert SearchSpace(space).dim == 10  # wider than tnpd-bo's 6 columns
    result = optimize(f, space, surrogate="tnpd", budget=26, seed=0, db=None, progress=False)
    assert len(result.history) == 26 and {h["x"]["kind"] for h in result.history} == {"a", "b", "c"}


def test_a_conditional_run_continues_from_its_history_or_its_id(tmp_path):
    db = str(tmp_path / "runs.db")
    first = optimize(loss, SPACE, surrogate="tnpd", budget=8, n_init=4, seed=0, db=db, progress=False)
    from_history = optimize(loss, SPACE, surrogate="tnpd", budget=2, n_init=4, seed=1, db=None, progress=False,
                            initial=first.history)
    from_run = optimize(loss, SPACE, surrogate="tnpd", budget=2, n_init=4, seed=1, db=db, progress=False,
                        initial=first.run_id)
    given = [h["x"] for h in first.history]
    for continued in (from_history, from_run):  # the model saw the given points: none is proposed again
        assert len(continued.history) == 2 and not [h["x"] for h in continued.history if h["x"] in given]
    with pytest.raises(ValueError, match=r"inactive \['n'\]"):
        optimize(loss, SPACE, budget=2, db=None, progress=False, initial=[({"model": "svm", "C": 1.0, "n": 20,
                                                                             "shared": 0.5}, 0.3)])


def test_the_report_and_the_cli_take_a_conditional_run(tmp_path, monkeypatch, capsys):
    (tmp_path / "conditional_tuning.py").write_text("def f(p):\n    return p.get('C', 1.0) + p.get('n', 0)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    db = str(tmp_path / "runs.db")
    record = json.dumps(SPACE.describe())
    # a module name of its own: another test's tuning.py would be the one imported, from sys.modules
    assert main(["optimize", "--objective", "conditional_tuning:f", "--space", record, "--surrogate", "random",
                 "--budget", "6", "--db", db]) == 0
    assert "model=" in capsys.readouterr().out
    assert main(["report", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "model: choice {svm, rf} (svm: C; rf: n depth), C: float [0.001, 10] log" in out
    assert "best point: run 1" in out


def test_the_cli_searches_by_branch_or_the_whole_space_as_branches_says(tmp_path, monkeypatch, capsys):
    (tmp_path / "branch_choice.py").write_text("def f(p):\n    return p.get('C', 1.0) + p.get('n', 0)\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    db = str(tmp_path / "runs.db")
    common = ["optimize", "--objective", "branch_choice:f", "--space", json.dumps(SPACE.describe()),
              "--surrogate", "gp", "--budget", "11", "--db", db]
    assert main(common) == 0 and main([*common, "--no-branches"]) == 0
    by_branch, whole = list_runs(db)
    assert by_branch.policy_params["branches"] == "model" and "branch" in by_branch.policy_params
    assert "branches" not in whole.policy_params and whole.policy == "gp-logei"
    capsys.readouterr()
    # --branches where no search by branch can be: refused before anything runs, the reason named
    assert main([*common[:-4], "--surrogate", "random", "--branches"]) == 2
    assert "--branches needs a model to compare the branches by" in capsys.readouterr().err
    assert len(list_runs(db)) == 2
