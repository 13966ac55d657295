"""A bandit sweep takes its database as a ``pathlib.Path`` (a file path), as ``RunLogger``,
``list_runs``, ``report_text`` and ``optimize`` do, rather than calling a path "no file path"."""

import pytest

from npbandit.loop import dataset_task, run_bandit_sweep, run_wheel_bandits
from npbandit.storage import list_runs


def test_a_path_is_a_database_file_for_a_sweep(tmp_path):
    db = tmp_path / "runs.db"
    results = run_wheel_bandits(["uniform"], [0.5], [0, 1], 5, db=db, say=None)
    assert [r.run_id for r in results] == [1, 2]
    assert [(r.seed, r.status) for r in list_runs(str(db))] == [(0, "completed"), (1, "completed")]
    again = run_wheel_bandits(["uniform"], [0.5], [0, 1], 5, db=db, say=None)  # found completed: skipped
    assert [r.run_id for r in again] == [1, 2] and len(list_runs(db)) == 2


@pytest.mark.parametrize("db", [None, 3, b"runs.db", ""])
def test_a_db_that_is_no_url_or_path_is_refused_naming_db(db):
    with pytest.raises(TypeError, match=r"^db must be an SQLAlchemy URL or a file path \(a str or os.PathLike\)"):
        run_bandit_sweep(["uniform"], [dataset_task("iris")], [0], 5, db=db, say=None)
