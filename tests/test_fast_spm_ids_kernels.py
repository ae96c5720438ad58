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
