"""Token counting for chunking, on byte-level BPE without pretokenization: appending, prepending,
interval counts and the split point after n tokens (seed ``bpe-backtracking-linear-encoder``).

Engines (all exact; the definitions they implement are ``tokspec.spec.counting``'s, and
``tests/test_fast_bpe_counting.py`` checks them against ``tokspec.reference.bpe_counting``):

- :class:`AppendingCounter`: bytes are appended; after each byte the count of the whole text so far
  is known (Theorem C1: the last token of every prefix, one table entry per byte). Amortized cost
  per byte: one backwards trie walk and typically ~1.3 compatibility checks, whatever the length.
- :class:`PrependingCounter`: the mirror image, bytes are prepended (Theorem C2).
- :class:`IntervalCounter`: the count of any slice ``data[i:j]`` of a fixed text after one O(n)
  pass (Theorem C3). Typically O(1) per query; worst case O(j - i): a text whose encoding depends
  on where the slice starts all the way to its end (a long run of one byte).
- :func:`split_after`: the longest prefix of a ``str`` ending at a character boundary whose
  encoding has at most n tokens. Counting is not monotonic, so every prefix up to ``n * L`` bytes
  (L = the longest token; no longer prefix can have <= n tokens) is counted: O(min(len, n * L)).

Out of scope: pretokenization (a pretokenized count is the sum over the pretokens of the slice,
``tokspec.spec.counting`` Theorem C4; see :meth:`IntervalCounter.count_pieces`), special tokens.
Vocabularies: whatever :class:`~tokspec.fast.bpe_kernel.CompiledBPE` accepts (self-checked).
"""

from __future__ import annotations

import numpy as np

from tokspec.errors import TokspecError
from tokspec.fast._counting_kernels import (_append_run, _build_suffix_trie, _interval_count,
                                            _prepend_run, _tree)
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fast.bpe_tables import NODE_BITS

__all__ = ["CountingTables", "AppendingCounter", "PrependingCounter", "IntervalCounter",
           "split_after", "SliceError"]


class SliceError(TokspecError):
    """A slice or a token budget outside what the text allows (``name=value!r`` in the message)."""


class CountingTables:
    """A :class:`CompiledBPE` plus the suffix trie the appending encoder walks. Build: O(sum of
    token lengths), one kernel call."""

    def __init__(self, bpe: CompiledBPE) -> None:
        self.bpe = bpe
        a = bpe.arrays
        tok_len = a["tok_len"]
        total = int(tok_len.sum())
        table = np.full(1 << max(4, (2 * total).bit_length()), -1, dtype=np.int64)
        sterm = np.full(total + 1, -1, dtype=np.int64)
        with np.errstate(over="ignore"):
            nodes = _build_suffix_trie(a["tok_bytes"], a["tok_offsets"], tok_len, a["split_left"],
                                       table, sterm)
        if nodes >= 1 << NODE_BITS:
            raise SliceError(f"suffix trie of nodes={nodes!r}: the kernels take < 2**24")
        self.strie, self.sterm = table, sterm[:nodes]
        self.max_len = bpe.max_len
        self._append_tables = (tok_len, a["split_left"], a["split_right"], bpe.pairs, bpe.memo,
                               self.max_len)
        self._prepend_tables = (a["root"], bpe.trie, tok_len, a["split_left"], a["split_right"],
                                bpe.pairs, bpe.memo, self.max_len)
        self._interval_tables = (tok_len, a["next_prefix"], a["split_left"], a["split_right"],
                                 a["root"], bpe.trie, bpe.pairs, bpe.memo, self.max_len, bpe.level3)

    def prefix_table(self, data: bytes) -> tuple[np.ndarray, np.ndarray]:
        """``(last, depth)`` of every prefix of ``data``: ``depth[e]`` is the count of ``data[:e]``."""
        last = np.full(len(data) + 1, -1, dtype=np.int64)
        depth = np.zeros(len(data) + 1, dtype=np.int64)
        buf = np.frombuffer(data, dtype=np.uint8)
        found = np.empty(self.max_len + 1, dtype=np.int64)
        with np.errstate(over="ignore"):
            _append_run(buf, 0, len(data), last, depth, found, self.strie, self.sterm,
                        *self._append_tables)
        return last, depth


class AppendingCounter:
    """Count while appending (Theorem C1). ``count`` is the token count of everything appended;
    :meth:`extend` returns the count after each appended byte. Memory: 17 bytes per byte held."""

    _data: np.ndarray   # the bytes appended (uint8), grown by doubling
    _last: np.ndarray   # per end position: the last token of the encoding of the prefix (int64)
    _depth: np.ndarray  # per end position: the token count of the prefix (int64)

    def __init__(self, tables: CountingTables) -> None:
        self.tables = tables
        self._n = 0
        self._found = np.empty(tables.max_len + 1, dtype=np.int64)  # the kernel's scratch
        self._grow(64)

    def _grow(self, cap: int) -> None:
        for name, dtype, fill in (("_data", np.uint8, 0), ("_last", np.int64, -1), ("_depth", np.int64, 0)):
            new = np.full(cap + (name != "_data"), fill, dtype=dtype)
            old = getattr(self, name, None)
            if old is not None:
                new[:len(old)] = old
            setattr(self, name, new)

    @property
    def count(self) -> int:
        return int(self._depth[self._n])

    def __len__(self) -> int:
        return self._n

    def extend(self, data: bytes) -> np.ndarray:
        """Append ``data``; return the counts after each of its bytes (int64, ``len(data)`` long)."""
        lo, hi = self._n, self._n + len(data)
        if hi > len(self._data):
            self._grow(max(hi, 2 * len(self._data)))
        self._data[lo:hi] = np.frombuffer(data, dtype=np.uint8)
        with np.errstate(over="ignore"):
            _append_run(self._data, lo, hi, self._last, self._depth, self._found, self.tables.strie,
                        self.tables.sterm, *self.tables._append_tables)
        self._n = hi
        return self._depth[lo + 1:hi + 1].copy()

    def push(self, byte: int) -> int:
        """Append one byte (``0 <= byte < 256``); return the new count. The per-call path of
        :meth:`extend` without its copies (the Python call still dominates its cost)."""
        n = self._n
        if n == len(self._data):
            self._grow(2 * n)
        self._data[n] = byte
        t = self.tables
        with np.errstate(over="ignore"):
            _append_run(self._data, n, n + 1, self._last, self._depth, self._found, t.strie,
                        t.sterm, *t._append_tables)
        self._n = n + 1
        return int(self._depth[n + 1])

    def tokens(self) -> list[int]:
        """The encoding of everything appended, read back through the last-token table."""
        out, e = [], self._n
        tok_len = self.tables.bpe.arrays["tok_len"]
        while e > 0:
            t = int(self._last[e])
            out.append(t)
            e -= int(tok_len[t])
        return out[::-1]


