"""``python -m tokspec`` runs the command line."""

import sys

from tokspec.cli import main

sys.exit(main())
