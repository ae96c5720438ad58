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
:func:`_o200k_spans`). The Unicode classes (letters, numbers, ``\\s``, case classes, marks) are the
Unicode 16.0 tables of the production libraries (read from HF tokenizers' regex engine, see
:func:`_flags`); the case folds of the contractions come from the ``regex`` module. Out of scope:
r50k/GPT-2 (ASCII-space snapping and case-sensitive contractions: a different table), special tokens.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass

import numpy as np
import regex

from tokspec._types import Span
from tokspec.errors import UnknownEngineError
from tokspec.fast._cache import cache_dir

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


#: Unicode property -> flag bit. The classes are read from HF ``tokenizers``' regex engine, whose
#: tables are Unicode 16.0, as tiktoken's are; the ``regex`` module ships 17.0 (4644 letters more).
_PROBES = ((_F_L, r"\p{L}"), (_F_N, r"\p{N}"), (_F_WS, r"\s"), (_F_UP, r"[\p{Lu}\p{Lt}]"),
           (_F_LO, r"\p{Ll}"), (_F_M, r"\p{M}"))


@functools.lru_cache(maxsize=1)
def _flags() -> np.ndarray:
    """uint8 flags for every code point 0..0x10FFFF (surrogates: 0).

    Derived once per ``tokenizers`` version (a few seconds) by letting its ``Split`` pre-tokenizer
    remove each class from a string of all code points; cached under ``$TOKSPEC_CACHE/peek2``.
    """
    import tokenizers
    path = cache_dir("peek2") / f"flags-tokenizers-{tokenizers.__version__}-v1.npy"
    if path.is_file():
        try:
            flags = np.load(path)
            if flags.shape == (0x110000,) and flags.dtype == np.uint8:
                return flags  # type: ignore[no-any-return]
        except (OSError, ValueError):
            pass
    flags = _derive_flags()
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.tmp.npy")
    np.save(tmp, flags)
    os.replace(tmp, path)
    return flags


def _derive_flags() -> np.ndarray:
    from tokenizers import Regex, pre_tokenizers
    cps = np.concatenate([np.arange(0, 0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")
    text = _all_chars()
    flags = np.zeros(0x110000, dtype=np.uint8)
    for bit, prop in _PROBES:
        inside = np.ones(len(text), dtype=bool)
        split = pre_tokenizers.Split(Regex(prop + "+"), behavior="removed")
        for _piece, (start, end) in split.pre_tokenize_str(text):  # what is left is outside the class
            inside[start:end] = False
        flags[cps[inside]] |= bit
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
    return _o200k_spans(text, cat)


_O_LETTER = frozenset((O_UP, O_LO, O_BOTH))
_O_WORD = frozenset((O_UP, O_LO, O_BOTH, O_MARK))


def _o200k_spans(text: str, cat: np.ndarray) -> list[Span]:
    """o200k's branch decision on (category of i, category of i+1), and its branch functions.

    Decision: a letter at ``i`` -> word from ``i``; a mark at ``i`` -> word (the mark is in X and in
    both word classes); X at ``i`` and a word character at ``i+1`` -> word with the snapped prefix;
    a number -> digits; space before punctuation, or punctuation -> punct; otherwise whitespace.
    The word branch's choice between ``U*W+`` and ``U+W*`` needs more than two characters, but only
    through run ends, which are byte searches. O(pretokens) Python steps.
    """
    n = len(text)
    word_m = (cat == O_UP) | (cat == O_LO) | (cat == O_BOTH) | (cat == O_MARK)
    word_end = _Runs(word_m).end
    upper_end = _Runs(word_m & (cat != O_LO)).end   # [Lu Lt Lm Lo M]
    lower = _Runs(word_m & (cat != O_UP))           # [Ll Lm Lo M]
    lower_end, last_lower = lower.end, lower.last_in
    punct_end = _Runs((cat == O_OTHER) | (cat == O_MARK)).end  # [^\s\p{L}\p{N}]
    tail_end = _Runs(np.isin(_code_points(text), np.array([0x0D, 0x0A, 0x2F], dtype=np.uint32))).end
    number_end = _Runs(cat == O_NUMBER).end
    ws_end = _Runs((cat == O_SPACE) | (cat == O_CRLF) | (cat == O_WS)).end
    last_crlf = _Runs(cat == O_CRLF).last_in
    cats = cat.tobytes() + bytes([O_CRLF])
    two = {"'" + a for x in "stmd" for a in _folds(x)}
    three = {"'" + a + b for x, y in ("re", "ve", "ll") for a in _folds(x) for b in _folds(y)}

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
        if c0 in _O_LETTER:
            j = word(i)
        elif c0 == O_NUMBER:
            j = min(number_end(i), i + 3)
        elif c0 == O_MARK:
            j = word_at_mark(i)
        elif c0 != O_CRLF and cats[i + 1] in _O_WORD:
            j = word(i + 1)
        elif c0 == O_OTHER or (c0 == O_SPACE and cats[i + 1] == O_OTHER):
            j = punct(i, c0)
        else:
            j = spaces(i)
        out.append((i, j))
        i = j
    return out
