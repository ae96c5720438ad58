"""``overlap-filter`` (the blog's recursive halves) against its recursive definition, written plainly.

The oracle is the module docstring as a recursion over character spans: a leaf is encoded, an
inner span keeps the left half's tokens starting before the midpoint and the right half's from it.
Depth and overlap defaults follow the docstring (smallest ``d`` with ``n <= chunk_len * 2**d``;
``3 * longest token + 16``, the longest token read independently by ``tokspec.spec``).
"""

from __future__ import annotations

import random

import pytest

from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.fast import merge_overlap_filter
from tokspec.fast._chunking import Anchor, MergeError
from tokspec.spec.merge_published import max_token_chars


class PairEngine(Encoder):
    """Greedy pairs of equal characters ("aa" one token, else single characters), id = code point
    (+1000 for a pair): where a piece starts changes the pairing, so the merge can go wrong."""

    info = EngineInfo("toy:pairs", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        ids, offs, i = [], [], 0
        while i < len(text):
            n = 2 if i + 1 < len(text) and text[i + 1] == text[i] else 1
            ids.append(ord(text[i]) + (1000 if n == 2 else 0))
            offs.append((i, i + n))
            i += n
        return Encoding.of(ids, offs)


def naive(engine: Encoder, text: str, a: int, b: int, depth: int, w: int,
          leaves: list[tuple[int, int]], anchors: list[Anchor]) -> list[tuple[int, tuple[int, int]]]:
    """(id, global span) of the merged tokens of ``text[a:b]``; records leaves and anchors."""
    if depth <= 0 or b - a < 2:
        leaves.append((a, b))
        enc = engine.encode(text[a:b])
        return [(t, (s + a, e + a)) for t, (s, e) in zip(enc.ids, enc.offsets, strict=True)]
    m = (a + b) // 2
    left = naive(engine, text, a, min(b, m + w), depth - 1, w, leaves, anchors)
    right = naive(engine, text, max(a, m - w), b, depth - 1, w, leaves, anchors)
    kept_left = [t for t in left if t[1][0] < m]
    kept_right = [t for t in right if t[1][0] >= m]
    anchors.append(Anchor(len(leaves) - 1, len(kept_left), len(right) - len(kept_right), m,
                          f"midpoint filter over [{a}, {b})"))
    return kept_left + kept_right


def smallest_depth(n: int, chunk_len: int) -> int:
    d = 0
    while n > chunk_len * 2**d:
        d += 1
    return d


def test_merge_equals_the_recursive_definition() -> None:
    rng = random.Random(3)
    engine = PairEngine()
    for _ in range(300):
        text = "".join(rng.choice("aab c") for _ in range(rng.randrange(0, 60)))
        chunk_len, w = rng.randrange(1, 20), rng.randrange(0, 6)
        got = merge_overlap_filter.merge(engine, text, chunk_len=chunk_len, overlap=w)
        depth = smallest_depth(len(text), chunk_len)
        leaves: list[tuple[int, int]] = []
        anchors: list[Anchor] = []
        want = naive(engine, text, 0, len(text), depth, w, leaves, anchors)
        assert got.encoding == Encoding.of([t for t, _ in want], [s for _, s in want]), (text, chunk_len, w)
        assert [(c.start, c.end) for c in got.trace.chunks] == leaves
        assert got.trace.anchors == anchors
        assert got.trace.strategy == "overlap-filter"
        assert got.trace.params == {"chunk_len": chunk_len, "overlap": w, "depth": depth}
        assert got.trace.notes == []


def test_the_blog_rule_is_not_lossless_on_the_toy_engine() -> None:
    engine = PairEngine()
    text = "aaaaaaa"
    got = merge_overlap_filter.merge(engine, text, chunk_len=1, overlap=0)
    assert got.encoding != engine.encode(text)


def test_default_overlap_is_three_longest_tokens_plus_margin() -> None:
    engine = load_engine("tiktoken:cl100k_base")
    assert merge_overlap_filter.default_overlap(engine) == 3 * max_token_chars(engine) + 16
    toy = PairEngine()  # no named vocabulary: the documented default bound of 128 characters
    got = merge_overlap_filter.merge(toy, "ab" * 10, chunk_len=4)
    assert got.trace.params["overlap"] == 3 * 128 + 16
    assert got.trace.notes == [f"overlap {3 * 128 + 16} = 3 x longest token + 16 (default (vocabulary unknown))"]
    assert got.encoding == toy.encode("ab" * 10)  # an overlap longer than the text: every leaf sees all


def test_leaves_go_through_encode_many_and_bad_arguments_are_named() -> None:
    seen: list[list[str]] = []

    def encode_many(eng: Encoder, texts: list[str]) -> list[Encoding]:
        seen.append(list(texts))
        return [eng.encode(t) for t in texts]

    merge_overlap_filter.merge(PairEngine(), "abcdefgh", chunk_len=4, overlap=1, encode_many=encode_many)
    assert seen == [["abcde", "defgh"]]
    with pytest.raises(MergeError, match="chunk_len must be an int >= 1, got chunk_len=0"):
        merge_overlap_filter.merge(PairEngine(), "ab", chunk_len=0)
    with pytest.raises(MergeError, match="overlap must be an int >= 0, got overlap=-1"):
        merge_overlap_filter.merge(PairEngine(), "ab", chunk_len=1, overlap=-1)
    assert merge_overlap_filter.merge(PairEngine(), "ab", chunk_len=1, overlap=0).encoding.ids == (97, 98)


class PairSpans(PairEngine):
    """The same pieces as a pretokenizer: spans only (ids None)."""

    info = EngineInfo("toy:pair-spans", "pretokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding(None, super()._encode(text).offsets)


def test_a_pretokenizer_merges_to_spans_without_ids() -> None:
    text = "aabcaab caab"
    for chunk_len, w in ((1, 0), (3, 2), (5, 1)):
        got = merge_overlap_filter.merge(PairSpans(), text, chunk_len=chunk_len, overlap=w)
        with_ids = merge_overlap_filter.merge(PairEngine(), text, chunk_len=chunk_len, overlap=w)
        assert got.encoding.ids is None
        assert got.encoding.offsets == with_ids.encoding.offsets


def test_leaves_with_and_without_ids_merge_to_spans_only() -> None:
    """A backend (or engine) that answers some leaves with ids and some without: the merge keeps
    the spans and drops the ids, as every strategy's ``keep_slices`` does, instead of failing
    half-way on ``None + tuple``. Either order of the two kinds."""
    text = "aabcaab caab"
    with_ids = merge_overlap_filter.merge(PairEngine(), text, chunk_len=3, overlap=2).encoding
    for spans_only in (0, 1):
        def encode_many(eng: Encoder, texts: list[str], spans_only: int = spans_only) -> list[Encoding]:
            encs = [eng.encode(t) for t in texts]
            return [Encoding(None, e.offsets) if k % 2 == spans_only else e for k, e in enumerate(encs)]

        got = merge_overlap_filter.merge(PairEngine(), text, chunk_len=3, overlap=2, encode_many=encode_many)
        assert got.encoding.ids is None and got.encoding.offsets == with_ids.offsets
