"""ASCII text in one pass: Peek2's scan fused with the whole-piece and store lookups of the fast BPE.

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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._bits import leading_zeros64, trailing_zeros64
from tokspec.fast._le_load import load_le64
from tokspec.fast._piece_store import STORE_MAX, store_set, store_words
from tokspec.fast._piece_table import PIECE_MAX, _home, _key_of_words
from tokspec.fast._piece_table import _KEY_BITS as _PIECE_KEY_BITS, _KEY_MASK as _PIECE_KEY_MASK
from tokspec.fast.bpe_kernel import _NO_CPS, _encode
from tokspec.fast.pretok_peek2 import _fold, _o200k_contraction, _u_star_w_plus

__all__ = ["ascii_scan", "scan_buffers", "missed_spans", "splice_ids", "ascii_ids"]

_PIECE_MAX = PIECE_MAX  # plain module ints: the kernels' (frozen) globals
_STORE_MAX = STORE_MAX
# Peek2's cl100k categories and branches (pretok_peek2), as plain ints
_OT, _SP, _QU, _CR, _LE, _WS, _NU = 0, 1, 2, 3, 4, 5, 6
_B_CON, _B_LET, _B_DIG, _B_PUN = 0, 1, 2, 3
_O_OT, _O_SP, _O_CR, _O_WS, _O_UP, _O_LO, _O_BO, _O_MA, _O_NU = 0, 1, 2, 3, 4, 5, 6, 7, 8  # o200k's
_SEVEN_FROM_LO = (0x80 - _O_LO) * 0x01010101010101  # o200k's W+ run (pretok_peek2)
_SEVEN_PAST_MA = (0x80 - _O_MA - 1) * 0x01010101010101
_LE_BYTES = _LE * 0x0101010101010101  # the letters run, seven categories per load (pretok_peek2)
_SEVEN_BYTES = 0x00FFFFFFFFFFFFFF
_SEVEN_LOW7 = 0x007F7F7F7F7F7F7F
_SEVEN_TOPS = 0x0080808080808080
_LOW32 = (1 << 32) - 1
_SEVEN_NOT_QU = 0x00FDFDFDFDFDFDFD  # cl100k's punctuation run (module docstring, "Runs")
_ONES7 = 0x0001010101010101
_SEVEN_MA = _O_MA * _ONES7  # o200k's


# the argument form: mutation/config.toml keeps it out of mutation until judged (a comment after the
# decorator would keep it out for good: the stage drops only a bare decorator line)
@kernel(cache=True)
def ascii_scan(data: np.ndarray, o200k: bool, table: np.ndarray, branch: np.ndarray, max_digits: int,
               to_end_first: bool, fold_cps: np.ndarray, fold_to: np.ndarray, out: np.ndarray, missed: np.ndarray,
               missed_bytes: np.ndarray, tok_len: np.ndarray, next_prefix: np.ndarray, left: np.ndarray,
               right: np.ndarray, root: np.ndarray, trie: np.ndarray, pairs: np.ndarray, memo: np.ndarray,
               max_len: int, pieces: np.ndarray, pieces_filter: np.ndarray, level3: np.ndarray,
               store: np.ndarray) -> tuple[int, int, int]:
    """Scan the ASCII bytes ``data`` into pretokens by Peek2's rules (``pretok_peek2``: o200k_base's
    if ``o200k``, else the cl100k family's with ``branch``, ``max_digits`` and ``to_end_first``;
    the category ``table`` and the contraction folds read at bytes) and look each up whole
    (``pieces``), then in ``store`` (the trailing arguments are ``CompiledBPE._tables``, as
    ``_encode`` takes them; the others are not read). Writes to ``out`` (int32, ``len(data)``
    entries) each found pretoken's ids and, for each missed one, ``-1 - k`` (``k``: its number
    among the missed); the missed pretokens' bytes one after another to ``missed_bytes``
    (``len(data)`` entries), and pretoken ``k``'s start and end there to ``missed[2k]``,
    ``missed[2k + 1]``. Returns (entries written, pretokens missed, bytes missed). O(n) plus a
    probe per pretoken."""
    n = len(data)
    cat = np.empty(n + 8, dtype=np.uint8)  # 7 bytes of padding: the runs load 8 at a time
    for k in range(n):
        cat[k] = table[data[k]]
    end_cat = _O_CR if o200k else _CR  # end of text: CR/LF's category (pretok_peek2)
    ws_space = (_O_SP if o200k else _SP) * _ONES7  # the whitespace categories, in each of 7 bytes
    ws_crlf = end_cat * _ONES7
    ws_other = (_O_WS if o200k else _WS) * _ONES7
    ws_to_end_first = to_end_first and not o200k
    for k in range(n, n + 8):
        cat[k] = end_cat
    piece_mask = (len(pieces) >> 1) - 1
    store_mask = (len(store) >> 4) - 1
    count = 0
    n_missed = 0
    at_missed = 0  # bytes written to missed_bytes
    i = 0
    while i < n:
        j = -1
        if o200k:  # pretok_peek2._o200k_kernel's branches, data for cps
            c0 = cat[i]
            c1 = cat[i + 1]
            s = -1  # where the word run starts, if a word is next
            if _O_UP <= c0 <= _O_BO:
                s = i
            elif c0 != _O_CR and c0 != _O_NU and c0 != _O_MA and _O_UP <= c1 <= _O_MA:
                s = i + 1
            if s >= 0:
                if cat[s] == _O_LO:  # W+ at once, 7 categories per load
                    j = s + 1
                    while True:
                        x = load_le64(cat, j) & _SEVEN_BYTES
                        marks = ((~(x + _SEVEN_FROM_LO)) | (x + _SEVEN_PAST_MA)) & _SEVEN_TOPS
                        if marks != 0:
                            j += trailing_zeros64(marks) >> 3
                            break
                        j += 7
                else:
                    j = _u_star_w_plus(cat, s, n)
                    if j < 0:
                        j = s
                        while j < n and _O_UP <= cat[j] <= _O_MA:
                            j += 1
                if cat[j] == _O_OT and data[j] == 39:
                    j = _o200k_contraction(data, j, n, fold_cps, fold_to)
            elif c0 == _O_NU:  # \p{N}{1,3}
                j = i + 1
                while j < i + 3 and cat[j] == _O_NU:
                    j += 1
            elif c0 == _O_MA:  # (no ASCII character is a mark; as Peek2, for the same rules)
                e = _u_star_w_plus(cat, i + 1, n) if i + 1 < n else -1
                if e < 0:
                    e = _u_star_w_plus(cat, i, n)
                j = _o200k_contraction(data, e, n, fold_cps, fold_to)
            elif c0 == _O_OT or (c0 == _O_SP and c1 == _O_OT):  # ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
                j = i + 1
                while True:  # other and mark, 7 categories per load (module docstring, "Runs")
                    x = load_le64(cat, j) & _SEVEN_BYTES
                    marks = (x + _SEVEN_LOW7) & ((x ^ _SEVEN_MA) + _SEVEN_LOW7) & _SEVEN_TOPS
                    if marks != 0:
                        j += trailing_zeros64(marks) >> 3
                        break
                    j += 7
                while j < n and (data[j] == 13 or data[j] == 10 or data[j] == 47):
                    j += 1
        else:  # pretok_peek2._cl100k_kernel's branches, data for cps
            b = branch[cat[i] * 7 + cat[i + 1]]
            if b == _B_CON:  # '(?i:[sdmt]|ll|ve|re), else the letters branch; i + 1 < n (a letter)
                f1 = _fold(data[i + 1], fold_cps, fold_to)
                if f1 == 115 or f1 == 100 or f1 == 109 or f1 == 116:  # s d m t
                    j = i + 2
                elif i + 2 < n and f1 != 0:
                    f2 = _fold(data[i + 2], fold_cps, fold_to)
                    if (f1 == 108 and f2 == 108) or ((f1 == 118 or f1 == 114) and f2 == 101):  # ll ve re
                        j = i + 3
                if j < 0:
                    b = _B_LET
            if b == _B_LET:  # [^\r\n\p{L}\p{N}]?+\p{L}++, 7 categories per load
                j = i + 1
                while True:
                    x = (load_le64(cat, j) ^ _LE_BYTES) & _SEVEN_BYTES
                    marks = (x + _SEVEN_LOW7) & _SEVEN_TOPS
                    if marks != 0:
                        j += trailing_zeros64(marks) >> 3
                        break
                    j += 7
            elif b == _B_DIG:  # \p{N}{1,max_digits}+
                j = i + 1
                while j < i + max_digits and cat[j] == _NU:
                    j += 1
            elif b == _B_PUN:  # ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
                j = i + 1
                while True:  # other and quote, 7 categories per load (module docstring, "Runs")
                    marks = ((load_le64(cat, j) & _SEVEN_NOT_QU) + _SEVEN_LOW7) & _SEVEN_TOPS
                    if marks != 0:
                        j += trailing_zeros64(marks) >> 3
                        break
                    j += 7
                while j < n and cat[j] == _CR:
                    j += 1
        if j < 0:  # whitespace: pretok_peek2._whitespace_end's rule, its run forwards and its last
            # CR/LF backwards seven categories per load (module docstring, "Runs")
            j = i
            while True:
                x = load_le64(cat, j) & _SEVEN_BYTES
                marks = (((x ^ ws_space) + _SEVEN_LOW7) & ((x ^ ws_crlf) + _SEVEN_LOW7)
                         & ((x ^ ws_other) + _SEVEN_LOW7) & _SEVEN_TOPS)
                if marks != 0:
                    j += trailing_zeros64(marks) >> 3
                    break
                j += 7
                if j >= n:
                    break
            if j > n:
                j = n
            if not (j == n and ws_to_end_first):
                k = j - 1  # the last CR/LF in [i, j), if any
                while k >= i:
                    lo = k - 6
                    if lo < 0:
                        while k >= i and cat[k] != end_cat:
                            k -= 1
                        break
                    z = ~(((load_le64(cat, lo) & _SEVEN_BYTES) ^ ws_crlf) + _SEVEN_LOW7) & _SEVEN_TOPS
                    if lo < i:
                        z &= -1 << (8 * (i - lo))
                    if z != 0:
                        k = lo + ((63 - leading_zeros64(z)) >> 3)
                        break
                    k -= 7
                if k >= i:
                    j = k + 1
                elif j != n and j - i != 1:
                    j -= 1
        m = j - i
        whole = -1  # the whole-piece probe of _encode
        if m <= _PIECE_MAX and i + 16 <= n:
            k0, k1 = _key_of_words(load_le64(data, i), load_le64(data, i + 8), m)
            h = _home(k0, k1, piece_mask)  # type: ignore[arg-type]  # numpy ints, compiled as int64
            while pieces[2 * h + 1] != 0:
                if pieces[2 * h] == k0 and (pieces[2 * h + 1] & _PIECE_KEY_MASK) == k1:
                    whole = pieces[2 * h + 1] >> _PIECE_KEY_BITS
                    break
                h = (h + 1) & piece_mask
        if whole >= 0:
            out[count] = whole
            count += 1
        else:
            found = False  # the store's lookup of _encode
            if m <= _STORE_MAX and i + 24 <= n and len(store) > 0:
                s0, s1, s2 = store_words(load_le64(data, i), load_le64(data, i + 8), load_le64(data, i + 16), m)
                at = int(store_set(s0, s1, s2, m, store_mask))
                for way in range(2):
                    if (store[at + 3] & 0xFF) == m and store[at] == s0 and store[at + 1] == s1 and store[at + 2] == s2:
                        for q in range(store[at + 3] >> 8):
                            out[count] = (store[at + 4 + (q >> 1)] >> (32 * (q & 1))) & _LOW32
                            count += 1
                        found = True
                        break
                    at += 8
            if not found:
                out[count] = -1 - n_missed
                count += 1
                missed[2 * n_missed] = at_missed
                for q in range(i, j):
                    missed_bytes[at_missed] = data[q]
                    at_missed += 1
                missed[2 * n_missed + 1] = at_missed
                n_missed += 1
        i = j
    return count, n_missed, at_missed


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
def splice_ids(out: np.ndarray, count: int, merged: np.ndarray, missed: np.ndarray, tok_len: np.ndarray) -> np.ndarray:
    """``out[:count]`` (:func:`ascii_scan`'s) as int64 ids, each marker ``-1 - k`` replaced by the
    ids of missed pretoken ``k``: the next ids of ``merged`` (the missed pretokens' ids in order)
    whose token lengths add up to its bytes, ``missed[2k + 1] - missed[2k]``."""
    ids = np.empty(count + len(merged), dtype=np.int64)
    r = 0
    q = 0
    for t in range(count):
        v = out[t]
        if v >= 0:
            ids[r] = v
            r += 1
        else:
            need = missed[2 * (-1 - v) + 1] - missed[2 * (-1 - v)]
            while need > 0:
                if q == len(merged):
                    raise ValueError("splice_ids: the merged ids end before the missed pretokens' bytes")
                ids[r] = merged[q]
                need -= tok_len[merged[q]]
                r += 1
                q += 1
    if q != len(merged):
        raise ValueError("splice_ids: merged ids left over after the missed pretokens' bytes")
    return ids[:r]


def ascii_ids(data: np.ndarray, pattern_args: tuple[Any, ...], tables: tuple[Any, ...]) -> np.ndarray:
    """The token ids (int64) of the ASCII bytes ``data`` (every byte < 0x80, read-only; the caller
    checks) under a Peek2 pattern, ``pattern_args`` as ``bpe_encoder._ascii_args`` makes them from
    ``pretok_peek2.kernel_args``, with the calling thread's ``CompiledBPE._tables``: :func:`ascii_scan`, then one ``_encode``
    over the missed pretokens (none: an empty call), then :func:`splice_ids`."""
    out, missed, missed_bytes = scan_buffers(len(data))
    o200k, table, branch, max_digits, to_end_first, fold_cps, fold_to = pattern_args
    count, n_missed, n_bytes = ascii_scan(data, o200k, table, branch, max_digits, to_end_first, fold_cps, fold_to,
                                          out, missed, missed_bytes, *tables)
    cbs, starts, ends = missed_spans(missed, n_missed)
    pieces = np.frombuffer(memoryview(missed_bytes[:n_bytes]).toreadonly(), np.uint8)  # type: ignore[arg-type]  # read-only, as every
    # caller gives _encode its bytes (one compiled version)
    with np.errstate(over="ignore"):  # interpreted kernels: the hashes wrap in numpy int64
        merged = _encode(pieces, cbs, _NO_CPS, starts, ends, False, *tables)
    spliced: np.ndarray = splice_ids(out, count, merged, missed, tables[0])  # tables[0]: tok_len
    return spliced
