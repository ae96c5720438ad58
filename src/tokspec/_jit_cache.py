"""numba's on-disk cache, guarded: an unreadable entry is recompiled, an unwritable one skipped.

numba's own ``FunctionCache`` lets a garbage or truncated index or data file escape as
``UnpicklingError``/``EOFError`` from the first call of a kernel with new argument types (which
tokspec would report as an engine fault on every input), and a full or read-only disk as
``OSError``. :func:`guard_cache` wraps a dispatcher's cache so that any error while loading means
"not cached" (the kernel is compiled, the bad index removed so the next run rewrites it) and any
error while saving means "not saved"; each prints one note on stderr.

Out of scope: a *valid* pickle with wrong machine code planted by another user -- prevented by the
folder being the user's own (``tokspec._cache_store``), not detected here.
"""

from __future__ import annotations

import os
from typing import Any

from tokspec._cache_store import note

__all__ = ["guard_cache"]


class _GuardedCache:
    """Delegates to numba's cache; load/save errors become "not cached" (module docstring)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def load_overload(self, sig: Any, target_context: Any) -> Any:
        try:
            return self._inner.load_overload(sig, target_context)
        except Exception as exc:  # noqa: BLE001 - any unreadable entry: compile instead
            note(f"numba cache in {self._inner.cache_path!r} unreadable ({type(exc).__name__}); "
                 "recompiling")
            index = getattr(getattr(self._inner, "_cache_file", None), "_index_path", None)
            if index:
                try:
                    os.unlink(index)
                except OSError:
                    pass
            return None

    def save_overload(self, sig: Any, data: Any) -> None:
        try:
            self._inner.save_overload(sig, data)
        except Exception as exc:  # noqa: BLE001 - full or read-only cache: keep the compiled code
            note(f"numba cache in {self._inner.cache_path!r} not writable ({type(exc).__name__}); "
                 "working uncached")


def guard_cache(dispatcher: Any) -> None:
    """Wrap ``dispatcher``'s numba cache (a no-op if it has none)."""
    inner = getattr(dispatcher, "_cache", None)
    if inner is not None and hasattr(inner, "load_overload") and not isinstance(inner, _GuardedCache):
        dispatcher._cache = _GuardedCache(inner)
