"""HF ``tokenizers`` normalizers and pretokenizers beyond those of ``bpe_hf``, from their definitions.

Normalizers (:func:`normalizer_of`) work on :class:`~tokspec.formats.normalize.Aligned` strings, so every
normalized character knows the original characters it came from (the contract's offsets):

==================  ===========================================================================
type                definition
==================  ===========================================================================
``Sequence``        the steps in order; an empty Sequence is the identity
``NFC`` ... NFKD    Unicode normalization forms (HF's tables, ``tokspec.formats.normalize.unicode_form``)
``Lowercase``       Rust ``char::to_lowercase`` per character
``Strip``           drop leading / trailing White_Space (``strip_left``, ``strip_right``)
``StripAccents``    drop every combining mark (General_Category M* in HF's older tables)
``Replace``         every match of a literal or regex by ``content``
``Prepend``         ``prepend`` before a non-empty text
``Precompiled``     a sentencepiece charsmap applied HF's way (``tokspec.formats.spm_normalize``)
``BertNormalizer``  clean text, space CJK ideographs, strip accents, lowercase (``bert_normalizer``)
==================  ===========================================================================

Pretokenizers (:func:`split_steps`): each item of a ``pre_tokenizer`` Sequence becomes splitting
passes over character spans (``bpe_hf.SplitStep`` or :class:`CharSplit`, both ``apply(text, start,
end) -> spans``):

=======================  ======================================================================
type                     definition
=======================  ======================================================================
``Split``, Whitespace    as in ``bpe_hf`` (regex or literal, each behavior, ``invert``)
``WhitespaceSplit``      White_Space characters are removed delimiters
``Punctuation``          each punctuation character (BERT's definition) a delimiter, ``behavior``
``Digits``               numeric characters (General_Category N): each alone with
                         ``individual_digits``, else maximal runs; delimiters isolated
``CharDelimiterSplit``   ``delimiter`` is a removed delimiter
``BertPreTokenizer``     WhitespaceSplit, then Punctuation isolated
=======================  ======================================================================

Refused (UnsupportedComponentError naming the reason): ``UnicodeScripts`` (a script table and
HF's own script-fusion rules, not reimplemented), ``Metaspace`` in a BPE pipeline (it edits
characters: see ``hf_pipeline`` for the Unigram side), ``ByteLevel`` anywhere but last.
Complexity: every normalizer and split is O(n) per text apart from regex backtracking.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tokspec.formats import normalize as nz
from tokspec._types import Span
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.hf_pipeline import NORMALIZERS as _CORE_NORMALIZERS
from tokspec.formats.hf_pipeline import _normalizer as _core_normalizer
from tokspec.formats.hf_pipeline import strip_accents as _core_strip_accents
from tokspec.formats.normalize import Aligned
from tokspec.reference.bert_normalizer import BertNormalizerConfig, bert_normalize_aligned
from tokspec.reference.bert_pretokenizer import is_bert_punctuation
from tokspec.reference.bpe_hf_pretok import _BEHAVIORS, _apply_behavior

__all__ = ["NORMALIZER_TYPES", "PRETOKENIZER_TYPES", "REFUSED", "CharSplit", "normalizer_of", "split_steps",
           "strip_accents", "bert_normalizer"]

Normalizer = Callable[[Aligned], Aligned]

NORMALIZER_TYPES = (*_CORE_NORMALIZERS, "BertNormalizer")  # the core list has StripAccents
PRETOKENIZER_TYPES = ("Split", "Whitespace", "WhitespaceSplit", "Punctuation", "Digits", "CharDelimiterSplit",
                      "BertPreTokenizer", "ByteLevel")
#: component type -> why it is refused.
REFUSED: dict[str, str] = {
    "UnicodeScripts": "needs a Unicode script table and HF's script-fusion rules (not reimplemented)",
    "Metaspace": "edits characters inside a BPE pipeline (supported for Unigram by tokspec.formats.hf_pipeline)",
}


def strip_accents(a: Aligned) -> Aligned:
    """HF ``StripAccents``: drop every combining mark (``tokspec.formats.hf_pipeline.is_hf_mark``:
    M* as HF's older tables have it; Python's M* alone disagreed with HF on 315 code points, e.g.
    U+07FD), nothing else."""
    return _core_strip_accents(a)


def bert_normalizer(config: BertNormalizerConfig) -> Normalizer:
    """HF ``BertNormalizer`` over an Aligned string, in HF's step order (``bert_normalizer``)."""
    return lambda a: bert_normalize_aligned(a, config)


