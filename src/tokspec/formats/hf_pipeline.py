"""HF ``tokenizers`` normalizer and pretokenizer pipelines, with alignment (for Unigram models).

``hf_pipeline(tokenizer_json)`` turns a tokenizer.json's ``normalizer`` and ``pre_tokenizer``
into one function ``text -> list[Aligned]`` (see :mod:`tokspec.formats.normalize`). Every component is
reimplemented from HF's documented behaviour and checked against the library by the tests.
Out of scope: components not listed in ``NORMALIZERS`` / ``PRETOKENIZERS`` (they raise
UnsupportedComponentError, never silently ignored).
"""

from __future__ import annotations

import base64
import binascii
import unicodedata
from collections.abc import Callable
from typing import Any

import regex

from tokspec import _hf_unicode as hfu
from tokspec.formats import normalize as nz
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.hf_split import split_step
from tokspec.formats.normalize import Aligned
from tokspec.formats.spm_normalize import CharsMap, hf_precompiled
from tokspec.formats.vocab import TokenizerJson

__all__ = ["NMT_DELETED", "NMT_SPACE", "NORMALIZERS", "PRETOKENIZERS", "hf_pipeline", "is_hf_mark", "nmt",
           "nmt_char", "strip_accents"]

Normalizer = Callable[[Aligned], Aligned]


def _pattern(spec: dict[str, Any], where: str) -> regex.Pattern[str]:
    pat = spec.get("pattern", {})
    if "Regex" in pat:
        return regex.compile(pat["Regex"])
    if "String" in pat:
        return regex.compile(regex.escape(pat["String"]))
    raise UnsupportedComponentError(f"{where}: Replace pattern {pat!r} is neither Regex nor String")


def _normalizer(spec: dict[str, Any] | None, where: str) -> Normalizer:
    """Build one normalizer step from its tokenizer.json object."""
    if spec is None:
        return lambda a: a
    kind = spec.get("type")
    if kind == "Sequence":
        steps = [_normalizer(s, where) for s in spec["normalizers"]]
        return lambda a: _chain(a, steps)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        form: str = kind
        return lambda a: nz.unicode_form(a, form)
    if kind == "Replace":
        pattern, content = _pattern(spec, where), str(spec["content"])
        return lambda a: nz.replace(a, pattern, content)
    if kind == "Lowercase":
        return nz.lowercase
    if kind == "StripAccents":
        return strip_accents
    if kind == "Nmt":
        return nmt
    if kind == "Prepend":
        prefix = str(spec["prepend"])
        return lambda a: nz.prepend(a, prefix)
    if kind == "Precompiled":
        return _precompiled(spec, where)
    if kind == "Strip":
        left, right = bool(spec.get("strip_left", True)), bool(spec.get("strip_right", True))
        return lambda a: nz.strip(a, left=left, right=right)
    raise UnsupportedComponentError(
        f"{where}: normalizer type={kind!r} is not supported (supported: {', '.join(NORMALIZERS)})")


NORMALIZERS = ("Sequence", "NFC", "NFD", "NFKC", "NFKD", "Replace", "Lowercase", "Prepend",
               "Precompiled", "Strip", "StripAccents", "Nmt")

#: HF ``Nmt``: the control characters it deletes, and the characters it turns into a space
#: (probed over every code point by ``tests/test_fast_hf_maps.py``).
NMT_DELETED = frozenset([*range(0x01, 0x09), 0x0B, *range(0x0E, 0x20), 0x7F, 0x8F, 0x9F])
NMT_SPACE = frozenset([0x09, 0x0A, 0x0C, 0x0D, 0x1680, *range(0x200B, 0x2010), 0x2028, 0x2029, 0x2581, 0xFEFF,
                       0xFFFD])


def nmt_char(c: str) -> str:
    """What HF's ``Nmt`` makes of one character: ``""``, ``" "`` or ``c``."""
    return "" if ord(c) in NMT_DELETED else " " if ord(c) in NMT_SPACE else c


def nmt(a: Aligned) -> Aligned:
    """HF ``Nmt``: per character, :func:`nmt_char` (a deleted character belongs to no token; a
    space keeps its character's alignment). O(n)."""
    return nz.apply_edits(a, [(nmt_char(c), 0) for c in a.text])


def is_hf_mark(c: str) -> bool:
    """HF's ``is_combining_mark``: General_Category M* in HF's older tables (``tokspec._hf_unicode``)."""
    cp = ord(c)
    if unicodedata.category(c).startswith("M"):
        return not hfu.in_ranges(cp, hfu.MARK_UNKNOWN)
    return hfu.in_ranges(cp, hfu.MARK_EXTRA)


def strip_accents(a: Aligned) -> Aligned:
    """HF ``StripAccents``: delete every combining mark (:func:`is_hf_mark`), nothing else. O(n)."""
    return nz.apply_edits(a, [("" if is_hf_mark(c) else c, 0) for c in a.text])


