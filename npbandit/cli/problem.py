"""The problem ``npbandit optimize`` is told on its command line, read and checked before any
evaluation: ``--function list`` and ``--dim`` (the test functions, and which take a
dimension), ``--bounds`` (a ``2 x d`` JSON array), ``--space`` (a JSON search space, or a
file holding one, with its ``parameter_constraints``), the ``module:function`` of
``--objective`` and ``--constraints``, and the direction of each objective (``--maximize``,
``--directions``) as :func:`npbandit.optimize`'s ``minimize``. Every error names the flag it
is about.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from npbandit.cli.options import import_user_module

__all__ = ["list_functions", "check_dim", "parse_bounds", "parse_space", "load_callable", "parse_direction",
           "read_minimize", "DIRECTIONS"]

#: --directions' words (Optuna's, and their short forms) -> optimize's minimize for that objective
DIRECTIONS = {"minimize": True, "maximize": False, "min": True, "max": False}


def list_functions() -> None:
    """``--function list``: every problem, whether it is offered and, if so, its dimension
    or that ``--dim`` sets it."""
    from npbandit.envs.blackbox import _synthetic_problems, functions_taking_dim

    takes_dim = set(functions_taking_dim())
    for name, (cls, reason) in sorted(_synthetic_problems().items()):
        if reason is not None:
            print(f"{name:<26}not offered: {reason}")
        else:
            print(f"{name:<26}offered, " + ("--dim sets its dimension" if name in takes_dim else
                                            f"dimension {cls().dim}"))


def check_dim(function: str, dim: int | None) -> None:
    """``--dim`` given with a function of fixed dimension: ``ValueError`` saying its dimension
    and which functions take one (an unknown name is left to ``make_test_function``)."""
    from npbandit.envs.blackbox import available_functions, functions_taking_dim, make_test_function

    name = function.lower()
    if dim is None or name not in available_functions() or name in functions_taking_dim():
        return
    raise ValueError(f"--dim {dim}: {function} has a fixed dimension ({make_test_function(function).dim}); --dim "
                     f"applies only to the functions that take one: {', '.join(functions_taking_dim())}")


def parse_bounds(text: str) -> object:
    """``--bounds`` JSON -> a validated ``2 x d`` array; errors name ``--bounds``."""
    from npbandit.envs.bounds import as_bounds

    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"--bounds must be a 2 x d JSON array such as '[[0, 0], [1, 1]]' (lower row, upper row); "
                         f"{text!r} is not valid JSON: {err}") from None
    return as_bounds(value, name="--bounds",
                     named="with --objective, name each input with --space (a JSON search space)")


def parse_space(text: str, args: argparse.Namespace) -> Any:
    """``--space`` (JSON, or a path to a file holding it) -> a :class:`~npbandit.space.SearchSpace`;
    errors name ``--space``. Its ``"parameter_constraints"``, a list of strings beside the
    parameters (each parameter's value is an object), go to ``args.parameter_constraints``
    (with ``--parameter-constraint`` too: refused, one place for them), and an error about
    one names it as ``--space parameter_constraints value i`` (``args.flag_overrides``)."""
    from pathlib import Path

    from npbandit.space import as_search_space

    source, what = text, "--space"
    if not text.lstrip().startswith("{"):
        path = Path(text)
        if not path.is_file():
            raise ValueError(f"--space must be a JSON object or the path of a file holding one; no file {text!r}")
        source, what = path.read_text(), f"--space file {text!r}"  # the line and column below are the file's
    try:
        value = json.loads(source)
    except json.JSONDecodeError as err:
        raise ValueError(f"{what} is not valid JSON: {err}") from None
    # beside the parameters (each an object); a list, refused below if it is not one
    if isinstance(value, dict) and "parameter_constraints" in value and not isinstance(
            value["parameter_constraints"], dict):
        if args.parameter_constraints is not None:
            raise ValueError("--space holds parameter_constraints and --parameter-constraint gives more: give them "
                             "in one place")
        args.parameter_constraints = value.pop("parameter_constraints")
        # a refusal of one of them names it in the file, not as a --parameter-constraint flag never given
        args.flag_overrides = {"parameter_constraints": ("--space parameter_constraints", True)}
        if not isinstance(args.parameter_constraints, list) or not all(
                isinstance(c, str) for c in args.parameter_constraints):
            raise ValueError(f"--space: parameter_constraints must be a list of strings such as \"x0 + 2*x1 <= 3\", "
                             f"got {args.parameter_constraints!r}")
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise ValueError('--space must map each name to its parameter, e.g. {"lr": {"type": "float", "low": 0.001, '
                         f'"high": 0.1, "log": true}}}}, got {value!r}')
    try:
        return as_search_space(value)
    except (TypeError, ValueError, KeyError) as err:
        raise ValueError(f"--space: {err}") from None


def load_callable(spec: str, option: str):
    """``module:function`` -> the function (the module found as :func:`import_user_module`
    finds it); errors name ``option``."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ValueError(f"{option} must look like module:function, got {spec!r}")
    try:
        if "/" in module_name or "\\" in module_name:
            raise ValueError(f"{option}: {module_name!r} is a path")
        module = import_user_module(module_name, option)
    except ValueError:
        if not (module_name.endswith(".py") or "/" in module_name or "\\" in module_name):
            raise
        # a file's path (not a module pkg.py): import_user_module's error would speak of packages
        from pathlib import PurePath

        stem = PurePath(module_name.replace("\\", "/")).name.removesuffix(".py")
        raise ValueError(f"{option} takes a module's name, not a file's path: {stem}:{attr} for {spec} (the module is "
                         "looked up on the import path and in the current directory: run from the file's folder, "
                         "or put that folder on PYTHONPATH)") from None
    if not hasattr(module, attr):
        raise ValueError(f"{option}: {module_name!r} has no attribute {attr!r}")
    function = getattr(module, attr)
    if not callable(function):
        raise ValueError(f"{option}: {spec!r} is a {type(function).__name__}, not a function")
    return function


def parse_direction(text: str) -> bool | tuple[str, bool]:
    """One of ``--directions``' words as optimize's ``minimize`` for that objective: a direction
    (``minimize``), or an objective's name with its direction (``cost=minimize``: ``("cost",
    True)``; argparse ``type``)."""
    name, sep, word = text.rpartition("=")
    direction = DIRECTIONS.get((word if sep else text).strip().lower())
    if direction is None or (sep and not name.strip()):
        raise argparse.ArgumentTypeError(f"expected minimize or maximize (or min / max), got {text!r} (or the "
                                         "objective named, NAME=DIRECTION: cost=minimize)")
    return (name, direction) if sep else direction


def read_minimize(args: argparse.Namespace) -> bool | list[bool] | dict[str, bool]:
    """optimize's ``minimize`` from ``--maximize`` (one objective) or ``--directions`` (several:
    a list of directions, or a mapping of names to directions for ``cost=minimize ...``);
    ``ValueError`` naming the flags for ``--directions`` given where several objectives cannot be,
    or named and unnamed directions mixed, or a name given twice."""
    if args.directions is None:
        return not args.maximize
    if args.function:
        raise ValueError("--directions is for an --objective returning one value per direction; a named --function "
                         "has one objective (--maximize maximises it)")
    if args.maximize:
        raise ValueError("--maximize is for one objective; with --directions give each objective's direction there "
                         "(--directions maximize maximize maximises two)")
    if len(args.directions) < 2:
        raise ValueError(f"--directions needs at least two directions, one per value the objective returns; got "
                         f"{len(args.directions)} (for one objective leave --directions out: it is minimised, or "
                         f"maximised with --maximize)")
    named = [each for each in args.directions if isinstance(each, tuple)]
    if not named:
        return list(args.directions)
    if len(named) != len(args.directions):
        raise ValueError("--directions names every objective (NAME=DIRECTION, e.g. cost=minimize accuracy=maximize) "
                         "or none (minimize maximize)")
    directions: dict[str, bool] = {}
    for name, direction in named:
        if name in directions:
            raise ValueError(f"--directions names {name!r} twice; each objective needs a name of its own")
        directions[name] = direction
    return directions
