"""The BERT normalizer (HF ``tokenizers`` ``BertNormalizer``) with alignment to the original text.

Steps, in HF's order: ``clean_text`` (drop NUL, U+FFFD and control characters, map White_Space to
a space), ``handle_chinese_chars`` (a space on each side of every CJK ideograph),
``strip_accents`` (NFD, then drop nonspacing marks; ``strip_accents=None`` FOLLOWS ``lowercase``),
``lowercase`` (per character, Rust semantics). Character classes are HF's, including where its
Unicode tables differ from Python's (``tokspec._hf_unicode``).

Out of scope: the Python-side ``BasicTokenizer`` of ``transformers`` (its tables and order differ);
``never_split`` lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokspec import normalize as nz
from tokspec.errors import UnsupportedComponentError
from tokspec.normalize import Aligned

__all__ = ["BertNormalizerConfig", "bert_normalize"]


@dataclass(frozen=True)
class BertNormalizerConfig:
    """The four switches of HF's BertNormalizer; ``strip_accents=None`` means "as lowercase"."""

    clean_text: bool = True
    handle_chinese_chars: bool = True
    strip_accents: bool | None = None
    lowercase: bool = True

    @classmethod
    def from_json(cls, spec: dict[str, Any]) -> BertNormalizerConfig:
        if spec.get("type") != "BertNormalizer":
            raise UnsupportedComponentError(
                f"normalizer type={spec.get('type')!r}: the WordPiece reference supports BertNormalizer only")
        return cls(bool(spec.get("clean_text", True)), bool(spec.get("handle_chinese_chars", True)),
                   spec.get("strip_accents"), bool(spec.get("lowercase", True)))


def bert_normalize(text: str, config: BertNormalizerConfig) -> Aligned:
    """Normalize ``text``; every output character knows its original span. O(n)."""
    a = Aligned.of(text)
    if config.clean_text:
        a = nz.bert_clean(a)
    if config.handle_chinese_chars:
        a = nz.bert_cjk_spacing(a)
    strip = config.lowercase if config.strip_accents is None else config.strip_accents
    if strip:
        a = nz.bert_strip_accents(nz.unicode_form(a, "NFD"))
    if config.lowercase:
        a = nz.lowercase(a)
    return a
