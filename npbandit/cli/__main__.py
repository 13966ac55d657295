"""``python -m npbandit.cli``: the console script."""

import sys

from npbandit.cli import main

sys.exit(main())
