"""Moved to :mod:`tokspec.formats.spm_model`; this path stays importable as the very same module."""

import sys

from tokspec.formats import spm_model as _moved

sys.modules[__name__] = _moved
