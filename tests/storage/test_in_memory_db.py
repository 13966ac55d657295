"""An in-memory SQLite URL given to a writer (``db=":memory:"``, ``"sqlite://"``) is refused up front,
naming ``db`` and ``None``: each new connection to such a database is an empty database of its own, so
the schema a writer creates is gone by its next connection and a run would fail on its first write
("no such table: runs"), after the objective had been set up."""

import numpy as np
import pytest

import npbandit
from npbandit.storage import RunLogger, list_runs, open_db

IN_MEMORY = ("sqlite://", "sqlite:///:memory:", ":memory:", "sqlite:///file::memory:?cache=shared&uri=true",
             "sqlite:///file:runs?mode=memory&uri=true")


@pytest.mark.parametrize("url", IN_MEMORY)
def test_a_writer_refuses_an_in_memory_database_naming_db_and_none(url):
    with pytest.raises(ValueError, match=r"in-memory SQLite database.*None to log nothing") as err:
        open_db(url)
    assert repr(url) in str(err.value)  # as given, not re-quoted ('sqlite:///%3Amemory%3A')
    with pytest.raises(ValueError, match="in-memory"):
        RunLogger(url)


def test_optimize_refuses_an_in_memory_database_before_evaluating_anything():
    calls = []

    def objective(x):
        calls.append(x)
        return float(np.sum(x ** 2))

    with pytest.raises(ValueError, match=r"None to log nothing"):
        npbandit.optimize(objective, [[0.0], [1.0]], budget=5, db=":memory:", progress=False)
    assert calls == []


def test_a_reader_of_an_in_memory_database_still_finds_no_runs():
    assert list_runs("sqlite://") == []  # what `npbandit report --db sqlite://` reads: nothing, no error


def test_the_command_line_says_so_without_suggesting_a_db_named_none(tmp_path, monkeypatch, capsys):
    from npbandit.cli import main

    monkeypatch.chdir(tmp_path)
    assert main(["optimize", "--function", "branin", "--budget", "6", "--db", "sqlite://"]) == 2
    err = capsys.readouterr().err
    assert "--db 'sqlite://' is an in-memory SQLite database" in err and "--db None" not in err
    assert list(tmp_path.iterdir()) == []