class PrependingCounter:
    """Count while prepending (Theorem C2): ``prepend(data)`` puts ``data`` in front of the text and
    returns the counts of the text after each byte is added, the last byte of ``data`` first."""

    def __init__(self, tables: CountingTables) -> None:
        self.tables = tables
        self._cap = 64
        self._buf = np.zeros(self._cap, dtype=np.uint8)
        self._first = np.full(self._cap + 1, -1, dtype=np.int64)
        self._depth = np.zeros(self._cap + 1, dtype=np.int64)
        self._start = self._cap  # the text is _buf[_start:_cap]

    @property
    def count(self) -> int:
        return int(self._depth[self._start])

    def __len__(self) -> int:
        return self._cap - self._start

    def _grow(self, need: int) -> None:
        cap = max(2 * self._cap, self._cap + need)
        shift = cap - self._cap
        buf = np.zeros(cap, dtype=np.uint8)
        first = np.full(cap + 1, -1, dtype=np.int64)
        depth = np.zeros(cap + 1, dtype=np.int64)
        buf[self._start + shift:] = self._buf[self._start:]
        first[self._start + shift:] = self._first[self._start:]
        depth[self._start + shift:] = self._depth[self._start:]
        self._buf, self._first, self._depth = buf, first, depth
        self._start += shift
        self._cap = cap

    def prepend(self, data: bytes) -> np.ndarray:
        if len(data) > self._start:
            self._grow(len(data))
        hi = self._start
        lo = hi - len(data)
        self._buf[lo:hi] = np.frombuffer(data, dtype=np.uint8)
        found = np.empty(self.tables.max_len + 1, dtype=np.int64)
        with np.errstate(over="ignore"):
            _prepend_run(self._buf, lo, hi, self._cap, self._first, self._depth, found,
                         *self.tables._prepend_tables)
        self._start = lo
        return self._depth[lo:hi][::-1].copy()


class IntervalCounter:
    """Counts of slices of one fixed byte string (Theorem C3). Build: the prefix table and the
    pre-order numbering of the prefix tree, O(n); 40 bytes per text byte."""

    def __init__(self, tables: CountingTables, data: bytes) -> None:
        self.tables, self.data = tables, data
        self._buf = np.frombuffer(data, dtype=np.uint8)
        self.last, self.depth = tables.prefix_table(data)
        self.tin = np.empty(len(data) + 1, dtype=np.int64)
        self.tout = np.empty(len(data) + 1, dtype=np.int64)
        _tree(self.last, tables.bpe.arrays["tok_len"], self.tin, self.tout)
        self._out = np.empty(len(data) + 1, dtype=np.int32)
        self._alive = np.empty(len(data) + 1, dtype=np.uint8)

    def count(self, i: int, j: int) -> int:
        """The token count of ``data[i:j]`` (``0 <= i <= j <= len(data)``, else SliceError)."""
        if not (isinstance(i, int) and isinstance(j, int) and 0 <= i <= j <= len(self.data)):
            raise SliceError(f"slice (i, j)={(i, j)!r} is not 0 <= i <= j <= len(data)={len(self.data)}")
        with np.errstate(over="ignore"):
            return int(_interval_count(self._buf, i, j, self.last, self.depth, self.tin, self.tout,
                                       self._out, self._alive, *self.tables._interval_tables))

    def count_pieces(self, bounds: list[int]) -> int:
        """Sum of the counts of ``data[bounds[k]:bounds[k+1]]``: a pretokenized count, given the
        pretokens of the slice as byte bounds (Theorem C4)."""
        return sum(self.count(a, b) for a, b in zip(bounds, bounds[1:]))


def split_after(tables: CountingTables, text: str, n: int) -> int:
    """Characters in the longest prefix of ``text`` whose BPE encoding has at most ``n`` tokens
    (``tokspec.spec.counting`` Definition D2). O(min(len, n * L)) bytes counted."""
    if not isinstance(n, int) or n < 0:
        raise SliceError(f"n={n!r}: need a token budget >= 0")
    data = str.encode(text)
    limit = min(len(data), n * tables.max_len)  # a prefix of more bytes has more than n tokens
    _, depth = tables.prefix_table(data[:limit])
    best, b = 0, 0
    for k, ch in enumerate(text):
        b += len(ch.encode("utf-8"))
        if b > limit:
            break
        if depth[b] <= n:
            best = k + 1
    return best
