"""The BERT normalizer (HF ``tokenizers`` ``BertNormalizer``) with alignment to the original text.

Steps, in HF's order: ``clean_text`` (drop NUL, U+FFFD and control characters, map White_Space to
a space), ``handle_chinese_chars`` (a space on each side of every CJK ideograph),
``strip_accents`` (NFD, then drop nonspacing marks; ``strip_accents=None`` FOLLOWS ``lowercase``),
``lowercase`` (per character, Rust semantics). Character classes are HF's, including where its
Unicode tables differ from Python's (``tokspec._hf_unicode``).

CJK ideographs: HF's ``is_chinese_char`` leaves out U+2B820..U+2B91F (the start of CJK Extension E),
which Google's original BERT spaces (finding ``hf-bert-chinese-range``). ``cjk_ranges="hf"`` (the
default) reproduces HF; ``cjk_ranges="bert"`` uses Google's ranges (``tokspec._hf_unicode.BERT_CJK``).

Out of scope: the Python-side ``BasicTokenizer`` of ``transformers`` (its tables and order differ);
``never_split`` lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokspec import _hf_unicode as hfu
from tokspec.formats import normalize as nz
from tokspec.errors import TokspecError, UnsupportedComponentError
from tokspec.formats.normalize import Aligned, Edit

__all__ = ["BertNormalizerConfig", "bert_normalize", "is_cjk_ideograph", "cjk_spacing"]

CJK_RANGES = ("hf", "bert")


@dataclass(frozen=True)
class BertNormalizerConfig:
    """The four switches of HF's BertNormalizer; ``strip_accents=None`` means "as lowercase".
    ``cjk_ranges`` picks whose CJK ideograph ranges ``handle_chinese_chars`` uses: ``"hf"`` or
    ``"bert"`` (Google's original)."""

    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True
    cjk_ranges: str = "hf"

    def __post_init__(self) -> None:
        if self.cjk_ranges not in CJK_RANGES:
            raise TokspecError(f"cjk_ranges={self.cjk_ranges!r} must be one of {CJK_RANGES}")

    @classmethod
    def from_json(cls, spec: dict[str, Any], *, cjk_ranges: str = "hf") -> BertNormalizerConfig:
        if spec.get("type") != "BertNormalizer":
            raise UnsupportedComponentError(
                f"normalizer type={spec.get('type')!r}: the WordPiece reference supports BertNormalizer only")
        return cls(bool(spec.get("clean_text", True)), bool(spec.get("handle_chinese_chars", True)),
                   spec.get("strip_accents"), bool(spec.get("lowercase", True)), cjk_ranges)


def is_cjk_ideograph(c: str, cjk_ranges: str = "hf") -> bool:
    """Does ``handle_chinese_chars`` space ``c``? Google's ranges, minus HF's gap for ``"hf"``."""
    cp = ord(c)
    if not hfu.in_ranges(cp, hfu.BERT_CJK):
        return False
    return cjk_ranges == "bert" or not hfu.in_ranges(cp, hfu.BERT_CJK_HF_MISSING)


def cjk_spacing(a: Aligned, cjk_ranges: str = "hf") -> Aligned:
    """``handle_chinese_chars``: a space on each side of every CJK ideograph, all three aligned
    to the ideograph. O(n)."""
    edits: list[Edit] = []
    for c in a.text:
        if is_cjk_ideograph(c, cjk_ranges):
            edits.extend([(" ", 0), (c, 1), (" ", 1)])
        else:
            edits.append((c, 0))
    return nz.apply_edits(a, edits)


def bert_normalize(text: str, config: BertNormalizerConfig) -> Aligned:
    """Normalize ``text``; every output character knows its original span. O(n)."""
    return bert_normalize_aligned(Aligned.of(text), config)


def bert_normalize_aligned(a: Aligned, config: BertNormalizerConfig) -> Aligned:
    """:func:`bert_normalize` of an already aligned string (HF's step order), for pipelines whose
    earlier normalizers have run (``tokspec.reference.hf_components``). O(n)."""
    if config.clean_text:
        a = nz.bert_clean(a)
    if config.handle_chinese_chars:
        a = cjk_spacing(a, config.cjk_ranges)
    strip = config.lowercase if config.strip_accents is None else config.strip_accents
    if strip:
        a = nz.bert_strip_accents(nz.unicode_form(a, "NFD"))
    if config.lowercase:
        a = nz.lowercase(a)
    return a
