"""npbandit optimize --subspace: the shipped subspace strategies by name, as optimize(subspace=...) takes them."""

import json
import sys
import textwrap

import pytest
from helpers import tiny_checkpoint

from npbandit.cli import main
from npbandit.storage import list_runs


@pytest.fixture
def objective(tmp_path, monkeypatch):
    """A module ``wide_bowl`` on the import path: ``f`` of a point, ``g`` of a space's params."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "wide_bowl", raising=False)
    (tmp_path / "wide_bowl.py").write_text(textwrap.dedent("""
        def f(x):
            return float(((x - 0.3) ** 2).sum())
        def g(p):
            return float((p["a"] - 0.3) ** 2 + (p["b"] != "y"))
    """))
    return str(tiny_checkpoint(tmp_path / "ckpt", "cmanp", "bo"))


@pytest.mark.parametrize("name", ["redealt-sketch", "count-sketch", "coordinates"])
def test_each_strategy_named_runs_and_the_run_records_it_as_the_python_door_does(tmp_path, objective, name):
    from npbandit import optimize
    from npbandit.acquisition.wide_spaces import named_subspace

    db = tmp_path / "runs.db"
    args = ["optimize", "--objective", "wide_bowl:f", "--bounds", "[[0, 0, 0], [1, 1, 1]]", "--surrogate", objective,
            "--budget", "3", "--n-init", "2", "--subspace", name, "--db", str(db)]
    assert main(args) == 0
    from wide_bowl import f

    optimize(f, [[0, 0, 0], [1, 1, 1]], surrogate=objective, budget=3, n_init=2, subspace=named_subspace(name),
             db=str(db), name="wide_bowl:f", progress=False)
    cli, python = list_runs(str(db))
    assert cli.policy_params["subspace"] == name and cli.policy_params == python.policy_params


def test_indexed_choices_takes_the_space_searched(tmp_path, objective):
    space = {"a": {"type": "float", "low": 0, "high": 1}, "b": {"type": "choice", "values": ["x", "y", "z"]}}
    db = tmp_path / "runs.db"
    assert main(["optimize", "--objective", "wide_bowl:g", "--space", json.dumps(space), "--surrogate", objective,
                 "--budget", "3", "--n-init", "2", "--subspace", "indexed-choices", "--db", str(db)]) == 0
    (run,) = list_runs(str(db))
    assert run.policy_params["subspace"] == "indexed-choices"


def test_indexed_choices_needs_a_space_and_an_unknown_name_lists_the_valid_ones(tmp_path, objective, capsys):
    base = ["optimize", "--objective", "wide_bowl:f", "--bounds", "[[0, 0], [1, 1]]", "--surrogate", objective,
            "--budget", "3", "--db", str(tmp_path / "runs.db")]
    assert main([*base, "--subspace", "indexed-choices"]) == 2
    assert "--subspace indexed-choices goes with --space" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main([*base, "--subspace", "hesbo"])
    err = capsys.readouterr().err
    assert info.value.code == 2 and "argument --subspace: invalid choice: 'hesbo'" in err
    assert all(name in err for name in ("redealt-sketch", "count-sketch", "coordinates", "indexed-choices"))
    assert not (tmp_path / "runs.db").exists()
