"""One CSV file is one task to a sweep as it is to ``npbandit report``: its runs are keyed by the
data they played (its fingerprint, shape, file name and label column), not by the path it was
reached by or the exact bytes, which runs still record (``csv_path``, ``csv_sha256``). A copy of
the file in another directory (another checkout), a relative, absolute or linked path, or the
file rewritten with the same data (CRLF line ends) finds its runs completed -- where the copy's
sweep ran them again and the report, one row for both, counted each seed twice."""

import os

from npbandit.loop import csv_task, run_bandit_sweep
from npbandit.report import bandit_summary
from npbandit.storage import list_runs

TEXT = "width,height,kind\n1.0,2.0,a\n2.5,0.5,b\n0.2,1.1,a\n3.0,3.0,c\n"


def _sweep(db, path, lines=None):
    return run_bandit_sweep(["uniform"], [csv_task(path, "kind")], [0, 1], 4, db=db,
                            say=None if lines is None else lines.append)


def test_a_copy_of_the_file_elsewhere_is_the_same_task_in_the_sweep_and_the_report(tmp_path):
    db = str(tmp_path / "runs.db")
    (tmp_path / "one").mkdir()
    (tmp_path / "two").mkdir()
    first, copy = tmp_path / "one" / "own.csv", tmp_path / "two" / "own.csv"
    first.write_text(TEXT, encoding="utf-8")
    copy.write_text(TEXT, encoding="utf-8")
    made = _sweep(db, first)
    lines = []
    again = _sweep(db, copy, lines)
    assert lines[0].startswith("skipping 2 of 2 runs") and [r.run_id for r in again] == [r.run_id for r in made]
    (row,) = bandit_summary(db)
    assert row["runs"] == 2 and not row["repeated_seeds"]
    assert {r.env_params["csv_path"] for r in list_runs(db)} == {str(first.resolve())}  # the path still recorded


def test_relative_absolute_and_linked_paths_are_one_task(tmp_path, monkeypatch):
    db = str(tmp_path / "runs.db")
    path = tmp_path / "own.csv"
    path.write_text(TEXT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    made = _sweep(db, "own.csv")
    paths = [str(path), "./own.csv"]
    try:
        os.symlink(path, tmp_path / "link.csv")
        paths.append("link.csv")
    except OSError:  # a file system without links: the other paths still count
        pass
    for other in paths:
        assert [r.run_id for r in _sweep(db, other)] == [r.run_id for r in made]
    assert len(list_runs(db)) == 2 and len(bandit_summary(db)) == 1


def test_the_same_data_in_other_bytes_is_the_same_task_and_other_data_another(tmp_path):
    db = str(tmp_path / "runs.db")
    path = tmp_path / "own.csv"
    path.write_text(TEXT, encoding="utf-8")
    made = _sweep(db, path)
    path.write_bytes(TEXT.replace("\n", "\r\n").replace("1.0,", "1,").encode())  # other bytes, the same numbers
    assert [r.run_id for r in _sweep(db, path)] == [r.run_id for r in made]
    assert len(bandit_summary(db)) == 1
    path.write_text(TEXT.replace("3.0,3.0,c", "3.0,3.5,c"), encoding="utf-8")  # other data: other runs, another row
    assert [r.run_id for r in _sweep(db, path)] == [3, 4]
    assert len(bandit_summary(db)) == 2


def test_a_copy_under_another_name_is_another_task_in_both(tmp_path):
    db = str(tmp_path / "runs.db")
    (tmp_path / "own.csv").write_text(TEXT, encoding="utf-8")
    (tmp_path / "other.csv").write_text(TEXT, encoding="utf-8")
    _sweep(db, tmp_path / "own.csv")
    assert [r.run_id for r in _sweep(db, tmp_path / "other.csv")] == [3, 4]  # its name is part of the task, as reported
    assert sorted(dict(row["setting"].params)["csv"] for row in bandit_summary(db)) == ["other.csv", "own.csv"]
