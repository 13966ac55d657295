"""What every ``npbandit`` command shares: option types, the help formatter that shows
the defaults, and whether to draw progress bars."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import math
import os
import re
import shlex
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NoReturn

__all__ = ["BriefErrorParser", "DefaultsHelpFormatter", "show_default", "positive_int", "non_negative_int",
           "seed_or_none", "finite_float", "positive_float", "thread_count", "parse_assignments", "progress",
           "import_user_module", "import_plugins", "PLUGIN_HELP", "option_flags", "in_flags", "results_line"]

#: ``--plugin``'s help (the commands whose options name a surrogate family, a prior or a checkpoint)
PLUGIN_HELP = ("a module to import before anything is resolved: a dotted name on the import path (the current "
               "directory included) or a path to a .py file; its npbandit.surrogates.register_model / "
               "npbandit.priors.register_prior calls then apply, so the names it registers can be given here "
               "(repeatable, imported in the order given; default: none)")


def show_default(value: Any) -> str:
    """How ``--help`` writes a default: a list as its items separated by spaces (as it is
    typed), anything else as ``str``."""
    if isinstance(value, (list, tuple)):
        return " ".join(str(v) for v in value)
    return str(value)


class DefaultsHelpFormatter(argparse.HelpFormatter):
    """Help that ends each option's text with ``(default: VALUE)``, VALUE read from the
    parser itself, so that the help cannot name another default than the one that runs.

    An option whose default is ``None`` (absent), ``False`` (a flag) or ``[]`` (a
    repeatable option) gets nothing appended: its own help says in words what happens
    when it is not given (``default: 2d + 1``)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        default = action.default
        if (not action.option_strings or default is None or default is False or default == []
                or default is argparse.SUPPRESS):
            return text
        # the help string is %-formatted by argparse: a % in a default must stay literal
        return f"{text} (default: {show_default(default).replace('%', '%%')})"


class BriefErrorParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose usage error is two lines on stderr, status 2: where to
    read the usage (``usage: PROG ... (see PROG --help)``) and the error (``PROG: error:
    ...``), not the usage of every option before it (``--help`` prints that)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"usage: {self.prog} ... (see {self.prog} --help)\n{self.prog}: error: {message}\n")


def option_flags(parser: argparse.ArgumentParser, aliases: dict[str, str] | None = None) -> dict[str, tuple]:
    """The flag a user types for each of a command's Python argument names: ``{dest: (flag,
    takes a list)}`` for every option of ``parser`` (a command passes each option's value to
    the library argument of the same name, as ``--commit-every`` to ``commit_every``), and
    ``{dest: (flag, False, negated)}`` for an on / off switch (``--trust-region`` /
    ``--no-trust-region``: ``negated`` is the off form), plus ``aliases``: library argument
    names the command's options feed under another name (``{"policy": "policies"}``:
    :func:`~npbandit.policies.make_bandit_policy`'s ``policy`` is one of ``--policies``)."""
    def flag_of(action: argparse.Action) -> tuple:
        flag = next((o for o in action.option_strings if o.startswith("--")), action.option_strings[0])
        if isinstance(action, argparse.BooleanOptionalAction):
            return flag, False, next(o for o in action.option_strings if o.startswith("--no-"))
        # a list flag: several values at once (nargs) or one per use (action="append")
        return flag, action.nargs in ("+", "*") or isinstance(action, argparse._AppendAction)

    flags = {a.dest: flag_of(a) for a in parser._actions if a.option_strings and a.dest != "help"}
    for name, dest in (aliases or {}).items():
        flags[name] = flags[dest]
    return flags