def normalizer_of(spec: dict[str, Any] | None, where: str) -> Normalizer:
    """The normalizer a tokenizer.json ``normalizer`` object defines (None: the identity)."""
    if spec is None:
        return lambda a: a
    kind = spec.get("type")
    if kind == "Sequence":
        if not isinstance(spec.get("normalizers"), list):  # HF: "missing field `normalizers`"
            raise VocabularyError(f"{where}: a Sequence normalizer needs its 'normalizers' list")
        steps = [normalizer_of(s, where) for s in spec["normalizers"]]
        return lambda a: _chain(a, steps)
    if kind == "StripAccents":
        return strip_accents
    if kind == "BertNormalizer":
        return bert_normalizer(BertNormalizerConfig.from_json(spec))
    if kind in _CORE_NORMALIZERS:
        return _core_normalizer(spec, where)
    raise UnsupportedComponentError(
        f"{where}: normalizer type={kind!r} is not supported (supported: {', '.join(NORMALIZER_TYPES)})")


def _chain(a: Aligned, steps: list[Normalizer]) -> Aligned:
    for step in steps:
        a = step(a)
    return a


@dataclass(frozen=True)
class CharSplit:
    """A splitting pass whose delimiters are characters satisfying ``is_delimiter``: each one
    alone, or maximal runs of them when ``runs`` (HF's ``Contiguous``), handled by ``behavior``."""

    is_delimiter: Callable[[str], bool]
    behavior: str
    runs: bool = False

    def apply(self, text: str, start: int, end: int) -> list[Span]:
        """Cut ``text[start:end]`` into pieces (absolute spans), empty pieces dropped. O(n)."""
        marks: list[tuple[int, int, bool]] = []  # (start, end, is_delimiter) tiling the range
        for i in range(start, end):
            delim = self.is_delimiter(text[i])
            if marks and marks[-1][2] == delim and (not delim or self.runs):
                marks[-1] = (marks[-1][0], i + 1, delim)  # extend a gap, or a run of delimiters
            else:
                marks.append((i, i + 1, delim))
        return [(s, e) for s, e in _apply_behavior(marks, self.behavior) if s < e]


def _behavior(spec: dict[str, Any], default: str) -> str:
    behavior = str(spec.get("behavior", default))
    if behavior not in _BEHAVIORS:
        raise UnsupportedComponentError(f"{spec.get('type')} behavior={behavior!r}; supported: {_BEHAVIORS}")
    return behavior


def _is_numeric(c: str) -> bool:
    return unicodedata.category(c).startswith("N")


def split_steps(item: dict[str, Any]) -> list[CharSplit] | None:
    """The passes of one pretokenizer item this module defines; None for the types ``bpe_hf``
    parses itself (Split, Whitespace, ByteLevel); refused types raise."""
    kind = item.get("type")
    if kind in ("Split", "Whitespace", "ByteLevel"):
        return None
    if kind == "WhitespaceSplit":
        return [CharSplit(nz.is_rust_whitespace, "Removed")]
    if kind == "Punctuation":
        return [CharSplit(is_bert_punctuation, _behavior(item, "Isolated"))]
    if kind == "Digits":
        return [CharSplit(_is_numeric, "Isolated", runs=not item.get("individual_digits", False))]
    if kind == "CharDelimiterSplit":
        delimiter = str(item["delimiter"])
        return [CharSplit(lambda c: c == delimiter, "Removed")]
    if kind == "BertPreTokenizer":
        return [CharSplit(nz.is_rust_whitespace, "Removed"), CharSplit(is_bert_punctuation, "Isolated")]
    reason = REFUSED.get(str(kind), f"unknown type (supported: {', '.join(PRETOKENIZER_TYPES)})")
    raise UnsupportedComponentError(f"pre_tokenizer {kind!r} is unsupported: {reason}")
