"""Where tokspec.fast keeps derived build artifacts (BPE tables, double arrays, Unicode flags).

``<cache root>/<sub>/``, the cache root being the per-user folder of :mod:`tokspec._cache_store`
(``$TOKSPEC_CACHE``, else ``~/.cache/tokspec``; owner and mode checked). Files are keyed by the
content they were derived from and written with a digest over that key and their bytes
(:func:`load_arrays` / :func:`save_arrays`): a file that fails it is rebuilt, never trusted. An
unusable cache (not ours, read-only, full) means working uncached, with a one-line note.
Out of scope: eviction (files are small and content-addressed).
"""

from __future__ import annotations

from pathlib import Path

from tokspec._cache_store import load_arrays, save_arrays, subfolder

__all__ = ["cache_dir", "load_arrays", "save_arrays"]


def cache_dir(sub: str) -> Path | None:
    """The cache folder ``sub``, created if missing; None when there is no usable cache."""
    return subfolder(sub)
