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
hypothesis strings over every category, the adversarial cases and the conformance corpus; the
table itself is re-derived cell by cell from the regex there.

Python speed: the categories of all characters are computed at once with numpy (a lookup table over
all code points); each class the branches need becomes a 0/1 byte mask, and a run end ("first index
>= i outside class C") is one ``bytes.find`` in C, so the Python loop does O(1) work per *pretoken*.
Total O(n) time and O(n) extra space (the seed's O(1) space is a per-character design; here a few
bytes per character buy the per-token loop).

Patterns: ``cl100k_base`` (possessive form), ``llama3`` (pre-0.7 cl100k form: same table, the
whitespace branch differs at the end of text), ``qwen2`` (as llama3, one digit per number pretoken),
and ``o200k_base`` (a 9-category variant: the word branch resolves ``U*W+`` vs ``U+W*`` by runs; see
:func:`_o200k_spans`). The Unicode classes (letters, numbers, ``\\s``, case classes, marks) are read
from the installed ``regex`` module's Unicode database so both sides agree on the Unicode version;
what is under test is the branch logic. Out of scope: r50k/GPT-2 (ASCII-space snapping and
case-sensitive contractions: a different table), special tokens.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
import regex

from tokspec._types import Span
from tokspec.errors import UnknownEngineError

__all__ = ["CL100K_TABLE", "PATTERN_NAMES", "categories", "split", "split_o200k"]

# Character flags (bits) read from the regex module's Unicode tables.
_F_L, _F_N, _F_WS, _F_UP, _F_LO, _F_M = 1, 2, 4, 8, 16, 32

# The seven Peek2 categories (seed figure 2): smaller sets take precedence.
OTHER, SPACE, QUOTE, CRLF, LETTER, WHITESPACE, NUMBER = range(7)
_EOT = CRLF  # end of text behaves as CR/LF for every row (checked in the tests)

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


@dataclass(frozen=True)
class _Variant:
    max_digits: int          # \p{N}{1,3} -> 3; Qwen's \p{N} -> 1
    ws_run_to_end_first: bool  # cl100k's \s++$ precedes \s*[\r\n]; llama3/qwen2 have no such branch


_VARIANTS = {
    "cl100k_base": _Variant(3, True),
    "llama3": _Variant(3, False),
    "qwen2": _Variant(1, False),
}


@functools.lru_cache(maxsize=1)
def _flags() -> np.ndarray:
    """uint8 flags for every code point 0..0x10FFFF (surrogates: 0). Built once, ~0.3 s."""
    cps = np.concatenate([np.arange(0, 0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    text = cps.tobytes().decode("utf-32-le")
    flags = np.zeros(0x110000, dtype=np.uint8)
    for bit, pattern in ((_F_L, r"\p{L}+"), (_F_N, r"\p{N}+"), (_F_WS, r"\s+"),
                         (_F_UP, r"[\p{Lu}\p{Lt}]+"), (_F_LO, r"\p{Ll}+"), (_F_M, r"\p{M}+")):
        for m in regex.finditer(pattern, text):
            flags[cps[m.start():m.end()]] |= bit
    return flags


@functools.lru_cache(maxsize=None)
def _folds(letter: str) -> frozenset[str]:
    """Characters ``(?i:letter)`` matches in the regex module (e.g. 's' -> s, S, U+017F)."""
    return frozenset(m.group() for m in regex.finditer(f"(?i:{letter})", _all_chars()))


@functools.lru_cache(maxsize=1)
def _all_chars() -> str:
    cps = np.concatenate([np.arange(0, 0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    return cps.tobytes().decode("utf-32-le")


@functools.lru_cache(maxsize=1)
def _cl100k_category_table() -> np.ndarray:
    """Code point -> Peek2 category (seed figure 2)."""
    flags = _flags()
    cat = np.full(0x110000, OTHER, dtype=np.uint8)
    cat[(flags & _F_WS) != 0] = WHITESPACE
    cat[(flags & _F_L) != 0] = LETTER
    cat[(flags & _F_N) != 0] = NUMBER
    cat[[0x0D, 0x0A]] = CRLF
    cat[ord("'")] = QUOTE
    cat[ord(" ")] = SPACE
    return cat


def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)


def categories(text: str) -> np.ndarray:
    """The Peek2 category of every character of ``text`` (uint8 array). O(n), vectorized."""
    return _cl100k_category_table()[_code_points(text)]


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


def split(text: str, pattern: str = "cl100k_base") -> list[Span]:
    """Character spans of the pretokens of ``text`` under ``pattern`` (see :data:`PATTERN_NAMES`)."""
    if pattern == "o200k_base":
        return split_o200k(text)
    variant = _VARIANTS.get(pattern)
    if variant is None:
        raise UnknownEngineError(
            f"Peek2 has no pattern={pattern!r}; available: {', '.join(PATTERN_NAMES)}")
    if not text:
        return []
    return _cl100k_spans(text, categories(text), variant)


def _cl100k_spans(text: str, cat: np.ndarray, variant: _Variant) -> list[Span]:
    """The Peek2 loop (seed figure 3) with the five branch functions below. O(pretokens) Python."""
    n = len(text)
    letter_end = _Runs(cat == LETTER).end
    number_end = _Runs(cat == NUMBER).end
    punct_end = _Runs((cat == OTHER) | (cat == QUOTE)).end
    crlf_end = _Runs(cat == CRLF).end
    ws_end = _Runs((cat == SPACE) | (cat == CRLF) | (cat == WHITESPACE)).end
    last_crlf = _Runs(cat == CRLF).last_in
    cats = cat.tobytes() + bytes([_EOT])
    table = [c for row in CL100K_TABLE for c in row]
    folds = (_folds("s") | _folds("d") | _folds("m") | _folds("t"),
             {a + b for x, y in ("ll", "ve", "re") for a in _folds(x) for b in _folds(y)})

    def letters(i: int, c0: int) -> int:
        """``[^\\r\\n\\p{L}\\p{N}]?+\\p{L}++``: one snapped non-letter, then the letter run."""
        return letter_end(i) if c0 == LETTER else letter_end(i + 1)

    def contraction(i: int, c0: int) -> int:
        """``'(?i:[sdmt]|ll|ve|re)``, else fall back to the letters branch (seed section 3.3)."""
        if text[i + 1] in folds[0]:
            return i + 2
        if text[i + 1:i + 3] in folds[1]:
            return i + 3
        return letters(i, c0)

    def digits(i: int, c0: int) -> int:
        """``\\p{N}{1,3}+`` (Qwen: ``\\p{N}``)."""
        return min(number_end(i), i + variant.max_digits)

    def punct(i: int, c0: int) -> int:
        """`` ?[^\\s\\p{L}\\p{N}]++[\\r\\n]*+``: snapped space, punctuation run, CR/LF run."""
        j = punct_end(i + 1) if c0 == SPACE else punct_end(i)
        return crlf_end(j) if j < n else j

    def spaces(i: int, c0: int) -> int:
        """``\\s++$|\\s*[\\r\\n]|\\s+(?!\\S)|\\s`` (llama3/qwen2: ``\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+``)."""
        j = ws_end(i)
        if j == n and variant.ws_run_to_end_first:
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
        j = branch[table[c0 * 7 + cats[i + 1]]](i, c0)
        out.append((i, j))
        i = j
    return out


# -- o200k ---------------------------------------------------------------------------------------
# Categories: the word classes of o200k's two word alternatives
#   A1 = X? [Lu Lt Lm Lo M]* [Ll Lm Lo M]+ C?     A2 = X? [Lu Lt Lm Lo M]+ [Ll Lm Lo M]* C?
# (X = [^\r\n\p{L}\p{N}], C = an English contraction) need upper-only (Lu, Lt), lower-only (Ll),
# both (Lm, Lo) and mark (M: a word character that is *not* \p{L}, so it is also in X and in the
# punctuation class).
O_OTHER, O_SPACE, O_CRLF, O_WS, O_UP, O_LO, O_BOTH, O_MARK, O_NUMBER = range(9)


@functools.lru_cache(maxsize=1)
def _o200k_category_table() -> np.ndarray:
    flags = _flags()
    cat = np.full(0x110000, O_OTHER, dtype=np.uint8)
    cat[(flags & _F_WS) != 0] = O_WS
    cat[(flags & _F_M) != 0] = O_MARK
    cat[(flags & _F_L) != 0] = O_BOTH
    cat[(flags & _F_UP) != 0] = O_UP
    cat[(flags & _F_LO) != 0] = O_LO
    cat[(flags & _F_N) != 0] = O_NUMBER
    cat[[0x0D, 0x0A]] = O_CRLF
    cat[ord(" ")] = O_SPACE
    return cat


def split_o200k(text: str) -> list[Span]:
    """Character spans of the o200k_base pretokens of ``text`` (Peek2 method, 9 categories)."""
    if not text:
        return []
    cat = _o200k_category_table()[_code_points(text)]
    return _O200k(text, cat).spans()


class _O200k:
    """o200k's branch decision on (category of i, category of i+1) and its branch functions.

    Decision: a letter or mark at ``i`` -> word; X at ``i`` and a word character at ``i+1`` -> word
    with the snapped prefix; a number -> digits; space before punctuation, or punctuation -> punct;
    otherwise whitespace. Marks make the word branch depend on more than two characters only through
    run ends, which are precomputed.
    """

    def __init__(self, text: str, cat: np.ndarray) -> None:
        self.text, self.n = text, len(text)
        word = (cat == O_UP) | (cat == O_LO) | (cat == O_BOTH) | (cat == O_MARK)
        upper = word & (cat != O_LO)   # [Lu Lt Lm Lo M]
        lower = word & (cat != O_UP)   # [Ll Lm Lo M]
        punct = (cat == O_OTHER) | (cat == O_MARK)  # [^\s\p{L}\p{N}]
        self.word_end, self.upper_end = _Runs(word).end, _Runs(upper).end
        lower_runs = _Runs(lower)
        self.lower_end, self.last_lower = lower_runs.end, lower_runs.last_in
        self.punct_end = _Runs(punct).end
        tail = np.isin(_code_points(text), np.array([0x0D, 0x0A, 0x2F], dtype=np.uint32))
        self.tail_end = _Runs(tail).end
        self.number_end = _Runs(cat == O_NUMBER).end
        self.ws_end = _Runs((cat == O_SPACE) | (cat == O_CRLF) | (cat == O_WS)).end
        self.last_crlf = _Runs(cat == O_CRLF).last_in
        self.cats = cat.tobytes() + bytes([O_CRLF])
        self.contractions = {"'" + a for x in "stmd" for a in _folds(x)}
        self.contractions3 = {"'" + a + b for x, y in ("re", "ve", "ll")
                              for a in _folds(x) for b in _folds(y)}

    def spans(self) -> list[Span]:
        out: list[Span] = []
        i, cats = 0, self.cats
        while i < self.n:
            c0, c1 = cats[i], cats[i + 1]
            if c0 in (O_UP, O_LO, O_BOTH):
                j = self.word(i)
            elif c0 == O_MARK:
                j = self.word_at_mark(i)
            elif c0 == O_NUMBER:
                j = min(self.number_end(i), i + 3)
            elif c0 != O_CRLF and c1 in (O_UP, O_LO, O_BOTH, O_MARK):
                j = self.word(i + 1)
            elif c0 == O_OTHER or (c0 == O_SPACE and c1 == O_OTHER):
                j = self.punct(i, c0)
            else:
                j = self.spaces(i)
            out.append((i, j))
            i = j
        return out

    def _u_star_w_plus(self, s: int) -> int:
        """End of ``[U]*[W]+`` matched at ``s`` with regex backtracking; -1 if it cannot match."""
        r, u = self.word_end(s), self.upper_end(s)
        if u < r:  # the upper run stops at a lower-only letter: W+ runs from there
            return self.lower_end(u)
        k = self.last_lower(s, r)  # U* gives back up to the last W character
        return k + 1 if k >= 0 else -1

    def word(self, s: int) -> int:
        """A1, else A2 (``[U]+[W]*``, which then covers the whole word run), plus a contraction."""
        end = self._u_star_w_plus(s)
        if end < 0:
            u = self.upper_end(s)
            end = self.lower_end(u) if u < self.n else u
        return self.contraction(end)

    def word_at_mark(self, i: int) -> int:
        """A mark is in X and in both word classes: A1 with the mark as prefix, else A1 from it."""
        end = self._u_star_w_plus(i + 1) if i + 1 < self.n else -1
        if end >= 0:
            return self.contraction(end)
        end = self._u_star_w_plus(i)
        assert end > i, "a mark is a W character, so A1 matches from it"
        return self.contraction(end)

    def contraction(self, e: int) -> int:
        """``(?i:'s|'t|'re|'ve|'m|'ll|'d)?`` after a word ending at ``e``."""
        text = self.text
        if e < self.n and text[e] == "'":
            if text[e:e + 3] in self.contractions3:
                return e + 3
            if text[e:e + 2] in self.contractions:
                return e + 2
        return e

    def punct(self, i: int, c0: int) -> int:
        """`` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*``."""
        j = self.punct_end(i + 1) if c0 == O_SPACE else self.punct_end(i)
        return self.tail_end(j) if j < self.n else j

    def spaces(self, i: int) -> int:
        """``\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+``."""
        j = self.ws_end(i)
        nl = self.last_crlf(i, j)
        if nl >= 0:
            return nl + 1
        if j == self.n or j - i == 1:
            return j
        return j - 1
