"""Peek2 in plain Python with C-speed run searches: the pre-compilation implementation.

Kept as an independent second implementation of the same seed method, for the differential tests
against the compiled kernels of ``tokspec.fast.pretok_peek2`` (the two share only the category
tables). Each class the branches need becomes a 0/1 byte mask, and a run end ("first index >= i
outside class C") is one ``bytes.find`` in C, so the Python loop does O(1) work per *pretoken*:
O(n) time and O(n) extra space. Theorem relied on and branch meanings: see ``pretok_peek2``.
"""

from __future__ import annotations

import numpy as np

from tokspec._types import Span
from tokspec.fast.peek2_unicode import (
    CRLF, LETTER, NUMBER, O_BOTH, O_CRLF, O_LO, O_MARK, O_NUMBER, O_OTHER, O_SPACE, O_UP, O_WS,
    OTHER, QUOTE, SPACE, WHITESPACE, code_points, folds,
)

__all__ = ["cl100k_spans", "o200k_spans"]

_EOT = CRLF  # end of text behaves as CR/LF for every row


class _Runs:
    """Run ends over a class mask, as C-speed byte searches (no per-character Python work).

    ``end(i)`` = first index ``j >= i`` outside the class (``n`` if none); ``last_in(i, j)`` = last
    index in ``[i, j)`` inside the class (-1 if none). Each call is one ``bytes.find``/``rfind``:
    O(run length) in C, O(1) in Python.
    """

    __slots__ = ("mask", "n")

    def __init__(self, mask: np.ndarray) -> None:
        self.mask = mask.astype(np.uint8).tobytes()
        self.n = len(self.mask)

    def end(self, i: int) -> int:
        j = self.mask.find(0, i)
        return self.n if j < 0 else j

    def last_in(self, i: int, j: int) -> int:
        return self.mask.rfind(1, i, j)



def cl100k_spans(text: str, cat: np.ndarray, max_digits: int, ws_run_to_end_first: bool,
                 table: tuple[tuple[int, ...], ...]) -> list[Span]:
    """The Peek2 loop (seed figure 3) with the five branch functions below. O(pretokens) Python."""
    n = len(text)
    letter_end = _Runs(cat == LETTER).end
    number_end = _Runs(cat == NUMBER).end
    punct_end = _Runs((cat == OTHER) | (cat == QUOTE)).end
    crlf_end = _Runs(cat == CRLF).end
    ws_end = _Runs((cat == SPACE) | (cat == CRLF) | (cat == WHITESPACE)).end
    last_crlf = _Runs(cat == CRLF).last_in
    cats = cat.tobytes() + bytes([_EOT])
    flat = [c for row in table for c in row]
    fold_sets = (folds("s") | folds("d") | folds("m") | folds("t"),
                 {a + b for x, y in ("ll", "ve", "re") for a in folds(x) for b in folds(y)})

    def letters(i: int, c0: int) -> int:
        """``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++``: one snapped non-letter, then the letter run."""
        return letter_end(i) if c0 == LETTER else letter_end(i + 1)

    def contraction(i: int, c0: int) -> int:
        """``'(?i:[sdmt]|ll|ve|re)``, else fall back to the letters branch (seed section 3.3)."""
        if text[i + 1] in fold_sets[0]:
            return i + 2
        if text[i + 1:i + 3] in fold_sets[1]:
            return i + 3
        return letters(i, c0)

    def digits(i: int, c0: int) -> int:
        """``\\p{N}{1,3}+`` (Qwen: ``\\p{N}``)."""
        return min(number_end(i), i + max_digits)

    def punct(i: int, c0: int) -> int:
        """`` ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+``: snapped space, punctuation run, CR/LF run."""
        j = punct_end(i + 1) if c0 == SPACE else punct_end(i)
        return crlf_end(j) if j < n else j

    def spaces(i: int, c0: int) -> int:
        """``\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s`` (llama3/qwen2: ``\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+``)."""
        j = ws_end(i)
        if j == n and ws_run_to_end_first:
            return j
        nl = last_crlf(i, j)
        if nl >= 0:
            return nl + 1
        if j == n or j - i == 1:
            return j
        return j - 1

    branch = (contraction, letters, digits, punct, spaces)
    out: list[Span] = []
    i = 0
    while i < n:
        c0 = cats[i]
        j = branch[flat[c0 * 7 + cats[i + 1]]](i, c0)
        out.append((i, j))
        i = j
    return out



