"""Moved to :mod:`tokspec.formats._protowire`; this path stays importable as the very same module."""

import sys

from tokspec.formats import _protowire as _moved

sys.modules[__name__] = _moved