def _precompiled(spec: dict[str, Any], where: str) -> Normalizer:
    """HF ``Precompiled``: a sentencepiece charsmap (base64) applied HF's way."""
    try:
        blob = base64.b64decode(str(spec.get("precompiled_charsmap") or ""), validate=True)
    except binascii.Error as exc:
        raise VocabularyError(f"{where}: Precompiled precompiled_charsmap is not base64: {exc}") from exc
    cm = CharsMap.parse(blob, where)
    return (lambda a: a) if cm is None else (lambda a: hf_precompiled(a, cm))


PRETOKENIZERS = ("Metaspace", "WhitespaceSplit", "Whitespace", "Split", "Sequence")


def _chain(a: Aligned, steps: list[Normalizer]) -> Aligned:
    for step in steps:
        a = step(a)
    return a


def _split_before(a: Aligned, marker: str) -> list[Aligned]:
    """Split so every ``marker`` character starts a new piece (HF ``MergedWithNext``)."""
    cuts = [i for i, c in enumerate(a.text) if c == marker and i > 0]
    bounds = [0, *cuts, len(a.text)]
    return [a.slice(s, e) for s, e in zip(bounds, bounds[1:]) if e > s]


def _metaspace(spec: dict[str, Any]) -> Callable[[Aligned, int], list[Aligned]]:
    """HF Metaspace: ' ' -> replacement, prepend per ``prepend_scheme``, split before each marker."""
    rep = str(spec.get("replacement", "\u2581"))
    scheme = spec.get("prepend_scheme")
    if scheme is None:  # older files: add_prefix_space
        scheme = "always" if spec.get("add_prefix_space", True) else "never"
    if scheme not in ("always", "first", "never"):
        raise UnsupportedComponentError(f"Metaspace prepend_scheme={scheme!r} is not supported")
    split = bool(spec.get("split", True))

    def run(a: Aligned, index: int) -> list[Aligned]:
        # HF "first": the piece starts at original offset 0 (the unsplit root always does)
        first = isinstance(a, _Root) or bool(a.spans and a.spans[0][0] == 0)
        if len(rep) == 1:  # one character for one: the same alignment, no edit list
            a = Aligned(a.text.replace(" ", rep), a.spans, a.origins)
        else:
            a = nz.apply_edits(a, [(rep if c == " " else c, 0) for c in a.text])
        if scheme == "always" or (scheme == "first" and first):
            if not a.text.startswith(rep):
                a = nz.prepend(a, rep)
        return _split_before(a, rep) if split else [a]
    return run


class _Root(Aligned):
    """The whole normalized text before any split (HF: its original offsets start at 0 even when
    normalization deleted leading characters)."""


def _whitespace_split(a: Aligned) -> list[Aligned]:
    """HF WhitespaceSplit: maximal runs of non-White_Space characters."""
    out: list[Aligned] = []
    start: int | None = None
    for i, c in enumerate(a.text + " "):
        if nz.is_rust_whitespace(c):
            if start is not None:
                out.append(a.slice(start, i))
            start = None
        elif start is None:
            start = i
    return out


def _pretokenizer(spec: dict[str, Any] | None, where: str) -> Callable[[list[Aligned]], list[Aligned]]:
    """Build a pretokenizer step mapping a list of pieces to a list of pieces."""
    if spec is None:
        return lambda pieces: pieces
    kind = spec.get("type")
    if kind == "Sequence":
        steps = [_pretokenizer(s, where) for s in spec["pretokenizers"]]
        return lambda pieces: _chain_pre(pieces, steps)
    if kind == "Metaspace":
        run = _metaspace(spec)
        return lambda pieces: [q for i, p in enumerate(pieces) for q in run(p, i)]
    if kind == "WhitespaceSplit":
        return lambda pieces: [q for p in pieces for q in _whitespace_split(p)]
    if kind in ("Whitespace", "Split"):  # tokspec.formats.hf_split: HF's Split, Whitespace its instance
        step = split_step(spec, where)
        return lambda pieces: [p.slice(s, e) for p in pieces for s, e in step.apply(p.text, 0, len(p.text))]
    raise UnsupportedComponentError(
        f"{where}: pre_tokenizer type={kind!r} is not supported (supported: {', '.join(PRETOKENIZERS)})")


def _chain_pre(pieces: list[Aligned], steps: list[Callable[[list[Aligned]], list[Aligned]]]) -> list[Aligned]:
    for step in steps:
        pieces = step(pieces)
    return pieces


def hf_pipeline(tj: TokenizerJson) -> Callable[[str], list[Aligned]]:
    """The normalizer + pretokenizer of a tokenizer.json as one function text -> pretokens."""
    norm = _normalizer(tj.data.get("normalizer"), tj.path)
    pre = _pretokenizer(tj.data.get("pre_tokenizer"), tj.path)

    def pipeline(text: str) -> list[Aligned]:
        root = norm(Aligned.of(text))
        return pre([_Root(root.text, root.spans, root.origins)])
    return pipeline
