"""Peek2: the cl100k-family pretokenizers without a regex engine (seed ``peek2-regex-free-pretokenizer``).

Method (the seed's, section 3): classify each character into one of seven categories, look up the
branch of the pattern that matches at the current position from the categories of the next *two*
characters (the 7x7 table, :data:`CL100K_TABLE`), then run that branch's function, which finds the
end of the pretoken without backtracking. The contraction branch falls back to the letters branch.

Claim relied on: for the patterns below, the first alternative of the production regex that matches
at position ``i`` is determined by the categories of characters ``i`` and ``i + 1`` (end of text
behaving as category 3), and each alternative's match is a simple run computation. The spec
property checking it is "pretokenizer exactness": span equality with ``regex`` running the
production pattern (``tokspec.reference.pretok_regex``), tested in ``tests/test_fast_peek2.py`` on
hypothesis strings over every category, the adversarial cases and the conformance corpus, and
against the independent plain-Python implementation ``tokspec.fast.peek2_runs``; the table itself
is re-derived cell by cell from the regex there.

Implementation: compiled kernels (``tokspec._jit.kernel``: numba, nopython, GIL released) over the
code point array of the text (``np.frombuffer`` of its UTF-32 encoding) and the per-code-point
category table of ``tokspec.fast.peek2_unicode``; they write pretoken spans into two int64 arrays.
Each character is classified once and every run scan advances, so a text costs O(n) time
(whitespace runs and o200k word runs are scanned at most twice) and O(n) space for the output.
The cl100k-family letters run reads seven categories per 8-byte load (``load_le64``) and finds its
end by bit arithmetic, not a per-letter loop whose exit the CPU mispredicts once per word: Peek2 on
1 MB of English from many corpora 2.69 -> 2.43 ms, library code 2.47 -> 2.23 ms (thread time, best
of 9, load 4); ``tests/test_fast_peek2.py`` checks runs of 0..30 letters before every category.
o200k's common word run (lower, both, mark) does the same: English 2.69 -> 2.55 ms, code 2.40 -> 2.37.
The byte index of the first character past the run is a ``cttz`` of the marks over 8
(``tokspec.fast._bits``), not a ``% 255`` of a byte-ones mask: each pretoken's end is the next
one's start, so the count sits on the kernel's chain of dependent operations. Per MB, same
process, best of 9: cl100k English 2.46 -> 2.17 ms, code 2.25 -> 2.04, Chinese-like 0.60 -> 0.53;
o200k English 2.61 -> 2.41, code 2.36 -> 2.18, Chinese-like 0.73 -> 0.74.
With ``TOKSPEC_JIT=0`` the same kernels run as plain Python (slow; for fuzzing and tests).

Patterns: ``cl100k_base`` (possessive form), ``llama3`` (pre-0.7 cl100k form: same table, the
whitespace branch differs at the end of text), ``qwen2`` (as llama3, one digit per number pretoken),
and ``o200k_base`` (a 9-category variant: the word branch resolves ``U*W+`` vs ``U+W*`` by runs; see
:func:`_o200k_kernel`). Out of scope: r50k/GPT-2 (ASCII-space snapping and case-sensitive
contractions: a different table), special tokens.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from tokspec._jit import kernel
from tokspec._types import Span
from tokspec.errors import UnknownEngineError
from tokspec.fast import peek2_runs
from tokspec.fast._bits import trailing_zeros64
from tokspec.fast._le_load import load_le64
from tokspec.fast.peek2_unicode import (  # noqa: F401  (re-exported for callers and tests)
    CRLF, LETTER, NUMBER, O_BOTH, O_CRLF, O_LO, O_MARK, O_NUMBER, O_OTHER, O_SPACE, O_UP, O_WS,
    OTHER, QUOTE, SPACE, WHITESPACE, cl100k_category_table, code_points, fold_table,
    o200k_category_table,
)

__all__ = ["CL100K_TABLE", "PATTERN_NAMES", "categories", "split", "split_o200k", "spans", "split_runs"]

# Branches of the cl100k pattern, numbered as in the seed's section 3.2.
CONTRACTION, LETTERS, DIGITS, PUNCT, SPACES = range(5)

#: The seed's Table 1: CL100K_TABLE[first][second] -> branch. Verified, not assumed: see tests.
CL100K_TABLE: tuple[tuple[int, ...], ...] = (
    (3, 3, 3, 3, 1, 3, 3),
    (3, 4, 3, 4, 1, 4, 4),
    (3, 3, 3, 3, 0, 3, 3),
    (4, 4, 4, 4, 4, 4, 4),
    (1, 1, 1, 1, 1, 1, 1),
    (4, 4, 4, 4, 1, 4, 4),
    (2, 2, 2, 2, 2, 2, 2),
)

PATTERN_NAMES = ("cl100k_base", "llama3", "qwen2", "o200k_base")

#: pattern -> (max digits per number pretoken, whether ``\s++$`` precedes ``\s*[\r\n]``).
_VARIANTS = {"cl100k_base": (3, True), "llama3": (3, False), "qwen2": (1, False)}

# The category and branch numbers again as plain ints, for the kernels' (frozen) globals.
_OT, _SP, _QU, _CR, _LE, _WS, _NU = 0, 1, 2, 3, 4, 5, 6
_B_CON, _B_LET, _B_DIG, _B_PUN = 0, 1, 2, 3
_o_OT, _o_SP, _o_CR, _o_WS, _o_UP, _o_LO, _o_BO, _o_MA, _o_NU = 0, 1, 2, 3, 4, 5, 6, 7, 8
# The letters run of _cl100k_kernel, seven categories per 8-byte load (low 7 bytes): each byte
# XOR the letter category is 0 for a letter and < 8 otherwise, so adding 0x7F sets its top bit
# exactly when it is not a letter, with no carry into the next byte and no int64 overflow; the
# lowest top bit set, over 8, is the index of the first character past the run (``_bits``).
_LE_BYTES = _LE * 0x0101010101010101  # the letter category in every byte
_SEVEN_BYTES = 0x00FFFFFFFFFFFFFF
_SEVEN_LOW7 = 0x007F7F7F7F7F7F7F
_SEVEN_TOPS = 0x0080808080808080  # the top bit of each of the low 7 bytes
# o200k's W+ run (categories lower..mark, 5..7) the same way: categories are < 9, so a byte plus
# 0x80 - 5 has its top bit set iff it is >= lower, plus 0x80 - 8 iff it is past mark.
_SEVEN_FROM_LO = (0x80 - _o_LO) * 0x01010101010101
_SEVEN_PAST_MA = (0x80 - _o_MA - 1) * 0x01010101010101


@kernel(inline=True)
def _fold(cp: int, fold_cps: np.ndarray, fold_to: np.ndarray) -> int:
    """The contraction letter (ASCII code) ``cp`` folds to, 0 if none. O(17)."""
    for k in range(len(fold_cps)):
        if fold_cps[k] == cp:
            return int(fold_to[k])
    return 0


@kernel(inline=True)
def _whitespace_end(cat: np.ndarray, i: int, n: int, to_end_first: bool, space: int, crlf: int,
                    other_ws: int) -> int:
    r"""``\s++$|\s*[\r\n]|\s+(?!\S)|\s`` from ``i`` if ``to_end_first``, else
    ``\s*[\r\n]+|\s+(?!\S)|\s+``; ``\s`` is the three categories given. O(run length)."""
    j = i
    while j < n and (cat[j] == space or cat[j] == crlf or cat[j] == other_ws):
        j += 1
    if j == n and to_end_first:
        return j
    k = j - 1
    while k >= i:
        if cat[k] == crlf:
            return k + 1
        k -= 1
    if j == n or j - i == 1:
        return j
    return j - 1


@kernel
def _cl100k_kernel(cps: np.ndarray, table: np.ndarray, branch: np.ndarray, max_digits: int,
                   to_end_first: bool, fold_cps: np.ndarray, fold_to: np.ndarray,
                   starts: np.ndarray, ends: np.ndarray) -> int:
    """Write the pretoken spans of ``cps`` into ``starts``/``ends``; return their number. O(n)."""
    n = len(cps)
    cat = np.empty(n + 8, dtype=np.uint8)  # 7 bytes of padding: the letter runs load 8 at a time
    for k in range(n):
        cat[k] = table[cps[k]]
    for k in range(n, n + 8):
        cat[k] = _CR  # end of text behaves as CR/LF for every row, and stops every run but CR/LF's
    count = 0
    i = 0
    while i < n:
        c0 = cat[i]
        b = branch[c0 * 7 + cat[i + 1]]
        j = -1
        if b == _B_CON:  # '(?i:[sdmt]|ll|ve|re), else the letters branch (seed section 3.3)
            f1 = _fold(cps[i + 1], fold_cps, fold_to)
            if f1 == 115 or f1 == 100 or f1 == 109 or f1 == 116:  # s d m t
                j = i + 2
            elif i + 2 < n and f1 != 0:
                f2 = _fold(cps[i + 2], fold_cps, fold_to)
                if (f1 == 108 and f2 == 108) or ((f1 == 118 or f1 == 114) and f2 == 101):  # ll ve re
                    j = i + 3
            if j < 0:
                b = _B_LET
        # The runs below start at i + 1: the table picks each branch only where character i is in
        # its run or is the prefix its run may take (a letter at i or i + 1; a digit at i; ' ' then
        # punctuation, or punctuation, at i). They need no bound test: cat[n] ends them.
        if b == _B_LET:  # [^\r\n\p{L}\p{N}]?+\p{L}++: the letters run, 7 categories per load
            j = i + 1
            while True:  # byte k of x is 0 iff character j + k is a letter (categories are < 8)
                x = (load_le64(cat, j) ^ _LE_BYTES) & _SEVEN_BYTES
                marks = (x + _SEVEN_LOW7) & _SEVEN_TOPS  # bit 8k + 7: j + k is no letter
                if marks != 0:  # the letters before the first mark: its byte index
                    j += trailing_zeros64(marks) >> 3
                    break
                j += 7
        elif b == _B_DIG:  # \p{N}{1,3}+ (Qwen: \p{N})
            j = i + 1
            while j < i + max_digits and cat[j] == _NU:
                j += 1
        elif b == _B_PUN:  # ' ?[^\s\p{L}\p{N}]++[\r\n]*+'
            j = i + 1
            while cat[j] == _OT or cat[j] == _QU:
                j += 1
            while j < n and cat[j] == _CR:
                j += 1
        elif b != _B_CON:  # whitespace
            j = _whitespace_end(cat, np.int64(i), n, to_end_first, _SP, _CR, _WS)  # i typed int64 at once: one compile
        starts[count] = i
        ends[count] = j
        count += 1
        i = j
    return count


@kernel(inline=True)
def _u_star_w_plus(cat: np.ndarray, s: int, n: int) -> int:
    """End of ``[U]*[W]+`` at ``s`` (U: up/both/mark, W: low/both/mark) with regex backtracking; -1
    if it cannot match. O(run length)."""
    u = s
    while u < n and (cat[u] == _o_UP or cat[u] == _o_BO or cat[u] == _o_MA):
        u += 1
    if u < n and cat[u] == _o_LO:  # the upper run stops at a lower-only letter: W+ runs from there
        while u < n and (cat[u] == _o_LO or cat[u] == _o_BO or cat[u] == _o_MA):
            u += 1
        return u
    k = u - 1  # the word run ends at u: U* gives back characters down to the last W character
    while k >= s:
        if cat[k] != _o_UP:
            return k + 1
        k -= 1
    return -1


@kernel(inline=True)
def _o200k_contraction(cps: np.ndarray, e: int, n: int, fold_cps: np.ndarray, fold_to: np.ndarray) -> int:
    """``(?i:'s|'t|'re|'ve|'m|'ll|'d)?`` after a word ending at ``e``."""
    if e + 1 < n and cps[e] == 39:
        f1 = _fold(cps[e + 1], fold_cps, fold_to)
        if e + 2 < n and f1 != 0:
            f2 = _fold(cps[e + 2], fold_cps, fold_to)
            if (f1 == 108 and f2 == 108) or ((f1 == 118 or f1 == 114) and f2 == 101):
                return e + 3
        if f1 == 115 or f1 == 116 or f1 == 109 or f1 == 100:
            return e + 2
    return e


@kernel
def _o200k_kernel(cps: np.ndarray, table: np.ndarray, fold_cps: np.ndarray, fold_to: np.ndarray,
                  starts: np.ndarray, ends: np.ndarray) -> int:
    """o200k's branch decision on (category of i, category of i+1); write spans, return count.

    Decision: a letter at ``i`` -> word from ``i``; X (not CR/LF, a number or a mark) at ``i`` and a
    word character at ``i+1`` -> word with the snapped prefix; a number -> digits; a mark at ``i``
    -> word (the mark is in X and in both word classes: A1 with the mark as X prefix, else A1 from
    the mark itself); space before punctuation, or punctuation -> punct; otherwise whitespace. A
    word takes its contraction only where an apostrophe (category other) ends its run, so the
    common word costs no code point load. Runs that ``cat[n]`` (CR) ends need no bound test. The
    common word's run is written out here, not in an inlined kernel: numba left an atomic
    reference count increment and decrement of ``cat`` around each inlined call (measured: 3.9 ->
    3.1 ns/B on English). O(n).
    """
    n = len(cps)
    cat = np.empty(n + 8, dtype=np.uint8)  # 7 bytes of padding: the W+ run loads 8 at a time
    for k in range(n):
        cat[k] = table[cps[k]]
    for k in range(n, n + 8):
        cat[k] = _o_CR
    count = 0
    i = 0
    while i < n:
        c0 = cat[i]
        c1 = cat[i + 1]
        s = -1  # where the word run starts, if a word is next
        if _o_UP <= c0 <= _o_BO:
            s = i
        elif c0 != _o_CR and c0 != _o_NU and c0 != _o_MA and _o_UP <= c1 <= _o_MA:
            s = i + 1
        if s >= 0:  # A1 = U* W+, else A2 = U+ W* (then the run is all Lu/Lt); then C?
            if cat[s] == _o_LO:  # A1's W+ at once (lower, both, mark), 7 categories per load
                j = s + 1
                while True:  # cat[n] (CR) ends the run
                    x = load_le64(cat, j) & _SEVEN_BYTES
                    marks = ((~(x + _SEVEN_FROM_LO)) | (x + _SEVEN_PAST_MA)) & _SEVEN_TOPS
                    if marks != 0:  # bit 8k + 7: character j + k is not lower, both or mark
                        j += trailing_zeros64(marks) >> 3
                        break
                    j += 7
            else:
                j = _u_star_w_plus(cat, s, n)
                if j < 0:
                    j = s
                    while j < n and _o_UP <= cat[j] <= _o_MA:
                        j += 1
            if cat[j] == _o_OT and cps[j] == 39:
                j = _o200k_contraction(cps, j, n, fold_cps, fold_to)
        elif c0 == _o_NU:  # \p{N}{1,3}
            j = i + 1
            while j < i + 3 and cat[j] == _o_NU:
                j += 1
        elif c0 == _o_MA:
            end = _u_star_w_plus(cat, i + 1, n) if i + 1 < n else -1
            if end < 0:
                end = _u_star_w_plus(cat, i, n)  # a mark is a W character: A1 matches from it
            j = _o200k_contraction(cps, end, n, fold_cps, fold_to)
        elif c0 == _o_OT or (c0 == _o_SP and c1 == _o_OT):  # ' ?[^\s\p{L}\p{N}]+[\r\n/]*'
            j = i + 1  # i is ' ' (then i + 1 is punctuation) or punctuation
            while cat[j] == _o_OT or cat[j] == _o_MA:
                j += 1
            while j < n and (cps[j] == 13 or cps[j] == 10 or cps[j] == 47):
                j += 1
        else:
            j = _whitespace_end(cat, i, n, False, _o_SP, _o_CR, _o_WS)
        starts[count] = i
        ends[count] = j
        count += 1
        i = j
    return count


@functools.lru_cache(maxsize=4)
def _branch_array(table: tuple[tuple[int, ...], ...]) -> np.ndarray:
    return np.array([c for row in table for c in row], dtype=np.int64)


def _check_pattern(pattern: str) -> None:
    if pattern not in PATTERN_NAMES:
        raise UnknownEngineError(f"Peek2 has no pattern={pattern!r}; available: {', '.join(PATTERN_NAMES)}")


def spans_of_code_points(cps: np.ndarray, pattern: str) -> tuple[np.ndarray, np.ndarray]:
    """Pretoken spans of the text whose code points are ``cps`` (uint32), as two int64 arrays."""
    _check_pattern(pattern)
    n = len(cps)
    starts, ends = np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64)
    fold_cps, fold_to = fold_table()
    if pattern == "o200k_base":
        count = _o200k_kernel(cps, o200k_category_table(), fold_cps, fold_to, starts, ends)
    else:
        max_digits, to_end_first = _VARIANTS[pattern]
        count = _cl100k_kernel(cps, cl100k_category_table(), _branch_array(CL100K_TABLE), max_digits,
                               to_end_first, fold_cps, fold_to, starts, ends)
    return starts[:count], ends[:count]


