"""``id-lcs`` (ParallelTokenizer's merge) against a naive re-statement of its module docstring.

The oracle here finds the longest common id run by brute force (every start pair, extended), so
``longest_common_run``'s dynamic programming, its tie rule, the search window and the slice
arithmetic of ``merge`` are each checked against plain code. Toy engines with a chosen number of
tokens per character make the window's boundary visible: when the overlap holds more tokens than
the window ``W``, the joined run is cut by the window and the hand-over index equals ``W``.
Where the published argument holds (all ids distinct, so an equal id means the same text position)
the merge must equal serial encoding; on repetitive text it need not (see ``corpora/merge/``).
"""

from __future__ import annotations

import itertools
import random

import pytest

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.fast import merge_id_lcs
from tokspec.fast._chunking import Anchor, Chunk, MergeError


class TableEngine(Encoder):
    """Each character becomes the ids ``table[c]`` (default: its code point), each token covering
    that one character: a stand-in whose token counts per character are chosen by the test."""

    info = EngineInfo("toy:table", "tokenizer", "toy", "0", None)

    def __init__(self, table: dict[str, list[int]] | None = None) -> None:
        self.table = table or {}

    def _encode(self, text: str) -> Encoding:
        ids: list[int] = []
        offs: list[tuple[int, int]] = []
        for i, c in enumerate(text):
            for t in self.table.get(c, [ord(c)]):
                ids.append(t)
                offs.append((i, i + 1))
        return Encoding.of(ids, offs)


def brute_run(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, int, int]:
    """The documented answer by exhaustion: the longest ``a[i:i+n] == b[j:j+n]``; among the longest
    the one ending last in ``a``, then starting first in ``b``; (len(a), 0, 0) when none."""
    found = []
    for i in range(len(a)):
        for j in range(len(b)):
            n = 0
            while i + n < len(a) and j + n < len(b) and a[i + n] == b[j + n]:
                n += 1
            if n:
                found.append((n, i + n, -j, i))
    if not found:
        return (len(a), 0, 0)
    n, _, neg_j, i = max(found)
    return (i, -neg_j, n)


def documented_window(n_tokens: int, chunk_len: int, overlap: int) -> int:
    """The module docstring's W: twice the overlap's expected token count (its character share of
    the chunk, rounded down, plus one), plus 16."""
    expected = (overlap + 1) * n_tokens // max(1, chunk_len + overlap) + 1
    return 2 * expected + 16


def naive_merge(engine: Encoder, text: str, chunk_len: int, overlap: int
                ) -> tuple[Encoding, list[Chunk], list[Anchor]]:
    """ParallelTokenizer's split / encode / join as the module docstring states it, step by step."""
    starts = list(range(0, len(text), chunk_len)) or [0]
    chunks = [Chunk(s, min(len(text), s + chunk_len + overlap),
                    engine.encode(text[s:min(len(text), s + chunk_len + overlap)])) for s in starts]
    keep = []
    anchors = []
    start_right = 0
    for i in range(len(chunks) - 1):
        a, b = chunks[i].encoding.ids, chunks[i + 1].encoding.ids
        w = documented_window(len(a), chunk_len, overlap)
        base = max(0, len(a) - w)
        ia, jb, n = brute_run(a[base:], b[:w])
        end_left = base + ia + n
        keep.append((start_right, end_left))
        start_right = jb + n
        detail = f"longest common id run n={n}" + (" (none: plain concatenation)" if n == 0 else "")
        anchors.append(Anchor(i, end_left, start_right, -1, detail))
    keep.append((start_right, len(chunks[-1].encoding)))
    ids: list[int] = []
    offs: list[tuple[int, int]] = []
    for chunk, (lo, hi) in zip(chunks, keep, strict=True):
        for k in range(lo, hi):
            ids.append(chunk.encoding.ids[k])
            s, e = chunk.encoding.offsets[k]
            offs.append((s + chunk.start, e + chunk.start))
    return Encoding.of(ids, offs), chunks, anchors


def check_against_naive(engine: Encoder, text: str, chunk_len: int, overlap: int) -> Encoding:
    result = merge_id_lcs.merge(engine, text, chunk_len=chunk_len, overlap=overlap)
    want, chunks, anchors = naive_merge(engine, text, chunk_len, overlap)
    assert result.encoding == want, (text, chunk_len, overlap)
    assert result.trace.anchors == anchors, (text, chunk_len, overlap)
    assert result.trace.chunks == chunks
    assert result.trace.strategy == "id-lcs"
    assert result.trace.params == {"chunk_len": chunk_len, "overlap": overlap}
    return result.encoding


