"""Normalization with alignment: every normalized character remembers the original characters it
came from, so engines can report offsets into the ORIGINAL text.

Shared on purpose by ``tokspec.reference`` (the Unigram/WordPiece references) and ``tokspec.fast``
(the double-array Viterbi): the claim under test in those engines is the segmentation algorithm, not
normalization. Normalization is checked independently against the production libraries
(``tests/test_unigram_model.py`` probes HF ``tokenizers`` normalizers character by character).

Alignment model (reproduces HF ``tokenizers``' ``NormalizedString``, found by experiment): a
normalizer rewrites the character sequence as a list of *edits* ``(char, change)`` walked left to
right over the old characters. ``change <= 0`` emits ``char`` aligned to the next old character and
consumes ``1 - change`` old characters; ``change > 0`` inserts ``char`` aligned to the last consumed
old character (or to the next one at the very start). Alignment spans are original character spans.

Out of scope: HF normalizers other than those implemented here (``tokspec.formats.unigram_model.NORMALIZERS``
lists the tokenizer.json types; the rest raise UnsupportedComponentError); sentencepiece
normalization lives in ``tokspec.formats.spm_normalize``. Python-side code, no native speed.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import regex

from tokspec import _hf_unicode as hfu
from tokspec._types import Span

__all__ = [
    "Aligned",
    "Edit",
    "JOIN",
    "apply_edits",
    "unicode_form",
    "replace",
    "lowercase",
    "bert_strip_accents",
    "bert_clean",
    "bert_cjk_spacing",
    "prepend",
    "strip",
    "is_rust_whitespace",
    "is_cjk_ideograph",
]

Edit = tuple[str, int]
JOIN = "\x00JOIN"  # an edit char: consume, emit nothing, give the origin to the next emitted char


@dataclass(frozen=True)
class Aligned:
    """A normalized string with two alignments to the original text, per normalized character:

    - ``spans[i]``: HF ``tokenizers``' alignment (what HF reports; e.g. a composed character
      points at its FIRST source character only, a prepended ``▁`` at the character after it);
    - ``origins[i]``: the tokspec contract's alignment, the original characters normalized
      character ``i`` really came from (a composed character covers all its sources, an inserted
      ``▁`` covers nothing: an empty span at the next character's start).

    Invariant: ``len(text) == len(spans) == len(origins)``; spans are within the original text.
    """

    text: str
    spans: tuple[Span, ...]
    origins: tuple[Span, ...]

    @classmethod
    def of(cls, text: str, base: int = 0) -> Aligned:
        """The identity alignment of ``text`` (character ``i`` maps to ``(base+i, base+i+1)``)."""
        spans = tuple((base + i, base + i + 1) for i in range(len(text)))
        return cls(text, spans, spans)

    def slice(self, start: int, end: int) -> Aligned:
        return Aligned(self.text[start:end], self.spans[start:end], self.origins[start:end])

    def original_span(self, start: int, end: int) -> Span:
        """HF's original span of normalized characters ``[start, end)``: first start, last end."""
        assert start < end <= len(self.text), (start, end)
        return (self.spans[start][0], self.spans[end - 1][1])

    def contract_span(self, start: int, end: int) -> Span:
        """The contract's span of normalized characters ``[start, end)``: the hull of their
        non-empty origins, or the empty span at the first origin if all are empty."""
        assert start < end <= len(self.text), (start, end)
        real = [o for o in self.origins[start:end] if o[0] < o[1]]
        if not real:
            return (self.origins[start][0], self.origins[start][0])
        return (min(o[0] for o in real), max(o[1] for o in real))


def _hull(spans: list[Span]) -> Span:
    return (min(s for s, _ in spans), max(e for _, e in spans))


def apply_edits(a: Aligned, edits: Iterable[Edit], *, strict: bool = True) -> Aligned:
    """Rewrite ``a`` by the edit list (see module docstring). O(len(a) + len(edits)).

    An edit whose char is ``""`` consumes its characters and emits nothing (a deletion: the
    characters belong to no token). The char ``JOIN`` consumes like ``""`` but hands its
    characters' origins to the next emitted character (a multi-character match being replaced).
    """
    chars: list[str] = []
    spans: list[Span] = []
    origins: list[Span] = []
    pos = 0  # next old character to consume
    joined: list[Span] = []
    for ch, change in edits:
        if change > 0:  # inserted: shares the alignment of the previous old character
            span = a.spans[pos - 1] if pos > 0 else a.spans[0]
            origin = origins[-1] if origins else span
        else:
            span = a.spans[pos]
            origin = _hull(joined + list(a.origins[pos:pos + 1 - change]))
            pos += 1 - change
        if ch == JOIN:
            joined.append(origin)
            continue
        if ch:
            chars.append(ch)
            spans.append(span)
            origins.append(origin)
        joined = []
    # strict: every old character is consumed. HF's Precompiled can consume fewer (a deletion
    # with nothing before it to fold into); HF then simply leaves the rest unaligned.
    assert pos == len(a.text) or not strict, ("edits must consume every old character", pos, len(a.text))
    return Aligned("".join(chars), tuple(spans), tuple(origins))


def _per_char(a: Aligned, fn: Callable[[str], str]) -> Aligned:
    """Replace each character ``c`` by ``fn(c)``: ``""`` deletes it (kept characters keep their own
    alignment), a longer result inserts the extra characters aligned to ``c``."""
    edits: list[Edit] = []
    for c in a.text:
        new = fn(c)
        edits.append((new[:1], 0))
        edits.extend((x, 1) for x in new[1:])
    return apply_edits(a, edits)


def _lower(c: str) -> str:
    return hfu.LOWER.get(ord(c)) or c.lower()


def lowercase(a: Aligned) -> Aligned:
    """Per-character lowercase as Rust ``char::to_lowercase`` (no final-sigma context; Rust's
    newer Unicode data where it differs from Python's, see ``tokspec._hf_unicode``)."""
    return _per_char(a, _lower)


def _bert_strips(c: str) -> bool:
    cp = ord(c)
    if unicodedata.category(c) == "Mn":
        return not hfu.in_ranges(cp, hfu.BERT_MN_KEPT)
    return hfu.in_ranges(cp, hfu.BERT_STRIPPED_EXTRA)


def bert_strip_accents(a: Aligned) -> Aligned:
    """BertNormalizer ``strip_accents`` after NFD: remove nonspacing marks (Mn, HF's tables)."""
    return _per_char(a, lambda c: "" if _bert_strips(c) else c)


# -- Unicode normalization forms (HF's tables: Python's minus ``tokspec._hf_unicode`` deltas) -----

def _ccc(c: str) -> int:
    return 0 if hfu.in_ranges(ord(c), hfu.CCC_ZERO) else unicodedata.combining(c)


def _char_decomposition(c: str, compat: bool) -> str:
    cp = ord(c)
    if hfu.in_ranges(cp, hfu.NO_CANONICAL_DECOMP) or (compat and hfu.in_ranges(cp, hfu.NO_COMPAT_DECOMP)):
        return c
    return unicodedata.normalize("NFKD" if compat else "NFD", c)


def _compose_pair(a: str, b: str) -> str | None:
    """The primary composite of ``a`` + ``b`` that HF knows, or None."""
    c = unicodedata.normalize("NFC", a + b)
    if len(c) != 1 or hfu.in_ranges(ord(c), hfu.NO_CANONICAL_DECOMP):
        return None
    return c


_Src = tuple[str, int, int, int]  # (char, change, first source index, last source index)


def _decompose(text: str, compat: bool) -> list[_Src]:
    """Full decomposition with edits: first char of each expansion replaces, the rest insert;
    then canonical reordering of combining-mark runs (stable by ccc; edits and sources travel
    with their chars)."""
    out: list[_Src] = []
    for i, c in enumerate(text):
        d = _char_decomposition(c, compat)
        out.append((d[0], 0, i, i))
        out.extend((x, 1, i, i) for x in d[1:])
    i = 0
    while i < len(out):  # canonical ordering of each run of non-starters
        j = i
        while j < len(out) and _ccc(out[j][0]) != 0:
            j += 1
        if j > i + 1:
            out[i:j] = sorted(out[i:j], key=lambda e: _ccc(e[0]))
        i = j + 1 if j == i else j
    return out


def _recompose(dec: list[_Src]) -> list[_Src]:
    """Canonical composition (UAX #15) over decomposed edits. A composite's change is
    ``starter_change + mark_change - 1`` so the edit list still consumes every old character;
    its sources are the union (hull) of both."""
    out: list[_Src] = []
    starter: int | None = None  # index in ``out`` of the last starter
    last_ccc: int | None = None  # ccc of the last char appended after that starter
    for ch, change, lo, hi in dec:
        ccc = _ccc(ch)
        blocked = last_ccc is not None and (last_ccc == 0 or last_ccc >= ccc)
        if starter is not None and not blocked:
            comp = _compose_pair(out[starter][0], ch)
            if comp is not None:
                s_ch, s_change, s_lo, s_hi = out[starter]
                out[starter] = (comp, s_change + change - 1, min(s_lo, lo), max(s_hi, hi))
                continue
        if ccc == 0:
            starter, last_ccc = len(out), None
        else:
            last_ccc = ccc
        out.append((ch, change, lo, hi))
    return out


def unicode_form(a: Aligned, form: str) -> Aligned:
    """NFC, NFD, NFKC or NFKD with alignment, by HF's Unicode tables. O(n).

    Fast path: text Python calls normalized is returned as is (HF's tables are a subset of
    Python's for decomposition/composition/ccc, so HF leaves such text unchanged too; the
    exhaustive probe test checks the tables)."""
    if unicodedata.is_normalized(form, a.text):  # type: ignore[arg-type]  # one of the four, checked by callers
        return a
    dec = _decompose(a.text, compat=form in ("NFKC", "NFKD"))
    srcs = _recompose(dec) if form in ("NFC", "NFKC") else dec
    result = apply_edits(a, [(ch, change) for ch, change, _, _ in srcs])
    # HF's spans are positional (a reordered mark points at whatever stood in its place); the
    # contract origins follow each character to where it really came from
    origins = tuple(_hull([a.origins[lo], a.origins[hi]]) for _, _, lo, hi in srcs)
    return Aligned(result.text, result.spans, origins)


# -- pattern replacement --------------------------------------------------------------------------

def replace(a: Aligned, pattern: regex.Pattern[str], content: str) -> Aligned:
    """HF ``Replace``: each non-empty match is removed, then ``content`` is inserted aligned to the
    LAST removed character. Matches are found on ``a.text`` left to right, non-overlapping. O(n).

    Fast path: when every non-empty match is one character equal to ``content`` (``\\p{Zs}`` -> ``" "``
    on text whose only Zs is the space), the edits would be the identity, and ``a`` is returned."""
    matches = [m for m in pattern.finditer(a.text) if m.end() > m.start()]
    if all(m.end() - m.start() == 1 and m.group() == content for m in matches):
        return a
    edits: list[Edit] = []
    pos = 0
    for m in matches:
        s, e = m.span()
        edits.extend((c, 0) for c in a.text[pos:s])
        edits.extend((JOIN, 0) for _ in range(e - s - 1))  # consume all but the last
        edits.append((content[:1], 0))                     # first content char takes the last's span
        edits.extend((c, 1) for c in content[1:])          # the rest are insertions after it
        pos = e
    edits.extend((c, 0) for c in a.text[pos:])
    return apply_edits(a, edits)


def strip(a: Aligned, *, left: bool, right: bool) -> Aligned:
    """HF ``Strip``: delete leading and/or trailing White_Space characters. O(n)."""
    start, end = 0, len(a.text)
    while left and start < end and a.text[start] in _WHITE_SPACE:
        start += 1
    while right and end > start and a.text[end - 1] in _WHITE_SPACE:
        end -= 1
    edits = [(c if start <= i < end else "", 0) for i, c in enumerate(a.text)]
    return apply_edits(a, edits)


def prepend(a: Aligned, s: str) -> Aligned:
    """Insert ``s`` before the first character, aligned to it (HF ``NormalizedString::prepend``)."""
    if not a.text:
        return a
    empty = (a.spans[0][0], a.spans[0][0])  # where it is inserted: before the first character
    return Aligned(s + a.text, (a.spans[0],) * len(s) + a.spans, (empty,) * len(s) + a.origins)


# -- BERT character classes (HF tokenizers' definitions, Rust char semantics) ---------------------

#: Rust ``char::is_whitespace``: the Unicode White_Space property.
_WHITE_SPACE = frozenset(
    "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
    "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


#: The same set, public (``tokspec.fast._hf_identity`` checks HF ``Strip`` with it).
WHITE_SPACE = _WHITE_SPACE


def is_rust_whitespace(c: str) -> bool:
    return c in _WHITE_SPACE


def is_cjk_ideograph(c: str) -> bool:
    """HF BertNormalizer's ``is_chinese_char``: Google BERT's CJK ranges minus the gap HF's Rust
    range leaves (U+2B820..U+2B91F, see ``_hf_unicode.BERT_CJK_HF_MISSING``)."""
    cp = ord(c)
    return hfu.in_ranges(cp, hfu.BERT_CJK) and not hfu.in_ranges(cp, hfu.BERT_CJK_HF_MISSING)


#: Format (Cf) characters HF tokenizers' Unicode tables do not know yet (added in Unicode 9..14),
#: found by probing every code point: HF keeps them although Python 3.11 calls them Cf.
_HF_UNKNOWN_CF = frozenset("\u0890\u0891\u08e2\U000110cd" + "".join(map(chr, range(0x13430, 0x13439))))


def _is_hf_control(c: str) -> bool:
    """HF ``is_control``: category Cc, Cf or Co (NOT unassigned Cn), tab/LF/CR excluded."""
    return unicodedata.category(c) in ("Cc", "Cf", "Co") and c not in _HF_UNKNOWN_CF


def _bert_clean_char(c: str) -> str:
    if c in "\t\n\r":
        return " "
    if c == "\x00" or c == "\ufffd" or _is_hf_control(c):
        return ""
    return " " if c in _WHITE_SPACE else c


def bert_clean(a: Aligned) -> Aligned:
    """BertNormalizer ``clean_text``: drop NUL, U+FFFD and control chars (``_is_hf_control``);
    map White_Space chars to a space. O(n)."""
    return _per_char(a, _bert_clean_char)


def bert_cjk_spacing(a: Aligned) -> Aligned:
    """BertNormalizer ``handle_chinese_chars``: surround each CJK ideograph with spaces, all three
    aligned to the ideograph. O(n)."""
    edits: list[Edit] = []
    for c in a.text:
        if is_cjk_ideograph(c):
            edits.extend([(" ", 0), (c, 1), (" ", 1)])
        else:
            edits.append((c, 0))
    return apply_edits(a, edits)
