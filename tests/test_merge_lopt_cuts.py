"""``lopt``'s cut choice and stitching against plain re-statements.

Exactness tests (tests/test_merge_lopt.py) cannot see *which* sound cut was taken: any sound cut
gives serial output. Here ``find_cuts`` is checked against a scan with ``CutRule.is_cut`` (the
first sound cut in each target window, targets every chunk length, a window without one skipped),
``stitch`` against a token-by-token concatenation (with and without M5's widening), and ``merge``'s
trace against the cuts it took, on an engine that declares the ``space`` rule.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tokspec import Encoder, Encoding, EncodingArrays, EngineInfo
from tokspec.fast import merge_lopt
from tokspec.fast._chunking import MergeError
from tokspec.fast.merge_rules import RULES


class DeclaredChars(Encoder):
    """One token per character (every cut is sound) that declares the ``space`` rule."""

    info = EngineInfo("toy:declared-chars", "tokenizer", "toy", "0", None)
    merge_family = "space"

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def naive_cuts(text: str, rule: merge_lopt.CutRule, chunk_len: int) -> list[int]:
    cuts: list[int] = []
    for target in range(chunk_len, len(text), chunk_len):
        lo = max(target, cuts[-1] + 1 if cuts else 1)
        for p in range(lo, min(len(text), target + chunk_len)):
            if rule.is_cut(text, p):
                cuts.append(p)
                break
    return cuts


def test_find_cuts_equals_the_window_scan() -> None:
    rng = random.Random(11)
    for _ in range(500):
        text = "".join(rng.choice(["a", "b", " ", "  ", "1", "é", "\n"]) for _ in range(rng.randrange(0, 40)))
        for name in ("space", "space-after-letter"):
            chunk_len = rng.randrange(1, 9)
            assert merge_lopt.find_cuts(text, RULES[name], chunk_len) == naive_cuts(
                text, RULES[name], chunk_len), (text, name, chunk_len)


def test_find_cuts_edges() -> None:
    space = RULES["space"]
    assert merge_lopt.find_cuts(" a b", space, 1) == [2]  # never at 0
    assert merge_lopt.find_cuts("ab c", space, 2) == [2]  # a cut exactly at the target
    assert merge_lopt.find_cuts("abc d", space, 2) == [3]  # inside the window [2, 4)
    assert merge_lopt.find_cuts("abcdef gh", space, 2) == [6]  # [2, 4) and [4, 6) hold none
    assert merge_lopt.find_cuts("ab cdefgh i", space, 2) == [2, 9]  # [4, 6), [6, 8) skipped
    assert merge_lopt.find_cuts("a b c d", space, 100) == []


def naive_stitch(pieces: list[EncodingArrays], starts: list[int], widen: bool) -> EncodingArrays:
    ids, begin, end = [], [], []
    for k, (piece, start) in enumerate(zip(pieces, starts, strict=True)):
        for t in range(len(piece)):
            ids.append(None if piece.ids is None else int(piece.ids[t]))
            s = int(piece.starts[t]) + start
            begin.append(start if widen and k > 0 and t == 0 else s)
            end.append(int(piece.ends[t]) + start)
    has_ids = all(p.ids is not None for p in pieces)
    return EncodingArrays(np.array(ids, dtype=np.int64) if has_ids else None,
                          np.array(begin, dtype=np.int64), np.array(end, dtype=np.int64))


def random_arrays(rng: random.Random, with_ids: bool) -> EncodingArrays:
    n = rng.randrange(0, 4)
    starts = sorted(rng.randrange(0, 6) for _ in range(n))
    ends = [s + rng.randrange(0, 3) for s in starts]
    ids = np.array([rng.randrange(100) for _ in range(n)], dtype=np.int64) if with_ids else None
    return EncodingArrays(ids, np.array(starts, dtype=np.int64), np.array(ends, dtype=np.int64))

def random_stitch_case(rng: random.Random, *, some_without_ids: bool = False) -> tuple[list[EncodingArrays], list[int]]:
    """1 to 4 random pieces and their sorted starts, the first at 0 (about one piece in ten without
    ids when ``some_without_ids``)."""
    k = rng.randrange(1, 5)
    pieces = [random_arrays(rng, rng.random() < 0.9 if some_without_ids else True) for _ in range(k)]
    starts = sorted(rng.randrange(0, 30) for _ in range(k))
    starts[0] = 0
    return pieces, starts



def test_stitch_equals_token_by_token_concatenation() -> None:
    rng = random.Random(12)
    for _ in range(400):
        pieces, starts = random_stitch_case(rng, some_without_ids=True)
        for widen in (False, True):
            got = merge_lopt.stitch(pieces, starts, widen)
            want = naive_stitch(pieces, starts, widen)
            assert got.same_as(want), (pieces, starts, widen)
    assert merge_lopt.stitch([], [], True).same_as(EncodingArrays.empty())


def test_merge_trace_names_every_cut_and_the_pieces() -> None:
    engine = DeclaredChars()
    text = "one two three four five six"
    result = merge_lopt.merge(engine, text, chunk_len=5)
    cuts = naive_cuts(text, RULES["space"], 5)
    assert cuts and result.encoding == engine.encode(text)
    bounds = [0, *cuts, len(text)]
    assert [(c.start, c.end) for c in result.trace.chunks] == list(zip(bounds, bounds[1:]))
    assert [(a.left, a.keep_left, a.keep_right, a.position, a.detail) for a in result.trace.anchors] == [
        (i, c - bounds[i], 0, c, "sound cut (space)") for i, c in enumerate(cuts)]
    assert result.trace.strategy == "lopt"
    assert result.trace.params == {"chunk_len": 5, "family": "declared space", "rule": "space",
                                   "theorem": "declared rule", "structure": "declared"}
    assert result.trace.notes == []
    arrays = merge_lopt.encode_arrays(engine, text, chunk_len=5)
    assert arrays.same_as(EncodingArrays.from_encoding(result.encoding))


def test_merge_notes_say_why_it_is_serial() -> None:
    engine = DeclaredChars()
    no_cut = merge_lopt.merge(engine, "abcdefghij", chunk_len=3)
    assert no_cut.trace.notes == ["no sound cut in the text: serial encoding"]
    assert merge_lopt.merge(engine, "abc", chunk_len=3).trace.notes == []  # short: nothing to cut


@pytest.mark.parametrize("entry", ["encode_arrays", "merge"])
def test_both_entries_check_chunk_len(entry: str) -> None:
    with pytest.raises(MergeError, match="^chunk_len must be an int >= 1, got chunk_len=0$"):
        getattr(merge_lopt, entry)(DeclaredChars(), "a b", chunk_len=0)


def test_widened_traced_path_equals_stitch() -> None:
    # merge() widens the concatenated Encoding (_widened); encode_arrays() widens in stitch: same M5 result
    rng = random.Random(13)
    for _ in range(200):
        pieces, starts = random_stitch_case(rng)
        plain = merge_lopt.stitch(pieces, starts, False).to_encoding()
        widened = merge_lopt._widened(plain, [len(p) for p in pieces], starts)
        assert EncodingArrays.from_encoding(widened).same_as(merge_lopt.stitch(pieces, starts, True))


class DeclaredWords(Encoder):
    """Non-space runs are tokens, spaces are dropped (as WordPiece does); declares ``space``."""

    info = EngineInfo("toy:declared-words", "tokenizer", "toy", "0", None)
    merge_family = "space"

    def _encode(self, text: str) -> Encoding:
        import re

        spans = [m.span() for m in re.finditer(r"\S+", text)]
        return Encoding.of([len(text[s:e]) for s, e in spans], spans)


def test_rules_without_widening_keep_the_first_token_start() -> None:
    # a right piece starts with its space, its first token one character later: not widened
    engine = DeclaredWords()
    text = "one two  three four five six seven"
    for chunk_len in (1, 2, 3, 5):
        assert merge_lopt.encode_arrays(engine, text, chunk_len=chunk_len).same_as(engine.encode_arrays(text))
        assert merge_lopt.merge(engine, text, chunk_len=chunk_len).encoding == engine.encode(text)


def test_stitch_gives_int64_arrays_whatever_integer_sequence_the_starts_come_as() -> None:
    # EncodingArrays are int64 (validate checks it): starts as a list or as numpy arrays of another
    # integer type (uint64 + int64 would promote to float64) give the same int64 result
    rng = random.Random(14)
    for _ in range(50):
        pieces, starts = random_stitch_case(rng)
        text = "x" * 40
        for widen in (False, True):
            want = naive_stitch(pieces, starts, widen)
            for given in (starts, np.array(starts, dtype=np.uint64), np.array(starts, dtype=np.int32)):
                got = merge_lopt.stitch(pieces, given, widen).validate(text)
                assert got.same_as(want), (pieces, starts, widen, given.dtype if hasattr(given, "dtype") else list)


class Chars(Encoder):
    """One token per character, no structure declared: lopt has no rule for it."""

    info = EngineInfo("toy:chars", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


def test_an_engine_without_a_rule_is_encoded_serially_by_both_entries() -> None:
    engine = Chars()
    assert merge_lopt.decision(engine).rule is None
    text = "a text much longer than one chunk, with spaces everywhere"
    for chunk_len in (1, 4, len(text) - 1):
        assert merge_lopt.encode_arrays(engine, text, chunk_len=chunk_len).same_as(engine.encode_arrays(text))
        assert merge_lopt.merge(engine, text, chunk_len=chunk_len).encoding == engine.encode(text)


def test_m5_widening_engine_equals_serial_on_both_entries_pieces_included() -> None:
    """A sentencepiece BPE with the dummy prefix (trained here): rule M5 widens each right piece's
    first token to the cut. The untraced path (stitch) and the traced one (_widened) both give the
    serial ids and offsets, and the traced one keeps the engine's pieces."""
    from tokspec import load_engine, models

    engine = load_engine(models.engine_name("spm-bpe"))
    rule = merge_lopt.decision(engine).rule
    assert rule is not None and rule.widen
    text = "hello world, this is a test of the pieces  and of  the widened offsets at every cut"
    serial = engine.encode(text)
    assert serial.pieces is not None
    for chunk_len in (1, 3, 7):
        assert merge_lopt.find_cuts(text, rule, chunk_len)
        assert merge_lopt.encode_arrays(engine, text, chunk_len=chunk_len).same_as(engine.encode_arrays(text))
        merged = merge_lopt.merge(engine, text, chunk_len=chunk_len).encoding
        assert merged == serial and merged.pieces == serial.pieces


