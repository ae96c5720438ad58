"""Moved to :mod:`tokspec.formats.hf_pipeline`; this path stays importable as the very same module."""

import sys

from tokspec.formats import hf_pipeline as _moved

sys.modules[__name__] = _moved
