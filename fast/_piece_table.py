"""Whole-piece lookup for the compiled BPE: the bytes of a short pretoken -> the token they are.

Shortcut (tiktoken's, made exact): most pretokens of English and code (" the", " of", "self") are
one token of cl100k_base / o200k_base (93% measured, 92% of them at most 12 bytes long). When the
pretoken's bytes are a *reachable* token ``t`` (``tokspec.fast.bpe_backtrack``: BPE over the ranks
below ``t`` ends as a pair, which BPE then merges into ``t``), its BPE encoding is ``[t]``, and one
hash probe here replaces the trie walk and backtracking of ``bpe_kernel._encode``.

Theorem relied on (spec claim ``bpe.whole_piece_shortcut``, ``tokspec.spec.bpe.
prop_whole_piece_shortcut``): a token's bytes encode to that single token iff the token is
reachable. The claim is *falsified* for tokens that are not reachable (its stored counterexample:
``abcd`` with merges ``b+c`` before ``a+b``), so only reachable tokens enter this table: a pretoken
equal to an unreachable token takes the full merge (as BPE does; tiktoken's own short-circuit would
return the token). For each vocabulary the premise is checked where it is built: the compiled
self-check encodes every reachable token with this shortcut off (``CompiledBPE.self_check``), and
the tests check the table against the reachable set, and every token of cl100k_base and
o200k_base against the definition of BPE (``tokspec.spec.bpe.bpe_encode``, no shortcut in it;
``slow``) in ``tests/test_fast_bpe_piece_table.py``.

Layout: open addressing, linear probing, load <= 1/2, two int64 words per slot (one 16-byte
unit: four slots per cache line). For a piece of ``n <= 12`` bytes: word 0 = bytes 0..7 packed
little-endian (zero padded), word 1 = bytes 8..11 packed | ``n << 32`` | ``id << 36``. The length
makes the key exact (a token may contain NUL bytes, so padding alone would be ambiguous); word 1
== 0 marks an empty slot (no piece has length 0). Hashing as in ``bpe_kernel``: multiply, shift
right 32, mask, in int64 (same bits compiled and interpreted: the product is ``_wrapping.mul64``). Build: O(vocabulary) numpy work at load
(a few ms, no compile; cached on disk with the BPE tables by ``CompiledBPE.from_ranks``). Lookup:
two word loads to pack (a byte loop in the text's last 15 bytes), one probe expected.

Long-prefix entries, for the merge's longest match (``_bpe_encode._encode``): for every distinct
first 12 bytes of a reachable token longer than 12 bytes, one entry with length code
:data:`LONG_PREFIX` (13, a length no piece lookup asks for) whose value is the trie node of those
12 bytes. So "which reachable tokens of ``data[pos:]`` start at ``pos``" is answered by independent
probes (lengths 12 down to 3 here, longer ones only where this entry says some exist, then the trie
from that node) instead of a walk whose every step waits for the last: on new text, where the
trie's lines are not cached, that walk was about 45% of a merge (issue 29). A table without them
(:func:`empty_piece_table`) turns that path off. cl100k_base: 2,622 such entries beside 97,005
tokens.
Filter (:func:`piece_filter`): beside the table, a bit array with four bits per slot (128 KB for
cl100k_base, 256 KB for o200k_base, about 9% of the bits set), in which the bit
:func:`filter_bit` of the key of every occupied slot is set (hash bits 40 up; the home slot uses
bits 32 up). A clear bit proves the key absent. The merge's longest-match probes mostly miss (on
new English, per merged piece: 8.2 probes, 3.1 tokens found, 7.5 slots visited), and each miss
read a line of the 4 MB table, not cached on new text; the filter's lines are few enough to stay
cached. So ``_bpe_encode._encode`` reads the bit first and skips the probe when it is clear. A
set bit probes as before, so no answer changes: the filter never has a false negative, by
construction (built from the table's own slots, with the kernel's hash). The whole-piece probe
before the merge is not filtered: about 93% of pretokens are found there, and the extra load cost
repeated English 3-8%. Built at load from the table (numpy, under 10 ms), not cached on disk.
Out of scope: pieces longer than :data:`PIECE_MAX` (they take the merge), ids and nodes >= 2**27.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._le_load import load_le64
from tokspec.fast._wrapping import mul64

__all__ = ["EMPTY_WORDS", "LONG_PREFIX", "PIECE_MAX", "build_piece_table", "empty_piece_table", "filter_bit",
           "piece_filter", "piece_id"]

PIECE_MAX = 12  # longest piece looked up whole (bytes); word 1 holds bytes 8..11
LONG_PREFIX = PIECE_MAX + 1  # the length code of a long-prefix entry (module docstring)
EMPTY_WORDS = 4  # len(empty_piece_table()); every built table is longer
_MAX = PIECE_MAX  # plain module ints for the kernels' frozen globals
_KEY_BITS = 36    # bytes 8..11 (32 bits) and the length (4 bits); the id above them
_KEY_MASK = (1 << 36) - 1
_M0 = 0x5851F42D4C957F2D  # odd multipliers < 2**63 (int64 literals in both modes)
_M1 = 0x2545F4914F6CDD1D
_FILTER_SHIFT = 40  # filter bits are hash bits 40 up (distinct up to 2**24 bits; more only collide more)


@kernel(lean=True)
def _key_of_words(w0: np.int64, w1: np.int64, n: int) -> tuple[np.int64, np.int64]:
    """(word 0, word 1 without the id) of the piece of ``1 <= n <= 12`` bytes whose first 16 bytes,
    loaded little-endian, are ``w0`` and ``w1``: the words masked to the piece, ``n`` above the
    low 32 bits of the second. Scalars only (a kernel taking arrays pays reference counting per
    call), so ``bpe_kernel._encode`` shares it with its look-ahead."""
    k0 = w0 if n >= 8 else w0 & ((np.int64(1) << (8 * n)) - 1)
    k1 = np.int64(n) << 32
    if n > 8:
        k1 |= w1 & ((np.int64(1) << (8 * (n - 8))) - 1)
    return k0, k1


@kernel(inline=True)
def _pack(data: np.ndarray, b0: int, n: int) -> tuple[int, int]:
    """(word 0, word 1 without the id) of the piece ``data[b0:b0+n]``, ``1 <= n <= 12``. Two word
    loads masked to the piece (``_le_load``, :func:`_key_of_words`) where 16 bytes from ``b0``
    are in ``data``, else (the text's last 15 bytes) a byte loop: the same bits."""
    if b0 + 16 <= len(data):
        return _key_of_words(load_le64(data, b0), load_le64(data, b0 + 8), n)
    k0 = np.int64(0)
    for i in range(min(n, 8)):
        k0 |= np.int64(data[b0 + i]) << (8 * i)
    k1 = np.int64(n) << 32
    for i in range(8, n):
        k1 |= np.int64(data[b0 + i]) << (8 * (i - 8))
    return k0, k1


@kernel(inline=True)
def _home(k0: int, k1: int, mask: int) -> int:
    return (_hash_of_key(k0, k1) >> 32) & mask


@kernel(lean=True)
def _hash_of_key(k0: int, k1: int) -> int:
    """The 64-bit hash of the key ``(k0, k1)``: :func:`_home` takes bits 32 up, the filter bits
    40 up (:func:`filter_bit`)."""
    return mul64(k0, _M0) ^ mul64(k1, _M1)  # mul64: wraps (_wrapping)


@kernel(lean=True)
def filter_bit(k0: int, k1: int, filter_mask: int) -> int:
    """The bit of the key ``(k0, k1)`` in a filter of ``filter_mask + 1`` bits (:func:`piece_filter`)."""
    return (_hash_of_key(k0, k1) >> _FILTER_SHIFT) & filter_mask


def _hashes_of_keys(k0: np.ndarray, k1: np.ndarray) -> np.ndarray:
    """:func:`_hash_of_key` of each key, in numpy: the same bits (int64 products wrap in both)."""
    with np.errstate(over="ignore"):
        hashes: np.ndarray = (k0 * np.int64(_M0)) ^ (k1 * np.int64(_M1))
    return hashes


def piece_filter(table: np.ndarray) -> np.ndarray:
    """The filter of a piece table (module docstring): int64 words, bit ``filter_bit(k0, k1, 64 *
    len - 1)`` (bit ``b % 64`` of word ``b // 64``) set for the key of every occupied slot, and no
    other; four bits per slot of the table, at least 64. numpy, no compile (under 10 ms for
    o200k_base)."""
    slots = len(table) >> 1
    words = max(1, (4 * slots) >> 6)
    k0, w1 = table[0::2], table[1::2]
    used = w1 != 0
    bits = (_hashes_of_keys(k0[used], w1[used] & _KEY_MASK) >> _FILTER_SHIFT) & (64 * words - 1)
    filt = np.zeros(words, dtype=np.int64)
    np.bitwise_or.at(filt, bits >> 6, np.left_shift(np.int64(1), bits & 63))
    return filt


@kernel(inline=True)
def piece_id(table: np.ndarray, data: np.ndarray, b0: int, n: int) -> int:
    """The id of the reachable token equal to ``data[b0:b0+n]``, -1 if none (or ``n`` > 12)."""
    if n > _MAX:
        return -1
    k0, k1 = _pack(data, b0, n)
    mask = (len(table) >> 1) - 1
    h = _home(k0, k1, mask)
    while True:
        w1 = table[2 * h + 1]
        if w1 == 0:
            return -1
        if table[2 * h] == k0 and (w1 & _KEY_MASK) == k1:
            return int(w1 >> _KEY_BITS)
        h = (h + 1) & mask


def _keys(tok_bytes: np.ndarray, tok_offsets: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_pack` of the tokens ``ids`` (1..12 bytes each), vectorized: (word 0, word 1 without
    the id) per token, int64."""
    starts = np.asarray(tok_offsets, dtype=np.int64)[ids]
    lens = np.asarray(tok_offsets, dtype=np.int64)[ids + 1] - starts
    k0 = np.zeros(len(ids), dtype=np.int64)
    k1 = lens << 32
    for i in range(_MAX):
        has = lens > i
        byte = np.asarray(tok_bytes, dtype=np.int64)[starts[has] + i]
        if i < 8:
            k0[has] |= byte << (8 * i)
        else:
            k1[has] |= byte << (8 * (i - 8))
    return k0, k1


def _fill(k0: np.ndarray, k1: np.ndarray, vals: np.ndarray, table: np.ndarray) -> None:
    """Insert the distinct keys ``(k0[i], k1[i])`` with values ``vals[i]`` (< 2**27) by linear
    probing, in numpy rounds rather than a compiled loop (no compile on a cold start): each round,
    every key not yet placed looks at its current slot; of those whose slot is free, the lowest
    index takes it, and every other one moves on to the next slot. A key thus passes only slots
    that stay occupied, which is the invariant :func:`piece_id`'s probe needs; lower indices (the
    tokens first, by id: BPE's more frequent tokens) win contested slots, as they did inserted one
    by one in order. Rounds: the longest probe, a few dozen at load 1/2; O(keys left) per round."""
    ids = np.asarray(vals, dtype=np.int64)
    mask = (len(table) >> 1) - 1
    slot = (_hashes_of_keys(k0, k1) >> 32) & mask  # _home
    owner = np.full(mask + 1, -1, dtype=np.int64)  # slot -> index into ids of the token there
    todo = np.arange(len(ids))
    while len(todo):  # todo ascending: np.unique's first index per slot is the lowest id
        here = slot[todo]
        free = todo[owner[here] < 0]
        claimed, first = np.unique(slot[free], return_index=True)
        owner[claimed] = free[first]
        todo = todo[owner[here] != todo]
        slot[todo] = (slot[todo] + 1) & mask
    used = np.flatnonzero(owner >= 0)
    who = owner[used]
    table[2 * used] = k0[who]
    table[2 * used + 1] = k1[who] | (ids[who].astype(np.int64) << _KEY_BITS)


def empty_piece_table() -> np.ndarray:
    """A table with no entry (:data:`EMPTY_WORDS` words): every lookup misses, and ``_encode``
    finds its longest matches by the trie walk alone (the shortcut off, for the self-check)."""
    return np.zeros(EMPTY_WORDS, dtype=np.int64)


def build_piece_table(arrays: Mapping[str, np.ndarray]) -> np.ndarray:
    """The table of the reachable tokens of at most 12 bytes, from ``bpe_tables.arrays_of``'s
    arrays: a token is reachable iff it is one byte or has a last merge (``split_left[t] != t``:
    ``BacktrackBPE._compute_splits`` sets a split exactly for the reachable multi-byte tokens)."""
    lens = np.asarray(arrays["tok_len"], dtype=np.int64)
    left = np.asarray(arrays["split_left"], dtype=np.int64)
    reachable = (lens == 1) | (left != np.arange(len(left)))
    ids = np.flatnonzero(reachable & (lens >= 1) & (lens <= PIECE_MAX))
    k0, k1 = _keys(arrays["tok_bytes"], arrays["tok_offsets"], ids)
    long_k0, long_k1, nodes = _long_prefixes(arrays, np.flatnonzero(reachable & (lens > PIECE_MAX)))
    k0, k1 = np.concatenate([k0, long_k0]), np.concatenate([k1, long_k1])
    slots = 1 << max(2, int(2 * len(k0)).bit_length())
    table = np.zeros(2 * slots, dtype=np.int64)
    _fill(k0, k1, np.concatenate([ids, nodes]), table)
    return table


def _long_prefixes(arrays: Mapping[str, np.ndarray], ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The long-prefix entries (module docstring) of the tokens ``ids`` (reachable, > 12 bytes):
    (word 0, word 1 without the value, trie node) per distinct first 12 bytes. The node is found
    as ``_bpe_probe._longest`` walks: levels 1-2 in ``root``, then one deep edge per byte, all
    prefixes a level at a time (``np.searchsorted`` over the sorted edge keys; numpy, no compile)."""
    starts = np.asarray(arrays["tok_offsets"], dtype=np.int64)[ids]
    raw = np.asarray(arrays["tok_bytes"], dtype=np.int64)[starts[:, None] + np.arange(PIECE_MAX)]
    raw = np.unique(raw, axis=0).reshape(-1, PIECE_MAX)  # distinct prefixes (rows)
    node = np.asarray(arrays["root"], dtype=np.int64)[256 + (raw[:, 0] << 8 | raw[:, 1])]
    edge_keys = np.asarray(arrays["edge_keys"], dtype=np.int64)
    order = np.argsort(edge_keys, kind="stable")
    keys_sorted, vals_sorted = edge_keys[order], np.asarray(arrays["edge_vals"], dtype=np.int64)[order]
    for i in range(2, PIECE_MAX):
        key = node << 8 | raw[:, i]
        at = np.searchsorted(keys_sorted, key)
        found = (node >= 0) & (at < len(keys_sorted))
        found[found] = keys_sorted[at[found]] == key[found]
        if not found.all():
            raise ValueError("piece table: a long token's 12-byte prefix is not a path of the trie")
        node = vals_sorted[at]
    k0 = np.zeros(len(raw), dtype=np.int64)
    k1 = np.full(len(raw), LONG_PREFIX << 32, dtype=np.int64)
    for i in range(PIECE_MAX):
        if i < 8:
            k0 |= raw[:, i] << (8 * i)
        else:
            k1 |= raw[:, i] << (8 * (i - 8))
    return k0, k1, node
