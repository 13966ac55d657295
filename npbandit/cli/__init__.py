"""The ``npbandit`` console script (``npbandit.cli:main``; also ``python -m npbandit.cli``).

One module per command (:mod:`~npbandit.cli.demo`, :mod:`~npbandit.cli.optimize`,
:mod:`~npbandit.cli.bandit`, :mod:`~npbandit.cli.report`, :mod:`~npbandit.cli.train`,
:mod:`~npbandit.cli.models`), each with its ``COMMAND`` name, ``add_arguments(parser)`` and
``run(args) -> int`` (what ``optimize``'s flags say of its problem is read in
:mod:`~npbandit.cli.problem`); this module builds the parser from them, gives the commands that
log or read runs their ``--db`` option, gives every command ``--threads`` (torch's intra-op
threads, :mod:`npbandit.threads`) and runs it inside a :class:`~npbandit.threads.torch_threads`
block at that count, and turns expected failures into one line on stderr, as it does a warning
(``npbandit optimize: warning: ...``) and a bad argument (a short usage line, then the error,
:class:`~npbandit.cli.options.BriefErrorParser`). A command module
may set ``DEFAULT_THREADS`` (``"torch"`` for ``train``: torch's own count unless told) or
``SCOPES_THREADS = True`` (``optimize``: its ``run`` hands ``--threads`` to the library,
which scopes it to the surrogate's work and leaves the user's objective at the caller's count),
and ``TAKES_PLUGINS = True`` (``train``, ``optimize``, ``models``: their options name surrogate
families, priors or checkpoints): such a command gets the repeatable ``--plugin MODULE``, each module
imported before the command runs (:func:`~npbandit.cli.options.import_plugins`), so that what
it registers (``register_model``, ``register_prior``) can be named.
Every option's ``--help`` ends with the default that runs (:class:`~npbandit.cli.options.DefaultsHelpFormatter`).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import warnings
from concurrent.futures import BrokenExecutor

from npbandit._version import __version__
from npbandit.cli import bandit, demo, models, optimize, report, train
from npbandit.cli.models import MODELS_NOTE, models_text
from npbandit.cli.options import (
    PLUGIN_HELP,
    BriefErrorParser,
    DefaultsHelpFormatter,
    import_plugins,
    in_flags,
    option_flags,
    thread_count,
)
from npbandit.envs import ObjectiveError
from npbandit.stopping import RunInterrupted
from npbandit.storage import DEFAULT_URL
from npbandit.threads import THREADS_ENV, torch_threads

__all__ = ["main", "build_parser", "models_text", "MODELS_NOTE", "COMMANDS"]

#: the commands, in the order ``npbandit --help`` lists them
COMMANDS = (demo, optimize, bandit, report, train, models)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``npbandit`` argument parser: one subcommand per module of :data:`COMMANDS`.

    ``only``: the name of the one command whose options are added (``main`` passes the
    command it was given); the others get their name and help alone. Building a
    command's options imports what they list (the surrogates, acquisitions and priors,
    and with them torch), which ``npbandit --help`` and ``npbandit report`` do not need."""
    parser = BriefErrorParser(prog="npbandit", description="Bayesian optimisation and contextual bandits "
                              "with pretrained neural-process surrogates.")
    parser.add_argument("--version", action="version", version=f"npbandit {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=BriefErrorParser)
    for command in COMMANDS:
        built = only is None or command.COMMAND == only
        text = command.help_text() if built and hasattr(command, "help_text") else command.HELP
        sub = commands.add_parser(command.COMMAND, help=text, description=text,
                                  formatter_class=DefaultsHelpFormatter)
        if not built:
            continue
        command.add_arguments(sub)
        if command.USES_DB:
            sub.add_argument("--db", default=DEFAULT_URL,
                             help="the run database: a SQLAlchemy URL or an SQLite file path (a leading ~ "
                                  "is the home directory, also where the shell left it, quoted)")
        default = ("torch's own count" if getattr(command, "DEFAULT_THREADS", None) == "torch" else
                   f"${THREADS_ENV}, else OMP_NUM_THREADS / MKL_NUM_THREADS, else 1")
        if getattr(command, "TAKES_PLUGINS", False):
            sub.add_argument("--plugin", dest="plugins", action="append", default=[], metavar="MODULE",
                             help=PLUGIN_HELP)
        sub.add_argument("--threads", type=thread_count, metavar="N",
                         help=f"torch CPU threads for npbandit's own computation: a positive integer, or 'torch' for "
                              f"torch's own count (default: {default})")
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run one command; returns the exit status.

    Every expected failure is one line on stderr and status 2: bad arguments, unknown or
    unfitting checkpoints, a database that cannot be opened or written, an objective that
    fails (``ObjectiveError``) or returns something other than a number, a training run that
    diverges (``FloatingPointError``), a Dask scheduler that does not answer (``OSError``)
    or Dask not installed (``ImportError``, naming the extra). An argument the library's
    checks name in a ``TypeError`` / ``ValueError`` (``beta must be >= 0``, ``seeds[1]
    ...``) is named as the flag the user typed (:func:`~npbandit.cli.options.in_flags`; a
    command module's ``ARGUMENT_ALIASES`` maps library argument names its options feed under
    another name, and ``args.flag_overrides``, set by a command, names an argument it read
    from elsewhere: ``optimize``'s ``--space`` file's ``parameter_constraints``). A warning
    raised while a command runs (``budget`` within the initial design, say) is one line on
    stderr too, ``npbandit COMMAND: warning: ...``. SIGINT /
    SIGTERM during a run: the run is saved and recorded as ``interrupted`` (``train``: its
    state is saved), one line says so (``optimize``: and how to go on, ``--initial-from
    RUN_ID``), and the status is 128 + the signal number. An ``optimize`` run an evaluation
    failed and stopped says the same after the error: the run's id, what it saved, and how
    to go on; so does one whose objective called ``sys.exit``, which exits with its code."""
    given = sys.argv[1:] if argv is None else argv
    names = {module.COMMAND for module in COMMANDS}
    parser = build_parser(only=given[0] if given and given[0] in names else "")
    args = parser.parse_args(argv)
    command = {module.COMMAND: module for module in COMMANDS}[args.command]
    threads = args.threads if args.threads is not None else getattr(command, "DEFAULT_THREADS", None)
    sub = next(a for a in parser._actions if a.dest == "command").choices[args.command]
    flags = option_flags(sub, getattr(command, "ARGUMENT_ALIASES", None))
    try:
        with warnings.catch_warnings():  # the settings as they were once the command returns
            warnings.showwarning = _warning_line(args.command, flags, args)
            import_plugins(getattr(args, "plugins", []))  # what they register is named by the options
            if getattr(command, "SCOPES_THREADS", False):
                return command.run(args)
            with torch_threads(threads):
                return command.run(args)
    except RunInterrupted as err:
        print(f"npbandit {args.command}: {err}{_how_to_go_on(args, err)}", file=sys.stderr)
        return 128 + int(signal.SIGINT if err.signum is None else err.signum)  # None: a KeyboardInterrupt raised
    except BrokenPipeError:  # the reader of our output went away (`npbandit report | head`): stop quietly, as cat does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # so that Python's flush at exit does not raise again
        return 128 + int(getattr(signal, "SIGPIPE", 13))  # 13 where the platform names none
    except KeyboardInterrupt:  # outside a run: nothing to save
        print(f"npbandit {args.command}: interrupted", file=sys.stderr)
        return 128 + int(signal.SIGINT)
    except SystemExit as err:  # the objective's sys.exit stopped a run (else: exit as asked, unsaid)
        if not hasattr(err, "records"):
            raise
        said = "; ".join(getattr(err, "__notes__", ())) or f"the run was ended by SystemExit: {err}"
        print(f"npbandit {args.command}: {' '.join(said.split())}{_how_to_go_on(args, err)}", file=sys.stderr)
        return err.code if isinstance(err.code, int) else int(err.code is not None)  # Python's exit status
    except ObjectiveError as err:  # an evaluation failed and stopped the run: say how to go on, as for a signal
        print(f"npbandit {args.command}: {_one_line(err)}{_how_to_go_on(args, err)}", file=sys.stderr)
        return 2
    except BrokenExecutor as err:  # a worker was lost (the OOM killer, os._exit, a crash): the run saved what it had
        print(f"npbandit {args.command}: a worker process died while evaluating (killed, out of memory, or it "
              f"exited), and the pool cannot go on: {type(err).__name__}: {_one_line(err)}{_how_to_go_on(args, err)}",
              file=sys.stderr)
        return 2
    except (TypeError, ValueError) as err:  # a library check's argument names, as the flags the user typed
        flags.update(getattr(args, "flag_overrides", None) or {})  # a value the command read from elsewhere
        print(f"npbandit {args.command}: {in_flags(_one_line(err), flags)}", file=sys.stderr)
        return 2
    except (OSError, ImportError, FloatingPointError) as err:
        print(f"npbandit {args.command}: {_one_line(err)}", file=sys.stderr)
        return 2


def _warning_line(command: str, flags: dict[str, tuple], args: argparse.Namespace):
    """A ``warnings.showwarning`` that prints a warning as one line on stderr,
    ``npbandit COMMAND: warning: MESSAGE`` (the class named unless a ``UserWarning``), not
    Python's two lines with the source line that raised it; in npbandit's own warnings, the
    library's argument names said as the flags typed (``budget=5`` -> ``--budget 5``), as an
    error's are (``flags``, :func:`~npbandit.cli.options.option_flags`; ``args.flag_overrides``
    as the run sets them). Another library's warning, or the user's objective's, is its own text."""
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        kind = "" if category is UserWarning else f" ({category.__name__})"
        text = " ".join(str(message).split())
        if os.path.abspath(str(filename)).startswith(package + os.sep):
            text = in_flags(text, {**flags, **(getattr(args, "flag_overrides", None) or {})})
        print(f"npbandit {command}: warning{kind}: {text}", file=sys.stderr if file is None else file)

    return show


