"""``python -m npbandit``: the ``npbandit`` command, :func:`npbandit.cli.main` on ``sys.argv``."""

import sys

from npbandit.cli import main

if __name__ == "__main__":
    sys.exit(main())
