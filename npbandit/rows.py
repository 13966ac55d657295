"""Observations kept as one array that grows in place.

A search that keeps its observations in a Python list and stacks the list into an array
before every proposal pays ``O(n)`` Python work per step, so a long run's steps grow slower
with every evaluation. :class:`RowBuffer` keeps the rows in a float64 array whose capacity
doubles when full: appending a row is amortised ``O(1)``, and :attr:`RowBuffer.array`, the
rows so far, is a view that costs nothing to take. ``BOPolicy`` keeps its observations'
inputs and values in such buffers beside its lists, and ``optimize``'s check that the
values can be standardised reads its values from one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["RowBuffer", "evaluation_order"]


class RowBuffer:
    """Rows of one shape appended one at a time to a float64 array grown by doubling.

    Args:
        shape: the shape of one row (``()``: one number per row; ``(d,)``: a point);
            ``None`` (default): the first row's.
        capacity: rows held before the first reallocation.

    :attr:`array` is ``[n, *shape]``, a read-only view of the rows appended so far (a row
    once written never changes; a later append past the capacity moves the rows to a new
    array, and views taken before keep the old one).
    """

    def __init__(self, shape: tuple[int, ...] | None = None, capacity: int = 64) -> None:
        if not isinstance(capacity, int) or isinstance(capacity, bool) or capacity < 1:
            raise ValueError(f"capacity must be a positive int, got {capacity!r}")
        self._shape = None if shape is None else tuple(shape)
        self._capacity = capacity
        self._data: np.ndarray | None = None
        self._n = 0

    def append(self, row: Any) -> None:
        """Append one row (anything ``np.asarray`` reads as float64 of the buffer's row shape).

        Raises:
            ValueError: ``row`` of another shape than the buffer's rows.
        """
        value = np.asarray(row, dtype=np.float64)
        if self._shape is None:
            self._shape = value.shape
        if value.shape != self._shape:
            raise ValueError(f"row must have shape {self._shape}, got {value.shape}")
        if self._data is None:
            self._data = np.empty((self._capacity, *self._shape), dtype=np.float64)
        elif self._n == len(self._data):
            grown = np.empty((2 * len(self._data), *self._shape), dtype=np.float64)
            grown[:self._n] = self._data[:self._n]
            self._data = grown
        self._data[self._n] = value
        self._n += 1

    @property
    def array(self) -> np.ndarray:
        """The rows so far, ``[n, *shape]`` (``[0, *shape]`` before the first; ``[0]`` when the
        row shape is still unknown), read-only."""
        if self._data is None:
            return np.empty((0, *(self._shape or ())), dtype=np.float64)
        view = self._data[:self._n]
        view.flags.writeable = False
        return view

    def __len__(self) -> int:
        return self._n


def evaluation_order(observed: int, failed_after: Sequence[int]) -> np.ndarray:
    """``[observed + len(failed_after)]`` the rows of ``observed`` observations followed by
    the failures (failure ``j`` made after ``failed_after[j]`` observations, in order) as they
    were evaluated: a permutation of ``0 .. n - 1``."""
    if not len(failed_after):
        return np.arange(observed)
    when = np.concatenate([np.arange(observed, dtype=np.float64), np.asarray(failed_after, dtype=np.float64) - 0.5])
    return np.argsort(when, kind="stable")  # failures after the same observation keep their order
