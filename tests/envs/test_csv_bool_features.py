"""A CSV feature column of True/False values (as pandas and R write a bool column) is read as
1.0/0.0, as pandas reads it and scikit-learn takes it; bools mixed with numbers in one column
are refused naming the line, as is any other text."""

import numpy as np
import pytest

from npbandit.envs.classification import read_csv


def test_a_column_of_true_and_false_in_any_case_is_a_feature_of_ones_and_zeros(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("x,member,flag,kind\n0.5,True,TRUE,a\n1.5,False,false,b\n2.5,True,False,a\n", encoding="utf-8")
    data = read_csv(path, "kind")
    assert data.features == ("x", "member", "flag")
    np.testing.assert_array_equal(data.X, [[0.5, 1.0, 1.0], [1.5, 0.0, 0.0], [2.5, 1.0, 0.0]])
    # the same data written as numbers is the same data set: one fingerprint, one task
    numbers = tmp_path / "numbers.csv"
    numbers.write_text("x,member,flag,kind\n0.5,1,1,a\n1.5,0,0,b\n2.5,1,0,a\n", encoding="utf-8")
    np.testing.assert_array_equal(read_csv(numbers, "kind").X, data.X)


@pytest.mark.parametrize("column, match", [
    ("True\n1", r"feature column 'member' .* mixes True/False with numbers: line 2 holds 'True'"),
    ("0\nFalse", r"feature column 'member' .* mixes True/False with numbers: line 3 holds 'False'"),
    ("True\nyes", r"feature column 'member' .* is not numeric: line 3 holds 'yes' .*a number or True/False"),
])
def test_bools_mixed_with_numbers_or_other_text_are_refused_naming_the_line(tmp_path, column, match):
    first, second = column.split("\n")
    path = tmp_path / "data.csv"
    path.write_text(f"member,kind\n{first},a\n{second},b\n", encoding="utf-8")
    with pytest.raises(ValueError, match=match):
        read_csv(path, "kind")


def test_a_missing_cell_in_a_bool_column_is_a_missing_value(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text("member,kind\nTrue,a\n,b\nFalse,a\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"feature column 'member' .* has 1 missing, NaN or infinite value\(s\) "
                                         r"\(line\(s\) 3\)"):
        read_csv(path, "kind")
