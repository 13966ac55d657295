"""A CSV header with a column of no name -- a trailing comma (``x,y,kind,``, as some spreadsheets
write it), a leading one (a saved index), two in a row -- is refused naming the file, the
column and what to do, where it read as a feature of missing values, or as rows one field
short of the header."""

import pytest

from npbandit.cli import main
from npbandit.envs.classification import read_csv


@pytest.mark.parametrize("text,match", [
    # the rows end with a comma too, or not: the header is named either way
    ("x,y,kind,\n1,2,a,\n3,4,b,\n", r"data.csv's header ends with a comma: its last column \(column 4, after 'kind'\) "
                                    r"has no name; remove the trailing comma from the header line \(and from every "
                                    r"row that has one\), or name the column$"),
    ("x,y,kind,\n1,2,a\n3,4,b\n", r"data.csv's header ends with a comma: its last column \(column 4"),
    (",x,kind\n0,1,a\n1,2,b\n", r"data.csv's header starts with a comma: its first column has no name .*name it in "
                                r"the header row, or remove the column"),
    ("x,,kind\n1,2,a\n3,4,b\n", r"data.csv's header has no name for column 2, between 'x' and 'kind' \(two commas "
                                r"in a row\); name it in the header row, or remove the column"),
])
def test_a_column_without_a_name_is_refused_naming_the_file_and_the_column(tmp_path, text, match):
    path = tmp_path / "data.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        read_csv(path, "kind")


def test_the_command_names_the_file_and_the_empty_column(tmp_path, capsys):
    path = tmp_path / "flowers.csv"
    path.write_text("x,y,species,\n1,2,a,\n3,4,b,\n", encoding="utf-8")
    code = main(["bandit", "--db", str(tmp_path / "runs.db"), "--datasets", str(path), "--label-column", "species",
                 "--policies", "uniform", "--steps", "2"])
    err = capsys.readouterr().err
    assert code != 0 and "flowers.csv's header ends with a comma: its last column (column 4, after 'species')" in err
    assert not (tmp_path / "runs.db").exists()
