"""Another application's database that happens to hold a table called ``runs`` (or ``steps``)
is called another application's, as one without such a table is, not a database "written by an
older npbandit"; and nothing is written to it."""

import sqlite3

import pytest

from npbandit.exceptions import StorageError
from npbandit.storage import RunLogger, list_runs


@pytest.mark.parametrize("tables", [
    ["CREATE TABLE runs (x INTEGER)"],
    ["CREATE TABLE runs (id INTEGER PRIMARY KEY, started TEXT, loss REAL)", "CREATE TABLE notes (body TEXT)"],
    ["CREATE TABLE steps (id INTEGER PRIMARY KEY, name TEXT)"],
])
def test_another_applications_runs_table_is_not_an_older_npbandit(tmp_path, tables):
    db = tmp_path / "otherapp.db"
    with sqlite3.connect(db) as conn:
        for sql in tables:
            conn.execute(sql)
    conn.close()
    content = db.read_bytes()
    for opening in (lambda: list_runs(str(db)), lambda: RunLogger(str(db))):
        with pytest.raises(StorageError, match=r"db '.*otherapp\.db'.*not an npbandit database") as info:
            opening()
        assert "older npbandit" not in str(info.value) and "\n" not in str(info.value)
        assert "runs.kind" not in str(info.value)  # no list of every column npbandit would need
    assert db.read_bytes() == content
