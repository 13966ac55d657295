"""A black-box box checked (:func:`as_bounds`): ``2 x d``, lower row then upper row, as in
BoTorch; (low, high) pairs per input, scipy.optimize's layout, refused with the transpose named.
A point of the unit cube checked (:func:`unit_point`), as a black box's action."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from npbandit.validation import is_real, is_tensor

__all__ = ["as_bounds", "unit_point", "PAIRS_SHOWN"]


def as_bounds(bounds: Any, name: str = "bounds", named: str | None = None) -> np.ndarray:
    """Validate a 2 x d box (lower row, upper row) and return it as float64 numpy.

    An array that reads as ``(low, high)`` pairs, one per input (scipy.optimize's layout: shape
    ``(d, 2)``, each pair ordered), is refused with a hint naming the transpose that fixes it,
    then ``named`` (the caller's other way to give the inputs, e.g. ``optimize``'s ``space=``).
    It is never taken as pairs: at ``d = 2`` both layouts are ``2 x 2``, and a box whose rows are
    ordered is read as the rows it is given."""
    raw = np.asarray(bounds.detach().cpu() if is_tensor(bounds) else bounds, dtype=object)
    # numbers only: float() would read True as 1.0 and "0" as 0.0
    if raw.dtype == object and any(not is_real(v) for v in raw.reshape(-1)):
        raise ValueError(f"{name} must be a 2 x d array of numbers (lower row, upper row), got {bounds!r}")
    try:
        array = np.asarray(raw, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 2 x d array of numbers (lower row, upper row)") from None
    if array.ndim != 2 or array.shape[0] != 2 or array.shape[1] < 1:
        raise ValueError(f"{name} must have shape 2 x d (lower row, upper row), got {array.shape}"
                         f"{_pairs_hint(array, name, named)}")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} must be finite")
    if not (array[1] > array[0]).all():
        raise ValueError(f"{name}: every lower bound must be below its upper bound, got {array.tolist()}"
                         f"{_pairs_hint(array, name, named)}")
    with np.errstate(over="ignore"):
        if not np.isfinite(array[1] - array[0]).all():
            raise ValueError(f"{name}: the box is too wide to represent (upper - lower overflows), "
                             f"got {array.tolist()}")
    return array


def unit_point(name: str, point: Any, dim: int) -> np.ndarray:
    """``point`` as a float64 point ``[dim]`` of the unit cube ``[0, 1]^dim``; ``ValueError``
    naming it ``name`` otherwise, showing it as given when it holds no numbers (a str,
    ``None``, a dict: NumPy would read ``None`` as NaN and ``"0.5"`` as a number)."""
    try:
        array = None if point is None or isinstance(point, (str, bytes, Mapping)) else \
            np.asarray(point, dtype=np.float64)
    except (TypeError, ValueError):
        array = None
    if array is None or array.shape != (dim,) or not np.isfinite(array).all() or (array < 0).any() \
            or (array > 1).any():
        raise ValueError(f"{name} must be a finite point of [0, 1]^{dim}, got "
                         f"{point if array is None else array.tolist()!r}")
    return array


#: the most inputs whose transpose :func:`as_bounds`' hint writes out in full
PAIRS_SHOWN = 8


def _pairs_hint(array: np.ndarray, name: str, named: str | None) -> str:
    """For a refused ``array`` that reads as ``(low, high)`` pairs, one per input (shape ``(d, 2)``,
    finite, each pair ordered, so that its transpose is a box), what it was taken as, the layout
    ``name`` takes, the transpose that fixes it (written out for up to :data:`PAIRS_SHOWN` inputs),
    then ``named``; ``""`` for any other array."""
    if (array.ndim != 2 or array.shape[1] != 2 or array.shape[0] < 1 or not np.isfinite(array).all()
            or not (array[:, 1] > array[:, 0]).all()):
        return ""
    d = array.shape[0]
    passed = f"{array.tolist()} reads as" if d <= PAIRS_SHOWN else "it reads as"
    fix = f", {name}={array.T.tolist()}" if d <= PAIRS_SHOWN else f" ({name}.T for a numpy array)"
    hint = (f": {passed} {d} (low, high) pair{'s' if d > 1 else ''}, one per input (scipy.optimize's layout), but "
            f"{name} takes the lower bounds as one row and the upper bounds as the other (BoTorch's layout): pass "
            f"the transpose{fix}")
    return hint if named is None else f"{hint}; or {named}"
