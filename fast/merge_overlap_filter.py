"""``overlap-filter``: the blog post "3.3x Faster HuggingFace Tokenizers for Single Sequence":
recursive binary splitting with an overlap, each half filtered at the midpoint.

For a span ``[a, b)`` with midpoint ``m``: encode ``[a, min(b, m + w))`` and ``[max(a, m - w), b)``
(recursively, down to a leaf depth), keep the left tokens whose start is ``< m`` and the right
tokens whose start is ``>= m``, concatenate. The overlap rule is the blog's: ``w = 3 * longest
token + margin`` (longest token from the engine's vocabulary, see ``_chunking.max_token_chars``).
The depth is the smallest ``d`` with ``len(text) / 2**d <= chunk_len``.

NOT lossless: the blog's proof assumes a token "is completely determined by" its own characters,
which is false (WordPiece's 100-character [UNK] rule, regex look-ahead, BPE over long pretokens).
``tokspec.spec.merge.blog_overlap_theorem`` states it; ``corpora/merge/`` holds counterexamples.
Out of scope: the blog's L1-sized streaming mode and lazy offsets (speed tricks, same merge rule).
Complexity: O(n + 2^depth * w) characters encoded; O(tokens * depth) for the filtering.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tokspec import Encoder, Encoding
from tokspec.fast._chunking import (Anchor, Chunk, EncodeMany, MergeResult, MergeTrace,
                                    check_positive, encode_spans, max_token_chars, shift)

__all__ = ["NAME", "MARGIN", "default_overlap", "merge"]

NAME = "overlap-filter"
MARGIN = 16


def default_overlap(engine: Encoder) -> int:
    """The blog's rule: 3 x the longest token (characters, bounded by bytes) + MARGIN."""
    return 3 * max_token_chars(engine)[0] + MARGIN


@dataclass(frozen=True)
class _Node:
    """A span; a leaf when ``mid`` is None, else split at ``mid`` into two overlapping children."""

    start: int
    end: int
    mid: int | None = None
    left: _Node | None = None
    right: _Node | None = None


def _plan(start: int, end: int, depth: int, overlap: int) -> _Node:
    if depth <= 0 or end - start < 2:
        return _Node(start, end)
    mid = (start + end) // 2
    left = _plan(start, min(end, mid + overlap), depth - 1, overlap)
    right = _plan(max(start, mid - overlap), end, depth - 1, overlap)
    return _Node(start, end, mid, left, right)


def _leaves(node: _Node) -> list[tuple[int, int]]:
    if node.mid is None:
        return [(node.start, node.end)]
    assert node.left is not None and node.right is not None
    return _leaves(node.left) + _leaves(node.right)


def _evaluate(node: _Node, chunks: list[Chunk], cursor: list[int], anchors: list[Anchor]) -> Encoding:
    """The merged Encoding (global offsets) of ``node``; ``cursor[0]`` walks the leaves in order."""
    if node.mid is None:
        chunk = chunks[cursor[0]]
        cursor[0] += 1
        return shift(chunk.encoding, chunk.start)
    assert node.left is not None and node.right is not None
    left = _evaluate(node.left, chunks, cursor, anchors)
    right = _evaluate(node.right, chunks, cursor, anchors)
    mid = node.mid
    keep_left = sum(1 for s, _ in left.offsets if s < mid)
    drop_right = sum(1 for s, _ in right.offsets if s < mid)
    anchors.append(Anchor(cursor[0] - 1, keep_left, drop_right, mid,
                          f"midpoint filter over [{node.start}, {node.end})"))
    return _concat(_filter(left, lambda s: s < mid), _filter(right, lambda s: s >= mid))


def _filter(enc: Encoding, keep: Callable[[int], bool]) -> Encoding:
    """The tokens whose start offset satisfies ``keep``."""
    idx = [k for k, (s, _) in enumerate(enc.offsets) if keep(s)]
    ids = None if enc.ids is None else tuple(enc.ids[k] for k in idx)
    return Encoding(ids, tuple(enc.offsets[k] for k in idx))


def _concat(a: Encoding, b: Encoding) -> Encoding:
    ids = None if a.ids is None or b.ids is None else a.ids + b.ids
    return Encoding(ids, a.offsets + b.offsets)


def merge(engine: Encoder, text: str, *, chunk_len: int, overlap: int | None = None,
          encode_many: EncodeMany | None = None) -> MergeResult:
    """The blog's recursive split / encode / midpoint-filter merge (module docstring)."""
    check_positive("chunk_len", chunk_len)
    check_positive("overlap", overlap, allow_zero=True, optional=True)
    w = default_overlap(engine) if overlap is None else overlap
    depth = 0
    while len(text) / 2**depth > chunk_len:
        depth += 1
    trace = MergeTrace(NAME, {"chunk_len": chunk_len, "overlap": w, "depth": depth})
    if overlap is None:
        trace.notes.append(f"overlap {w} = 3 x longest token + {MARGIN} ({max_token_chars(engine)[1]})")
    root = _plan(0, len(text), depth, w)
    trace.chunks = encode_spans(engine, text, _leaves(root), encode_many)
    merged = _evaluate(root, trace.chunks, [0], trace.anchors)
    return MergeResult(merged, trace)
