"""Where tokspec.fast keeps derived build artifacts (double arrays, Unicode class tables).

``$TOKSPEC_CACHE/<sub>/`` (default: ``<tempdir>/tokspec-cache/<sub>/``). Callers key files by the
content they were derived from and verify or rebuild on load; a cache file is never trusted blindly.
Out of scope: eviction (files are small and content-addressed).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

__all__ = ["cache_dir"]


def cache_dir(sub: str) -> Path:
    """The cache folder ``sub``, created if missing."""
    root = os.environ.get("TOKSPEC_CACHE") or os.path.join(tempfile.gettempdir(), "tokspec-cache")
    path = Path(root) / sub
    path.mkdir(parents=True, exist_ok=True)
    return path
