"""``python -m koikoi.cli``: the command line."""

import sys

from koikoi.cli import main

sys.exit(main())
