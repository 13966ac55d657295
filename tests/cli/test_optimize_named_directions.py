"""``npbandit optimize --directions cost=minimize accuracy=maximize``: objectives named on the
command line -- handed to optimize as a mapping, checked, printed by name, recorded and checked
again by ``--initial-from`` -- beside the positional form, which prints as before."""

import sys
import textwrap
from pathlib import Path

import pytest

from npbandit.cli import main
from npbandit.storage import list_runs

BOX = ["--bounds", "[[0, 0], [1, 1]]"]
RANDOM = ["--surrogate", "random"]


@pytest.fixture
def named(tmp_path, monkeypatch):
    """A module ``named_costs`` on the import path: ``f`` returns its values by name."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "named_costs", raising=False)
    (tmp_path / "named_costs.py").write_text(textwrap.dedent("""
        def f(x):
            return {"accuracy": float(1 - ((x - 1) ** 2).sum()), "cost": float((x ** 2).sum())}
    """))
    return str(tmp_path / "runs.db")


def run(db, *directions, extra=()):
    return main(["optimize", "--objective", "named_costs:f", *BOX, *RANDOM, "--budget", "5", "--db", db,
                 "--directions", *directions, *extra])


def test_named_directions_are_handed_on_recorded_and_printed_by_name(named, capsys):
    assert run(named, "cost=minimize", "accuracy=max") == 0
    (record,) = list_runs(named)
    assert record.env_params["objective_names"] == ["cost", "accuracy"]
    assert record.env_params["minimize"] == [True, False]
    lines = capsys.readouterr().out.splitlines()
    assert lines[1].split() == ["t", "cost", "(minimize)", "accuracy", "(maximize)", "point"]


def test_initial_from_checks_the_names(named, capsys):
    assert run(named, "cost=min", "accuracy=max") == 0
    capsys.readouterr()
    assert run(named, "accuracy=max", "cost=min", extra=["--initial-from", "1"]) == 2
    err = capsys.readouterr().err
    assert ("objectives' names (--directions NAME=DIRECTION) are ['cost', 'accuracy'], this one's ['accuracy', "
            "'cost']" in err)
    assert run(named, "cost=min", "accuracy=max", extra=["--initial-from", "1"]) == 0
    assert list_runs(named)[-1].policy_params["initial"] == 5


@pytest.mark.parametrize(("directions", "message"), [
    (["cost=min", "max"], "--directions names every objective (NAME=DIRECTION, e.g. cost=minimize"),
    (["cost=min", "cost=max"], "--directions names 'cost' twice"),
    (["cost=min"], "--directions needs at least two directions"),
])
def test_named_directions_are_checked_before_any_run(named, capsys, directions, message):
    assert run(named, *directions) == 2
    assert message in capsys.readouterr().err
    assert not Path(named).exists()  # refused before a run was started: no database was made


@pytest.mark.parametrize("word", ["=min", "cost=up", "cost="])
def test_a_malformed_named_direction_is_a_usage_error(named, capsys, word):
    with pytest.raises(SystemExit) as stopped:
        run(named, word, "accuracy=max")
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "argument --directions: expected minimize or maximize (or min / max), got" in err
    assert "(or the objective named, NAME=DIRECTION: cost=minimize)" in err


@pytest.mark.parametrize("word", ["a\tb=min", "\x1bcost=min"])
def test_a_name_the_library_refuses_is_reported_naming_directions(named, capsys, word):
    assert run(named, word, "accuracy=max") == 2
    err = capsys.readouterr().err
    name = repr(word.rpartition("=")[0])
    assert f"npbandit optimize: --directions {name}: an objective's name must be a non-empty, printable" in err
    assert "minimize" not in err
    assert not Path(named).exists()
