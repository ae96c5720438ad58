"""Pretokenizers of HF ``tokenizers`` for the reference BPE (:mod:`tokspec.reference.bpe_hf`),
read from a ``tokenizer.json``'s ``pre_tokenizer``: ``Split`` (regex or literal; behaviors
``Isolated``, ``Removed``, ``MergedWithPrevious``, ``MergedWithNext``; ``invert``), ``Whitespace``,
``ByteLevel`` (prefix space, the GPT-2 regex, the GPT-2 byte -> character table), and ``Sequence``
of those with ``ByteLevel`` last. Anything else raises
:class:`~tokspec.errors.UnsupportedComponentError` naming it.

Split regexes run on the ``regex`` module with Unicode 16.0 character properties; by default they
are first rewritten by :func:`oniguruma_compat` so they mean what HF's Oniguruma makes of them
(``dialect="regex"`` keeps the tiktoken reading). Split from ``bpe_hf`` (which re-exports every
name here) along the pipeline's seam: pretokenizing, then the BPE model.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

import regex

from tokspec._types import Span
from tokspec.errors import UnsupportedComponentError
from tokspec.reference.pretok_regex import pin_unicode_16

__all__ = ["Dialect", "GPT2_PATTERN", "WHITESPACE_PATTERN", "Pretokenizer", "SplitStep", "Word",
           "bytes_to_unicode", "compile_split_regex", "oniguruma_compat", "parse_pretokenizer"]

#: How a Split regex is read: ``"oniguruma"`` as HF tokenizers reads it (see
#: :func:`oniguruma_compat`), ``"regex"`` as tiktoken and the ``regex`` module read it.
Dialect = Literal["oniguruma", "regex"]

#: HF ByteLevel's own split regex (the original GPT-2 pattern).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
WHITESPACE_PATTERN = r"\w+|[^\w\s]+"


@functools.lru_cache(maxsize=1)
def bytes_to_unicode() -> dict[int, str]:
    """GPT-2's byte -> printable character table: printable Latin-1 bytes map to themselves, the
    other 68 bytes to U+0100.. in byte order. A bijection from 256 bytes to 256 characters."""
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), 256)]
    table = {b: chr(b) for b in keep}
    extra = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + extra)
            extra += 1
    return table


_INTERVAL_PLUS = regex.compile(r"""
    (?P<atom> \\[pP]\{[^}]*\} | \\x\{[0-9a-fA-F]+\} | \\x[0-9a-fA-F]{2} | \\u[0-9a-fA-F]{4}
            | \\. | \[(?:\\.|[^\]\\])*\] | [^\\\[\](){}|?*+] )
    (?P<interval> \{\d+(?:,\d*)?\} )
    \+""", regex.VERBOSE)


def oniguruma_compat(pattern: str) -> str:
    r"""Rewrite ``ATOM{n,m}+`` to ``(?:ATOM{n,m})+``: how Oniguruma (HF tokenizers) reads it.

    In Perl, PCRE, the ``regex`` module and tiktoken's Rust regex, ``{n,m}+`` is a *possessive*
    interval; Oniguruma's Ruby syntax reads it as the interval repeated one or more times, so
    ``\p{N}{1,3}+`` matches any run of digits there (finding ``hf-onig-interval-plus``). Atoms
    handled: ``\p{..}``, a hexadecimal escape (``\xHH``, ``\x{H..}``, ``\uHHHH``), any other escape, a
    bracket class without nested brackets, a literal character; a group before ``{n,m}+`` is left
    alone (none of the production patterns has one). O(len).
    """
    return _INTERVAL_PLUS.sub(lambda m: f"(?:{m['atom']}{m['interval']})+", pattern)

_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext")


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
        return [(s, e) for s, e in _apply_behavior(runs, self.behavior) if s < e]


def _apply_behavior(runs: list[tuple[int, int, bool]], behavior: str) -> list[Span]:
    """Turn delimiter/gap runs into pieces by HF's SplitDelimiterBehavior rules.

    ``MergedWithPrevious``: a delimiter joins the piece before it unless that piece ended with a
    delimiter (so of two adjacent delimiters the second stands alone); ``MergedWithNext`` is the
    mirror image, read from the right.
    """
    if behavior == "Isolated":
        return [(s, e) for s, e, _ in runs]
    if behavior == "Removed":
        return [(s, e) for s, e, delim in runs if not delim]
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


#: A pretoken as the model sees it: its string, and per model character the index of the original
#: character it comes from and whether it was inserted (ByteLevel's prefix space) rather than read.
Word = tuple[str, list[int], list[bool]]


@dataclass(frozen=True)
class Pretokenizer:
    """A parsed pre_tokenizer: splitting passes in order, then optionally ByteLevel (a prefix space
    on each piece not starting with one, its regex split, the byte-to-character mapping)."""

    steps: tuple[SplitStep, ...]
    byte_level: bool
    byte_split: SplitStep | None = None
    prefix_space: bool = False

    def pieces(self, text: str, start: int, end: int) -> list[Span]:
        """Spans of ``text[start:end]`` after the splitting passes (before ByteLevel)."""
        spans = [(start, end)]
        for step in self.steps:
            spans = [piece for s, e in spans for piece in step.apply(text, s, e)]
        return spans

    def words(self, text: str, start: int, end: int) -> list[Word]:
        """The model's input words for ``text[start:end]`` (see :data:`Word`)."""
        out: list[Word] = []
        for s, e in self.pieces(text, start, end):
            seg, origin, inserted = text[s:e], list(range(s, e)), [False] * (e - s)
            if not self.byte_level:
                out.append((seg, origin, inserted))
                continue
            if self.prefix_space and not seg.startswith(" "):
                seg, origin, inserted = " " + seg, [s, *origin], [True, *inserted]
            cuts = self.byte_split.apply(seg, 0, len(seg)) if self.byte_split else [(0, len(seg))]
            out.extend(_byte_word(seg[a:b], origin[a:b], inserted[a:b]) for a, b in cuts)
        return out


