"""A new user's long and continued ``npbandit optimize`` runs on a mixed ``--space``: what
the messages and the report say. Tiny budgets, ``--surrogate random``."""

import json

from npbandit.cli import main

SPACE = {"layers": {"type": "int", "low": 1, "high": 8},
         "lr": {"type": "float", "low": 1e-5, "high": 1e-1, "log": True},
         "act": {"type": "choice", "values": ["relu", "tanh", "gelu"]}}
OBJECTIVE = ("import math\n\ndef f(p):\n    return (math.log10(p['lr']) + 3) ** 2 + 0.3 * (p['layers'] - 4) ** 2"
             " + {'relu': 0.0, 'tanh': 0.5, 'gelu': 0.2}[p['act']]\n")


def _setup(tmp_path, monkeypatch, modules=("review60_obj_a",)):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "space.json").write_text(json.dumps(SPACE))
    for module in modules:
        (tmp_path / f"{module}.py").write_text(OBJECTIVE)
    return str(tmp_path / "runs.db")


def _optimize(module, db, *more):
    return main(["optimize", "--objective", f"{module}:f", "--space", "space.json", "--surrogate", "random",
                 "--budget", "3", "--db", db, *more])


def test_the_runs_list_keeps_each_objectives_name(tmp_path, monkeypatch, capsys):
    # two objectives whose names end alike were both shown as "…obj:f 3 parameters (5 columns) min"
    db = _setup(tmp_path, monkeypatch, ("slow_review60obj", "fast_review60obj"))
    assert _optimize("slow_review60obj", db) == 0 and _optimize("fast_review60obj", db) == 0
    capsys.readouterr()
    assert main(["report", "--db", db]) == 0
    runs = [line for line in capsys.readouterr().out.splitlines() if line.lstrip().startswith(("1  bo", "2  bo"))]
    assert len(runs) == 2
    assert "slow_review60obj:f 3 parameters min" in runs[0] and "fast_review60obj:f 3 parameters min" in runs[1]


def test_the_report_says_what_s_per_eval_counts(tmp_path, monkeypatch, capsys):
    # s/eval is the search's own time (proposing, taking in the value), not the objective's: say so
    db = _setup(tmp_path, monkeypatch)
    assert _optimize("review60_obj_a", db) == 0
    capsys.readouterr()
    assert main(["report", "--db", db]) == 0
    out = capsys.readouterr().out
    assert "s/eval" in out and "s/eval = the seconds the search spent per evaluation" in out
    assert "the objective's own time not counted" in out


def test_a_space_file_that_is_no_json_is_named(tmp_path, monkeypatch, capsys):
    db = _setup(tmp_path, monkeypatch)
    (tmp_path / "typo.json").write_text('{"layers": {"type": "int", "low": 1, "high": 8},}\n')
    assert main(["optimize", "--objective", "review60_obj_a:f", "--space", "typo.json", "--surrogate", "random",
                 "--budget", "2", "--db", db]) == 2
    assert "npbandit optimize: --space file 'typo.json' is not valid JSON: Expecting property name" in \
        capsys.readouterr().err


def test_parameter_constraints_that_are_no_list_are_named(tmp_path, monkeypatch, capsys):
    # a string was refused as "--space must map each name to its parameter", the constraints never named
    db = _setup(tmp_path, monkeypatch)
    (tmp_path / "pc.json").write_text(json.dumps({**SPACE, "parameter_constraints": "layers <= 4"}))
    assert main(["optimize", "--objective", "review60_obj_a:f", "--space", "pc.json", "--surrogate", "random",
                 "--budget", "2", "--db", db]) == 2
    assert ("npbandit optimize: --space: parameter_constraints must be a list of strings such as "
            "\"x0 + 2*x1 <= 3\", got 'layers <= 4'") in capsys.readouterr().err


def test_initial_from_a_run_of_another_space_names_the_parameters_that_differ(tmp_path, monkeypatch, capsys):
    # the refusal printed both whole spaces, leaving the user to find the one bound that changed
    db = _setup(tmp_path, monkeypatch)
    assert _optimize("review60_obj_a", db) == 0
    (tmp_path / "space.json").write_text(json.dumps({**SPACE, "layers": {"type": "int", "low": 1, "high": 9}}))
    capsys.readouterr()
    assert _optimize("review60_obj_a", db, "--initial-from", "1") == 2
    err = capsys.readouterr().err
    assert ("npbandit optimize: --initial-from 1: that run's --space is {'layers': {'type': 'int', 'low': 1, "
            "'high': 8}}, this one's {'layers': {'type': 'int', 'low': 1, 'high': 9}} (the parameters that differ; "
            "the others alike)") in err
    assert "'act'" not in err


def test_an_objective_given_by_its_file_is_told_the_module_form(tmp_path, monkeypatch, capsys):
    # revobj.py:f said "No module named 'revobj.py'; 'revobj' is not a package", ./revobj.py:f "the 'package'
    # argument is required to perform a relative import"
    db = _setup(tmp_path, monkeypatch)
    for given in ("review60_obj_a.py:f", "./review60_obj_a.py:f"):
        assert main(["optimize", "--objective", given, "--space", "space.json", "--surrogate", "random",
                     "--budget", "2", "--db", db]) == 2
        err = capsys.readouterr().err
        assert (f"npbandit optimize: --objective takes a module's name, not a file's path: review60_obj_a:f for "
                f"{given}") in err
        assert "package" not in err


def test_a_warning_names_the_flags_as_an_error_does(tmp_path, monkeypatch, capsys):
    # "budget=2 does not exceed n_init=11", "(on_error='skip')": optimize's argument names, never typed
    db = _setup(tmp_path, monkeypatch)
    (tmp_path / "review60_sometimes_text.py").write_text("def f(p):\n    return 'n/a' if p['layers'] > 4 else 1.0\n")
    assert main(["optimize", "--objective", "review60_sometimes_text:f", "--space", "space.json", "--surrogate", "gp",
                 "--budget", "2", "--on-error", "skip", "--db", db]) == 0
    err = capsys.readouterr().err
    assert "npbandit optimize: warning: --budget 2 does not exceed --n-init 11: every point" in err
    assert "counted as failed (--on-error 'skip')" in err
    assert "budget=" not in err and "on_error" not in err


def test_a_worker_that_dies_is_one_line_saying_how_to_go_on(tmp_path, monkeypatch, capsys):
    # a worker killed (out of memory, os._exit) broke the pool: the command ended in a BrokenProcessPool traceback
    db = _setup(tmp_path, monkeypatch)
    (tmp_path / "review60_dies.py").write_text("import os\n\ndef f(p):\n    os._exit(1)\n")
    assert main(["optimize", "--objective", "review60_dies:f", "--space", "space.json", "--surrogate", "random",
                 "--budget", "4", "--workers", "1", "--on-error", "skip", "--db", db]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("npbandit optimize: a worker process died while evaluating (killed, out of memory, or it "
                           "exited), and the pool cannot go on: BrokenProcessPool: ")
    assert "; run 1 saved " in line and "recorded as failed; to go on, run the same command with --initial-from 1" \
        in line
