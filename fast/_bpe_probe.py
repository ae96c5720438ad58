"""The compiled BPE's table probes: packed hash tables, the byte trie's longest match, pair validity.

Split from ``tokspec.fast.bpe_kernel`` (which re-exports these names and runs the merge loop that
writes the longest-match walk and the memo probe out inline; see its docstring for why). Tables
(built in numpy from ``tokspec.fast.bpe_tables``' arrays, no compile; cached on disk with them by
``CompiledBPE.from_ranks``):

- packed hash tables (filled by :func:`fill_table`): one int64 ``key << vbits | value`` per slot, empty = -1,
  linear probing, load <= 1/2; the trie's deeper edges ``(node << 8 | byte) -> child`` and the pair
  table ``(a << 20 | b) -> id of bytes(a) + bytes(b)`` for every token that splits into two tokens;
- the trie's dense levels: ``root`` (256 + 65536 nodes, from the arrays) and ``level3`` (the third
  byte of three-byte UTF-8 characters, :func:`fill_level3`);
- the pair-validity memo (:func:`_valid`): direct-mapped ``key << 1 | valid`` words.

Hashing: ``((key * M) >> 32) & mask``, all in int64, so the index is never negative (a sign bit
reaching the index silently turns a hash into numba's wrap-around indexing) and the same bits come
out compiled and interpreted (numpy int64, whose products wrap). The product is ``_wrapping.mul64``:
numba's own int64 ``*`` makes an overflow undefined behaviour (LLVM ``nsw``), which LLVM was seen
to exploit (that module's docstring). Theorem relied on by
:func:`_pair_valid`: the seed's Corollary IIa as stated in ``tokspec.fast.bpe_backtrack``
(``BacktrackBPE._pair_valid``), checked by ``tests/test_fast_bpe_memo.py`` and
``tests/test_fast_kernels.py``. Out of scope: the merge loop itself (``_bpe_encode._encode``).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._wrapping import mul64
from tokspec.fast.bpe_tables import NODE_BITS, PAIR_SHIFT

__all__ = ["fill_level3", "fill_table"]  # and private kernels, imported by name (bpe_kernel, _counting_kernels)

_M = 0x5851F42D4C957F2D  # odd 63-bit multiplier (< 2**63: an int64 literal in both modes)
_PAIR_SHIFT = PAIR_SHIFT  # as plain module ints: the kernels' (frozen) globals
_NODE_BITS = NODE_BITS


@kernel(lean=True)
def _slot(key: int, mask: int) -> int:
    return (mul64(key, _M) >> 32) & mask  # mul64: wraps (``_wrapping``; numba's ``*`` may not)


def fill_table(keys: np.ndarray, vals: np.ndarray, vbits: int, table: np.ndarray) -> None:
    """Insert ``keys[i] -> vals[i]`` (distinct keys >= 0, ``0 <= vals[i] < 2**vbits``) into an
    empty (-1) packed table: one int64 ``key << vbits | val`` per slot, in numpy rounds (no
    compile on a cold start). The layout is exactly that of linear probing inserting the keys one
    by one in index order (key ``i`` in the first slot from its home not taken by a key ``j < i``):
    each round, every key not yet placed looks at its current slot; the lowest of those arriving
    at a slot takes it if the slot is empty or held by a higher key, which is evicted; every other
    arrival, and every evicted key, moves on one slot. A slot's holder only ever gets lower, so a
    key passes only slots held by lower keys, which characterizes the one-by-one layout (induction
    on ``i``) and gives :func:`_get`'s invariant (a key is reached from its home through occupied
    slots). Rounds: about the longest probe (39 for cl100k_base's pair table at load 0.45); each
    round O(keys still moving)."""
    n = len(keys)
    mask = len(table) - 1
    at = ((keys * np.int64(_M)) >> 32) & mask  # _slot, in int64 like the kernel (array products wrap silently)
    owner = np.full(len(table), n)  # slot -> index of its key; n (above all) = empty
    low = np.full(len(table), n)    # slot -> lowest key arriving there this round
    todo = np.arange(n)
    while len(todo):
        here = at[todo]
        np.minimum.at(low, here, todo)
        first = low[here] == todo  # one per slot arrived at: its lowest arrival
        slots, held = here[first], owner[here[first]]
        owner[slots] = np.minimum(held, todo[first])  # the lower of holder and arrival keeps the slot
        evicted = held[owner[slots] != held]
        low[here] = n
        todo = np.concatenate([todo[owner[here] != todo], evicted[evicted != n]])
        at[todo] = (at[todo] + 1) & mask
    used = np.flatnonzero(owner != n)
    who = owner[used]
    table[used] = (keys[who] << vbits) | vals[who]


@kernel(lean=True)
def _get(table: np.ndarray, key: int, vbits: int) -> int:
    """The value stored for ``key`` in a packed table, -1 if none. One memory access expected."""
    mask = len(table) - 1
    h = _slot(key, mask)
    while True:
        e = table[h]
        if e < 0:
            return -1
        if (e >> vbits) == key:
            return int(e & ((1 << vbits) - 1))
        h = (h + 1) & mask


@kernel(lean=True)
def _pair_valid(a: int, b: int, left: np.ndarray, right: np.ndarray, pairs: np.ndarray) -> bool:
    """``BacktrackBPE._pair_valid(a, b, inf)``: replay the merge history at the boundary."""
    limit = 1 << 62
    while True:
        c = _get(pairs, (np.int64(a) << _PAIR_SHIFT) | b, np.int64(_PAIR_SHIFT))  # not a literal: one compiled _get
        if 0 <= c < limit:
            return False
        a_base = left[a] == a
        b_base = left[b] == b
        if a_base and b_base:
            return True
        if not a_base and (b_base or a > b):  # a was formed last: undo it
            limit = a
            a = right[a]
        else:  # b was formed last (or at the same rank, to the right of a): undo it
            limit = b + 1
            b = left[b]


@kernel
def _valid(a: int, b: int, memo: np.ndarray, left: np.ndarray, right: np.ndarray, pairs: np.ndarray) -> bool:
    """:func:`_pair_valid` through a direct-mapped memo of ``key << 1 | valid`` words (one int64
    write per entry, so threads sharing the memo can only miss, never read a torn entry)."""
    key = (np.int64(a) << _PAIR_SHIFT) | b
    slot = _slot(key, len(memo) - 1)
    e = memo[slot]
    if (e >> 1) == key:
        return (e & 1) == 1
    ok = _pair_valid(a, b, left, right, pairs)
    memo[slot] = (key << 1) | (1 if ok else 0)
    return ok


@kernel
def _longest(data: np.ndarray, pos: int, end: int, max_len: int, root: np.ndarray, trie: np.ndarray,
             n_ids: int, level3: np.ndarray) -> int:
    """Id of the longest reachable token equal to ``data[pos:q]``, ``q <= end`` (a single byte
    always is one). Trie nodes where a token ends carry that token's id (other nodes: ids >=
    ``n_ids``); the first two levels are dense (``root``: 256 + 65536 nodes), the third dense for
    three-byte UTF-8 characters (``level3``, :func:`fill_level3`), the rest hashed.
    O(longest match)."""
    first = data[pos]
    best = root[first]
    stop = min(end, pos + max_len)
    if pos + 1 >= stop:
        return best
    second = data[pos + 1]
    node = root[256 + ((np.int64(first) << 8) | second)]
    if node < 0:
        return best
    if node < n_ids:
        best = node
    q = pos + 2
    if q < stop and (first & 0xF0) == 0xE0 and (second & 0xC0) == 0x80 and (data[q] & 0xC0) == 0x80:
        node = level3[((np.int64(first) & 0x0F) << 12) | ((np.int64(second) & 0x3F) << 6) | (data[q] & 0x3F)]
        if node < 0:
            return best
        if node < n_ids:
            best = node
        q += 1
    while q < stop:
        node = _get(trie, (np.int64(node) << 8) | data[q], np.int64(_NODE_BITS))
        if node < 0:
            break
        if node < n_ids:
            best = node
        q += 1
    return best


def fill_level3(root: np.ndarray, trie: np.ndarray, level3: np.ndarray) -> None:
    """``level3[(lead & 0xF) << 12 | (b1 & 0x3F) << 6 | (b2 & 0x3F)]`` = the trie child of the
    depth-2 node ``lead b1`` on byte ``b2`` (-1 if none), for every lead byte E0..EF and
    continuation bytes b1, b2 (80..BF): the third byte of every three-byte UTF-8 character
    (CJK) in one dense read instead of a hash probe. 65,536 int32 entries, built at load in numpy
    (no compile): :func:`_get`'s probe run for all entries at once, one round per probe step."""
    idx = np.arange(1 << 16)
    lead, c1, c2 = idx >> 12, (idx >> 6) & 0x3F, idx & 0x3F
    node = root[256 + (((0xE0 | lead) << 8) | (0x80 | c1))].astype(np.int64)
    key = (node << 8) | (0x80 | c2)  # no depth-2 node (-1): a negative key, equal to no stored key
    mask = len(trie) - 1
    h = ((key * np.int64(_M)) >> 32) & mask
    level3[:] = -1
    todo = idx  # entries whose probe goes on
    while len(todo):
        e = trie[h[todo]]
        hit = (e >> _NODE_BITS) == key[todo]  # an empty slot (-1) matches no key: keys are never -1
        level3[todo[hit]] = e[hit] & ((1 << _NODE_BITS) - 1)
        todo = todo[(e != -1) & ~hit]  # an empty slot ends the probe: no child
        h[todo] = (h[todo] + 1) & mask
