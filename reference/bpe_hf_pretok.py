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
from typing import Any

import regex

from tokspec._types import Span
from tokspec.errors import UnsupportedComponentError
# Split itself lives in the core (the HF Unigram pipeline runs it too); re-exported here.
from tokspec.formats.hf_split import Dialect as Dialect
from tokspec.formats.hf_split import SplitStep as SplitStep
from tokspec.formats.hf_split import WHITESPACE_PATTERN as WHITESPACE_PATTERN
from tokspec.formats.hf_split import apply_behavior
from tokspec.formats.hf_split import compile_split_regex as compile_split_regex
from tokspec.formats.hf_split import oniguruma_compat as oniguruma_compat

__all__ = ["Dialect", "GPT2_PATTERN", "WHITESPACE_PATTERN", "Pretokenizer", "SplitStep", "Word",
           "bytes_to_unicode", "compile_split_regex", "oniguruma_compat", "parse_pretokenizer"]

#: HF ByteLevel's own split regex (the original GPT-2 pattern).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


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


_apply_behavior = apply_behavior  # the name bpe_hf and hf_components import
_BEHAVIORS = ("Isolated", "Removed", "MergedWithPrevious", "MergedWithNext")


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
            # HF's Whitespace is not its Oniguruma: Unicode's \w (finding hf-onig-word-class)
            steps.append(SplitStep(compile_split_regex(WHITESPACE_PATTERN, "regex"), "Removed", invert=True))
        elif kind == "ByteLevel" and i == len(items) - 1:
            split = SplitStep(compile_split_regex(GPT2_PATTERN, dialect), "Isolated") \
                if item.get("use_regex", True) else None
            return Pretokenizer(tuple(steps), True, split, bool(item.get("add_prefix_space", False)))
        else:
            raise UnsupportedComponentError(f"pre_tokenizer {kind!r} at position {i} is unsupported "
                                            "(supported: Split, Whitespace, ByteLevel last)")
    return Pretokenizer(tuple(steps), False)
