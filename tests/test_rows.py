"""npbandit.rows.RowBuffer: rows appended one at a time, read back as one array."""

import numpy as np
import pytest

from npbandit.rows import RowBuffer


def test_the_array_holds_every_row_appended_in_order_across_reallocations():
    rows = RowBuffer((3,), capacity=2)
    assert rows.array.shape == (0, 3) and len(rows) == 0
    expected = np.random.default_rng(0).normal(size=(37, 3))
    early = None
    for i, row in enumerate(expected):
        rows.append(row)
        if i == 1:
            early = rows.array  # taken before the buffer grows
        assert len(rows) == i + 1 and np.array_equal(rows.array, expected[:i + 1])
    assert np.array_equal(early, expected[:2])  # a view taken earlier still holds its rows
    assert rows.array.dtype == np.float64


def test_the_array_is_read_only_and_rows_keep_their_shape():
    numbers = RowBuffer(())
    numbers.append(1)
    numbers.append(np.float32(2.5))
    assert numbers.array.tolist() == [1.0, 2.5]
    with pytest.raises(ValueError, match="read-only"):
        numbers.array[0] = 3.0
    with pytest.raises(ValueError, match=r"row must have shape \(\), got \(2,\)"):
        numbers.append([1.0, 2.0])
    inferred = RowBuffer()
    assert inferred.array.shape == (0,)
    inferred.append([1.0, 2.0])
    with pytest.raises(ValueError, match=r"row must have shape \(2,\), got \(3,\)"):
        inferred.append([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="capacity must be a positive int"):
        RowBuffer(capacity=0)


def test_evaluation_order_interleaves_failures_where_they_happened():
    from npbandit.rows import evaluation_order

    # rows: observations o0..o3, then failures f0 (after 1 observation), f1 (after 1), f2 (after 4)
    order = evaluation_order(4, [1, 1, 4])
    assert order.tolist() == [0, 4, 5, 1, 2, 3, 6]  # o0 f0 f1 o1 o2 o3 f2
    assert evaluation_order(3, []).tolist() == [0, 1, 2]
    assert evaluation_order(0, [0, 0]).tolist() == [0, 1]
