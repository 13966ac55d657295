"""``npbandit bandit --datasets a.csv b.csv --label-column kind species``: one label column per CSV
file, matched in their order in ``--datasets`` (bundled data sets take none), given as several
names or the flag repeated; one name still serves every file, and any other count is refused in
one line naming both options, before any run."""

import pytest

from npbandit.cli import main
from npbandit.storage import list_runs

FIRST = "width,height,kind\n1.0,2.0,a\n2.5,0.5,b\n0.2,1.1,a\n"
SECOND = "species,petal\nx,0.5\ny,1.5\nx,0.7\nz,2.0\n"


@pytest.fixture()
def files(tmp_path):
    (tmp_path / "first.csv").write_text(FIRST, encoding="utf-8")
    (tmp_path / "second.csv").write_text(SECOND, encoding="utf-8")
    return str(tmp_path / "first.csv"), str(tmp_path / "second.csv")


@pytest.mark.parametrize("columns", [["--label-column", "kind", "species"],
                                     ["--label-column", "kind", "--label-column", "species"]])
def test_each_csv_file_takes_its_own_label_column_in_order(tmp_path, files, columns, capsys):
    db = str(tmp_path / "runs.db")
    assert main(["bandit", "--datasets", files[0], "iris", files[1], *columns, "--policies", "uniform",
                 "--steps", "2", "--db", db]) == 0
    runs = list_runs(db)
    assert [(r.env_params.get("csv"), r.env_params.get("label_column"), r.env_params.get("dataset"))
            for r in runs] == [("first.csv", "kind", None), (None, None, "iris"), ("second.csv", "species", None)]
    assert [r.env_params.get("n_arms") for r in runs if "csv" in r.env_params] == [2, 3]


def test_one_label_column_still_serves_every_csv_file(tmp_path, files):
    (tmp_path / "third.csv").write_text(FIRST.replace("1.0,2.0", "1.5,2.0"), encoding="utf-8")
    db = str(tmp_path / "runs.db")
    assert main(["bandit", "--datasets", files[0], str(tmp_path / "third.csv"), "--label-column", "kind",
                 "--policies", "uniform", "--steps", "2", "--db", db]) == 0
    assert [r.env_params["label_column"] for r in list_runs(db)] == ["kind", "kind"]


def test_one_file_twice_with_two_label_columns_is_two_tasks(tmp_path):
    path = tmp_path / "both.csv"
    path.write_text("a,b,c\n1,0,1\n2,1,0\n3,0,0\n", encoding="utf-8")  # numbers: either may be the labels
    db = str(tmp_path / "runs.db")
    assert main(["bandit", "--datasets", str(path), str(path), "--label-column", "b", "c", "--policies", "uniform",
                 "--steps", "2", "--db", db]) == 0
    assert [r.env_params["label_column"] for r in list_runs(db)] == ["b", "c"]


@pytest.mark.parametrize("columns,said", [
    (["kind", "species", "extra"], "--label-column gives 3 names (kind species extra) for 2 CSV file(s)"),
    (["kind", "--label-column", "species", "--label-column", "x"], "--label-column gives 3 names"),
])
def test_another_count_of_label_columns_is_refused_naming_both_options(tmp_path, files, columns, said, capsys):
    db = tmp_path / "runs.db"
    assert main(["bandit", "--datasets", files[0], "iris", files[1], "--label-column", *columns,
                 "--policies", "uniform", "--steps", "2", "--db", str(db)]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err and "give one name for every CSV file, or one per CSV file in their order in --datasets" in err
    assert len(err.splitlines()) == 1 and not db.exists()


def test_a_label_column_a_file_lacks_names_that_file_and_column(tmp_path, files, capsys):
    assert main(["bandit", "--datasets", files[0], files[1], "--label-column", "species", "kind",
                 "--policies", "uniform", "--steps", "2", "--db", str(tmp_path / "runs.db")]) == 2
    assert f"--datasets {files[0]} --label-column species: label_column 'species' is not a column" in \
        capsys.readouterr().err