def kernel_args(pattern: str) -> tuple[Callable[..., int], tuple[Any, ...]]:
    """``(kernel, args)`` with ``kernel(cps, *args, starts, ends)`` the call
    :func:`spans_of_code_points` makes for ``pattern``: its arguments fixed once, for callers that
    call the kernel themselves (``tokspec.fast._bpe_text``)."""
    _check_pattern(pattern)
    fold_cps, fold_to = fold_table()
    if pattern == "o200k_base":
        return _o200k_kernel, (o200k_category_table(), fold_cps, fold_to)
    max_digits, to_end_first = _VARIANTS[pattern]
    return _cl100k_kernel, (cl100k_category_table(), _branch_array(CL100K_TABLE), max_digits, to_end_first,
                            fold_cps, fold_to)


def spans(text: str, pattern: str = "cl100k_base") -> tuple[np.ndarray, np.ndarray]:
    """Character spans of the pretokens of ``text`` as (starts, ends) int64 arrays. O(n)."""
    return spans_of_code_points(code_points(text), pattern)


def split(text: str, pattern: str = "cl100k_base") -> list[Span]:
    """Character spans of the pretokens of ``text`` under ``pattern`` (see :data:`PATTERN_NAMES`)."""
    starts, ends = spans(text, pattern)
    return list(zip(starts.tolist(), ends.tolist()))


def split_o200k(text: str) -> list[Span]:
    """Character spans of the o200k_base pretokens of ``text``."""
    return split(text, "o200k_base")


def split_runs(text: str, pattern: str = "cl100k_base") -> list[Span]:
    """The same spans by the plain-Python implementation ``tokspec.fast.peek2_runs`` (for tests)."""
    _check_pattern(pattern)
    if not text:
        return []
    if pattern == "o200k_base":
        return peek2_runs.o200k_spans(text, o200k_category_table()[code_points(text)])
    max_digits, to_end_first = _VARIANTS[pattern]
    return peek2_runs.cl100k_spans(text, categories(text), max_digits, to_end_first, CL100K_TABLE)


def categories(text: str) -> np.ndarray:
    """The Peek2 category of every character of ``text`` (uint8 array). O(n), vectorized."""
    return cl100k_category_table()[code_points(text)]


# names the tests and the mutation harness reach by their historical spelling
_cl100k_category_table = cl100k_category_table
_o200k_category_table = o200k_category_table