def _how_to_go_on(args: argparse.Namespace, err: RunInterrupted | ObjectiveError | BrokenExecutor | SystemExit) -> str:
    """What the line of an interrupted ``optimize``, or of one an evaluation failed and
    stopped, the objective exited (``sys.exit``) or a lost worker ended, adds: how to continue
    the run it saved (``--initial-from``, with the budget left; a failed run: first which run
    it was and what it saved, a failed evaluation among them, carried into the continuation as
    a failure and not proposed again; an exit's evaluation is not saved); nothing for
    other commands or an unsaved run. A continuation of a run that continued another sees that
    one's evaluations too (:func:`~npbandit.storage.run_evaluations`). An
    interrupted ``bandit`` sweep: that the same command runs the rest."""
    run_id = getattr(err, "run_id", None)
    if args.command == "bandit" and isinstance(err, RunInterrupted):
        return ("; to run the rest, run the same command: the runs the database holds completed are skipped, the "
                "interrupted one runs again" + (" (without --rerun)" if getattr(args, "rerun", False) else ""))
    if args.command != "optimize" or run_id is None:
        return ""
    text = ""
    if not isinstance(err, RunInterrupted):  # an evaluation failed, the objective exited, or a worker was lost
        history = getattr(err, "history", None)
        steps = history if history is not None else getattr(err, "records", None)
        saved = None if steps is None else len(steps)
        count = "" if saved is None else f" {saved} evaluation{'' if saved == 1 else 's'}"
        kind = getattr(err, "kind", "")  # an ObjectiveError's: None when every evaluation failed
        which = "" if saved is None or not isinstance(err, ObjectiveError) else ", every one failed," if kind is None \
            else ", the failed one last,"
        text = f"; run {run_id} saved{count}{which} and is recorded as failed"
    else:
        saved = err.saved
    text += f"; to go on, run the same command with --initial-from {run_id}"
    left = getattr(args, "budget", 0) - (saved or 0)
    if left > 0:
        text += f" --budget {left} (--budget counts the new evaluations)"
    if getattr(args, "initial_from", None) is not None:
        text += (f"; run {run_id} continues run {args.initial_from}, and its continuation sees the evaluations of "
                 "both")
    return text


def _one_line(err: BaseException) -> str:
    text = " ".join(str(err).split())
    if isinstance(err, ObjectiveError) and err.kind is not None:  # one evaluation failed, and the run stopped
        text += " (--on-error skip records failed evaluations and goes on)"
    return text
