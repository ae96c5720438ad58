"""``lopt-paper``'s ``Match(P_i, P_{i+1})`` against exhaustive search, on every kind of valid Encoding.

``match_positions`` promises the longest run ``left[l:l+n]``, ``right[r:r+n]`` of consecutive tokens
whose global spans are equal and lie inside the overlap, the first longest (leftmost in the right
chunk, then in the left chunk) winning, and (0, 0, 0) without one. The oracle tries every start
pair. Encodings are drawn with what real engines produce and a hash map of spans must survive:
several tokens on one span (byte fallback), spans out of order, tokens straddling the overlap.
"""

from __future__ import annotations

import random

from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.fast import merge_lopt_paper
from tokspec.fast._chunking import Chunk


def brute_match(left: Chunk, right: Chunk) -> tuple[int, int, int]:
    """Every (r, l) start, extended while both tokens are inside the overlap with equal spans."""
    lo, hi = right.start, left.end
    lspans = [(s + left.start, e + left.start) for s, e in left.encoding.offsets]
    rspans = [(s + right.start, e + right.start) for s, e in right.encoding.offsets]

    def inside(span: tuple[int, int]) -> bool:
        return lo <= span[0] and span[1] <= hi

    best = (0, 0, 0)
    for r in range(len(rspans)):
        for l in range(len(lspans)):
            n = 0
            while (l + n < len(lspans) and r + n < len(rspans) and inside(lspans[l + n])
                   and lspans[l + n] == rspans[r + n]):
                n += 1
            if n > best[2]:
                best = (l, r, n)
    return best


def random_chunk(rng: random.Random, start: int, end: int) -> Chunk:
    """A valid encoding of ``end - start`` characters: spans anywhere in the chunk, in any order,
    often repeated and often adjacent (so runs of equal spans are common)."""
    width = end - start
    offs: list[tuple[int, int]] = []
    pos = 0
    for _ in range(rng.randrange(0, 12)):
        roll = rng.random()
        if roll < 0.5:  # the next piece of text, like a real tokenizer
            s = min(pos, width)
            e = min(width, s + rng.randrange(0, 3))
            pos = e
        elif roll < 0.75 and offs:  # a repeat of the previous span (byte fallback)
            s, e = offs[-1]
        else:  # anywhere
            s = rng.randrange(0, width + 1)
            e = rng.randrange(s, width + 1)
        offs.append((s, e))
    return Chunk(start, end, Encoding.of(list(range(len(offs))), offs))


def test_match_positions_equals_exhaustive_search() -> None:
    rng = random.Random(4)
    for _ in range(3000):
        lstart = rng.randrange(0, 3)
        rstart = lstart + rng.randrange(0, 6)
        lend = rstart + rng.randrange(0, 6)
        rend = lend + rng.randrange(0, 4)
        left, right = random_chunk(rng, lstart, lend), random_chunk(rng, rstart, rend)
        assert merge_lopt_paper.match_positions(left, right) == brute_match(left, right), (left, right)


def test_no_common_span_is_all_zero() -> None:
    left = Chunk(0, 4, Encoding.of([1, 2], [(0, 2), (2, 4)]))
    right = Chunk(2, 6, Encoding.of([3, 4], [(0, 1), (1, 4)]))
    assert merge_lopt_paper.match_positions(left, right) == (0, 0, 0)


def test_first_longest_run_wins() -> None:
    # two runs of one token each (global spans (3,4) and (5,6)): the first in the right chunk
    left = Chunk(0, 6, Encoding.of([1, 2, 3], [(0, 3), (3, 4), (5, 6)]))
    right = Chunk(3, 9, Encoding.of([4, 5, 6], [(0, 1), (1, 2), (2, 3)]))
    assert merge_lopt_paper.match_positions(left, right) == (1, 0, 1)


def test_repeated_spans_make_runs() -> None:
    # three byte-fallback tokens on one character in both chunks: one run of three
    left = Chunk(0, 3, Encoding.of([1, 2, 3, 4], [(0, 2), (2, 3), (2, 3), (2, 3)]))
    right = Chunk(2, 4, Encoding.of([2, 3, 4, 5], [(0, 1), (0, 1), (0, 1), (1, 2)]))
    assert merge_lopt_paper.match_positions(left, right) == (1, 0, 3)


def test_a_token_outside_the_overlap_breaks_a_run() -> None:
    # right token 1 covers (3, 6), past the left chunk's end 5: right[0:2] is no run of 2
    left = Chunk(0, 5, Encoding.of([1, 2, 3], [(0, 3), (3, 4), (4, 5)]))
    right = Chunk(3, 6, Encoding.of([2, 9, 3], [(0, 1), (0, 3), (1, 2)]))
    assert merge_lopt_paper.match_positions(left, right) == (1, 0, 1)


class SpanEngine(Encoder):
    """Two tokens per character, both on its span (like byte fallback), ids = code point * 2 + k."""

    info = EngineInfo("toy:two-per-char", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([2 * ord(c) + k for c in text for k in (0, 1)],
                           [(i, i + 1) for i in range(len(text)) for _ in (0, 1)])


def test_merge_is_exact_when_every_span_repeats() -> None:
    # Position-matched runs lie at the same text position, so with context-free tokens the merge
    # must give the serial encoding, even when a hash map of spans would see only one token.
    engine = SpanEngine()
    text = "abcdefghij" * 3
    for chunk_len in (2, 3, 5, 8):
        for overlap in (1, 2, 4):
            got = merge_lopt_paper.merge(engine, text, chunk_len=chunk_len, overlap=overlap)
            assert got.encoding == engine.encode(text), (chunk_len, overlap)
            # every overlap holds a run of two equal spans: Lc is never doubled
            assert got.trace.params["final_chunk_len"] == chunk_len, (chunk_len, overlap)
            assert not got.trace.notes


def test_zero_width_joiner_two_tokens_one_span_regression() -> None:
    # Formerly stored as corpora/merge/lopt-paper-tiktoken-cl100k-base-eb2dd17aaeec24c4: cl100k
    # gives U+200D two byte tokens on one span; a span -> index map kept only the second, matched
    # runs shrank, and the merge duplicated tokens. The paper's Match merges this text exactly.
    engine = load_engine("tiktoken:cl100k_base")
    text = " " + "a" * 126 + "0aaa" * 25 + " " + "a" * 5 + "\u200d" + "a" * 7 + "0aaa" * 24 + "0aa"
    got = merge_lopt_paper.merge(engine, text, chunk_len=56, overlap=512)
    assert got.encoding == engine.encode(text)
