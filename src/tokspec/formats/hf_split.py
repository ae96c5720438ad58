"""HF ``tokenizers``' ``Split`` pretokenizer over spans of a string: the core's one copy.

A ``Split`` step cuts a range of a text at the matches of a pattern (a regex, or a literal
``String``) and hands the pieces on by its ``behavior`` (:data:`BEHAVIORS`), optionally with the
roles of matches and gaps swapped (``invert``); ``Whitespace`` is ``Split(\\w+|[^\\w\\s]+)``,
``Removed``, inverted (:data:`WHITESPACE_PATTERN`). Regexes run on the ``regex`` module with
Unicode 16.0 character properties (``tokspec._unicode16``: the tables of HF's Oniguruma; the ``\\w``
and ``\\s`` of ``Whitespace`` were probed equal at every code point, ``tests/test_fast_hf_split.py``),
after :func:`oniguruma_compat`. Used by the HF BPE reference (``tokspec.reference.bpe_hf_pretok``
re-exports these names) and the HF Unigram pipeline (``tokspec.formats.hf_pipeline``).
Out of scope: Oniguruma syntax the ``regex`` module reads differently, beyond ``{n,m}+``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import regex

from tokspec._types import Span
from tokspec.errors import UnsupportedComponentError
from tokspec._unicode16 import pin_unicode_16

__all__ = ["BEHAVIORS", "ONIG_WORD_EXTRA", "ONIG_WORD_MISSING", "Dialect", "SplitStep", "WHITESPACE_PATTERN",
           "apply_behavior", "compile_split_regex",
           "oniguruma_compat", "split_step"]

#: How a Split regex is read: ``"oniguruma"`` as HF tokenizers reads it (see
#: :func:`oniguruma_compat`), ``"regex"`` as tiktoken and the ``regex`` module read it.
Dialect = Literal["oniguruma", "regex"]

#: HF's ``Whitespace`` pretokenizer is this regex's matches (``Split``, ``Removed``, inverted).
WHITESPACE_PATTERN = r"\w+|[^\w\s]+"

#: HF's ``SplitDelimiterBehavior`` names, as tokenizer.json spells them.
BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous")


_INTERVAL_PLUS = regex.compile(r"""
    (?P<atom> \\[pP]\{[^}]*\} | \\x\{[0-9a-fA-F]+\} | \\x[0-9a-fA-F]{2} | \\u[0-9a-fA-F]{4}
            | \\. | \[(?:\\.|[^\]\\])*\] | [^\\\[\](){}|?*+] )
    (?P<interval> \{\d+(?:,\d*)?\} )
    \+""", regex.VERBOSE)


#: Where Oniguruma's ``\w`` (HF's Split regexes) differs from Unicode's word class (the ``regex``
#: module's, and HF's own ``Whitespace`` pretokenizer's), probed at every code point (finding
#: ``hf-onig-word-class``, ``tests/test_fast_hf_split.py``): the Latin-1 digits and fractions of
#: category No are word characters to Oniguruma, the two join controls are not.
ONIG_WORD_EXTRA = "\u00b2\u00b3\u00b9\u00bc\u00bd\u00be"
ONIG_WORD_MISSING = "\u200c\u200d"
_ONIG_WORD = r"[[\w\u00b2\u00b3\u00b9\u00bc-\u00be]--[\u200c\u200d]]"  # a V1 set
_WORD_ESCAPE = regex.compile(r"\\(?:(?P<w>[wW])|.)", regex.DOTALL)


def oniguruma_compat(pattern: str) -> str:
    r"""Rewrite ``ATOM{n,m}+`` to ``(?:ATOM{n,m})+``: how Oniguruma (HF tokenizers) reads it; and
    ``\w``/``\W`` to Oniguruma's word class (:data:`ONIG_WORD_EXTRA`, a V1 set expression).

    In Perl, PCRE, the ``regex`` module and tiktoken's Rust regex, ``{n,m}+`` is a *possessive*
    interval; Oniguruma's Ruby syntax reads it as the interval repeated one or more times, so
    ``\p{N}{1,3}+`` matches any run of digits there (finding ``hf-onig-interval-plus``). Atoms
    handled: ``\p{..}``, a hexadecimal escape (``\xHH``, ``\x{H..}``, ``\uHHHH``), any other escape, a
    bracket class without nested brackets, a literal character; a group before ``{n,m}+`` is left
    alone (none of the production patterns has one). O(len).
    """
    pattern = _INTERVAL_PLUS.sub(lambda m: f"(?:{m['atom']}{m['interval']})+", pattern)
    return _WORD_ESCAPE.sub(lambda m: m.group() if m["w"] is None else
                            _ONIG_WORD if m["w"] == "w" else f"[^{_ONIG_WORD}]", pattern)


def compile_split_regex(source: str, dialect: Dialect) -> regex.Pattern[str]:
    """Compile a Split regex as ``dialect`` reads it, with Unicode 16.0 character properties (the
    tables of both HF's Oniguruma and tiktoken's Rust regex; see ``tokspec._unicode16.pin_unicode_16``)."""
    if dialect == "oniguruma":
        source = oniguruma_compat(source)
    return regex.compile("(?-f)" + pin_unicode_16(source), flags=regex.V1)


@dataclass(frozen=True)
class SplitStep:
    """One splitting pass: ``pattern`` matches are delimiters handled by ``behavior``."""

    pattern: regex.Pattern[str]
    behavior: str
    invert: bool = False

    def apply(self, text: str, start: int, end: int) -> list[Span]:
        """Cut ``text[start:end]`` into pieces (absolute spans); empty pieces are dropped.

        An empty match is a zero-width delimiter, as in HF, except one right after a non-empty
        match, which Oniguruma's search never reports (the ``regex`` module's V1 mode does)."""
        runs: list[tuple[int, int, bool]] = []  # (start, end, is_delimiter), tiling the range
        pos = start
        after_match = False  # does pos end a non-empty match?
        for m in self.pattern.finditer(text, start, end):
            if m.start() == m.end() == pos and after_match:
                continue  # Oniguruma never reports an empty match right after a match
            after_match = m.end() > m.start()
            if m.start() > pos:
                runs.append((pos, m.start(), self.invert))
            runs.append((m.start(), m.end(), not self.invert))
            pos = m.end()
        if pos < end:
            runs.append((pos, end, self.invert))
        return [(s, e) for s, e in apply_behavior(runs, self.behavior) if s < e]


def apply_behavior(runs: list[tuple[int, int, bool]], behavior: str) -> list[Span]:
    """Turn delimiter/gap runs into pieces by HF's SplitDelimiterBehavior rules.

    ``MergedWithPrevious``: a delimiter joins the piece before it unless that piece ended with a
    delimiter (so of two adjacent delimiters the second stands alone); ``MergedWithNext`` is the
    mirror image, read from the right; ``Contiguous``: adjacent runs of the same kind (two
    delimiters, or two gaps) are one piece, and a first delimiter run stands alone.
    """
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in runs]
    if behavior == "Removed":
        return [(s, e) for s, e, delim in runs if not delim]
    if behavior == "Contiguous":
        joined: list[list[int]] = []
        before = False  # the kind of the run visited just before (HF starts from "gap")
        for s, e, delim in runs:
            if delim == before and joined:
                joined[-1][1] = e
            else:
                joined.append([s, e])
            before = delim
        return [(s, e) for s, e in joined]
    backwards = behavior == "MergedWithNext"
    out: list[list[int]] = []
    neighbour_delim = False  # was the run visited just before a delimiter?
    for s, e, delim in (reversed(runs) if backwards else runs):
        if delim and not neighbour_delim and out:
            out[-1][0 if backwards else 1] = s if backwards else e
        else:
            out.append([s, e])
        neighbour_delim = delim
    return [(s, e) for s, e in (reversed(out) if backwards else out)]


def split_step(spec: dict[str, Any], where: str) -> SplitStep:
    """The step of a ``Split`` (any behavior of :data:`BEHAVIORS`) or ``Whitespace`` pre_tokenizer
    object; UnsupportedComponentError for a pattern that is neither Regex nor String, or another
    behavior."""
    if spec.get("type") == "Whitespace":
        # HF's Whitespace is not its Oniguruma: its \\w is Unicode's (finding hf-onig-word-class)
        return SplitStep(compile_split_regex(WHITESPACE_PATTERN, "regex"), "Removed", invert=True)
    pattern = spec.get("pattern", {})
    if "Regex" in pattern:
        compiled = compile_split_regex(str(pattern["Regex"]), "oniguruma")
    elif "String" in pattern:
        compiled = regex.compile(regex.escape(str(pattern["String"])))
    else:
        raise UnsupportedComponentError(f"{where}: Split pattern={pattern!r}: expected Regex or String")
    if spec.get("behavior") not in BEHAVIORS:
        raise UnsupportedComponentError(f"{where}: Split behavior={spec.get('behavior')!r}; supported: {BEHAVIORS}")
    return SplitStep(compiled, str(spec["behavior"]), bool(spec.get("invert", False)))
