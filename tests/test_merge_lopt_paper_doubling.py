"""``merge_lopt_paper.merge`` against the paper's Algorithm 3 written out step by step: the chunk
length doubles exactly while some seam's match is below the threshold (and the trace's note names
the first such seam, its ``n`` and the threshold), and the output is eq. 4's concatenation of the
matched slices, ids AND offsets.

The oracle re-does each step from the published definitions: chunks by eq. 1 (``fixed_spans``),
each chunk encoded alone, ``Match`` by brute force over global spans, eq. 4 by list slicing.
The engine is context-dependent on purpose (maximal runs of one character are one token), so seams
really do fail and chunks really do disagree.
"""

from __future__ import annotations

import random

import pytest

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.fast import merge_lopt_paper
from tokspec.fast._chunking import MergeError


class Runs(Encoder):
    """One token per maximal run of one character; id = code point * 100 + run length."""

    info = EngineInfo("toy:runs", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        ids, offs, i = [], [], 0
        while i < len(text):
            j = i
            while j < len(text) and text[j] == text[i]:
                j += 1
            ids.append(ord(text[i]) * 100 + (j - i))
            offs.append((i, j))
            i = j
        return Encoding.of(ids, offs)


def brute_match(left: list[tuple[int, int, int]], right: list[tuple[int, int, int]]) -> tuple[int, int, int]:
    """Longest run of equal global spans (first found: smallest r, then smallest l); (0, 0, 0)."""
    best = (0, 0, 0)
    for r in range(len(right)):
        for l in range(len(left)):
            n = 0
            while l + n < len(left) and r + n < len(right) and left[l + n][1:] == right[r + n][1:]:
                n += 1
            if n > best[2]:
                best = (l, r, n)
    return best


def algorithm_3(engine: Encoder, text: str, chunk_len: int, overlap: int, min_match: int
                ) -> tuple[list[tuple[int, int, int]], list[str], int]:
    """(tokens as (id, start, end), notes, final Lc), straight from the paper."""
    notes = []
    lc = chunk_len
    while True:
        starts = list(range(0, len(text), lc)) or [0]
        chunks = []
        for s in starts:
            enc = engine.encode(text[s:min(len(text), s + lc + overlap)])
            chunks.append([(i, a + s, b + s) for i, (a, b) in zip(enc.ids, enc.offsets)])
        matches = [brute_match(chunks[k], chunks[k + 1]) for k in range(len(chunks) - 1)]
        failed = [(k, m[2]) for k, m in enumerate(matches) if m[2] < min_match]
        if failed:
            k, n = failed[0]
            notes.append(f"Lc={lc}: match {k}/{k + 1} has n={n} < {min_match}; doubling Lc")
            lc *= 2
            continue
        out: list[tuple[int, int, int]] = []
        for k, chunk in enumerate(chunks):
            lo = matches[k - 1][1] + matches[k - 1][2] if k > 0 else 0
            hi = matches[k][0] + matches[k][2] if k < len(matches) else len(chunk)
            out += chunk[lo:hi]
        return out, notes, lc


def test_doubling_notes_and_eq4_equal_the_paper_step_by_step() -> None:
    engine = Runs()
    rng = random.Random(7)
    doubled = failed_later_seam = 0
    for _ in range(250):
        text = "".join(rng.choice("aab ") for _ in range(rng.randint(0, 40)))
        chunk_len, overlap, min_match = rng.randint(1, 9), rng.randint(0, 6), rng.randint(1, 3)
        got = merge_lopt_paper.merge(engine, text, chunk_len=chunk_len, overlap=overlap, min_match=min_match)
        want, notes, final = algorithm_3(engine, text, chunk_len, overlap, min_match)
        assert list(zip(got.encoding.ids, *zip(*got.encoding.offsets))) == want, (text, chunk_len, overlap)
        assert got.trace.notes == notes, (text, chunk_len, overlap, min_match)
        assert got.trace.params == {"chunk_len": chunk_len, "overlap": overlap, "min_match": min_match,
                                    "final_chunk_len": final}
        assert got.trace.strategy == "lopt-paper"
        assert len(got.trace.anchors) == len(got.trace.chunks) - 1
        doubled += bool(notes)
        failed_later_seam += any(" 0/1 " not in n for n in notes)
    assert doubled > 50 and failed_later_seam > 5


def test_anchor_records_the_match() -> None:
    """One token per character, overlap 1: every seam matches the one shared character."""
    engine = Runs()
    text = "abcdefghijk"
    got = merge_lopt_paper.merge(engine, text, chunk_len=3, overlap=1, min_match=1)
    assert got.encoding == engine.encode(text) and not got.trace.notes
    assert [(c.start, c.end) for c in got.trace.chunks] == [(0, 4), (3, 7), (6, 10), (9, 11)]
    assert [(a.left, a.keep_left, a.keep_right, a.position, a.detail) for a in got.trace.anchors] == [
        (i, 4, 1, 3 * i + 4, "position match l=3 r=0 n=1") for i in range(3)]


def test_threshold_met_exactly_does_not_double() -> None:
    engine = Runs()
    got = merge_lopt_paper.merge(engine, "abcdefgh", chunk_len=2, overlap=2, min_match=2)
    assert got.trace.notes == [] and got.trace.params["final_chunk_len"] == 2
    got = merge_lopt_paper.merge(engine, "abcdefgh", chunk_len=2, overlap=2, min_match=3)
    assert got.trace.notes == ["Lc=2: match 0/1 has n=2 < 3; doubling Lc",
                               "Lc=4: match 0/1 has n=2 < 3; doubling Lc"]
    assert got.trace.params["final_chunk_len"] == 8 and len(got.trace.chunks) == 1
    assert got.encoding == engine.encode("abcdefgh")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"chunk_len": 0, "overlap": 1}, "chunk_len must be an int >= 1, got chunk_len=0"),
    ({"chunk_len": 2, "overlap": -1}, "overlap must be an int >= 0, got overlap=-1"),
    ({"chunk_len": 2, "overlap": 1, "min_match": 0}, "min_match must be an int >= 1, got min_match=0"),
])
def test_bad_parameters_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(MergeError) as err:
        merge_lopt_paper.merge(Runs(), "abc", **kwargs)
    assert str(err.value) == message


def test_zero_overlap_and_empty_text() -> None:
    engine = Runs()
    got = merge_lopt_paper.merge(engine, "abc", chunk_len=1, overlap=0, min_match=1)
    assert got.trace.notes == ["Lc=1: match 0/1 has n=0 < 1; doubling Lc",
                               "Lc=2: match 0/1 has n=0 < 1; doubling Lc"]
    assert got.encoding == engine.encode("abc")
    empty = merge_lopt_paper.merge(engine, "", chunk_len=1, overlap=0)
    assert empty.encoding == engine.encode("") and empty.trace.params["final_chunk_len"] == 1


def test_every_attempt_encodes_its_chunks_through_encode_many() -> None:
    engine = Runs()
    calls: list[list[str]] = []

    def recording(e: Encoder, texts: list[str]) -> list[Encoding]:
        assert e is engine
        calls.append(list(texts))
        return [e.encode(t) for t in texts]

    text = "abcdefgh"
    got = merge_lopt_paper.merge(engine, text, chunk_len=2, overlap=2, min_match=3, encode_many=recording)
    assert calls == [["abcd", "cdef", "efgh", "gh"], ["abcdef", "efgh"], ["abcdefgh"]]
    assert got.encoding == engine.encode(text)
