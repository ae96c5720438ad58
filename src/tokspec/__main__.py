"""``python -m tokspec`` runs the command line."""

import sys

from tokspec.app.cli import main

sys.exit(main())
