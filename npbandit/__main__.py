"""``python -m npbandit``: the ``npbandit`` command, run as its console script runs it
(:func:`npbandit_console.main`: a Ctrl-C while the commands' modules import prints one
line, not a traceback; one during ``npbandit``'s own package import, before this module
runs, still prints Python's)."""

import sys

from npbandit_console import main

if __name__ == "__main__":
    sys.exit(main())
