"""An ``Int``'s bounds and step may be floats that are whole numbers (``1.0``), as a JSON space
file or a computed value writes them, in Python and in ``npbandit optimize --space``; any
other float is refused naming the setting, as before."""

from __future__ import annotations

import json

import numpy as np
import pytest

from npbandit.cli import main
from npbandit.space import Int, SearchSpace, as_search_space


def test_whole_floats_are_those_ints():
    for given in (Int(1.0, 4.0, step=1.0), Int(np.float64(1), 4), Int(1, np.float32(4))):
        assert given == Int(1, 4) and given.describe() == {"type": "int", "low": 1, "high": 4}
        assert type(given.low) is int and type(given.high) is int and type(given.step) is int
    assert Int(0.0, 6.0, step=2.0) == Int(0, 6, step=2)
    assert as_search_space({"n": {"type": "int", "low": 1.0, "high": 8.0, "log": True}}) \
        == SearchSpace({"n": Int(1, 8, log=True)})


@pytest.mark.parametrize(("kwargs", "name", "shown"), [({"low": 1.5, "high": 4}, "low", "1.5"),
                                                       ({"low": 1, "high": float("nan")}, "high", "nan"),
                                                       ({"low": 0, "high": 4, "step": 0.5}, "step", "0.5")])
def test_other_floats_are_refused_by_name(kwargs, name, shown):
    with pytest.raises(TypeError, match=rf"^Int: {name} must be an int \(a float only when it is a whole number, "
                                        rf"1.0\), got {shown}$"):
        Int(**kwargs)
    with pytest.raises(TypeError, match=rf"^Int: {name} must be an int, got True$"):
        Int(**{**{"low": 0, "high": 4}, name: True})


def test_the_cli_takes_a_whole_float_bound_and_refuses_another(tmp_path, monkeypatch, capsys):
    (tmp_path / "obj_whole.py").write_text("def f(p):\n    return float(p['n'])\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.chdir(tmp_path)
    base = ["optimize", "--objective", "obj_whole:f", "--surrogate", "random", "--budget", "2",
            "--db", str(tmp_path / "runs.db"), "--space"]
    assert main([*base, json.dumps({"n": {"type": "int", "low": 1.0, "high": 4}})]) == 0
    assert main([*base, json.dumps({"n": {"type": "int", "low": 1.5, "high": 4}})]) == 2
    assert capsys.readouterr().err.strip() == ("npbandit optimize: --space: space['n']: Int: low must be an int (a "
                                               "float only when it is a whole number, 1.0), got 1.5")
