"""Moved to :mod:`tokspec.formats.vocab`; this path stays importable as the very same module."""

import sys

from tokspec.formats import vocab as _moved

sys.modules[__name__] = _moved