def test_longest_common_run_equals_brute_force_on_every_small_pair() -> None:
    lists = [t for k in range(5) for t in itertools.product(range(2), repeat=k)]
    lists += [t for k in range(4) for t in itertools.product(range(3), repeat=k)]
    for a in lists:
        for b in lists:
            assert merge_id_lcs.longest_common_run(a, b) == brute_run(a, b), (a, b)


def test_longest_common_run_tie_rules() -> None:
    # two runs of one id at the same place in a: the earliest in b wins
    assert merge_id_lcs.longest_common_run((1,), (1, 1)) == (0, 0, 1)
    # equal runs at different places in a: the one ending last in a wins
    assert merge_id_lcs.longest_common_run((5, 1, 5, 2), (2, 0, 5)) == (3, 0, 1)


def test_merge_equals_the_naive_statement_on_random_texts() -> None:
    rng = random.Random(13)
    engine = TableEngine({"x": [120, 121, 122], "y": [121, 122], "z": [7] * 5})
    for _ in range(250):
        text = "".join(rng.choice("abxyz ") for _ in range(rng.randrange(0, 70)))
        check_against_naive(engine, text, rng.randrange(1, 24), rng.randrange(0, 9))


@pytest.mark.parametrize(("chunk_len", "overlap", "per_char"), [(40, 2, 20), (100, 2, 20), (30, 3, 15)])
def test_window_bounds_the_search_and_shows_in_the_hand_over(chunk_len: int, overlap: int,
                                                            per_char: int) -> None:
    # Distinct ids everywhere; the overlap's characters are "heavy" (per_char tokens each), so
    # the overlap holds more tokens than the window and the run found is cut by it.
    light = [chr(0x4E00 + k) for k in range(chunk_len)]
    heavy = [chr(0x3400 + k) for k in range(overlap)]
    table = {c: [0x10000 * (k + 1) + t for t in range(per_char)] for k, c in enumerate(heavy)}
    text = "".join(light + heavy) + "tail"
    n_tokens = chunk_len + overlap * per_char
    w = documented_window(n_tokens, chunk_len, overlap)
    assert w < overlap * per_char < 2 * w  # the scenario this test is about
    got = check_against_naive(TableEngine(table), text, chunk_len, overlap)
    result = merge_id_lcs.merge(TableEngine(table), text, chunk_len=chunk_len, overlap=overlap)
    assert result.trace.anchors[0].keep_right == w
    assert result.trace.anchors[0].keep_left == n_tokens - w + (2 * w - overlap * per_char)
    assert got == TableEngine(table).encode(text)  # distinct ids: the join is at the right place


def test_window_when_chunk_and_overlap_are_one_character() -> None:
    # chunk_len 1, overlap 0: W = 2 * (1 + 1) + 16 = 20 for a one-token chunk, so the shared id at
    # index 19 of the next chunk is found (the join drops the 20 tokens up to it).
    engine = TableEngine({"x": [7], "y": [*range(100, 119), 7]})
    got = check_against_naive(engine, "xy", 1, 0)
    assert got.ids == (7,)


def test_distinct_ids_merge_to_the_serial_encoding() -> None:
    engine = TableEngine()
    text = "".join(chr(0x4E00 + k) for k in range(90))
    for chunk_len in (1, 2, 7, 30, 89, 90, 200):
        for overlap in (0, 1, 5, 40):
            assert check_against_naive(engine, text, chunk_len, overlap) == engine.encode(text)


def test_plain_concatenation_without_a_shared_id() -> None:
    engine = TableEngine()
    result = merge_id_lcs.merge(engine, "abcd", chunk_len=2, overlap=0)
    assert result.encoding == engine.encode("abcd")
    assert [a.detail for a in result.trace.anchors] == [
        "longest common id run n=0 (none: plain concatenation)"]
    assert result.trace.anchors[0].position == -1  # id-lcs has no text position for its join


def test_chunks_go_through_encode_many() -> None:
    engine = TableEngine()
    seen: list[list[str]] = []

    def encode_many(eng: Encoder, texts: list[str]) -> list[Encoding]:
        seen.append(list(texts))
        return [eng.encode(t) for t in texts]

    merge_id_lcs.merge(engine, "abcdefg", chunk_len=3, overlap=1, encode_many=encode_many)
    assert seen == [["abcd", "defg", "g"]]


def test_overlap_zero_is_allowed_and_bad_parameters_are_named() -> None:
    assert merge_id_lcs.merge(TableEngine(), "abc", chunk_len=1, overlap=0).encoding.ids == (97, 98, 99)
    with pytest.raises(MergeError, match="chunk_len must be an int >= 1"):
        merge_id_lcs.merge(TableEngine(), "abc", chunk_len=0, overlap=0)
    with pytest.raises(MergeError, match="overlap must be an int >= 0"):
        merge_id_lcs.merge(TableEngine(), "abc", chunk_len=1, overlap=-1)