def o200k_spans(text: str, cat: np.ndarray) -> list[Span]:
    """o200k's branch decision on (category of i, category of i+1), and its branch functions.

    Decision: a letter at ``i`` -> word from ``i``; a mark at ``i`` -> word (the mark is in X and in
    both word classes); X at ``i`` and a word character at ``i+1`` -> word with the snapped prefix;
    a number -> digits; space before punctuation, or punctuation -> punct; otherwise whitespace.
    The word branch's choice between ``U*W+`` and ``U+W*`` needs more than two characters, but only
    through run ends, which are byte searches. O(pretokens) Python steps.
    """
    n = len(text)
    letter_cats = frozenset((O_UP, O_LO, O_BOTH))
    word_cats = frozenset((O_UP, O_LO, O_BOTH, O_MARK))
    word_m = (cat == O_UP) | (cat == O_LO) | (cat == O_BOTH) | (cat == O_MARK)
    word_end = _Runs(word_m).end
    upper_end = _Runs(word_m & (cat != O_LO)).end   # [Lu Lt Lm Lo M]
    lower = _Runs(word_m & (cat != O_UP))           # [Ll Lm Lo M]
    lower_end, last_lower = lower.end, lower.last_in
    punct_end = _Runs((cat == O_OTHER) | (cat == O_MARK)).end  # [^\s\p{L}\p{N}]
    tail_end = _Runs(np.isin(code_points(text), np.array([0x0D, 0x0A, 0x2F], dtype=np.uint32))).end
    number_end = _Runs(cat == O_NUMBER).end
    ws_end = _Runs((cat == O_SPACE) | (cat == O_CRLF) | (cat == O_WS)).end
    last_crlf = _Runs(cat == O_CRLF).last_in
    cats = cat.tobytes() + bytes([O_CRLF])
    two = {"'" + a for x in "stmd" for a in folds(x)}
    three = {"'" + a + b for x, y in ("re", "ve", "ll") for a in folds(x) for b in folds(y)}

    def u_star_w_plus(s: int) -> int:
        """End of ``[U]*[W]+`` at ``s`` with regex backtracking; -1 if it cannot match."""
        r, u = word_end(s), upper_end(s)
        if u < r:  # the upper run stops at a lower-only letter: W+ runs from there
            return lower_end(u)
        k = last_lower(s, r)  # U* gives back characters down to the last W character
        return k + 1 if k >= 0 else -1

    def contraction(e: int) -> int:
        """``(?i:'s|'t|'re|'ve|'m|'ll|'d)?`` after a word ending at ``e``."""
        if e < n and text[e] == "'":
            if text[e:e + 3] in three:
                return e + 3
            if text[e:e + 2] in two:
                return e + 2
        return e

    def word(s: int) -> int:
        """A1 = ``X? U* W+ C?``, else A2 = ``X? U+ W* C?`` (then the word run is all Lu/Lt)."""
        end = u_star_w_plus(s)
        return contraction(end if end >= 0 else word_end(s))

    def word_at_mark(i: int) -> int:
        """A1 with the mark as the X prefix, else A1 from the mark itself (always matches)."""
        end = u_star_w_plus(i + 1) if i + 1 < n else -1
        if end < 0:
            end = u_star_w_plus(i)
            assert end > i, "a mark is a W character, so A1 matches from it"
        return contraction(end)

    def punct(i: int, c0: int) -> int:
        r"""`` ?[^\s\p{L}\p{N}]+[\r\n/]*``."""
        j = punct_end(i + 1) if c0 == O_SPACE else punct_end(i)
        return tail_end(j) if j < n else j

    def spaces(i: int) -> int:
        r"""``\s*[\r\n]+|\s+(?!\S)|\s+``."""
        j = ws_end(i)
        nl = last_crlf(i, j)
        if nl >= 0:
            return nl + 1
        return j if j == n or j - i == 1 else j - 1

    out: list[Span] = []
    i = 0
    while i < n:
        c0 = cats[i]
        if c0 in letter_cats:
            j = word(i)
        elif c0 == O_NUMBER:
            j = min(number_end(i), i + 3)
        elif c0 == O_MARK:
            j = word_at_mark(i)
        elif c0 != O_CRLF and cats[i + 1] in word_cats:
            j = word(i + 1)
        elif c0 == O_OTHER or (c0 == O_SPACE and cats[i + 1] == O_OTHER):
            j = punct(i, c0)
        else:
            j = spaces(i)
        out.append((i, j))
        i = j
    return out

