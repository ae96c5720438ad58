"""Moved to :mod:`tokspec.formats.models`; this path stays importable as the very same module."""

import sys

from tokspec.formats import models as _moved

sys.modules[__name__] = _moved
