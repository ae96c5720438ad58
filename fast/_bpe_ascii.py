"""ASCII text in one pass: Peek2's scan fused with the whole-piece and store lookups of the fast BPE
(and mostly-ASCII text, its non-ASCII parts as foreign segments: "Mixed text" below).

Why (issue 29): ``encode_ids`` makes three passes with arrays between them (the text to code points
and UTF-8, Peek2 writing every pretoken's span, the merge kernel reading them back), and on
repeated English its Peek2 (2.6 ns/B) and merge (3.3 ns/B) passes alone cost more than
toktok-rs's whole call (4.2 ns/B), which finds each ASCII pretoken's end in the UTF-8 bytes and
looks it up at once. Here one kernel does that for an ASCII block: :func:`ascii_scan` finds each
pretoken by Peek2's rules on the bytes and looks it up whole (``_piece_table``) and then in the
thread's store (``_piece_store``), exactly as ``_bpe_encode._encode`` does first for every
pretoken; the pretokens found in neither (a few percent on new text) are merged afterwards by ONE
call of ``_encode`` over just them, copied one after another (``cbs`` mode: two entries of ``cbs``
per missed pretoken, its start and end in the copy, so the merge's per-call arrays are the size of
the misses, not of the block), and :func:`splice_ids` puts their ids in place. ``scripts/fused_floor.py``
(commit 745c52b, removed once this module existed) measured the scan and lookups at 2.6 ns/B
on repeated English and 3.6 on code.

Theorems relied on, none new:
- Peek2 (``pretok_peek2``, seed ``peek2-regex-free-pretokenizer``): :func:`ascii_scan`'s branches
  are ``_cl100k_kernel``'s and ``_o200k_kernel``'s, the same statements with the byte for the code
  point (for an ASCII character they are equal): the category table and the contraction folds
  (``_fold``) are read at the byte, the helpers for o200k's ``U*W+`` run and contractions are
  Peek2's own inline kernels, and the punctuation and whitespace runs are found seven categories
  per load ("Runs" below). Spec property "pretokenizer exactness".
- BPE over pretokens (``bpe_kernel``): the ids of a text are its pretokens' ids in order, each
  pretoken's a function of its bytes; the whole-piece shortcut (spec claim
  ``bpe.whole_piece_shortcut``, reachable tokens only) and the store (exact byte comparison) as in
  ``_encode``; a missed pretoken gets ``_encode``'s own merge. So the ids are ``encode_ids``'s.
Checked by ``tests/test_fast_bpe_ascii.py`` (against tiktoken and the three-pass path for
cl100k_base, llama3, qwen2 and o200k_base: hypothesis over every ASCII category and the
contractions, every pretoken missed, blocks at offsets, >= 1 MB texts, the interpreted twin).
Used for ASCII blocks of long texts (``FastBpeEncoder._ids_of_block``, which takes a block's bytes
from a slice of the str: made by the fill kernel with its code points, the bytes cost more than the
fusion saved). Measured (issue 29, stop 48; one process, engines on shared tables each with its own
store, order rotated, totals over 12-15 new 1 MB texts; ``encode_ids``, ns/B, fused vs the three
kernels): English from many corpora (ASCII) cl100k_base 11.6 vs 13.3 and 14.4 vs 16.3 in two runs,
o200k_base 13.9 vs 15.2; library code with a few non-ASCII characters (its blocks holding them
take the three kernels) cl100k_base 11.9 vs 12.4 and 14.0 vs 14.5, o200k_base 13.8 vs 14.3;
Chinese-like text unchanged (29.3 vs 30.3: no ASCII block). Cutting a non-ASCII block again into
16K-character blocks so that its ASCII ones take this pass was tried: code x0.98, Chinese-like
x0.91 (not kept).
The branches and the two lookups are written out again here (Peek2's and ``_encode``'s), not
shared through inlined kernels taking arrays: numba reference-counts each array argument of an
inlined call, per call (``pretok_peek2._o200k_kernel``: 3.9 -> 3.1 ns/B when written out); Peek2's
helpers that run once per o200k upper-case word or contraction are shared.

Runs (issue 29, stop 54): the punctuation run (cl100k: other and quote, ``cat & 0xFD == 0``;
o200k: other and mark, the byte or the byte XOR 7 zero) and the whitespace run (any of three
categories: the byte XOR each is zero for one of them) are found as Peek2 finds the letters run,
seven categories per 8-byte load: a byte ``b < 0x80`` plus 0x7F has its top bit set iff ``b != 0``,
with no carry into the next byte, and the first marked byte is ``trailing_zeros64 >> 3``. The
whitespace run's last CR/LF (``pretok_peek2._whitespace_end``: the pretoken ends after it) is the
highest byte equal to CR/LF's category in a load, backwards, ``(63 - leading_zeros64) >> 3``
(``_bits``), loads masked below the run's start; within six characters of the text's start one at
a time. The padding (CR/LF's category) continues a whitespace run, so that run is cut at ``n``.
Checked by ``test_runs_of_every_length_at_every_offset_equal_tiktoken`` (lengths 1..24 at offsets
0..9, so every carry from one load to the next and the backward search's start). Measured
(2 MB, cl100k_base and o200k_base, the scan alone over the 15 blocks of a call, old and new
kernels alternating in one process, best of 25, two processes each): cl100k_base English
5.11/5.16 -> 4.70/4.75 ms, code 6.98/7.03 -> 6.79/6.88; o200k_base English 6.26/6.08 -> 6.13/5.98,
code 7.78/7.84 -> 7.57/7.57. Peek2's own kernels (``pretok_peek2``, the non-ASCII path) keep their
loops one category at a time: there the same change measured English +6% and Chinese-like +12%
slower for cl100k_base (code -6%), a short predicted loop being cheaper than a load on the chain
of dependent operations from one pretoken to the next.

Mixed text (issue 29, stop 55): ``data`` may be any UTF-8 (``FastBpeEncoder._ids_of_block`` sends
a block here when at most one character in 256 is non-ASCII, ``bpe_encoder._mostly_ascii``). The
scan runs as for ASCII; a pretoken whose bytes, or the ``_WINDOW`` bytes after it (more than any
rule reads past a pretoken's end: the character that stops a run, the one after a whitespace run,
o200k's contraction letters), hold a non-ASCII byte is not trusted. Instead the output goes back to
the last sound cut a pretoken started at (noted only within ``_TRACK`` = 512 bytes before a
non-ASCII byte; failing one there, an earlier cut, the end of the last foreign segment or the
text's start: sound all the same), and everything from there to the next sound cut after that
byte (or the text's end) becomes one foreign segment. Sound cuts are
M2's (``tokspec.spec.merge``; the rule of every Peek2 pattern, ``merge_rules``): a space after a
letter (here an ASCII one), where the ids of a text are those of its two sides. So the text is
ASCII stretches, each encoded by the scan as if it were the whole text from its cut, and foreign
segments; all foreign segments, joined in order, are encoded by ONE call of the engine's path for
any text (Peek2 on code points, then ``_encode``: ``foreign_ids_of``). Their join is sound too:
each segment but the last ends with a letter before a cut's space, and each but the first starts
with that space, so the joined text is cut by M2 where they meet. :func:`splice_ids` puts each
segment's ids at its marker. The category table read at a non-ASCII byte gives a Latin-1
character's category, which is why such pretokens are never kept. For ASCII data the scan is
called with ``foreign`` None and numba compiles it without this code (its branch is pruned): with
the code compiled in, the ASCII scan of 2 MB took 11% longer (4.17 -> 4.66 ms, one process,
alternating); pruned, 2-4% (4.17 -> 4.32 ms; the whole ``ascii_ids`` call 5-7%). Checked by
``tests/test_fast_bpe_ascii.py`` (hypothesis over ASCII and non-ASCII atoms of every category and
the case folds, four patterns, with and without the lookups; a non-ASCII character 0..6 places
after each kind of pretoken; the segments' ends at sound cuts; >= 1 MB through ``encode_ids``
against tiktoken). Measured (2 MB of English with a non-ASCII character after some words,
cl100k_base, against the three kernels in 128K blocks): 0.06% non-ASCII 11.2 -> 8.8 ms, 0.26%
12.8 -> 10.8 ms, about 0.5% even, 1.3% 14.5 -> 16.4 ms (hence the 1 in 256); toktok-rs 7.2-8.3 ms.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._bpe_ascii_scan import ascii_scan
from tokspec.fast.bpe_kernel import _NO_CPS, _encode

__all__ = ["ascii_scan", "scan_buffers", "missed_spans", "foreign_bytes", "splice_ids", "ascii_ids"]


@kernel(cache=True)
def scan_buffers(n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`ascii_scan`'s ``out``, ``missed`` and ``missed_bytes`` for ``n`` bytes: room for
    every pretoken (at most one per byte) to be missed."""
    return np.empty(n, dtype=np.int32), np.empty(2 * n, dtype=np.int64), np.empty(n, dtype=np.uint8)


