"""What a run records as the name of its objective (and of its constraints): the callable's
label, :func:`objective_label`, or a ``name=`` given, :func:`check_name`."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from typing import Any

__all__ = ["objective_label", "check_name"]


def objective_label(objective: Callable[..., Any]) -> str:
    """The name a run records for an objective given no ``name=``: ``module:qualname``
    (``"__main__:sphere"``, ``"mypkg.problems:Rosenbrock"`` for an instance of a callable
    class). A lambda also names its file and line (``"__main__:<lambda>@script.py:12"``):
    every lambda's qualified name is ``<lambda>``, and runs of different lambdas on the
    same box must not be reported as one problem.

    Args:
        objective: any callable (function, lambda, ``functools.partial``, or an instance
            of a class with ``__call__``).

    Returns:
        The label, e.g. ``"partial(mypkg.problems:branin)"`` for a partial.

    Raises:
        TypeError: ``objective`` is not callable.
    """
    if not callable(objective):
        raise TypeError(f"objective must be callable, got {type(objective).__name__}")
    if isinstance(objective, functools.partial):
        return f"partial({objective_label(objective.func)})"
    qualname = getattr(objective, "__qualname__", None) or getattr(objective, "__name__", None)
    module = getattr(objective, "__module__", None)
    if not isinstance(qualname, str):  # an instance of a callable class: name the class
        qualname, module = type(objective).__qualname__, type(objective).__module__
    label = f"{module}:{qualname}" if module else qualname
    code = getattr(objective, "__code__", None)
    if qualname.endswith("<lambda>") and code is not None:
        label += f"@{os.path.basename(code.co_filename)}:{code.co_firstlineno}"
    return label


def check_name(name: Any) -> str:
    """``name=`` checked: a non-empty, printable string (``TypeError`` / ``ValueError`` naming it)."""
    if not isinstance(name, str):
        raise TypeError(f"name must be a string or None, got {type(name).__name__}")
    if not name.strip() or not name.isprintable():
        # reports print it in a table row: blank or control characters would make the row unreadable
        raise ValueError(f"name must be a non-empty, printable string (no newlines), got {name!r}")
    return name
