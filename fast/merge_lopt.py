"""``lopt``: tokspec's lossless parallel merge. Cut only where a theorem says encoding splits.

A *sound cut* for an engine ``F`` is a position ``c`` of the text ``S`` with
``F(S) == F(S[:c]) ++ shift(F(S[c:]), c)`` (ids AND offsets). Given sound cuts ``c_1 < ... < c_k``
whose rule only looks at the characters next to the cut, the pieces between them can be encoded
independently (in parallel) and concatenated: induction on the cuts, ``tokspec.spec.merge`` M4.

The rules (each is a theorem in ``tokspec.spec.merge``, checked there and fuzzed in
``tests/test_merge_lopt.py``):

- ``space-after-letter`` (M2, byte-level BPE with a cl100k/o200k/Qwen-style pretokenizer regex, and
  M3u, Unigram behind ``Metaspace(split=True)`` with the mon-unigram normalizer):
  ``S[c] == " "`` and ``S[c-1]`` is a letter (``\\p{L}``).
- ``space`` (M3w, BERT: ``BertNormalizer`` + ``BertPreTokenizer`` + WordPiece): ``S[c] == " "``.

The rule is chosen by the engine's vocabulary sha256 (``FAMILIES``); an engine may also carry a
``merge_family`` attribute naming one of them. Engines of any other family are encoded serially:
lossless, not faster. Chunks are grown (a target without a sound cut within one chunk length is
skipped, so the chunk absorbs the next one) and a text without any sound cut is encoded serially.
No overlap is needed, and no tokens are thrown away.

Out of scope: special-token strings containing a space (none in the supported vocabularies),
HF post-processors that add [CLS]/[SEP] (engines must encode without special tokens), and
normalizers other than the ones named above.
Complexity: O(n) regex scan for cuts (C speed) plus the encoding of n characters once.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from tokspec import Encoder
from tokspec.fast._chunking import (Anchor, EncodeMany, MergeResult, MergeTrace, check_positive,
                                    encode_spans, keep_slices)

__all__ = ["NAME", "CutRule", "RULES", "FAMILIES", "rule_for", "find_cuts", "merge"]

NAME = "lopt"


@dataclass(frozen=True)
class CutRule:
    """A sound-cut rule: ``pattern`` matches the character starting the right piece at a cut."""

    name: str
    theorem: str
    pattern: regex.Pattern[str]

    def is_cut(self, text: str, c: int) -> bool:
        """True when ``c`` (0 < c < len(text)) satisfies the rule."""
        return 0 < c < len(text) and self.pattern.match(text, c) is not None


RULES: dict[str, CutRule] = {
    "space-after-letter": CutRule("space-after-letter", "M2/M3u", regex.compile(r"(?<=\p{L}) ")),
    "space": CutRule("space", "M3w", regex.compile(r"(?<=.) ", regex.DOTALL)),
}

#: vocabulary sha256 -> (family, rule name). Hashes are tokspec.vocab.NAMED_FILES pins.
FAMILIES: dict[str, tuple[str, str]] = {
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7": ("regex-bpe cl100k", "space-after-letter"),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d": ("regex-bpe o200k", "space-after-letter"),
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186": ("regex-bpe qwen", "space-after-letter"),
    "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037": ("wordpiece bert", "space"),
    "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3": ("wordpiece bert", "space"),
    "34d181532eee7e6754bfbad693753ee4660bdda00eb36a2ccc7cd2f372c71282": ("unigram metaspace", "space-after-letter"),
}


def rule_for(engine: Encoder) -> tuple[str, CutRule | None]:
    """(family, rule) for ``engine``; rule None means "unsupported: encode serially"."""
    named = getattr(engine, "merge_family", None)
    if isinstance(named, str) and named in RULES:
        return f"declared {named}", RULES[named]
    sha = engine.info.vocab_sha256
    if sha in FAMILIES:
        family, rule = FAMILIES[sha]
        return family, RULES[rule]
    return "unsupported", None


def find_cuts(text: str, rule: CutRule, chunk_len: int) -> list[int]:
    """Sound cuts near every multiple of ``chunk_len``: for each target the first sound cut in
    ``[target, target + chunk_len)``; a target without one is skipped (its chunk grows). O(n)."""
    cuts: list[int] = []
    target = chunk_len
    while target < len(text):
        lo = max(target, cuts[-1] + 1 if cuts else 1)
        m = rule.pattern.search(text, lo, min(len(text), target + chunk_len))
        if m is not None:
            cuts.append(m.start())
        target += chunk_len
    return cuts


def merge(engine: Encoder, text: str, *, chunk_len: int, encode_many: EncodeMany | None = None
          ) -> MergeResult:
    """Encode ``text`` as pieces between sound cuts (module docstring); equal to ``engine.encode``."""
    check_positive("chunk_len", chunk_len)
    family, rule = rule_for(engine)
    trace = MergeTrace(NAME, {"chunk_len": chunk_len, "family": family,
                              "rule": None if rule is None else rule.name})
    cuts = [] if rule is None else find_cuts(text, rule, chunk_len)
    if rule is None:
        trace.notes.append("no sound-cut rule for this engine's family: serial encoding")
    elif not cuts and len(text) > chunk_len:
        trace.notes.append("no sound cut in the text: serial encoding")
    bounds = [0, *cuts, len(text)]
    spans = list(zip(bounds, bounds[1:]))
    trace.chunks = encode_spans(engine, text, spans, encode_many)
    trace.anchors = [Anchor(i, len(trace.chunks[i].encoding), 0, c, f"sound cut ({rule.name})")
                     for i, c in enumerate(cuts) if rule is not None]
    return MergeResult(keep_slices(trace.chunks, [(0, None)] * len(spans)), trace)
