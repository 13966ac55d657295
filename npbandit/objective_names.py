"""What a run records as the name of its objective (and of its constraints): the callable's
label, :func:`objective_label`, or a ``name=`` given, :func:`check_name`; and, for a search of
several objectives, the name of each objective: those given as ``minimize``'s keys
(``{"cost": True, "accuracy": False}``, :func:`check_objective_names`), else the names of
their positions, :func:`positional_names` (``f0``, ``f1``, ...), which is also what a run's
record without names means (:func:`recorded_names`)."""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["objective_label", "check_name", "positional_names", "check_objective_names", "recorded_names"]


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


def positional_names(m: int) -> tuple[str, ...]:
    """The names of ``m`` objectives given by position (``minimize`` a list): ``("f0", "f1", ...)``."""
    return tuple(f"f{i}" for i in range(m))


def check_objective_names(names: Sequence[Any], argument: str = "minimize") -> tuple[str, ...]:
    """The keys of a mapping of objective names to directions, checked: each a non-empty,
    printable string (a report prints it in a table header), no two the same.

    Raises:
        TypeError: a key that is not a string, naming the entry (``minimize[3]``: its position).
        ValueError: an empty or blank key, one with control characters, or one given twice,
            naming the entry.
    """
    seen: set[str] = set()
    for i, name in enumerate(names):
        if not isinstance(name, str):
            raise TypeError(f"{argument} names each objective by a string key; entry {i} ({name!r}) is a "
                            f"{type(name).__name__}")
        if not name.strip() or not name.isprintable():
            raise ValueError(f"{argument}[{name!r}]: an objective's name must be a non-empty, printable string "
                             "(no newlines)")
        if name in seen:
            raise ValueError(f"{argument}[{name!r}]: the name is given twice; each objective needs a name of its own")
        seen.add(name)
    return tuple(names)


def recorded_names(params: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The objective names a run's ``env_params`` say: its ``objective_names`` where it recorded
    them (a run given named objectives), else the positional names of its ``minimize`` when that
    is a list of several directions; ``None`` for a run of one objective (or one whose record says
    neither, as a caller's own ``env_params`` may)."""
    names = params.get("objective_names")
    if isinstance(names, list) and names and all(isinstance(n, str) for n in names):
        return tuple(names)
    minimize = params.get("minimize")
    if isinstance(minimize, list) and len(minimize) > 1:
        return positional_names(len(minimize))
    return None
