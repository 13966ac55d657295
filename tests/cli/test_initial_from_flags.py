"""``--initial-from`` refuses a run of another problem in the words of the command line (the
flags that set what differs: ``--maximize``, ``--directions``, ``--bounds``, ``--space``,
``--constraints``, ``--parameter-constraint``), not in ``optimize``'s argument names, which
the Python door keeps (``initial=``: ``that run's minimize is True, this one's False``)."""

from __future__ import annotations

import json

import pytest

import npbandit
from npbandit.cli import main

SAME = "(a run continues only a run of the same problem)"


@pytest.fixture
def first(tmp_path, monkeypatch, capsys):
    (tmp_path / "flags_obj.py").write_text("def f(x):\n    return float(sum(v * v for v in x))\n\n"
                                           "def g(p):\n    return float(p['a'])\n\n"
                                           "def c(x):\n    return [float(x[0]) - 0.5]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    db = str(tmp_path / "runs.db")
    base = ["optimize", "--surrogate", "random", "--budget", "2", "--db", db]
    assert main([*base, "--objective", "flags_obj:f", "--bounds", "[[0, 0], [1, 1]]"]) == 0
    assert main([*base, "--objective", "flags_obj:g", "--space", json.dumps({"a": {"type": "int", "low": 0,
                                                                                  "high": 3}})]) == 0
    capsys.readouterr()
    return base


def refusal(capsys, base, *args) -> str:
    assert main([*base, *args]) == 2
    return capsys.readouterr().err.strip()


@pytest.mark.parametrize(("args", "said"), [
    (["--maximize"], "that run's direction is minimize (without --maximize), this one's maximize (--maximize)"),
    (["--directions", "min", "max"], "that run's directions are minimize (without --maximize), this one's "
                                     "--directions minimize maximize"),
    (["--bounds", "[[0, 0], [1, 2]]"], "that run's --bounds are [[0.0, 0.0], [1.0, 1.0]], this one's [[0.0, 0.0], "
                                       "[1.0, 2.0]]"),
    (["--constraints", "flags_obj:c"], "that run's --constraints are none, this one's 'flags_obj:c'"),
    (["--parameter-constraint", "x0 + x1 <= 1"], "that run's --parameter-constraint values are none, this one's "
                                                  "['x0 + x1 <= 1']"),
])
def test_a_box_runs_refusal_names_the_flags(first, capsys, args, said):
    extra = [] if "--bounds" in args else ["--bounds", "[[0, 0], [1, 1]]"]
    line = refusal(capsys, first, "--objective", "flags_obj:f", *extra, *args, "--initial-from", "1")
    assert line == f"npbandit optimize: --initial-from 1: {said} {SAME}"


def test_a_spaces_refusal_names_the_space_flag(first, capsys):
    space = json.dumps({"a": {"type": "int", "low": 0, "high": 4}})
    line = refusal(capsys, first, "--objective", "flags_obj:g", "--space", space, "--initial-from", "2")
    assert line.startswith("npbandit optimize: --initial-from 2: that run's --space is {'a': {'type': 'int', 'low': 0, "
                           "'high': 3}}, this one's {'a': {'type': 'int', 'low': 0, 'high': 4}} ")


def test_the_python_door_keeps_its_argument_names(first, tmp_path):
    from flags_obj import f

    with pytest.raises(ValueError, match=r"^initial=1: that run's minimize is True, this one's False \(a run"):
        npbandit.optimize(f, [[0, 0], [1, 1]], minimize=False, initial=1, db=str(tmp_path / "runs.db"),
                          surrogate="random", budget=1, name="flags_obj:f", progress=False)