def _byte_word(seg: str, origin: list[int], inserted: list[bool]) -> Word:
    """ByteLevel mapping of ``seg``: one model character per UTF-8 byte, keeping its character's
    origin and inserted flag."""
    table = bytes_to_unicode()
    chars: list[str] = []
    new_origin: list[int] = []
    new_inserted: list[bool] = []
    for ch, o, ins in zip(seg, origin, inserted):
        for b in ch.encode("utf-8"):
            chars.append(table[b])
            new_origin.append(o)
            new_inserted.append(ins)
    return "".join(chars), new_origin, new_inserted


def compile_split_regex(source: str, dialect: Dialect) -> regex.Pattern[str]:
    """Compile a Split regex as ``dialect`` reads it, with Unicode 16.0 character properties (the
    tables of both HF's Oniguruma and tiktoken's Rust regex; see ``pretok_regex.pin_unicode_16``)."""
    if dialect == "oniguruma":
        source = oniguruma_compat(source)
    return regex.compile("(?-f)" + pin_unicode_16(source), flags=regex.V1)


def _split_step(pt: dict[str, Any], dialect: Dialect) -> SplitStep:
    pattern = pt.get("pattern", {})
    if "Regex" in pattern:
        compiled = compile_split_regex(pattern["Regex"], dialect)
    elif "String" in pattern:
        compiled = regex.compile(regex.escape(pattern["String"]))
    else:
        raise UnsupportedComponentError(f"Split pattern {pattern!r}: expected Regex or String")
    if pt.get("behavior") not in _BEHAVIORS:
        raise UnsupportedComponentError(f"Split behavior={pt.get('behavior')!r}; supported: {_BEHAVIORS}")
    return SplitStep(compiled, pt["behavior"], bool(pt.get("invert", False)))


def parse_pretokenizer(pt: dict[str, Any] | None, dialect: Dialect = "oniguruma") -> Pretokenizer:
    """Parse the ``pre_tokenizer`` JSON object; see the module docstring for what is supported.

    ``dialect`` says how Split regexes are read (:data:`Dialect`)."""
    if pt is None:
        return Pretokenizer((), False)
    items = pt["pretokenizers"] if pt.get("type") == "Sequence" else [pt]
    steps: list[SplitStep] = []
    for i, item in enumerate(items):
        kind = item.get("type")
        if kind == "Split":
            steps.append(_split_step(item, dialect))
        elif kind == "Whitespace":
            steps.append(SplitStep(compile_split_regex(WHITESPACE_PATTERN, dialect), "Removed", invert=True))
        elif kind == "ByteLevel" and i == len(items) - 1:
            split = SplitStep(compile_split_regex(GPT2_PATTERN, dialect), "Isolated") \
                if item.get("use_regex", True) else None
            return Pretokenizer(tuple(steps), True, split, bool(item.get("add_prefix_space", False)))
        else:
            raise UnsupportedComponentError(f"pre_tokenizer {kind!r} at position {i} is unsupported "
                                            "(supported: Split, Whitespace, ByteLevel last)")
    return Pretokenizer(tuple(steps), False)
