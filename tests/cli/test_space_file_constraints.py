"""A refused linear constraint from a ``--space`` file's ``"parameter_constraints"`` is named
where the user wrote it, not as a ``--parameter-constraint`` flag the command line never had."""

import json

from npbandit.cli import main


def _space(tmp_path, constraints):
    space = {"x": {"type": "float", "low": 0.0, "high": 1.0}, "y": {"type": "float", "low": 0.0, "high": 1.0},
             "parameter_constraints": constraints}
    (tmp_path / "space.json").write_text(json.dumps(space))
    (tmp_path / "space_objective.py").write_text("def f(p):\n    return p['x'] + p['y']\n")


def test_a_bad_constraint_in_a_space_file_is_named_in_the_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _space(tmp_path, ["x + y <= 1.5", "x <= 2*z"])
    assert main(["optimize", "--objective", "space_objective:f", "--space", "space.json", "--surrogate", "random",
                 "--budget", "2", "--db", str(tmp_path / "runs.db")]) == 2
    err = capsys.readouterr().err
    assert "--parameter-constraint" not in err
    assert "npbandit optimize: --space parameter_constraints value 2: unknown parameter 'z'" in err


def test_the_flag_is_still_named_when_the_constraints_came_by_flag(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    _space(tmp_path, [])
    space = json.loads((tmp_path / "space.json").read_text())
    del space["parameter_constraints"]
    (tmp_path / "space.json").write_text(json.dumps(space))
    assert main(["optimize", "--objective", "space_objective:f", "--space", "space.json", "--surrogate", "random",
                 "--parameter-constraint", "x <= 2*z", "--budget", "2", "--db", str(tmp_path / "runs.db")]) == 2
    assert "npbandit optimize: --parameter-constraint value 1: unknown parameter 'z'" in capsys.readouterr().err
