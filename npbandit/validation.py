"""Argument checks shared by the public entry points: each raises naming the argument
and what was expected, and none converts what it is given (``True`` is not 1, ``"0.1"``
is not 0.1)."""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["check_bool", "check_int", "check_real", "check_render_mode", "check_options"]


def check_bool(name: str, value: Any) -> bool:
    """``value`` as a bool; a Python or NumPy bool only."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")
    return bool(value)


def check_int(name: str, value: Any, *, minimum: int | None = None) -> int:
    """``value`` as an int (Python or NumPy integer, not a bool), at least ``minimum``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise ValueError(f"{name} must be an int{'' if minimum is None else f' >= {minimum}'}, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be an int >= {minimum}, got {value!r}")
    return int(value)


def check_real(name: str, value: Any, *, low: float | None = None, high: float | None = None) -> float:
    """``value`` as a finite float (any real number type but bool) in ``[low, high]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    if (low is not None and value < low) or (high is not None and value > high):
        span = f"in [{low}, {high}]" if low is not None and high is not None else (
            f">= {low}" if low is not None else f"<= {high}")
        raise ValueError(f"{name} must be {span}, got {value!r}")
    return float(value)


def check_render_mode(render_mode: Any) -> None:
    """Gymnasium passes ``render_mode`` to every environment; these draw nothing."""
    if render_mode is not None:
        raise ValueError(f"render_mode must be None (this environment does not render), got {render_mode!r}")


def check_options(options: Any, known: tuple[str, ...]) -> dict[str, Any]:
    """``reset(options=...)``: a dict with no key outside ``known`` (a misspelt key would
    otherwise be ignored)."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
    unknown = sorted(set(options) - set(known))
    if unknown:
        raise ValueError(f"options has unknown key(s) {unknown}; this environment takes "
                         f"{list(known) if known else 'none'}")
    return options