@kernel(cache=True)
def missed_spans(missed: np.ndarray, n_missed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cbs, starts, ends)`` for ``_encode`` over the missed pretokens: ``cbs`` their start and
    end in ``missed_bytes`` (``missed[:2 * n_missed]``), pretoken ``k`` from ``cbs[2k]`` to ``cbs[2k + 1]``."""
    starts = np.empty(n_missed, dtype=np.int64)
    ends = np.empty(n_missed, dtype=np.int64)
    for k in range(n_missed):
        starts[k] = 2 * k
        ends[k] = 2 * k + 1
    return missed[:2 * n_missed], starts, ends


@kernel(cache=True)
def foreign_bytes(data: np.ndarray, foreign: np.ndarray, n_foreign: int) -> np.ndarray:
    """The bytes of :func:`ascii_scan`'s ``n_foreign`` foreign segments of ``data``, one after another."""
    size = 0
    for f in range(n_foreign):
        size += foreign[2 * f + 1] - foreign[2 * f]
    gathered = np.empty(size, dtype=np.uint8)
    at = 0
    for f in range(n_foreign):
        for q in range(foreign[2 * f], foreign[2 * f + 1]):
            gathered[at] = data[q]
            at += 1
    return gathered


@kernel(cache=True)
def splice_ids(out: np.ndarray, count: int, merged: np.ndarray, missed: np.ndarray, tok_len: np.ndarray,
               foreign_ids: np.ndarray, foreign: np.ndarray, n: int) -> np.ndarray:
    """``out[:count]`` (:func:`ascii_scan`'s over ``n`` bytes) as int64 ids, each marker ``-1 - k``
    replaced by the ids of missed pretoken ``k``: the next ids of ``merged`` (the missed pretokens'
    ids in order) whose token lengths add up to its bytes, ``missed[2k + 1] - missed[2k]``; each
    marker ``-1 - n - f`` by the next ids of ``foreign_ids`` (the foreign segments' ids in order)
    whose lengths add up to segment ``f``'s bytes, ``foreign[2f + 1] - foreign[2f]``."""
    ids = np.empty(count + len(merged) + len(foreign_ids), dtype=np.int64)
    r = 0
    q = 0
    g = 0
    for t in range(count):
        v = out[t]
        if v >= 0:
            ids[r] = v
            r += 1
        else:  # a missed pretoken's marker, or a foreign segment's: its ids up to its bytes
            is_foreign = -1 - v >= n
            k = -1 - n - v if is_foreign else -1 - v
            need = foreign[2 * k + 1] - foreign[2 * k] if is_foreign else missed[2 * k + 1] - missed[2 * k]
            source = foreign_ids if is_foreign else merged
            at = g if is_foreign else q
            while need > 0:
                if at == len(source):
                    raise ValueError("splice_ids: the merged or foreign ids end before the bytes they encode")
                ids[r] = source[at]
                need -= tok_len[source[at]]
                r += 1
                at += 1
            if is_foreign:
                g = at
            else:
                q = at
    if q != len(merged) or g != len(foreign_ids):
        raise ValueError("splice_ids: merged or foreign ids left over after the bytes they encode")
    return ids[:r]


