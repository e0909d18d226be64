"""``python -m tensorlang``: the same command line as the ``tensorlang`` script."""

import sys

from .cli import main

sys.exit(main())
