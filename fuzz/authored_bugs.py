"""Planted bugs of the kind a tokenizer author writes: the pytest plugin's and ``tokspec diff``'s yardstick.

Each engine here is a plausible, wrong tokenizer, one bug each, to be told apart from the real one
(``AUTHORED_BUGS`` gives the pair). They are what a user's own engine looks like when
``check_against(MyEngine(), "tiktoken:cl100k_base")`` should fail, so the plugin's search is
measured on them (``tests/test_plugin_search.py``). Engine names are ``module:attr`` names,
``tokspec.fuzz.authored_bugs:NAME`` (zero-argument factories).

BPE engines wrap ``tiktoken`` over cl100k_base's verified ranks (a changed pattern, or a wrapper
around the real encoding); WordPiece and Unigram engines are HF ``tokenizers`` built from a
``tokenizer.json`` with one configuration value changed. Several bugs show only on long inputs
(a fixed output buffer, independent chunks, a chunk seam moved to whitespace). The engines' code is
in :mod:`tokspec.fuzz._authored_engines`; this module is the table (name, model, description, the
engine to disagree with) and the ``module:attr`` factories.

Unlike :mod:`tokspec.fuzz.mutants` (breaks of tokspec's own engines, caught by fuzz targets), these
model *user* code. Two contract bugs beyond encode (:mod:`tokspec.decoding`): ``promotes_specials``
encodes special-token strings found in text as the special ids (special-token injection: class
"special token from text"), ``decode_drops_incomplete`` decodes an incomplete UTF-8 character to
nothing where tiktoken writes U+FFFD (class "decode differs"). Their clean twins (``CLEAN_TWINS``:
the same code with the one line right) must raise nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tokspec import Encoder
# the engines' code; _Cl100k and _CL100K are re-exported (tests and tokspec.fuzz.authored_hazards import them from here)
from tokspec.fuzz._authored_engines import _CL100K as _CL100K
from tokspec.fuzz._authored_engines import _Cl100k as _Cl100k
from tokspec.fuzz._authored_engines import (_ME, _CaseFoldedCache, _CrashOnMarkAfterAstral, _DecodeIgnore,
                                            _drop_normalizer, _FixedChunks, _HfSlip, _NulTerminated,
                                            _OffsetsInBytes, _OlderUnicode, _OutputBuffer, _PromotesSpecials,
                                            _SeamAtWhitespace, _set, _slip, _SpecialAware, _SplitCharSpans)

__all__ = ["AuthoredBug", "AUTHORED_BUGS", "CLEAN_TWINS", "by_name"]


@dataclass(frozen=True)
class AuthoredBug:
    """``engine`` (a ``module:attr`` name) must disagree with ``against``; ``long`` says whether the
    bug can only show on inputs longer than a few thousand characters."""

    name: str
    model: str  # "BPE", "WordPiece" or "Unigram"
    description: str
    against: str
    long: bool = False

    @property
    def engine(self) -> str:
        return _ME + self.name


# ----------------------------------------------------------------------------- the table

_TIKTOKEN, _BERT, _MON = "tiktoken:cl100k_base", "hf:bert-base-uncased", "hf:mon-unigram"

_BUILD: dict[str, tuple[AuthoredBug, Callable[[], Encoder]]] = {}


def _bug(bug: AuthoredBug, make: Callable[[AuthoredBug], Encoder]) -> None:
    _BUILD[bug.name] = (bug, lambda: make(bug))
    globals()[bug.name] = _BUILD[bug.name][1]


def _pattern_bug(name: str, description: str, old: str, new: str) -> None:
    _bug(AuthoredBug(name, "BPE", description, _TIKTOKEN), lambda b: _Cl100k(b.name, b.description, _slip(old, new)))


def _class_bug(name: str, description: str, cls: type[_Cl100k], long: bool = False) -> None:
    _bug(AuthoredBug(name, "BPE", description, _TIKTOKEN, long), lambda b: cls(b.name, b.description))


def _hf_bug(name: str, model: str, description: str, edit: Callable[[dict[str, Any]], None]) -> None:
    vocab, against = ("bert-base-uncased", _BERT) if model == "WordPiece" else ("mon-unigram", _MON)
    _bug(AuthoredBug(name, model, description, against), lambda b: _HfSlip(b.name, b.description, vocab, edit))


_pattern_bug("digits_by_two", "pattern slip: \\p{N}{1,2} for \\p{N}{1,3}", r"\p{N}{1,3}+", r"\p{N}{1,2}+")
_pattern_bug("whitespace_no_lookahead", "pattern slip: \\s+ for \\s+(?!\\S)", r"\s+(?!\S)", r"\s+")
_pattern_bug("ascii_letters", "pattern slip: [A-Za-z] for \\p{L}", r"\p{L}++", r"[A-Za-z]++")
_pattern_bug("punct_without_newlines", "pattern slip: punctuation run without its trailing [\\r\\n]*",
             r"[^\s\p{L}\p{N}]++[\r\n]*+", r"[^\s\p{L}\p{N}]++")
_pattern_bug("case_sensitive_contractions", "pattern slip: '(?:[sdmt]|ll|ve|re) for '(?i:[sdmt]|ll|ve|re)",
             "'(?i:[sdmt]|ll|ve|re)", "'(?:[sdmt]|ll|ve|re)")
_class_bug("unicode_14_letters", "older Unicode tables: letters are those of Unicode 14.0 only", _OlderUnicode)
_class_bug("offsets_in_bytes", "offsets counted in UTF-8 bytes", _OffsetsInBytes)
_class_bug("split_char_spans", "a character split over tokens goes to the next token", _SplitCharSpans)
_class_bug("nul_terminated", "text cut at the first NUL", _NulTerminated)
_class_bug("casefolded_cache", "stateful piece cache keyed by the lowercased piece", _CaseFoldedCache)
_class_bug("crash_mark_after_astral", "IndexError on an astral character followed by a mark",
           _CrashOnMarkAfterAstral)
_class_bug("output_buffer_4096", "output cut at a fixed 4096-token buffer", _OutputBuffer, long=True)
_class_bug("independent_chunks_8k", "independent 8192-character chunks", _FixedChunks, long=True)
_class_bug("seam_at_whitespace", "1 KiB chunks cut at a whitespace character", _SeamAtWhitespace, long=True)
_hf_bug("wp_max_chars_200", "WordPiece", "max_input_chars_per_word 200 for 100",
        _set("model", "max_input_chars_per_word", value=200))
_hf_bug("wp_keeps_accents", "WordPiece", "strip_accents False (uncased strips them)",
        _set("normalizer", "strip_accents", value=False))
_hf_bug("wp_cjk_not_spaced", "WordPiece", "handle_chinese_chars False",
        _set("normalizer", "handle_chinese_chars", value=False))
_hf_bug("wp_no_clean_text", "WordPiece", "clean_text False", _set("normalizer", "clean_text", value=False))
_hf_bug("uni_no_nfc", "Unigram", "normalizer without its NFC step", _drop_normalizer("NFC"))
_hf_bug("uni_keeps_zero_width", "Unigram", "normalizer without its zero-width-character removal",
        _drop_normalizer("Replace", "200B"))
_hf_bug("uni_no_byte_fallback", "Unigram", "byte_fallback False", _set("model", "byte_fallback", value=False))

_class_bug("promotes_specials", "special-token strings in text encoded as special ids (injection)",
           _PromotesSpecials)
_class_bug("decode_drops_incomplete", "decode drops an incomplete UTF-8 character (no U+FFFD)", _DecodeIgnore)

AUTHORED_BUGS: tuple[AuthoredBug, ...] = tuple(bug for bug, _ in _BUILD.values())


def specials_as_text() -> Encoder:
    """Clean twin of ``promotes_specials`` and ``decode_drops_incomplete``: nothing allowed, U+FFFD."""
    return _SpecialAware("specials_as_text", "special-token aware, special strings stay text")


#: planted bug name -> ``module:attr`` name of its clean twin (same code, the one line right).
CLEAN_TWINS: dict[str, str] = {"promotes_specials": _ME + "specials_as_text",
                               "decode_drops_incomplete": _ME + "specials_as_text"}


def by_name(name: str) -> AuthoredBug:
    """The planted bug ``name``; ValueError naming the known ones otherwise."""
    if name not in _BUILD:
        raise ValueError(f"unknown planted bug name={name!r}; known: {', '.join(_BUILD)}")
    return _BUILD[name][0]
