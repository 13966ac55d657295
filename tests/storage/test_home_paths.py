"""An SQLite path starting with ``~`` names the home directory (as a shell expands it), bare,
in an ``sqlite:///`` URL, through ``optimize`` and ``npbandit optimize --db`` (quoted, so the
shell left it); an SQLite URI's path and other backends are left as they are."""

from __future__ import annotations

import numpy as np
import pytest

import npbandit
from npbandit.cli import main
from npbandit.storage import list_runs
from npbandit.storage.urls import _normalise_url


@pytest.fixture
def home(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(tmp_path)  # a relative "~" directory would be made here
    return home


def test_a_leading_tilde_is_the_home_directory(home):
    assert _normalise_url("~/runs.db") == f"sqlite:///{home}/runs.db"
    assert _normalise_url("sqlite:///~/runs.db") == f"sqlite:///{home}/runs.db"
    assert _normalise_url("sqlite:///~/runs.db?timeout=5") == f"sqlite:///{home}/runs.db?timeout=5"
    # left alone: a tilde elsewhere, an SQLite URI (SQLite reads its path), another backend
    assert _normalise_url("runs~/x.db") == "sqlite:///runs~/x.db"
    assert _normalise_url("sqlite:///file:~/x.db?uri=true") == "sqlite:///file:~/x.db?uri=true"
    assert _normalise_url("postgresql://u@h/~db") == "postgresql://u@h/~db"


def test_an_unknown_users_home_is_refused_by_name(home):
    with pytest.raises(ValueError, match=r"^db '~no-such-user-npb/x.db': cannot expand '~no-such-user-npb'"):
        _normalise_url("~no-such-user-npb/x.db")


@pytest.mark.parametrize("db", ["~/runs.db", "sqlite:///~/runs.db"])
def test_optimize_logs_to_the_home_directory(home, tmp_path, db):
    result = npbandit.optimize(lambda x: float(np.sum(x)), [[0.0], [1.0]], surrogate="random", budget=2, db=db,
                               progress=False)
    assert [run.id for run in list_runs(str(home / "runs.db"))] == [result.run_id]
    assert not (tmp_path / "~").exists()


def test_the_cli_expands_a_tilde_the_shell_left(home, tmp_path, capsys):
    assert main(["optimize", "--function", "branin", "--surrogate", "random", "--budget", "2",
                 "--db", "~/cli.db"]) == 0
    assert len(list_runs(str(home / "cli.db"))) == 1 and not (tmp_path / "~").exists()
