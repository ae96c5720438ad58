"""The kernels of the sentencepiece ids path (``tokspec.fast._spm_ids``) one by one.

- ``forward32`` (float32 Viterbi, int32 links) against the general ``forward_da`` in its float32
  flavour on random texts of the trained byte-fallback model, with and without re-basing: equal
  path scores (the double-rounding argument of the module docstring), predecessors and ids;
- ``emit_ids`` on hand-built best paths: pieces, unknown edges as byte pieces, as ``unk_id``, a run
  of unknowns merged, a byte missing from the byte pieces, a multi-byte character;
- ``spm_ids`` with buffers too short (it hands back the size) and against sentencepiece.

Sized for seconds with the kernels interpreted (mutation testing).
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
import sentencepiece

from tokspec.fast import _spm_ids as si
from tokspec.fast._double_array import DoubleArray
from tokspec.fast._unigram_kernels import forward_da
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import trained_model

ALPHABET = ["a", "b", "e", "t", "th", "the", " ", " ", "\u00e9", "\u4e2d", "\U0001f642", "x", "q", ".", "\u2581"]


@functools.cache
def engine() -> DatrieUnigram:
    return datrie_encoder(str(trained_model("spm-unigram-bytes")))


def random_texts(seed: int, count: int) -> list[bytes]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 40))).encode() for _ in range(count)]


@pytest.mark.parametrize("reset", [0.0, 40.0, 5.0])
def test_forward32_equals_the_general_forward_in_float32(reset: float) -> None:
    fast = engine()
    units = fast._da[0]
    scores32 = fast.scores.astype(np.float32)
    for data in random_texts(int(reset), 25):
        n = len(data)
        raw = np.frombuffer(data, dtype=np.uint8)
        best, bstart, bid = np.empty(n + 1), np.empty(n + 1, dtype=np.int64), np.empty(n + 1, dtype=np.int64)
        forward_da(raw, 0, n, units, fast.scores, fast.unk_score, True, False, reset, best, bstart, bid)
        b32 = np.full(n + 3, 7.0, dtype=np.float32)
        s32 = np.full(n + 3, 99, dtype=np.int32)
        i32 = np.full(n + 3, 99, dtype=np.int32)
        si.forward32(raw, n, units, scores32, fast.unk_score, reset, b32, s32, i32)
        assert b32[:n + 1].astype(np.float64).tolist() == best.tolist(), data
        assert s32[:n + 1].tolist() == bstart.tolist(), data
        reached = bstart >= 0
        assert i32[:n + 1][reached].tolist() == bid[reached].tolist(), data
        if reset == 5.0 and n > 20:  # the re-basing ran: positions besides 0 were set to 0
            assert int((b32[1:n + 1] == 0).sum()) > 0, data


def lattice(n: int, edges: list[tuple[int, int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """bstart and bid of a best path given as (start, end, piece id or -1) edges."""
    bstart = np.full(n + 1, -1, dtype=np.int32)
    bid = np.full(n + 1, -5, dtype=np.int32)
    for s, e, pid in edges:
        bstart[e], bid[e] = s, pid
    return bstart, bid


def emit(data: bytes, edges: list[tuple[int, int, int]], byte_ids: np.ndarray, unk_id: int = 0) -> list[int]:
    bstart, bid = lattice(len(data), edges)
    ids = np.full(len(data) + 2, -9, dtype=np.int64)
    j = si.emit_ids(np.frombuffer(data, dtype=np.uint8), len(data), bstart, bid, unk_id, byte_ids, ids)
    assert 0 <= j <= len(ids)
    out: list[int] = ids[j:].tolist()
    return out


def test_emit_ids_pieces_bytes_and_unknowns() -> None:
    data = b"abcdef"
    edges = [(0, 1, 5), (1, 2, -1), (2, 3, -1), (3, 5, 7), (5, 6, -1)]
    all_bytes = np.arange(100, 356, dtype=np.int64)
    assert emit(data, edges, all_bytes) == [5, 100 + ord("b"), 100 + ord("c"), 7, 100 + ord("f")]
    # no byte fallback: a run of unknowns is one unk, a lone one too
    assert emit(data, edges, np.zeros(0, dtype=np.int64), unk_id=3) == [5, 3, 7, 3]
    # a byte without its piece: that edge is unk, the one before it still bytes; two unk edges merge
    missing = all_bytes.copy()
    missing[ord("c")] = -1
    assert emit(data, edges, missing, unk_id=3) == [5, 100 + ord("b"), 3, 7, 100 + ord("f")]
    missing[ord("b")] = -1
    assert emit(data, edges, missing, unk_id=3) == [5, 3, 7, 100 + ord("f")]
    # 255 entries is no byte fallback
    assert emit(data, edges, all_bytes[:255], unk_id=3) == [5, 3, 7, 3]


def test_emit_ids_multibyte_unknown_and_the_empty_path() -> None:
    data = "x\u00e9".encode()  # 1 + 2 bytes
    all_bytes = np.arange(256, dtype=np.int64) + 1000
    assert emit(data, [(0, 1, 4), (1, 3, -1)], all_bytes) == [4, 1000 + 0xC3, 1000 + 0xA9]
    assert emit(data, [(0, 1, -1), (1, 3, -1)], np.zeros(0, dtype=np.int64), unk_id=2) == [2]
    assert emit(b"", [], all_bytes) == []


def test_spm_ids_hands_back_the_size_when_buffers_are_short() -> None:
    fast = engine()
    fast.encode_ids("warm")
    model = fast._spm_model
    assert model is not None
    text = "the quick brown fox"
    data = text.encode()
    want = sentencepiece.SentencePieceProcessor(model_file=str(trained_model("spm-unigram-bytes"))).encode(text)
    k = len("\u2581the\u2581quick\u2581brown\u2581fox".encode())
    for out_size, width, n_ids in ((2, 100, 100), (100, 5, 100), (100, 100, 5), (100, k + 1, k + 1)):
        out = np.zeros(out_size, dtype=np.uint8)
        lat = np.zeros(3 * width, dtype=np.int32)
        ids = np.zeros(n_ids, dtype=np.int64)
        j = si.spm_ids(data, *model, out, lat, ids)
        if out_size < k:
            assert j < 0 and -1 - j > out_size
        elif width < k + 1 or n_ids < k + 1:
            assert j == -1 - k
        else:
            assert ids[j:].tolist() == want


def test_spm_ids_equals_sentencepiece_on_random_texts() -> None:
    sp = sentencepiece.SentencePieceProcessor(model_file=str(trained_model("spm-unigram-bytes")))
    fast = engine()
    for data in random_texts(7, 40):
        text = data.decode()
        assert fast.encode_ids(text).tolist() == sp.encode(text), text


def _pieces(scores: dict[bytes, float]) -> tuple[np.ndarray, np.ndarray, dict[bytes, int]]:
    """A hand-made vocabulary: the double array's units, float32 scores, and each piece's id (ids
    in sorted key order, so the first key is id 0)."""
    keys = sorted(scores)
    ids = {k: i for i, k in enumerate(keys)}
    return DoubleArray(keys, list(range(len(keys)))).units(), np.array([scores[k] for k in keys], dtype=np.float32), ids


def _forward32(data: bytes, scores: dict[bytes, float], unk: float, reset: float) -> tuple[list, list, list, dict]:
    """forward32 over ``data``: (best, bstart, bid) at 0..n, and the piece ids; the buffers are
    longer than n + 1 and full of garbage, and nothing past n may be written."""
    units, s32, ids = _pieces(scores)
    n = len(data)
    best = np.full(n + 3, 7.0, dtype=np.float32)
    bstart = np.full(n + 3, 99, dtype=np.int32)
    bid = np.full(n + 3, 99, dtype=np.int32)
    si.forward32(np.frombuffer(data, dtype=np.uint8), n, units, s32, unk, reset, best, bstart, bid)
    assert best[n + 1:].tolist() == [7.0, 7.0] and bstart[n + 1:].tolist() == [99, 99] and bid[n + 1:].tolist() == [99, 99]
    return best[:n + 1].tolist(), bstart[:n + 1].tolist(), bid[:n + 1].tolist(), ids


def test_forward32_ties_keep_the_first_predecessor_and_piece_zero_is_a_piece() -> None:
    # "a" is piece 0: a piece like any other, not an unknown edge
    best, bstart, bid, ids = _forward32(b"ab", {b"a": -1.0, b"b": -1.0}, -10.0, 0.0)
    assert ids[b"a"] == 0 and (best, bstart, bid[1:]) == ([0.0, -1.0, -2.0], [-1, 0, 1], [0, ids[b"b"]])
    # "ab" (score -2, from 0) and "a" "b" (-1 - 1, from 1) tie at 2: the first predecessor stays
    best, bstart, bid, ids = _forward32(b"ab", {b"a": -1.0, b"b": -1.0, b"ab": -2.0}, -10.0, 0.0)
    assert (best[2], bstart[2], bid[2]) == (-2.0, 0, ids[b"ab"])
    # the unknown edge over "b" (-2 - 3) ties with "ab" (-5): "ab" stays
    best, bstart, bid, ids = _forward32(b"ab", {b"a": -2.0, b"ab": -5.0}, -3.0, 0.0)
    assert (best[2], bstart[2], bid[2]) == (-5.0, 0, ids[b"ab"])


def test_forward32_adds_the_unknown_edge_exactly_where_no_one_character_piece_starts() -> None:
    best, bstart, bid, ids = _forward32(b"ab", {b"ab": -1.0, b"b": -1.0}, -10.0, 0.0)
    assert (best, bstart) == ([0.0, -10.0, -1.0], [-1, 0, 0])
    assert (bid[1], bid[2]) == (-1, ids[b"ab"])
    # a one-character piece covers "a": no unknown edge, whatever the scores (sentencepiece's rule)
    best, bstart, bid, ids = _forward32(b"a", {b"a": -5.0}, -1.0, 0.0)
    assert (best, bstart, bid[1]) == ([0.0, -5.0], [-1, 0], ids[b"a"])


def test_forward32_rebases_above_the_threshold_only() -> None:
    # |best| == reset: no re-basing (sentencepiece re-bases strictly above it)
    assert _forward32(b"aa", {b"a": -5.0}, -10.0, 5.0)[0] == [0.0, -5.0, -10.0]
    # a threshold below 1 re-bases too; "aa" ends at n = 2 when start 1 re-bases: nothing past n moves
    best, bstart, _, _ = _forward32(b"aa", {b"a": -1.0, b"aa": -1.5}, -10.0, 0.5)
    assert (best, bstart) == ([0.0, 0.0, -0.5], [-1, 0, 0])


def test_emit_ids_piece_and_byte_ids_zero_and_a_byte_run_ends_an_unknown_run() -> None:
    assert emit(b"ab", [(0, 1, 0), (1, 2, 5)], np.arange(100, 356, dtype=np.int64)) == [0, 5]
    assert emit(b"\x00a", [(0, 1, -1), (1, 2, -1)], np.arange(256, dtype=np.int64), unk_id=9) == [0, ord("a")]
    missing = np.arange(100, 356, dtype=np.int64)
    missing[ord("a")] = missing[ord("c")] = -1
    # c: unk; b: its byte (ends the run of unknowns); a: unk again
    assert emit(b"abc", [(0, 1, -1), (1, 2, -1), (2, 3, -1)], missing, unk_id=3) == [3, 100 + ord("b"), 3]
