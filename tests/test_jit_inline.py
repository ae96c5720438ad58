"""``tokspec._jit.kernel(inline=True)``: numba inlines the kernel into compiled callers; interpreted
(``TOKSPEC_JIT=0`` or an ``interpreted_module`` copy) it is the plain function, like ``@kernel``."""

from __future__ import annotations

import numpy as np
import pytest
from tokspec._interpreted import interpreted_module
from tokspec._jit import JIT_ENABLED, interpreted, kernel
from tokspec.fast import pretok_peek2


def _sum_first(a: np.ndarray, k: int) -> int:
    s = 0
    for i in range(k):
        s += a[i]
    return s


def test_inline_kernel_computes_the_same_and_keeps_its_plain_body() -> None:
    inlined = kernel(inline=True)(_sum_first)
    plain = kernel(_sum_first)
    a = np.arange(10, dtype=np.int64)
    assert inlined(a, 4) == plain(a, 4) == _sum_first(a, 4) == 6
    assert interpreted(inlined) is _sum_first
    if JIT_ENABLED:
        assert inlined.targetoptions.get("inline") == "always"
        assert plain.targetoptions.get("inline", "never") == "never"
    else:
        assert inlined is _sum_first


@pytest.mark.parametrize("name", ["_o200k_contraction", "_u_star_w_plus", "_whitespace_end", "_fold"])
def test_interpreted_copy_has_plain_inline_kernels(name: str) -> None:
    copy = interpreted_module(pretok_peek2)
    fn = getattr(copy, name)
    assert not hasattr(fn, "py_func") and fn.__module__ == copy.__name__


def test_uncached_kernel_never_touches_the_disk_cache() -> None:
    """``kernel(cache=False)`` (what ``fuzz.mutants`` compiles mutant copies with): numba's cache
    is off for it, on for the default (when a cache folder is usable), also via ``@kernel(...)``."""
    from tokspec import _jit

    uncached = kernel(_sum_first, cache=False)
    inlined_uncached = kernel(inline=True, cache=False)(_sum_first)
    cached = kernel(_sum_first)
    a = np.arange(10, dtype=np.int64)
    assert uncached(a, 5) == inlined_uncached(a, 5) == cached(a, 5) == 10
    if JIT_ENABLED:
        assert type(uncached._cache).__name__ == type(inlined_uncached._cache).__name__ == "NullCache"
        assert inlined_uncached.targetoptions.get("inline") == "always"
        want = "_GuardedCache" if _jit._ensure_cache() else "NullCache"
        assert type(cached._cache).__name__ == want
    else:
        assert uncached is inlined_uncached is _sum_first


def test_entry_point_is_the_compiled_version_of_exactly_those_types(monkeypatch: pytest.MonkeyPatch) -> None:
    """``entry_point``: None before a version for the arguments' types exists and for other types
    (dtype, read-only flag); after a call, the machine code of that version, computing the same;
    None in interpreted mode."""
    import tokspec._jit as jit

    summed = kernel(cache=False)(_sum_first)
    a = np.arange(10, dtype=np.int64)
    assert jit.entry_point(summed, (a, 4)) is None
    assert summed(a, 4) == 6
    entry = jit.entry_point(summed, (a, 4))
    if not JIT_ENABLED:
        assert entry is None
        return
    assert entry is not None and entry(a, 7) == 21
    read_only = np.arange(10, dtype=np.int64)
    read_only.flags.writeable = False
    assert jit.entry_point(summed, (read_only, 4)) is None
    assert jit.entry_point(summed, (a.astype(np.int32), 4)) is None
    monkeypatch.setattr(jit, "JIT_ENABLED", False)
    assert jit.entry_point(summed, (a, 4)) is None
