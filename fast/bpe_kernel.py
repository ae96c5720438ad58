"""Backtracking BPE as one compiled kernel over arrays, with character offsets fused in.

The algorithm is :meth:`tokspec.fast.bpe_backtrack.BacktrackBPE.encode` (seed
``bpe-backtracking-linear-encoder``), unchanged: append the longest reachable token matching at the
current position; if the pair it makes with the previous token is not valid, try the next-longest
prefix token; if none is left, mark the position as no boundary and pop one token. Theorem relied
on: the seed's Corollaries I, II, IIa and IIIa (a sequence is BPE's output iff every adjacent pair
is valid, and the backtracking search finds the unique such sequence), stated in ``bpe_backtrack``;
the spec property checking this engine is "BPE exactness" (against tiktoken and compiled against
interpreted in ``tests/test_fast_kernels.py``, including >= 1 MB texts; against the Python encoder
in ``tests/test_fast_bpe_kernel_text.py``).

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

The merge kernel ``_encode`` (all pretokens of a text in one compiled call, offsets fused in; its
written-out lookups, the per-thread store and the per-call cache) is ``tokspec.fast._bpe_encode``,
re-exported here with ``split_offsets``; this module builds the tables and calls it.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

import numpy as np

from tokspec._jit import JIT_ENABLED
from tokspec._types import EncodingArrays
from tokspec.fast.bpe_backtrack import BacktrackBPE, SelfCheckError
from tokspec.fast._bpe_probe import (  # re-exported: _counting_kernels, tests
    _get as _get, _longest as _longest, _pair_valid as _pair_valid, _slot as _slot, _valid as _valid,
    fill_level3, fill_table,
)
from tokspec.fast._bpe_encode import _encode as _encode, split_offsets as split_offsets  # re-exported
from tokspec.fast._cache import load_arrays, save_arrays
from tokspec.fast._piece_store import new_store
from tokspec.fast._piece_table import build_piece_table, empty_piece_table, piece_filter
from tokspec.fast.bpe_tables import NODE_BITS, PAIR_SHIFT, arrays_of, cache_path

__all__ = ["CompiledBPE", "split_offsets", "utf8_of_code_points"]

_NO_CPS = np.empty(0, dtype=np.uint32)  # _encode's cps when cbs is given; read-only like the cps
_NO_CPS.flags.writeable = False         # of code_points(), so one compiled _encode serves both paths
_NO_CBS = np.empty(0, dtype=np.int64)   # _encode's cbs when positions are counted from cps
_ARRAY_NAMES = {"max_len", "tok_len", "next_prefix", "split_left", "split_right", "root", "edge_keys",
                "edge_vals", "pair_keys", "pair_vals", "tok_bytes", "tok_offsets"}  # arrays_of's
_PACKED_NAMES = {"trie", "pairs", "pieces", "level3"}  # built from them at load; cached with them


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
            self.trie = _hash_table(a["edge_keys"], a["edge_vals"], NODE_BITS)
            self.pairs = _hash_table(a["pair_keys"], a["pair_vals"], PAIR_SHIFT)
            self.pieces = build_piece_table(a)  # whole-piece shortcut (``_piece_table``)
            self.level3 = np.empty(1 << 16, dtype=np.int32)  # dense third trie level (``fill_level3``)
            fill_level3(a["root"], self.trie, self.level3)
        else:
            self.trie, self.pairs, self.pieces, self.level3 = (packed[k] for k in ("trie", "pairs", "pieces", "level3"))
        self.pieces_filter = piece_filter(self.pieces)  # (``_piece_table``; under 10 ms, not cached)
        self._shared = (a["tok_len"], a["next_prefix"], a["split_left"], a["split_right"], a["root"],
                        self.trie, self.pairs, self.memo, self.max_len, self.pieces, self.pieces_filter,
                        self.level3)
        # the self-check's: no whole-piece lookup, no store (every piece takes the merge)
        empty = empty_piece_table()
        self._tables_no_shortcut = (*self._shared[:-3], empty, piece_filter(empty), self.level3, new_store(0))
        self._local = threading.local()  # per thread: the tables with that thread's store

    def sharing_tables(self) -> CompiledBPE:
        """Another CompiledBPE on these same arrays and tables (nothing copied) with a memo and
        per-thread stores of its own: the same ids, and no warm state shared with this one."""
        return CompiledBPE(self.arrays, {"trie": self.trie, "pairs": self.pairs, "pieces": self.pieces,
                                         "level3": self.level3})

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