def in_flags(text: str, flags: dict[str, tuple]) -> str:
    """An error message from the library as the command line's user reads it: an argument
    name in the forms the library's checks write it becomes the flag typed. Those forms: an
    item of a list (``seeds[1] repeats seed 0`` -> ``--seeds value 2 repeats seed 0``), an
    item of a list flag by its key (``minimize['cost']: ...``, of ``--directions cost=min
    ...``, -> ``--directions 'cost': ...``), a keyword (``surrogate='random'`` ->
    ``--surrogate 'random'``; a switch's ``branches=True`` -> ``--branches``, ``=False`` ->
    ``--no-branches``), and the message's subject when it is plainly an argument:
    followed by ``must`` or by a quoted value (``beta must be >= 0``, ``liar 'penalty' needs
    ...``) or a name with an underscore (``acq_optimizer maximises ...``). A name elsewhere
    is prose (``bandit policy 'x' needs ...``, a message that opens ``out of ...``) and is
    left as it is; a message that names the flag itself beside the argument
    (``eval_prior_params (--eval-prior-set): ...``) names it once."""
    def item(match: re.Match) -> str:
        flag, is_list = flags[match[1]]
        return f"{flag} value {int(match[2]) + 1}" if is_list else match[0]

    names = "|".join(sorted((re.escape(n) for n in flags), key=len, reverse=True))
    if not names:
        return text
    text = re.sub(rf"(?<![\w.\-'\"])({names})\[(\d+)\]", item, text)
    quoted = r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")"""  # a key as repr() writes a string
    text = re.sub(rf"(?<![\w.\-'\"])({names})\[{quoted}\]",
                  lambda m: f"{flags[m[1]][0]} {m[2]}" if flags[m[1]][1] else m[0], text)
    # a switch's keyword as the form typed: trust_region=True -> --trust-region, =False -> --no-trust-region
    text = re.sub(rf"(?<![\w.\-'\"])({names})=(True|False)\b",
                  lambda m: m[0] if len(flags[m[1]]) < 3 else flags[m[1]][0 if m[2] == "True" else 2], text)
    text = re.sub(rf"(?<![\w.\-'\"])({names})=(?=\S)", lambda m: f"{flags[m[1]][0]} ", text)
    subject = re.match(rf"({names})(?= must | '| \")", text) or re.match(r"(\w+_\w+)(?= )", text)
    if subject is not None and subject[1] in flags:
        text = flags[subject[1]][0] + text[subject.end():]
    for flag, *_ in set(flags.values()):  # a library message that already said the flag: once is enough
        text = text.replace(f"{flag} ({flag})", flag)
    return text


# argparse ``type`` functions. Each raises ArgumentTypeError with what was expected, which
# argparse prints after the option's name ("argument --budget: expected a positive integer,
# got 'x'"); any other error would print the function's name instead ("invalid positive_int value").


def positive_int(text: str) -> int:
    """An option's value as an int >= 1 (argparse ``type``)."""
    value = _parse(int, text, "a positive integer")
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def thread_count(text: str) -> int | str:
    """``--threads``' value: a positive int, or ``"torch"`` (torch's own count; argparse ``type``)."""
    if text == "torch":
        return text
    try:
        return positive_int(text)
    except (ValueError, argparse.ArgumentTypeError):
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'torch', got {text}") from None


def non_negative_int(text: str) -> int:
    """An option's value as an int >= 0, e.g. a seed (argparse ``type``)."""
    value = _parse(int, text, "an integer >= 0")
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, got {text!r}")
    return value


def seed_or_none(text: str) -> int | None:
    """A seed option's value: an int >= 0, or ``none`` (any case) for ``None``, which the
    function it feeds reads as "draw a seed" (argparse ``type``)."""
    if text.strip().lower() == "none":
        return None
    try:
        return non_negative_int(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0 or 'none', got {text!r}") from None


def finite_float(text: str) -> float:
    """An option's value as a finite real number (argparse ``type``; ``nan`` / ``inf`` refused)."""
    value = _parse(float, text, "a finite number")
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"expected a finite number, got {text!r}")
    return value


def positive_float(text: str) -> float:
    """An option's value as a finite real number > 0, e.g. seconds (argparse ``type``)."""
    value = _parse(float, text, "a positive number")
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"expected a positive number, got {text!r}")
    return value


def _parse(kind: type, text: str, expected: str) -> Any:
    try:
        return kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {text!r}") from None


