"""A per-call cache of merged pieces for the compiled BPE: a piece seen earlier in the same call
copies the ids the merge gave it then.

Why: after the whole-piece lookup (``_piece_table``), the pretokens left are those that are not
one short token (about 8% of English and code pretokens), and they cost most of the merge:
measured on 300 KB of English, 5,365 such pieces took 1.74 ms (325 ns each) against 1.43 ms for
the 63,685 others. Words and indentation repeat within a text, so a repeated multi-token piece
copies its ids instead of walking the trie and backtracking again.

Exactness (no theorem beyond determinism): the pieces of a text are encoded independently
(``bpe_kernel._encode`` starts each piece afresh, and ``alive`` marks only positions inside the
piece being encoded), so a piece's ids are a function of its bytes alone. An entry points at the
earlier occurrence itself (its bytes in ``data``, its ids in the output), and a hit compares the
two byte ranges in full: no hash-only match, and the ids copied are final (the merge only rewrites
the ids of the piece it is encoding).

Layout: direct-mapped, two int64 words per slot: ``b0 | n << 40`` (where the earlier piece starts
in ``data``, its length) and ``base | k << 40`` (where its ``k`` ids start in the output); ``n ==
0`` marks an empty slot; a new entry overwrites its slot. The slot is a hash of the first 16
bytes and the length. Allocated by each call (:func:`cache_for`: 16 to 4,096 slots, 256 B to
64 KB, by input size), so threads never share one (the engine stays thread-safe) and nothing
lives between calls. Cost: a hit O(n) (the compare), a miss O(min(n, 16)). Out of scope: inputs
of 2**40 bytes or more, pieces of 2**23 bytes or more (always merged).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._wrapping import mul64

__all__ = ["cache_for", "cache_get", "cache_put"]

_MAX_PIECE = 1 << 23  # plain module ints for the kernels' frozen globals
_LOW = (1 << 40) - 1
_M0 = 0x5851F42D4C957F2D  # odd multipliers < 2**63 (int64 literals in both modes)
_M1 = 0x2545F4914F6CDD1D


@kernel(lean=True)
def cache_for(n_bytes: int) -> np.ndarray:
    """An empty cache for a call over ``n_bytes`` bytes: one slot per 64 bytes, 16..4096 slots.
    ``np.empty`` and a loop rather than ``np.zeros``: a cold start then compiles no ``np.zeros``
    (about 0.4 s less, issue 29). Not inlined: inlined into ``bpe_kernel._encode`` it saved 0.15 s
    more of compile but code text encoded up to 1.5x slower in some runs (one process, interleaved)."""
    slots = 16
    while slots < 4096 and slots * 64 < n_bytes:
        slots *= 2
    cache = np.empty(2 * slots, dtype=np.int64)
    for i in range(2 * slots):
        cache[i] = 0
    return cache


@kernel(inline=True)
def _slot_of(data: np.ndarray, b0: int, n: int, mask: int) -> int:
    """The slot of the piece ``data[b0:b0+n]``: a hash of its first 16 bytes and ``n``."""
    k0 = np.int64(0)
    k1 = np.int64(n)
    for i in range(min(n, 8)):
        k0 |= np.int64(data[b0 + i]) << (8 * i)
    for i in range(8, min(n, 16)):
        k1 ^= np.int64(data[b0 + i]) << (8 * (i - 8))
    return ((mul64(k0, _M0) ^ mul64(k1, _M1)) >> 32) & mask  # mul64: wraps (_wrapping)


@kernel(inline=True)
def cache_get(cache: np.ndarray, data: np.ndarray, b0: int, n: int, out: np.ndarray, count: int) -> int:
    """If a piece equal to ``data[b0:b0+n]`` is cached, copy its ids to ``out[count:]`` and return
    the new count; else -1."""
    if n < 1 or n >= _MAX_PIECE:
        return -1
    h = _slot_of(data, b0, n, (len(cache) >> 1) - 1)
    w0 = cache[2 * h]
    if (w0 >> 40) != n:
        return -1
    prev = w0 & _LOW
    for i in range(n):
        if data[prev + i] != data[b0 + i]:
            return -1
    w1 = cache[2 * h + 1]
    base = w1 & _LOW
    k = w1 >> 40
    for j in range(k):
        out[count + j] = out[base + j]
    return count + k


@kernel(inline=True)
def cache_put(cache: np.ndarray, data: np.ndarray, b0: int, n: int, base: int, count: int) -> None:
    """Record that the piece ``data[b0:b0+n]`` encoded to ``out[base:count]``."""
    if n < 1 or n >= _MAX_PIECE:
        return
    h = _slot_of(data, b0, n, (len(cache) >> 1) - 1)
    cache[2 * h] = np.int64(b0) | (np.int64(n) << 40)
    cache[2 * h + 1] = np.int64(base) | (np.int64(count - base) << 40)
