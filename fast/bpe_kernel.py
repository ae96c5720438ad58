"""Backtracking BPE as one compiled kernel over arrays, with character offsets fused in.

The algorithm is :meth:`tokspec.fast.bpe_backtrack.BacktrackBPE.encode` (seed
``bpe-backtracking-linear-encoder``), unchanged: append the longest reachable token matching at the
current position; if the pair it makes with the previous token is not valid, try the next-longest
prefix token; if none is left, mark the position as no boundary and pop one token. Theorem relied
on: the seed's Corollaries I, II, IIa and IIIa (a sequence is BPE's output iff every adjacent pair
is valid, and the backtracking search finds the unique such sequence), stated in ``bpe_backtrack``;
the spec property checking this engine is "BPE exactness" (``tests/test_fast_bpe_kernel.py`` against
tiktoken, the Python encoder, and compiled against interpreted).

Arrays (built once per vocabulary from :class:`BacktrackBPE`'s tables by
``tokspec.fast.bpe_tables``, cached on disk keyed by the vocabulary's sha256 and this code, together
with the hash tables, piece table and ``level3`` built from them, so a cached start builds nothing):

- ``tok_len``, ``next_prefix``, ``split_left``, ``split_right``: per token id, as in ``BacktrackBPE``.
- the byte trie over reachable tokens, its nodes numbered so that a node where a token ends has
  that token's id (the others get ids from ``len(tok_len)`` on): levels 1 and 2 dense in ``root``
  (256 + 65536 entries), deeper edges in an open-addressing hash table ``(node << 8 | byte) ->
  child``. Every lookup is one memory access in the common case.
- the pair table: ``(a << 20 | b) -> id of bytes(a) + bytes(b)`` for every token that splits into
  two tokens (what ``BacktrackBPE._pair_valid`` asks ``ranks`` for).

Hashing, probes and the pair-validity replay: ``tokspec.fast._bpe_probe`` (re-exported here).

The kernel :func:`_encode` encodes ALL pretokens of a text in one call (the hot loop never returns
to Python) and converts each token's byte span to characters on the way: the character containing
its first byte, to one past the character containing its last byte (``tokspec._types``). Cost: the
backtracking's O(n * P) (see ``bpe_backtrack``), plus O(n) for offsets. Pair validity goes
through a direct-mapped memo (2**18 words, shared by calls): it pays (on 2 MB of Chinese-like text,
1.39M checks, 99K misses; a miss replays the merge history in the 16 MB pair table). Before the
merge, a pretoken of at most 12 bytes that is itself a reachable token is looked up whole
(``tokspec.fast._piece_table``, theorem: spec claim ``bpe.whole_piece_shortcut`` restricted to
reachable tokens): one hash probe for ~85% of English and code pretokens; a piece of at most 24
bytes merged earlier by the same thread, in this call or an earlier one, copies its ids from that
thread's store (``tokspec.fast._piece_store``, the last argument: ``CompiledBPE._tables`` gives
each thread its own), a longer one merged earlier in the same call from a per-call cache
(``tokspec.fast._piece_cache``); both compare byte for byte. The trie's third level is dense
for three-byte UTF-8 characters (``level3``, built at load).
Calls per token are avoided: a compiled call with array arguments costs 30-50 ns, so
``_encode`` writes out the longest-match walk (``_longest``) and the memo probe of ``_valid`` in
its loop (CJK text: 66 -> 32 ns/B, interleaved with toktok-rs); numba's ``inline="always"`` was
tried for them and made CJK text slower (64-80 vs 49 ns/B). The reason, found later: numba
reference-counts an array passed to an inlined kernel, an atomic increment and decrement of its
memory-info word per call, which its pruning pass does not remove in a loop like this one. The
whole-piece probe (``_piece_table.piece_id``) is written out for the same reason (it ran on every
pretoken: callgrind, 200 KB of English from many corpora, o200k_base, with its byte packing
``_pack``: 14.9M -> 11.2M instructions), and so is the store's lookup (``_piece_store.store_op``
with ``put`` 0: on about 10% of pretokens; callgrind, 200 KB, cl100k_base, the kernel's
instructions -6% to -11% on English and code, fresh or repeated). Only the pieces the store misses
(about 2% of pretokens of new text) still pay such pairs: the per-call cache and the store's put. ``_longest``, ``_valid``, ``piece_id`` and ``_pack``
stay as kernels (``_bpe_probe``, ``_piece_table``) for
``_counting_kernels`` and the tests, which check the written-out code against the Python encoder
(``test_fast_bpe_piece_table``, ``test_fast_bpe_kernel_text``).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from tokspec._jit import JIT_ENABLED, kernel
from tokspec._types import EncodingArrays
from tokspec.fast.bpe_backtrack import BacktrackBPE, SelfCheckError
from tokspec.fast._bpe_probe import (  # re-exported: _counting_kernels, tests
    _get as _get, _longest as _longest, _pair_valid as _pair_valid, _slot as _slot, _valid as _valid,
    fill_level3, fill_table,
)
from tokspec.fast._cache import load_arrays, save_arrays
from tokspec.fast._le_load import load_le64
from tokspec.fast._piece_cache import cache_for, cache_get, cache_put
from tokspec.fast._piece_store import IDS_MAX, STORE_MAX, new_store, store_op
from tokspec.fast._piece_store import _LOW32 as _STORE_LOW32, _M0 as _STORE_M0, _M1 as _STORE_M1, _M2 as _STORE_M2
from tokspec.fast._piece_table import PIECE_MAX, build_piece_table, empty_piece_table
from tokspec.fast._piece_table import _KEY_BITS as _PIECE_KEY_BITS, _KEY_MASK as _PIECE_KEY_MASK, _home
from tokspec.fast.bpe_tables import NODE_BITS, PAIR_SHIFT, arrays_of, cache_path

__all__ = ["CompiledBPE", "split_offsets", "utf8_of_code_points"]

_PAIR_SHIFT = PAIR_SHIFT  # as plain module ints: the kernels' (frozen) globals
_NODE_BITS = NODE_BITS
_PIECE_MAX = PIECE_MAX
_NO_CPS = np.empty(0, dtype=np.uint32)  # _encode's cps when cbs is given; read-only like the cps
_NO_CPS.flags.writeable = False         # of code_points(), so one compiled _encode serves both paths
_NO_CBS = np.empty(0, dtype=np.int64)   # _encode's cbs when positions are counted from cps
_ARRAY_NAMES = {"max_len", "tok_len", "next_prefix", "split_left", "split_right", "root", "edge_keys",
                "edge_vals", "pair_keys", "pair_vals", "tok_bytes", "tok_offsets"}  # arrays_of's
_PACKED_NAMES = {"trie", "pairs", "pieces", "level3"}  # built from them at load; cached with them


@kernel
def _encode(data: np.ndarray, cbs: np.ndarray, cps: np.ndarray, starts: np.ndarray, ends: np.ndarray,
            want_offsets: bool, tok_len: np.ndarray, next_prefix: np.ndarray, left: np.ndarray,
            right: np.ndarray, root: np.ndarray, trie: np.ndarray, pairs: np.ndarray, memo: np.ndarray,
            max_len: int, pieces: np.ndarray, level3: np.ndarray,
            store: np.ndarray) -> np.ndarray:
    """Encode pieces ``[cbs[starts[p]], cbs[ends[p]])`` of ``data`` (pieces in order, contiguous
    when offsets are wanted); ``cbs[c]`` is the first byte of character ``c``. With ``cbs`` empty,
    ``data`` is the UTF-8 of the code points ``cps`` and the pieces are in order and contiguous
    from character 0: byte positions are counted from ``cps`` on the way (none when ``data`` is
    ASCII, one byte per character), so no ``cbs`` array is built. Returns ONE int64 array: the
    ids, then, if wanted (``cbs`` given), the tokens' character starts, then their ends (3 x the
    token count; :func:`split_offsets`). One array, not three: each array a compiled call returns
    costs about 0.3 us to box (a 5-byte text's whole call: 2.0 -> 1.5 us)."""
    alive = np.empty(len(data) + 1, dtype=np.uint8)  # alive[p] == 0: p proven not a boundary
    for at in range(len(alive)):  # a loop, not np.ones: numba compiles np.ones for 0.2-0.4 s on a cold start
        alive[at] = 1
    out_ids = np.empty(len(data), dtype=np.int32)   # at most one token per byte
    cache = cache_for(len(data))  # merged pieces of this call (``_piece_cache``)
    memo_mask = len(memo) - 1
    piece_mask = (len(pieces) >> 1) - 1
    count: int = np.int64(0)  # type: ignore[assignment]  # not a literal 0: callees taking it compile once
    short_put = np.int64(1)  # store_op's mode as a value, not a literal (one compiled store_op)
    store_mask = (len(store) >> 4) - 1  # a set of the store: two slots of 8 words
    counted = len(cbs) == 0
    ascii_only = len(cps) == len(data)
    char = 0  # counted mode: character ``char`` starts at byte ``b1``
    b1 = 0
    for p in range(len(starts)):
        if not counted:
            b0 = cbs[starts[p]]
            b1 = cbs[ends[p]]
        elif ascii_only:
            b0 = starts[p]
            b1 = ends[p]
        else:
            b0 = b1
            for c in range(char, ends[p]):
                cp = cps[c]
                b1 += 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4
            char = ends[p]
        if b1 <= b0:
            continue
        whole = -1  # the piece is one reachable token: ``_piece_table.piece_id``, written out
        if b1 - b0 <= _PIECE_MAX:  # ``_pack`` written out too
            n = b1 - b0
            if b0 + 16 <= len(data):
                k0 = load_le64(data, b0)
                if n < 8:
                    k0 &= (np.int64(1) << (8 * n)) - 1
                k1 = np.int64(n) << 32
                if n > 8:
                    k1 |= load_le64(data, b0 + 8) & ((np.int64(1) << (8 * (n - 8))) - 1)
            else:  # the text's last 15 bytes
                k0 = np.int64(0)
                k1 = np.int64(n) << 32
                for i in range(n):
                    if i < 8:
                        k0 |= np.int64(data[b0 + i]) << (8 * i)
                    else:
                        k1 |= np.int64(data[b0 + i]) << (8 * (i - 8))
            h = _home(k0, k1, piece_mask)
            while pieces[2 * h + 1] != 0:
                if pieces[2 * h] == k0 and (pieces[2 * h + 1] & _PIECE_KEY_MASK) == k1:
                    whole = pieces[2 * h + 1] >> _PIECE_KEY_BITS
                    break
                h = (h + 1) & piece_mask
        if whole >= 0:
            out_ids[count] = whole
            count += 1
            continue
        short = b1 - b0 <= STORE_MAX and len(store) > 0
        cached = -1
        if short:  # merged earlier by this thread, in this call or an earlier one: the lookup of
            # ``_piece_store.store_op`` written out (its call paid reference-count atomics)
            n = b1 - b0
            s0 = np.int64(0)
            s1 = np.int64(0)
            s2 = np.int64(0)
            if b0 + 24 <= len(data):  # bytes 8w..8w+7 in word w, zero padded
                s0 = load_le64(data, b0)
                if n < 8:
                    s0 &= (np.int64(1) << (8 * n)) - 1
                if n > 8:
                    s1 = load_le64(data, b0 + 8)
                    if n < 16:
                        s1 &= (np.int64(1) << (8 * (n - 8))) - 1
                if n > 16:
                    s2 = load_le64(data, b0 + 16)
                    if n < 24:
                        s2 &= (np.int64(1) << (8 * (n - 16))) - 1
            else:  # the text's last 23 bytes
                for i in range(n):
                    byte = np.int64(data[b0 + i]) << (8 * (i & 7))
                    if i < 8:
                        s0 |= byte
                    elif i < 16:
                        s1 |= byte
                    else:
                        s2 |= byte
            at = 16 * (((((s0 * _STORE_M0) ^ (s1 * _STORE_M1)) + s2 * _STORE_M2 + n) >> 32) & store_mask)
            for way in range(2):
                if (store[at + 3] & 0xFF) == n and store[at] == s0 and store[at + 1] == s1 and store[at + 2] == s2:
                    k = store[at + 3] >> 8
                    for j in range(k):
                        out_ids[count + j] = (store[at + 4 + (j >> 1)] >> (32 * (j & 1))) & _STORE_LOW32
                    cached = count + k
                    break
                at += 8
        if cached < 0:  # merged earlier in this call (``_piece_cache``: long pieces, and short
            # ones of more than IDS_MAX ids, which the store does not keep)
            cached = cache_get(cache, data, b0, b1 - b0, out_ids, count)
        if cached >= 0:
            count = cached
            continue
        base = count
        pos = b0
        fresh = True  # cand is to be the longest reachable token at pos
        n_ids = len(tok_len)
        while True:
            if fresh:  # _longest, written out: a compiled call per token costs more than the walk
                fresh = False
                first = data[pos]
                cand = root[first]
                stop = min(b1, pos + max_len)
                q = pos + 1
                node = -1
                if q < stop:
                    node = root[256 + ((np.int64(first) << 8) | data[q])]
                    q += 1
                if node >= 0 and node < n_ids:
                    cand = node
                if node >= 0 and q < stop and (first & 0xF0) == 0xE0 and (data[q - 1] & 0xC0) == 0x80 \
                        and (data[q] & 0xC0) == 0x80:
                    node = level3[((np.int64(first) & 0x0F) << 12) | ((np.int64(data[q - 1]) & 0x3F) << 6)
                                  | (data[q] & 0x3F)]
                    q += 1
                    if 0 <= node < n_ids:
                        cand = node
                while node >= 0 and q < stop:
                    node = _get(trie, (np.int64(node) << 8) | data[q], np.int64(_NODE_BITS))
                    if 0 <= node < n_ids:
                        cand = node
                    q += 1
            stop = pos + tok_len[cand]
            ok = alive[stop] == 1
            if ok and count > base:  # _valid, written out: the memo probe inline, replay on a miss
                key = (np.int64(out_ids[count - 1]) << _PAIR_SHIFT) | cand
                slot = _slot(key, memo_mask)
                e = memo[slot]
                if (e >> 1) == key:
                    ok = (e & 1) == 1
                else:
                    ok = _pair_valid(out_ids[count - 1], cand, left, right, pairs)
                    memo[slot] = (key << 1) | (1 if ok else 0)
            if ok:
                out_ids[count] = cand
                count += 1
                pos = stop
                if pos == b1:
                    break
                fresh = True
                continue
            cand = next_prefix[cand]
            while cand < 0:  # nothing left at pos: pos is no boundary; back up one token
                alive[pos] = 0
                count -= 1
                last = out_ids[count]
                pos -= tok_len[last]
                cand = next_prefix[last]
        if short and count - base <= IDS_MAX:
            store_op(store, data, b0, b1 - b0, out_ids, base, count, short_put)
        else:
            cache_put(cache, data, b0, b1 - b0, base, count)
    if not want_offsets or count == 0:
        return out_ids[:count].astype(np.int64)
    out = np.empty(3 * count, dtype=np.int64)  # ids, starts, ends
    char = 0  # the character containing the current token's first byte
    pos = cbs[starts[0]]
    for t in range(count):
        out[t] = out_ids[t]
        while cbs[char + 1] <= pos:
            char += 1
        out[count + t] = char
        pos += tok_len[out_ids[t]]
        while cbs[char + 1] <= pos - 1:
            char += 1
        out[2 * count + t] = char + 1
    return out


def split_offsets(out: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``_encode``'s array with offsets (ids, starts, ends, each a third) as three views."""
    count = len(out) // 3
    return out[:count], out[count:2 * count], out[2 * count:]


def utf8_of_code_points(cps: np.ndarray, utf8: bytes | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(UTF-8 bytes as a read-only uint8 array over ``utf8`` itself, no copy, first byte of each character + total) for a code
    point array of Unicode scalar values (surrogates are refused before). ``utf8``: the text's
    UTF-8 bytes if the caller has them (``str.encode``), else made from ``cps`` by Python's codecs.
    numpy only, no kernel (a compiled one cost 0.3-0.5 s of a cold start): per MB, 0.36 ms for
    ASCII and about 0.6 ms for Chinese-like text given the bytes (the kernel: 0.6 and 1.4 ms)."""
    if utf8 is None:
        utf8 = cps.astype("<u4").tobytes().decode("utf-32-le").encode()
    data = np.frombuffer(bytes(utf8), dtype=np.uint8)  # read-only, as every caller of _encode passes it
    if len(data) == len(cps):  # ASCII: one byte per character
        return data, np.arange(len(cps) + 1)  # numpy's default integer: int64
    cbs = np.empty(len(cps) + 1, dtype=np.int64)  # the one large array: no temporaries (page faults)
    cbs[0] = 0
    sizes = cbs[1:]  # each character's UTF-8 length, then their running sum, in place
    np.add(cps >= 0x80, cps >= 0x800, out=sizes, dtype=np.int64)
    sizes += cps >= 0x10000
    sizes += 1
    np.cumsum(sizes, out=sizes)
    return data, cbs


def _hash_table(keys: np.ndarray, vals: np.ndarray, vbits: int) -> np.ndarray:
    """The packed table of ``keys -> vals`` (``_bpe_probe.fill_table``: numpy, no compile), load <= 1/2."""
    table = np.full(1 << max(4, int(2 * len(keys)).bit_length()), -1, dtype=np.int64)
    fill_table(keys, vals, vbits, table)
    return table


class CompiledBPE:
    """The arrays of one vocabulary and the calls into the kernel (see module docstring).

    Build: :meth:`from_ranks` (BacktrackBPE's O(sum of token lengths) build, then arrays; or the
    disk cache). ``encode_bytes`` / ``encode_pieces`` for raw bytes, :meth:`encode_text` for a
    text and its pretoken spans.
    """

    def __init__(self, arrays: Mapping[str, np.ndarray], packed: Mapping[str, np.ndarray] | None = None) -> None:
        """``packed``: the tables built from these ``arrays`` (names :data:`_PACKED_NAMES`), as a
        cache file of :meth:`from_ranks` holds them; else they are built here (numpy, no compile:
        about 0.1 s for cl100k_base)."""
        self.arrays = dict(arrays)
        a = self.arrays
        self.max_len = int(a["max_len"][0])
        self.memo = np.full(1 << 18, -1, dtype=np.int64)  # pair validity, shared by all calls
        if packed is None:
            self.trie = _hash_table(a["edge_keys"], a["edge_vals"], _NODE_BITS)
            self.pairs = _hash_table(a["pair_keys"], a["pair_vals"], _PAIR_SHIFT)
            self.pieces = build_piece_table(a)  # whole-piece shortcut (``_piece_table``)
            self.level3 = np.empty(1 << 16, dtype=np.int32)  # dense third trie level (``fill_level3``)
            fill_level3(a["root"], self.trie, self.level3)
        else:
            self.trie, self.pairs, self.pieces, self.level3 = (packed[k] for k in ("trie", "pairs", "pieces", "level3"))
        self._shared = (a["tok_len"], a["next_prefix"], a["split_left"], a["split_right"], a["root"],
                        self.trie, self.pairs, self.memo, self.max_len, self.pieces, self.level3)
        # the self-check's: no whole-piece lookup, no store (every piece takes the merge)
        self._tables_no_shortcut = (*self._shared[:-2], empty_piece_table(), self.level3, new_store(0))
        self._local = threading.local()  # per thread: the tables with that thread's store

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)  # the stores stay with their threads: a copy starts with none
        del state["_local"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._local = threading.local()

    @property
    def _tables(self) -> tuple[Any, ...]:
        """``_encode``'s table arguments for the calling thread: the shared tables and this
        thread's store of merged pieces (``tokspec.fast._piece_store``), made on its first call."""
        try:
            tables: tuple[Any, ...] = self._local.tables
        except AttributeError:
            tables = self._local.tables = (*self._shared, new_store())
        return tables

    # -- build -----------------------------------------------------------------------------------

    @classmethod
    def from_ranks(cls, ranks: Mapping[bytes, int], sha256: str | None = None) -> CompiledBPE:
        """Build for ``ranks`` (cached on disk when ``sha256``, the vocabulary's hash, is given).

        Raises the errors of :class:`BacktrackBPE` (bad or non-monotone vocabulary) and
        SelfCheckError if a reachable token does not encode to itself.
        """
        path = cache_path(sha256) if sha256 else None
        if path is not None:  # digest-verified (bound to vocabulary and code), else rebuilt
            loaded = load_arrays(path, path.stem)
            if loaded is not None and set(loaded) == _ARRAY_NAMES | _PACKED_NAMES:
                return cls({k: loaded[k] for k in _ARRAY_NAMES}, {k: loaded[k] for k in _PACKED_NAMES})
        bpe = BacktrackBPE(ranks, self_check=not JIT_ENABLED)
        built = cls(arrays_of(bpe))
        if JIT_ENABLED:
            built.self_check(bpe)
        if path is not None:  # with the tables built from the arrays: a cached start builds nothing
            save_arrays(path, path.stem, {**built.arrays, "trie": built.trie, "pairs": built.pairs,
                                          "pieces": built.pieces, "level3": built.level3})
        return built

    def self_check(self, bpe: BacktrackBPE) -> None:
        """Every reachable token encodes to itself, all in one kernel call (seed: the dictionary
        checks itself when built), with the whole-piece shortcut off: this is the premise the
        shortcut relies on (``_piece_table``). Raises SelfCheckError naming the first that does not."""
        tids = [t for t in range(len(bpe.tokens)) if bpe.reachable[t]]
        lens = np.array([len(bpe.tokens[t]) for t in tids], dtype=np.int64)
        bounds = np.concatenate([[0], np.cumsum(lens)])
        got = self.encode_pieces(b"".join(bpe.tokens[t] for t in tids), bounds, shortcut=False)
        want = np.array(tids, dtype=np.int64)
        if len(got) != len(want) or not np.array_equal(got, want):
            for t in tids:
                ids = self.encode_pieces(bpe.tokens[t], np.array([0, len(bpe.tokens[t])]), shortcut=False).tolist()
                if ids != [t]:
                    raise SelfCheckError(f"compiled BPE self-check failed: token id={t} "
                                         f"bytes={bpe.tokens[t]!r} encodes to {ids}")

    # -- encoding --------------------------------------------------------------------------------

    def encode_pieces(self, data: bytes, bounds: np.ndarray, *, shortcut: bool = True) -> np.ndarray:
        """Ids of the pieces ``data[bounds[k]:bounds[k+1]]``, concatenated (int64 array);
        ``shortcut=False``: without the whole-piece lookup (every piece takes the merge)."""
        # read-only, no copy: the kernel is then called with the types encode_text uses, so one
        # compiled version serves both (a writable buffer would compile _encode a second time)
        buf = np.frombuffer(bytes(data), dtype=np.uint8)
        bounds = np.asarray(bounds, dtype=np.int64)
        with np.errstate(over="ignore"):
            ids: np.ndarray = _encode(buf, bounds, _NO_CPS, np.arange(len(bounds) - 1), np.arange(1, len(bounds)),
                                      False, *(self._tables if shortcut else self._tables_no_shortcut))
        return ids

    def encode_bytes(self, data: bytes) -> np.ndarray:
        """Ids of ``data`` as one piece (no pretokenization)."""
        return self.encode_pieces(data, np.array([0, len(data)], dtype=np.int64))

    def encode_text(self, cps: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                    utf8: bytes | None = None) -> EncodingArrays:
        """Ids and character offsets of the text with code points ``cps`` pretokenized as
        ``[starts[k], ends[k])`` (contiguous spans covering it); ``utf8``: its UTF-8 bytes if the
        caller has them."""
        data, cbs = utf8_of_code_points(cps, utf8)
        with np.errstate(over="ignore"):
            out = _encode(data, cbs, _NO_CPS, starts, ends, True, *self._tables)
        return EncodingArrays(*split_offsets(out))

    def encode_text_ids(self, cps: np.ndarray, starts: np.ndarray, ends: np.ndarray,
                        utf8: bytes | None = None, *, contiguous: bool | None = None) -> np.ndarray:
        """Like :meth:`encode_text`, ids only (int64; no offsets computed). ``utf8``: the text's
        UTF-8 bytes if the caller has them (``str.encode``: one C copy), else built from ``cps``.
        Spans contiguous from character 0 (Peek2's) have their byte positions counted in the
        kernel (no per-character array); other spans go through the character-to-byte array.
        ``contiguous=True``: the caller vouches for that (Peek2's spans are, by construction),
        which saves the O(spans) check (2-3 us on a 1 KB text)."""
        if contiguous is None:
            contiguous = len(starts) == 0 or (starts[0] == 0 and np.array_equal(starts[1:], ends[:-1]))
        if utf8 is None or not contiguous:
            data, cbs = utf8_of_code_points(cps)
        else:  # read-only, as elsewhere: one compiled version of _encode serves every caller
            data, cbs = np.frombuffer(bytes(utf8), dtype=np.uint8), _NO_CBS
        with np.errstate(over="ignore"):
            ids: np.ndarray = _encode(data, _NO_CBS if contiguous else cbs, cps, starts, ends, False, *self._tables)
        return ids

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of token ``token_id``."""
        offs = self.arrays["tok_offsets"]
        return self.arrays["tok_bytes"][offs[token_id]:offs[token_id + 1]].tobytes()
