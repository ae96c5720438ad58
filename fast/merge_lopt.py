"""``lopt``: tokspec's lossless parallel merge. Cut only where a theorem says encoding splits.

A *sound cut* for an engine ``F`` is a position ``c`` of the text ``S`` with
``F(S) == F(S[:c]) ++ shift(F(S[c:]), c)`` (ids AND offsets). Given sound cuts ``c_1 < ... < c_k``
whose rule only looks at the characters next to the cut, the pieces between them can be encoded
independently (in parallel) and concatenated: induction on the cuts, ``tokspec.spec.merge`` M4.

The rule is decided from the engine's *structure* (``tokspec.fast.merge_structure`` reads it:
tokenizer.json sections, the sentencepiece specs and charsmap, the tiktoken pattern, or a
structure the engine declares), never from its vocabulary's hash; ``tokspec.fast.merge_rules``
lists the rules and the conditions on settings under which each theorem of ``tokspec.spec.merge``
applies (M2 byte-level BPE behind a proved regex, M3w space-splitting pre-tokenizers, M3u
Metaspace, M5 sentencepiece). Where a condition fails or a setting is unknown the text is encoded
serially, and the trace, ``merge-check`` and the ``lopt:`` engine's description say why.
Chunks are grown (a target without a sound cut within one chunk length is skipped, so the chunk
absorbs the next one) and a text without any sound cut is encoded serially. No overlap is needed,
and no tokens are thrown away. Rule M5 (sentencepiece with a dummy prefix) stitches with one
correction: the right piece's first token starts at the cut (its ``▁`` is the cut's space).

Stitching (:func:`stitch`) works on :class:`~tokspec.EncodingArrays`: offsets shifted and pieces
concatenated in numpy, no Python object per token; :func:`encode_arrays` is the untraced path the
``lopt:`` engines use, :func:`merge` the traced one (``merge-check``, tests).

Out of scope: HF post-processors that add [CLS]/[SEP] (engines must encode without special
tokens). Complexity: O(n) regex scan for cuts (C speed), the encoding of n characters once, and
O(tokens) numpy work to stitch.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from tokspec import Encoder, Encoding, EncodingArrays
from tokspec.fast._chunking import (Anchor, EncodeMany, MergeResult, MergeTrace, check_positive,
                                    encode_spans, keep_slices)
from tokspec.fast.merge_rules import RULES, CutRule, Decision
from tokspec.fast.merge_structure import decision_for

__all__ = ["NAME", "CutRule", "RULES", "rule_for", "find_cuts", "cuts_after", "merge", "stitch",
           "encode_arrays", "encode_ids", "EncodeArraysMany", "EncodeIdsMany", "EncodeIdsRanges"]

NAME = "lopt"

#: ``encode_arrays_many(engine, texts) -> arrays``: how :func:`encode_arrays` gets pieces encoded.
EncodeArraysMany = Callable[[Encoder, Sequence[str]], list[EncodingArrays]]
#: ``encode_ids_many(engine, texts) -> id arrays``: how :func:`encode_ids` gets pieces encoded.
EncodeIdsMany = Callable[[Encoder, Sequence[str]], list[np.ndarray]]
#: ``(engine, text, spans)`` -> ``engine.encode_ids_range(text, a, b)`` for each span, in order
EncodeIdsRanges = Callable[[Encoder, str, Sequence[tuple[int, int]]], list[np.ndarray]]


def rule_for(engine: Encoder) -> tuple[str, CutRule | None]:
    """(family, rule) for ``engine``; rule None means "encode serially" (see ``decision``)."""
    decision, _ = decision_for(engine)
    return decision.family, decision.rule


def decision(engine: Encoder) -> Decision:
    """The structural decision for ``engine`` (family, rule or None, and why)."""
    return decision_for(engine)[0]


def find_cuts(text: str, rule: CutRule, chunk_len: int) -> list[int]:
    """Sound cuts near every multiple of ``chunk_len``: for each target the first sound cut in
    ``[target, target + chunk_len)``; a target without one is skipped (its chunk grows). O(n)."""
    return cuts_after(text, rule, range(chunk_len, len(text), chunk_len), chunk_len)


def cuts_after(text: str, rule: CutRule, targets: Sequence[int], reach: int, stop: int | None = None) -> list[int]:
    """For each of the increasing ``targets`` the first sound cut in ``[target, target + reach)``
    past the previous cut; a target without one is skipped (its chunk grows). ``stop``: no cut at
    or past it, and the search reads nothing from it on (default: the end of ``text``). O(n)."""
    cuts: list[int] = []
    end = len(text) if stop is None else stop
    for target in targets:
        lo = max(target, cuts[-1] + 1 if cuts else 1)
        hi = target + reach
        m = rule.pattern.search(text, lo, min(end, hi + 1))  # +1: room for a look-ahead
        if m is not None and m.start() < hi:
            cuts.append(m.start())
    return cuts


def stitch(pieces: Sequence[EncodingArrays], starts: Sequence[int], widen: bool) -> EncodingArrays:
    """Concatenate piece encodings, piece ``k``'s offsets shifted by ``starts[k]``; with ``widen``
    the first token of every piece but the first gets start ``starts[k]`` (M5). O(tokens), numpy."""
    if not pieces:
        return EncodingArrays.empty()
    shifts = np.repeat(np.asarray(starts, dtype=np.int64), [len(p) for p in pieces])
    new_starts = np.concatenate([p.starts for p in pieces]) + shifts
    if widen:
        firsts = np.cumsum([0] + [len(p) for p in pieces[:-1]])
        keep = np.array([len(p) > 0 for p in pieces], dtype=bool)
        keep[0] = False
        new_starts[firsts[keep]] = np.asarray(starts, dtype=np.int64)[keep]
    ends = np.concatenate([p.ends for p in pieces]) + shifts
    ids = None if any(p.ids is None for p in pieces) else np.concatenate([p.ids for p in pieces])
    return EncodingArrays(ids, new_starts, ends)


def _widened(enc: Encoding, chunks_lens: list[int], starts: list[int]) -> Encoding:
    """``enc`` with the first token of every chunk but the first starting at its chunk (M5)."""
    offs = list(enc.offsets)
    at = 0
    for k, n in enumerate(chunks_lens):
        if k and n:
            offs[at] = (starts[k], offs[at][1])
        at += n
    return Encoding(enc.ids, tuple(offs), enc.pieces)


def encode_arrays(engine: Encoder, text: str, *, chunk_len: int,
                  encode_many: EncodeArraysMany | None = None) -> EncodingArrays:
    """Like :func:`merge` without a trace, as arrays: the ``lopt:`` engines' path."""
    rule, bounds = _bounds(engine, text, chunk_len)
    if len(bounds) == 2:
        return engine.encode_arrays(text)
    texts = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    pieces = (encode_many or _serial_arrays)(engine, texts)
    return stitch(pieces, bounds[:-1], bool(rule and rule.widen))


