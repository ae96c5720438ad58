"""The compiled BPE (``tokspec.fast.bpe_kernel``) on text: UTF-8 conversion, pretoken pieces and the
fused character offsets, against independent computations, on a small vocabulary trained over
multi-byte text (so tokens start and end inside characters).

- ``utf8_of_code_points`` == ``str.encode("utf-8")`` and the character starts are the running sum of
  the characters' UTF-8 lengths, at every UTF-8 length boundary (0x7F/0x80, 0x7FF/0x800,
  0xFFFF/0x10000, 0x10FFFF);
- ``encode_text`` ids == the Python ``BacktrackBPE`` on each pretoken's bytes, concatenated; offsets
  == spec ``offsets_from_token_bytes`` (a token covers the characters its bytes touch);
  ``encode_text_ids`` == those ids; ``encode_pieces`` with arbitrary cut points (empty pieces too)
  == ``BacktrackBPE`` per piece.

Deterministic seeded inputs (no hypothesis budget); about a second interpreted.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import CompiledBPE, utf8_of_code_points
from tokspec.fast.peek2_unicode import code_points
from tokspec.fuzz.strategies import trained_bpe_ranks
from tokspec.spec.offsets import offsets_from_token_bytes

# 1-, 2-, 3- and 4-byte characters, the extremes of each UTF-8 length first
EDGES = "\x00\x7f\x80\u07ff\u0800\uffff\U00010000\U0010ffff"
CHARS = "ab \u00e9\u0416\u4e2d\u6587\U0001f642" + EDGES


# trained on the UTF-8 bytes of a, b, e-acute, a CJK ideograph and an emoji: tokens cut characters
RANKS = trained_bpe_ranks(2, alphabet="ab\u00e9\u4e2d\U0001f642".encode(), merges=120, segments=30,
                          segment_len=(10, 40))
PYTHON = BacktrackBPE(RANKS)
COMPILED = CompiledBPE.from_ranks(RANKS)


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(CHARS) for _ in range(rng.randint(1, 14))) for _ in range(count)]


def _cuts(rng: random.Random, n: int) -> list[int]:
    """Sorted cut points 0 = c0 <= ... = n, repeats allowed (empty pieces)."""
    inner = sorted(rng.randint(0, n) for _ in range(rng.randint(0, 4)))
    return [0, *inner, n]


def test_utf8_of_code_points_equals_str_encode() -> None:
    texts = [EDGES, EDGES[::-1], "", "a", *_texts(1, 40)]
    for text in [*texts, "ascii only", "\U0010ffff\u0800\u07ff\x80\x7f\uffff\U00010000"]:
        want = np.concatenate([[0], np.cumsum([len(ch.encode("utf-8")) for ch in text])]).astype(np.int64)
        for given in (None, text.encode("utf-8")):  # made from the code points, or the caller's
            data, cbs = utf8_of_code_points(code_points(text), given)
            assert data.dtype == np.uint8 and data.tobytes() == text.encode("utf-8"), text
            assert not data.flags.writeable  # the merge kernel's one compiled signature (no copy)
            assert cbs.dtype == np.int64 and cbs.tolist() == want.tolist(), text


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_encode_text_ids_and_offsets_equal_python_and_spec(seed: int) -> None:
    rng = random.Random(seed)
    for text in _texts(10 + seed, 60):
        cuts = sorted(set(_cuts(rng, len(text))))  # pretoken spans: contiguous, non-empty
        starts, ends = np.array(cuts[:-1], dtype=np.int64), np.array(cuts[1:], dtype=np.int64)
        want: list[int] = []
        for s, e in zip(cuts, cuts[1:]):
            want += PYTHON.encode(text[s:e].encode("utf-8"))
        got = COMPILED.encode_text(code_points(text), starts, ends)
        assert got.ids.dtype == got.starts.dtype == got.ends.dtype == np.int64  # the EncodingArrays contract
        assert got.ids.tolist() == want, text
        lengths = [len(PYTHON.tokens[t]) for t in want]
        assert list(zip(got.starts.tolist(), got.ends.tolist())) == offsets_from_token_bytes(text, lengths), text
        assert COMPILED.encode_text_ids(code_points(text), starts, ends).tolist() == want, text


def test_encode_pieces_with_empty_and_uneven_pieces() -> None:
    rng = random.Random(7)
    for text in _texts(20, 60):
        data = text.encode("utf-8")
        cuts = _cuts(rng, len(data))
        want: list[int] = []
        for s, e in zip(cuts, cuts[1:]):
            want += PYTHON.encode(data[s:e]) if e > s else []
        assert COMPILED.encode_pieces(data, np.array(cuts)).tolist() == want, (text, cuts)
        assert COMPILED.encode_bytes(data).tolist() == PYTHON.encode(data), text


def test_token_zero_as_a_fallback_prefix() -> None:
    """Token id 0 (the byte 0x00) is a real candidate when backtracking falls back to a prefix: a
    vocabulary trained on NUL-heavy bytes, inputs full of NUL runs, compiled == Python."""
    ranks = trained_bpe_ranks(4, alphabet=b"\x00\x00\x00ab", merges=60, segments=20, segment_len=(10, 40))
    python, compiled = BacktrackBPE(ranks), CompiledBPE.from_ranks(ranks)
    assert any(python.next_prefix[t] == 0 for t in range(len(python.tokens)))
    rng = random.Random(4)
    for _ in range(150):
        data = bytes(rng.choice(b"\x00\x00\x00ab") for _ in range(rng.randint(1, 40)))
        assert compiled.encode_bytes(data).tolist() == python.encode(data), data


def test_empty_text_has_no_tokens() -> None:
    empty = np.zeros(0, dtype=np.int64)
    got = COMPILED.encode_text(code_points(""), empty, empty)
    assert got.ids.tolist() == got.starts.tolist() == got.ends.tolist() == []
    assert got.ids.dtype == got.starts.dtype == got.ends.dtype == np.int64
    assert COMPILED.encode_text_ids(code_points(""), empty, empty).tolist() == []


def test_encoding_emits_no_overflow_warnings() -> None:
    """The hashes wrap in int64 on purpose; interpreted, numpy would warn on every wrap unless each
    entry point silences it: encoding must be silent (warnings turned into errors here)."""
    import warnings

    ranks = trained_bpe_ranks(1, alphabet=b"abc", merges=40, segments=20, segment_len=(10, 30))
    text = "abcab cabca" * 3
    data = text.encode()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compiled = CompiledBPE.from_ranks(ranks)
        cps, n = code_points(text), len(text)
        spans = np.array([0, 5, n], dtype=np.int64)
        compiled.encode_pieces(data, np.array([0, 4, len(data)], dtype=np.int64))
        compiled.encode_bytes(data)
        compiled.encode_text(cps, spans[:-1], spans[1:])
        compiled.encode_text_ids(cps, spans[:-1], spans[1:])