def parse_assignments(items: list[str], flag: str) -> dict[str, object]:
    """``["a=1", "b=0.5", "c=rbf", "d=[1,2]"]`` -> typed dict (JSON values, else strings)."""
    values: dict[str, object] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise SystemExit(f"npbandit: {flag} expects FIELD=VALUE, got {item!r}")
        try:
            values[key] = json.loads(raw)
        except json.JSONDecodeError:
            values[key] = raw
    return values


def progress() -> bool:
    """Whether to draw progress bars: on a terminal only. A bar redraws in place there; in
    a pipe or log file every redraw would be a line of its own, burying the one line that
    says how the run ended."""
    return sys.stderr.isatty()


def results_line(db: str) -> str:
    """The last line of a command that logged runs (``npbandit bandit``, ``npbandit optimize``):
    the database they are in and the command that shows them, ``--db`` left out for the
    default one; a password in ``db`` shown as ``***`` in both
    (:func:`~npbandit.storage.display_url`). Printed whether or not stdout is a terminal, as
    ``npbandit demo`` prints its report: a log or a script sees what a person sees, one line
    with a fixed start (``runs saved in``) that is easy to drop."""
    from npbandit.storage import DEFAULT_URL, display_url

    shown = display_url(db)
    command = "npbandit report" + ("" if db == DEFAULT_URL else f" --db {shlex.quote(shown)}")
    return f"runs saved in {shown}; see them with: {command}"


def import_user_module(name: str, option: str) -> ModuleType:
    """The module ``name`` (dotted) imported, for the user's ``option`` (errors name it):
    looked up on the import path and, last, in the current directory. The console script's
    ``sys.path[0]`` is its bin directory, not the working directory that ``python -m
    npbandit.cli`` would put first; the working directory comes last so that a local file
    cannot shadow a library npbandit imports.

    Raises:
        ValueError: the module cannot be found, or importing it raised (the error quoted).
    """
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name is not None and not (name == err.name or name.startswith(err.name + ".")):
            # found, but something the module imports is missing
            raise ValueError(f"{option}: importing {name!r} raised ModuleNotFoundError: {err}") from None
        raise ValueError(f"{option}: cannot import {name!r} (searched the import path and {cwd}): {err}") from None
    except Exception as err:  # noqa: BLE001 - the user's module failed while importing
        raise ValueError(f"{option}: importing {name!r} raised {type(err).__name__}: {err}") from None


def import_plugins(plugins: list[str], option: str = "--plugin") -> list[ModuleType]:
    """Import each of ``plugins`` in order, for what importing them registers (surrogate
    families, priors): a dotted module name (:func:`import_user_module`), or a path to a
    ``.py`` file, imported as the module named by the file's stem (so a later ``import
    <stem>`` finds it and does not register its classes a second time).

    Raises:
        ValueError: naming ``option`` and the plugin: a file that does not exist, a stem that
            is not a module name or names another module already imported, or a module that
            cannot be found or raised while importing.
    """
    modules = []
    for plugin in plugins:
        if not plugin.endswith(".py"):
            modules.append(import_user_module(plugin, f"{option} {plugin}"))
            continue
        path = Path(plugin).resolve()
        if not path.is_file():
            raise ValueError(f"{option} {plugin}: no such file")
        name = path.stem
        if not name.isidentifier():
            raise ValueError(f"{option} {plugin}: {name!r} is not a module name (letters, digits and _); rename "
                             "the file")
        loaded = sys.modules.get(name)
        if loaded is not None:
            if Path(getattr(loaded, "__file__", None) or "").resolve() != path:
                raise ValueError(f"{option} {plugin}: a module named {name!r} is already imported (from "
                                 f"{getattr(loaded, '__file__', None) or 'no file'}); rename the file")
            modules.append(loaded)  # imported already (given twice, or imported by name)
            continue
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        try:
            spec.loader.exec_module(module)
        except Exception as err:  # noqa: BLE001 - the user's module failed while importing
            del sys.modules[name]
            raise ValueError(f"{option} {plugin}: importing it raised {type(err).__name__}: {err}") from None
        modules.append(module)
    return modules
