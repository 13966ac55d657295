"""The ``npbandit`` console script: :func:`npbandit.cli.main`, imported and run inside
Ctrl-C handling.

A module of its own, outside the ``npbandit`` package: importing anything in the package
first runs ``npbandit/__init__`` (Gymnasium, NumPy) and then the commands' modules (torch),
which takes a few seconds, and a Ctrl-C then would print a traceback. Here it prints
``npbandit: interrupted`` and the status is 130 (128 + SIGINT), as for a Ctrl-C in a command.
"""

import signal
import sys

__all__ = ["main"]


def main() -> int:
    """Import the CLI and run it on ``sys.argv``; returns the exit status."""
    try:
        from npbandit.cli import main as run

        return run()
    except KeyboardInterrupt:  # while starting up (a run's own Ctrl-C is handled by the CLI)
        print("npbandit: interrupted", file=sys.stderr)
        return 128 + int(signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
