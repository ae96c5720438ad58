"""A cache of merged short pieces kept across calls, one per thread, for the compiled BPE.

Why: the pretokens that are not one token (``_piece_table`` misses, about 8% of English pretokens)
cost most of ``bpe_kernel._encode``'s time on English: measured on 1 MB of prose drawn from many
corpora (``tokspec.app.bench.stages.english_varied``), 7,137 distinct such pieces took about 9 ms of
the merge's 18 ms, about 500 ns each (dependent probes into the trie, the pair-validity memo and
the pair table). The per-call cache (``_piece_cache``) helps only within one call; words recur
across the documents of a stream (on a second megabyte of such prose, 44% of these pieces' occurrences
were seen in the first). toktok-rs, the fastest exact peer, keeps state across calls too (issue 29's
note: a text it has seen encodes about twice as fast as a new one).

Exactness (no theorem beyond determinism, as for ``_piece_cache``): a piece's ids are a function of
its bytes and the vocabulary's tables (each piece is encoded afresh). An entry holds the piece's
bytes themselves (at most :data:`STORE_MAX`, packed with the length, so equal words mean equal
bytes) and all its ids; a hit compares every byte, never a hash only. A store belongs to one
``CompiledBPE`` (its tables never change) and one thread (``CompiledBPE`` hands each thread its own,
so a GIL-free kernel never reads an entry another thread is writing). Checked by
``tests/test_fast_bpe_piece_store.py`` (hits, collisions, limits, threads, against the merge
without the store).

Layout: :data:`SLOTS` slots of 8 int64 words (one 64-byte cache line; 2 MB in all): words 0-2 the
bytes packed little-endian (zero padded), word 3 ``n | k << 8`` (``n`` bytes, ``k`` ids; 0 = empty
slot), words 4-7 up to 8 ids, two per word (32 bits each). Two-way sets: a piece hashes to a pair
of adjacent slots; a new entry takes the first, whose entry moves to the second (the set keeps its
two latest pieces). Measured on the 1 MB above, second call: of the 17,375 occurrences of such
pieces of at most 24 bytes, 93% hit with 16K slots and 99% with 64K (direct-mapped, 12% of the
6,970 distinct pieces shared a slot even at 64K); 32K slots is the default. Pieces longer than :data:`STORE_MAX` bytes or of more than :data:`IDS_MAX`
ids are not stored (the per-call cache still sees them). Cost: a lookup O(n) to pack and one
cache line; a store O(n + k). Out of scope: ids >= 2**31.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._wrapping import add64, mul64

__all__ = ["IDS_MAX", "SLOTS", "STORE_MAX", "new_store", "store_op", "store_set", "store_words"]

STORE_MAX = 24  # bytes of the longest piece stored (three packed words)
IDS_MAX = 8     # ids of the longest encoding stored (four words of two)
SLOTS = 1 << 15
_STORE_MAX = STORE_MAX  # plain module ints: the kernels' (frozen) globals
_IDS_MAX = IDS_MAX
_LOW32 = (1 << 32) - 1
_M0 = 0x5851F42D4C957F2D  # odd multipliers < 2**63 (int64 literals in both modes)
_M1 = 0x2545F4914F6CDD1D
_M2 = 0x1B873593CC9E2D51
_M3 = 0x4CF5AD432745937F


def new_store(slots: int = SLOTS) -> np.ndarray:
    """An empty store of ``slots`` slots (a power of two); ``slots=0``: a store that never hits
    and never keeps anything (the self-check's, which must run the merge on every piece)."""
    if slots and slots & (slots - 1):
        raise ValueError(f"store slots must be a power of two: slots={slots!r}")
    return np.zeros(8 * slots, dtype=np.int64)


@kernel(lean=True)
def store_words(w0: np.int64, w1: np.int64, w2: np.int64, n: int) -> tuple[np.int64, np.int64, np.int64]:
    """The three packed words of a piece of ``1 <= n <= 24`` bytes whose first 24 bytes, loaded
    little-endian, are ``w0``, ``w1``, ``w2``: each masked to the piece, zero past it (the same bits
    as :func:`store_op`'s byte loop). Scalars only, for ``bpe_kernel._encode``'s written-out lookup
    and its look-ahead."""
    k0 = w0 if n >= 8 else w0 & ((np.int64(1) << (8 * n)) - 1)
    k1 = np.int64(0) if n <= 8 else w1 if n >= 16 else w1 & ((np.int64(1) << (8 * (n - 8))) - 1)
    k2 = np.int64(0) if n <= 16 else w2 if n >= 24 else w2 & ((np.int64(1) << (8 * (n - 16))) - 1)
    return k0, k1, k2


@kernel(lean=True)
def store_set(k0: np.int64, k1: np.int64, k2: np.int64, n: int, set_mask: int) -> np.int64:
    """The first word of the set of the piece with packed words ``k0..k2`` and length ``n``, in a
    store of ``set_mask + 1`` sets (16 words each): ``h = k0*M0 ^ k1*M1 + k2*M2 + n``, then its high
    half folded onto its low half and mixed by a fourth multiply, ``(h ^ h >> 32) * M3``; the set
    is bits 32 up of that (``mul64``/``add64`` wrap, ``_wrapping``; ``>>`` is arithmetic).

    Why the fold: a product's bit ``j`` depends only on the factor's bits ``<= j``, so bytes 6 and
    7 of each word (bits 48-63) never reached bits 32-45 of ``h`` alone, the set index of the
    default store. Runs of one byte of lengths 6-8, 14-16 and 22-24 then shared a set, three pieces
    for two ways: on issue 29's 2 MB of English (cl100k_base, after two calls), 1,622 runs of 15
    spaces were still merged again each time they came (2 with the fold; no speed change
    measurable on that text, a 15-byte merge is cheap)."""
    h = add64(add64(mul64(k0, _M0) ^ mul64(k1, _M1), mul64(k2, _M2)), n)
    return 16 * ((mul64(h ^ (h >> 32), _M3) >> 32) & set_mask)


@kernel(lean=True)
def store_op(store: np.ndarray, data: np.ndarray, b0: int, n: int, out: np.ndarray, base: int, count: int,
             put: int) -> int:
    """``put == 1``: keep ``data[b0:b0+n]`` -> ``out[base:count]`` in way 0 of its set, the entry
    there moving to way 1 (nothing kept if the piece or its ids are too long, or the store is
    empty); returns ``count``. Any other ``put``: if ``data[b0:b0+n]`` is stored, write its ids to
    ``out[count:]`` and return the new count, else -1 (also for ``n`` outside ``1..24`` and for the
    empty store; ``base`` unused). One kernel for both, ``put`` a run-time value: each compiled
    function (and each literal argument numba specializes on) costs about 0.3 s of a cold start's
    compile. The length checks stay here although ``_encode`` routes only short pieces: past 24
    bytes the packing would alias distinct pieces."""
    k = count - base
    if n < 1 or n > _STORE_MAX or len(store) == 0 or (put == 1 and (k < 1 or k > _IDS_MAX)):
        return count if put == 1 else -1
    k0 = np.int64(0)
    k1 = np.int64(0)
    k2 = np.int64(0)
    for i in range(n):  # byte i in word i // 8, little-endian
        byte = np.int64(data[b0 + i]) << (8 * (i & 7))
        if i < 8:
            k0 |= byte
        elif i < 16:
            k1 |= byte
        else:
            k2 |= byte
    at = store_set(k0, k1, k2, n, (len(store) >> 4) - 1)
    if put == 1:
        for i in range(8):
            store[at + 8 + i] = store[at + i]
        store[at] = k0
        store[at + 1] = k1
        store[at + 2] = k2
        store[at + 3] = n | (k << 8)
        for j in range(4):
            lo = np.int64(out[base + 2 * j]) if 2 * j < k else np.int64(0)
            hi = np.int64(out[base + 2 * j + 1]) if 2 * j + 1 < k else np.int64(0)
            store[at + 4 + j] = lo | (hi << 32)
        return count
    for way in range(2):
        if (store[at + 3] & 0xFF) == n and store[at] == k0 and store[at + 1] == k1 and store[at + 2] == k2:
            k = store[at + 3] >> 8
            for j in range(k):
                out[count + j] = (store[at + 4 + (j >> 1)] >> (32 * (j & 1))) & _LOW32
            return int(count + k)
        at += 8
    return -1