_NO_IDS = np.empty(0, dtype=np.int64)  # splice_ids' foreign ids when there is no foreign segment
_NO_FOREIGN = np.empty(0, dtype=np.int64)  # and its segments


def ascii_ids(data: np.ndarray, pattern_args: tuple[Any, ...], tables: tuple[Any, ...],
              foreign_ids_of: Callable[[bytes], np.ndarray] | None = None) -> np.ndarray:
    """The token ids (int64) of the UTF-8 bytes ``data`` (read-only) under a Peek2 pattern,
    ``pattern_args`` as ``bpe_encoder._ascii_args`` makes them from ``pretok_peek2.kernel_args``,
    with the calling thread's ``CompiledBPE._tables``: :func:`ascii_scan`, then one ``_encode``
    over the missed pretokens (none: an empty call), then, if ``data`` is not all ASCII, one call
    ``foreign_ids_of(segments)`` for the ids of its foreign segments one after another (the UTF-8
    bytes of a text between sound cuts: the engine's own path for any text), then
    :func:`splice_ids`. Without ``foreign_ids_of`` ``data`` must be ASCII (the scan is then compiled
    without the mixed-text code: ``foreign`` None); the ids of non-ASCII data are then wrong, never
    an error (the callers pass it for every block that is not ASCII)."""
    out, missed, missed_bytes = scan_buffers(len(data))
    foreign = np.empty(len(data) + 2, dtype=np.int64) if foreign_ids_of is not None else None  # None: ASCII
    o200k, table, branch, max_digits, to_end_first, fold_cps, fold_to = pattern_args
    count, n_missed, n_bytes, n_foreign = ascii_scan(data, o200k, table, branch, max_digits, to_end_first, fold_cps,
                                                     fold_to, out, missed, missed_bytes, foreign, *tables)
    cbs, starts, ends = missed_spans(missed, n_missed)
    pieces = np.frombuffer(memoryview(missed_bytes[:n_bytes]).toreadonly(), np.uint8)  # type: ignore[arg-type]  # read-only, as every
    # caller gives _encode its bytes (one compiled version)
    with np.errstate(over="ignore"):  # interpreted kernels: the hashes wrap in numpy int64
        merged = _encode(pieces, cbs, _NO_CPS, starts, ends, False, *tables)
    foreign_ids = _NO_IDS
    if foreign is None:
        foreign = _NO_FOREIGN
    elif n_foreign > 0:
        foreign_ids = foreign_ids_of(foreign_bytes(data, foreign, n_foreign).tobytes())  # type: ignore[misc]  # not None with foreign
    spliced: np.ndarray = splice_ids(out, count, merged, missed, tables[0], foreign_ids, foreign,
                                     len(data))  # tables[0]: tok_len
    return spliced
