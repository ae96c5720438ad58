"""``delimiter`` (the LoPT paper's delimiter baseline) against a one-pass re-statement.

The oracle scans the text once, left to right: a delimiter at or after the current target cuts
(before a whitespace character, after a comma or period), and the next target is one chunk length
further, or just past the cut if that is later. ``find_cuts`` does the same with regex searches;
``merge`` must then be the concatenation of the pieces' encodings, with a trace naming every cut.
"""

from __future__ import annotations

import random

import pytest

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.fast import merge_delimiter
from tokspec.fast._chunking import Anchor, MergeError

IS_DELIMITER = {"space": (str.isspace, 0), "comma": (lambda c: c == ",", 1),
                "period": (lambda c: c == ".", 1)}


class WordEngine(Encoder):
    """Tokens are maximal runs of one character class (letters, spaces, other), id = its length
    times 10 plus the class: context-dependent enough that a cut changes the output."""

    info = EngineInfo("toy:words", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        ids, offs, start = [], [], 0
        for i in range(1, len(text) + 1):
            if i == len(text) or self._cls(text[i]) != self._cls(text[start]):
                ids.append(10 * (i - start) + self._cls(text[start]))
                offs.append((start, i))
                start = i
        return Encoding.of(ids, offs)

    @staticmethod
    def _cls(c: str) -> int:
        return 0 if c.isalpha() else 1 if c.isspace() else 2


def naive_cuts(text: str, chunk_len: int, delimiter: str) -> list[int]:
    is_delim, after = IS_DELIMITER[delimiter]
    cuts: list[int] = []
    target = chunk_len
    for p, c in enumerate(text):
        if p >= target and is_delim(c):
            cut = p + after
            if cut < len(text):
                cuts.append(cut)
            target = max(target + chunk_len, cut + 1)
    return cuts


def test_find_cuts_equals_the_one_pass_scan() -> None:
    rng = random.Random(7)
    for _ in range(600):
        text = "".join(rng.choice("ab ,.\n\t") for _ in range(rng.randrange(0, 50)))
        chunk_len = rng.randrange(1, 12)
        for delimiter in IS_DELIMITER:
            assert merge_delimiter.find_cuts(text, chunk_len, delimiter) == naive_cuts(
                text, chunk_len, delimiter), (text, chunk_len, delimiter)


def test_cut_positions_on_the_edges() -> None:
    assert merge_delimiter.find_cuts("a,", 1, "comma") == []  # a cut at the end is no cut
    assert merge_delimiter.find_cuts(",a,b", 1, "comma") == [3]  # no target at 0
    assert merge_delimiter.find_cuts(" a b", 1, "space") == [2]
    assert merge_delimiter.find_cuts("a bbbbbbb c d", 1, "space") == [1, 9, 11]
    assert merge_delimiter.find_cuts("ab", 5, "space") == []


def test_merge_concatenates_the_pieces_with_a_trace_of_every_cut() -> None:
    rng = random.Random(8)
    engine = WordEngine()
    for _ in range(200):
        text = "".join(rng.choice(["ab", " ", "  ", ",", ".", "cd e"]) for _ in range(rng.randrange(0, 20)))
        chunk_len = rng.randrange(1, 15)
        delimiter = rng.choice(sorted(IS_DELIMITER))
        got = merge_delimiter.merge(engine, text, chunk_len=chunk_len, delimiter=delimiter)
        bounds = [0, *naive_cuts(text, chunk_len, delimiter), len(text)]
        ids, offs, anchors = [], [], []
        for i, (a, b) in enumerate(zip(bounds, bounds[1:])):
            piece = engine.encode(text[a:b])
            ids += piece.ids
            offs += [(s + a, e + a) for s, e in piece.offsets]
            if b < len(text):
                anchors.append(Anchor(i, len(piece), 0, b, f"{delimiter} delimiter"))
        assert got.encoding == Encoding.of(ids, offs)
        assert got.trace.anchors == anchors
        assert [(c.start, c.end) for c in got.trace.chunks] == list(zip(bounds, bounds[1:]))
        assert got.trace.strategy == "delimiter"
        assert got.trace.params == {"chunk_len": chunk_len, "delimiter": delimiter}


def test_merge_is_lossy_where_a_cut_splits_a_whitespace_run() -> None:
    engine = WordEngine()
    text = "ab   cd"
    got = merge_delimiter.merge(engine, text, chunk_len=3, delimiter="space")
    assert got.encoding != engine.encode(text)


def test_pieces_go_through_encode_many_and_bad_arguments_are_named() -> None:
    seen: list[list[str]] = []

    def encode_many(eng: Encoder, texts: list[str]) -> list[Encoding]:
        seen.append(list(texts))
        return [eng.encode(t) for t in texts]

    merge_delimiter.merge(WordEngine(), "ab cd ef", chunk_len=2, encode_many=encode_many)
    assert seen == [["ab", " cd", " ef"]]
    with pytest.raises(MergeError, match=r"unknown delimiter='semicolon'; choose one of \['comma', 'period', 'space'\]"):
        merge_delimiter.find_cuts("a;b", 1, "semicolon")
    with pytest.raises(MergeError, match="chunk_len must be an int >= 1, got chunk_len=0"):
        merge_delimiter.merge(WordEngine(), "ab", chunk_len=0)


@pytest.mark.parametrize("bad", [0, -3, True, 1.5])
def test_find_cuts_rejects_a_bad_chunk_len(bad: object) -> None:
    with pytest.raises(MergeError, match=f"chunk_len must be an int >= 1, got chunk_len={bad!r}"):
        merge_delimiter.find_cuts(" a b", bad, "space")  # type: ignore[arg-type]
