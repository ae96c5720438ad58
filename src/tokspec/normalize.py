"""Moved to :mod:`tokspec.formats.normalize`; this path stays importable as the very same module."""

import sys

from tokspec.formats import normalize as _moved

sys.modules[__name__] = _moved
