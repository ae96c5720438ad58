"""The fused scan of ``tokspec.fast._bpe_ascii``: :func:`ascii_scan`, Peek2's rules on UTF-8 bytes with
the whole-piece and store lookups of the fast BPE, and its foreign segments for mixed text.

The design, the theorems it relies on (Peek2's pretokenizer exactness; the whole-piece shortcut
and the store of ``_bpe_encode``; M2's sound cuts for mixed text), the measurements and the tests
are in ``tokspec.fast._bpe_ascii``'s docstring, whose glue (:func:`~tokspec.fast._bpe_ascii.ascii_ids`)
calls this kernel; split from it at 469 lines (stop 55) along that seam: the kernel here, the
buffers, the splice and the calls there.
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._bits import leading_zeros64, trailing_zeros64
from tokspec.fast._bpe_encode import _HIGH_BITS  # the top bit of each of 8 bytes
from tokspec.fast._le_load import load_le64
from tokspec.fast._piece_store import STORE_MAX, store_set, store_words
from tokspec.fast._piece_table import PIECE_MAX, _home, _key_of_words
from tokspec.fast._piece_table import _KEY_BITS as _PIECE_KEY_BITS, _KEY_MASK as _PIECE_KEY_MASK
from tokspec.fast.pretok_peek2 import _fold, _o200k_contraction, _u_star_w_plus

__all__ = ["ascii_scan"]

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
_SEVEN_NOT_QU = 0x00FDFDFDFDFDFDFD  # cl100k's punctuation run (``_bpe_ascii``'s docstring, "Runs")
_ONES7 = 0x0001010101010101
_NONE = 1 << 62  # no non-ASCII byte ahead
_TRACK = 512  # bytes before a non-ASCII byte within which sound cuts are noted (_bpe_ascii, "Mixed text")
_WINDOW = 4  # bytes past a pretoken's end its scan may read (``_bpe_ascii``'s docstring, "Mixed text")
_SEVEN_MA = _O_MA * _ONES7  # o200k's


# the argument form: mutation/config.toml keeps it out of mutation until judged (a comment after the
# decorator would keep it out for good: the stage drops only a bare decorator line)
@kernel(cache=True)
def ascii_scan(data: np.ndarray, o200k: bool, table: np.ndarray, branch: np.ndarray, max_digits: int,
               to_end_first: bool, fold_cps: np.ndarray, fold_to: np.ndarray, out: np.ndarray, missed: np.ndarray,
               missed_bytes: np.ndarray, foreign: np.ndarray | None, tok_len: np.ndarray, next_prefix: np.ndarray,
               left: np.ndarray, right: np.ndarray, root: np.ndarray, trie: np.ndarray, pairs: np.ndarray,
               memo: np.ndarray, max_len: int, pieces: np.ndarray, pieces_filter: np.ndarray, level3: np.ndarray,
               store: np.ndarray) -> tuple[int, int, int, int]:
    """Scan the bytes ``data`` (ASCII; UTF-8 when ``foreign`` is given, below) into pretokens by
    Peek2's rules (``pretok_peek2``: o200k_base's if ``o200k``, else the cl100k family's with
    ``branch``, ``max_digits`` and ``to_end_first``; the category ``table`` and the contraction
    folds read at bytes) and look each up whole
    (``pieces``), then in ``store`` (the trailing arguments are ``CompiledBPE._tables``, as
    ``_encode`` takes them; the others are not read). Writes to ``out`` (int32, ``len(data)``
    entries) each found pretoken's ids and, for each missed one, ``-1 - k`` (``k``: its number
    among the missed); the missed pretokens' bytes one after another to ``missed_bytes``
    (``len(data)`` entries), and pretoken ``k``'s start and end there to ``missed[2k]``,
    ``missed[2k + 1]``. ``data`` may hold non-ASCII UTF-8 ("Mixed text" in ``_bpe_ascii``'s docstring):
    each foreign segment ``f`` (a span of ``data`` between sound cuts that holds every non-ASCII
    byte near it) is written as the marker ``-1 - len(data) - f`` and its start and end in
    ``data`` to ``foreign[2f]``, ``foreign[2f + 1]`` (``len(data) + 2`` entries). Returns (entries
    written, pretokens missed, bytes missed, foreign segments). O(n) plus a probe per pretoken."""
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
    n_foreign = 0
    cut = 0  # mixed text: the last sound cut noted (a pretoken's start), and the entries before it
    cut_count = 0
    near = _NONE  # the first non-ASCII byte at or after i (_NONE: none, or ASCII data)
    if foreign is not None:
        near = _next_high(data, 0)
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
                while True:  # other and mark, 7 categories per load (``_bpe_ascii``'s docstring, "Runs")
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
                while True:  # other and quote, 7 categories per load (``_bpe_ascii``'s docstring, "Runs")
                    marks = ((load_le64(cat, j) & _SEVEN_NOT_QU) + _SEVEN_LOW7) & _SEVEN_TOPS
                    if marks != 0:
                        j += trailing_zeros64(marks) >> 3
                        break
                    j += 7
                while j < n and cat[j] == _CR:
                    j += 1
        if j < 0:  # whitespace: pretok_peek2._whitespace_end's rule, its run forwards and its last
            # CR/LF backwards seven categories per load (``_bpe_ascii``'s docstring, "Runs")
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
        if foreign is not None:  # mixed data (ASCII: None, and numba compiles none of this)
            if near < j + _TRACK:  # within _TRACK bytes of a non-ASCII byte (mixed text only)
                if i > 0 and _space_after_letter(data[i - 1], data[i]):
                    cut = i  # a space after an ASCII letter: M2's sound cut (``_bpe_ascii``, "Mixed text");
                    cut_count = count  # noted near non-ASCII only: any earlier cut is sound too
                if near < j + _WINDOW:  # a non-ASCII byte this pretoken's bytes may depend on: back
                    for t in range(cut_count, count):  # to the last cut, what was scanned since undone
                        if out[t] < 0:  # the first missed pretoken after the cut (no foreign marker
                            n_missed = -1 - out[t]  # follows a cut: one is noted after each)
                            at_missed = missed[2 * n_missed]
                            break
                    count = cut_count
                    q = near + 1  # ... and a foreign segment from the cut to the next sound cut
                    while q < n and not _space_after_letter(data[q - 1], data[q]):
                        q += 1
                    out[count] = -1 - n - n_foreign
                    count += 1
                    foreign[2 * n_foreign] = cut
                    foreign[2 * n_foreign + 1] = q
                    n_foreign += 1
                    near = _next_high(data, q)
                    cut = q  # a sound cut, or the end of the text
                    cut_count = count
                    i = q
                    continue
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
    return count, n_missed, at_missed, n_foreign


@kernel(inline=True)
def _space_after_letter(before: int, byte: int) -> bool:
    """Whether ``byte`` is a space after the ASCII letter ``before``: M2's sound cut
    (``merge_rules``' space-after-letter rule, its letters restricted to ASCII). Scalars only."""
    return byte == 32 and 97 <= (before | 0x20) <= 122


@kernel(inline=True)
def _next_high(data: np.ndarray, at: int) -> int:
    """The first position at or after ``at`` of a byte >= 0x80 in ``data``, else :data:`_NONE`:
    eight bytes per load, then one at a time."""
    k = at
    while k + 8 <= len(data) and (load_le64(data, k) & _HIGH_BITS) == 0:
        k += 8
    while k < len(data) and data[k] < 0x80:
        k += 1
    return k if k < len(data) else _NONE