def _bounds(engine: Encoder, text: str, chunk_len: int) -> tuple[CutRule | None, list[int]]:
    """The engine's rule and ``[0, *sound cuts, len(text)]`` (just the ends when nothing is cut)."""
    check_positive("chunk_len", chunk_len)
    rule = decision_for(engine)[0].rule
    cuts = [] if rule is None else find_cuts(text, rule, chunk_len)
    return rule, [0, *cuts, len(text)]


def encode_ids(engine: Encoder, text: str, *, chunk_len: int,
               encode_many: EncodeIdsMany | None = None, targets: Sequence[int] | None = None,
               encode_ranges: EncodeIdsRanges | None = None) -> np.ndarray:
    """Token ids of ``text`` only, for an engine with ``encode_ids`` (ids in int64, as its own):
    the pieces between sound cuts encoded by ``encode_many`` and concatenated. Sound cuts split
    ids as they split offsets (M4), and the M5 widening touches offsets only, so no correction.
    ``targets``: cut at the first sound cut within ``chunk_len`` after each of these increasing
    positions (:func:`cuts_after`) instead of after each multiple of ``chunk_len``.
    ``encode_ranges``: used instead of ``encode_many`` for an engine with ``encode_ids_range``
    (the pieces as spans of ``text``, never sliced: ``Runner.ids_ranges``)."""
    if targets is None:
        _, bounds = _bounds(engine, text, chunk_len)
    else:
        check_positive("chunk_len", chunk_len)
        rule = decision_for(engine)[0].rule
        bounds = [0, *([] if rule is None else cuts_after(text, rule, targets, chunk_len)), len(text)]
    if len(bounds) == 2:
        out: np.ndarray = getattr(engine, "encode_ids")(text)
        return out
    if encode_ranges is not None and callable(getattr(engine, "encode_ids_range", None)):
        return np.concatenate(encode_ranges(engine, text, list(zip(bounds, bounds[1:]))))
    texts = [text[a:b] for a, b in zip(bounds, bounds[1:])]
    pieces = (encode_many or _serial_ids)(engine, texts)
    return np.concatenate(pieces)


def _serial_ids(engine: Encoder, texts: Sequence[str]) -> list[np.ndarray]:
    ids_of = getattr(engine, "encode_ids")
    return [ids_of(t) for t in texts]


def _serial_arrays(engine: Encoder, texts: Sequence[str]) -> list[EncodingArrays]:
    return [engine.encode_arrays(t) for t in texts]


def merge(engine: Encoder, text: str, *, chunk_len: int, encode_many: EncodeMany | None = None
          ) -> MergeResult:
    """Encode ``text`` as pieces between sound cuts (module docstring); equal to ``engine.encode``."""
    check_positive("chunk_len", chunk_len)
    dec, source = decision_for(engine)
    rule = dec.rule
    trace = MergeTrace(NAME, {"chunk_len": chunk_len, "family": dec.family,
                              "rule": None if rule is None else rule.name,
                              "theorem": dec.why, "structure": source})
    cuts = [] if rule is None else find_cuts(text, rule, chunk_len)
    if rule is None:
        trace.notes.append(f"no sound-cut rule for this engine's structure: serial encoding "
                           f"({dec.why})")
    elif not cuts and len(text) > chunk_len:
        trace.notes.append("no sound cut in the text: serial encoding")
    bounds = [0, *cuts, len(text)]
    spans = list(zip(bounds, bounds[1:]))
    trace.chunks = encode_spans(engine, text, spans, encode_many)
    trace.anchors = [Anchor(i, len(trace.chunks[i].encoding), 0, c, f"sound cut ({rule.name})")
                     for i, c in enumerate(cuts) if rule is not None]
    merged = keep_slices(trace.chunks, [(0, None)] * len(spans))
    if rule is not None and rule.widen:
        merged = _widened(merged, [len(c.encoding) for c in trace.chunks], [a for a, _ in spans])
    return MergeResult(merged, trace)