def test_merge_has_its_pieces_encoded_by_the_given_encode_many() -> None:
    engine = DeclaredChars()
    text = "one two three four five six"
    handed: list[list[str]] = []

    def encode_many(eng: Encoder, texts: list[str]) -> list[Encoding]:
        handed.append(list(texts))
        return [eng.encode(t) for t in texts]

    result = merge_lopt.merge(engine, text, chunk_len=5, encode_many=encode_many)
    bounds = [0, *naive_cuts(text, RULES["space"], 5), len(text)]
    assert handed == [[text[a:b] for a, b in zip(bounds, bounds[1:])]]
    assert result.encoding == engine.encode(text)


class CountingPattern:
    """A cut pattern that records the window of every search (then searches as the real one)."""

    def __init__(self, pattern) -> None:  # type: ignore[no-untyped-def]
        self.pattern = pattern
        self.windows: list[tuple[int, int | None]] = []

    def search(self, text: str, pos: int = 0, endpos: int | None = None):  # type: ignore[no-untyped-def]
        self.windows.append((pos, endpos))
        return self.pattern.search(text, pos, len(text) if endpos is None else endpos)


def test_find_cuts_searches_each_target_window_only() -> None:
    """O(n): each target's search covers its window [target, target + chunk_len) and one character
    of look-ahead, never the rest of the text (a text without spaces would cost O(n^2 / chunk_len))."""
    rng = random.Random(15)
    for _ in range(200):
        text = "".join(rng.choice(["a", "b", " ", "x y", "é"]) for _ in range(rng.randrange(0, 60)))
        chunk_len = rng.randrange(1, 9)
        for name in ("space", "space-after-letter"):
            counting = CountingPattern(RULES[name].pattern)
            rule = merge_lopt.CutRule(name, RULES[name].theorem, counting)  # type: ignore[arg-type]
            assert merge_lopt.find_cuts(text, rule, chunk_len) == naive_cuts(text, RULES[name], chunk_len)
            targets = range(chunk_len, len(text), chunk_len)
            assert len(counting.windows) == len(targets)
            for (pos, endpos), target in zip(counting.windows, targets):
                assert target <= pos and endpos is not None and endpos <= min(len(text), target + chunk_len + 1)
