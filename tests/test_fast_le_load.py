"""``tokspec.fast._le_load.load_le64`` and the word-load packing of ``_piece_table._pack``.

Contract: ``load_le64(data, i)`` is ``struct.unpack_from("<q", data, i)`` (two's complement, so a
high byte >= 0x80 gives a negative word), compiled as one unaligned load and interpreted as a
slice; the interpreted form refuses an index with fewer than 8 bytes after it. ``_pack`` gives the
same two words by word loads (16 bytes readable from the piece) as by its byte loop (the text's
last 15 bytes), for every length 1..12, every byte value and every alignment.
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pytest
from tokspec._jit import kernel
from tokspec.fast import _piece_table as pt
from tokspec.fast._le_load import load_le64


def _bytes(seed: int, n: int) -> np.ndarray:
    rng = random.Random(seed)
    raw = bytes(rng.choice((0, 1, 0x7F, 0x80, 0xFF, rng.randrange(256))) for _ in range(n))
    return np.frombuffer(bytes(raw), dtype=np.uint8)  # read-only, as _encode gets it


@kernel
def _loads(data: np.ndarray) -> np.ndarray:
    """``load_le64`` at every offset with 8 bytes after it (compiled when the JIT is on)."""
    out = np.empty(len(data) - 7, dtype=np.int64)
    for i in range(len(data) - 7):
        out[i] = load_le64(data, i)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_load_is_little_endian_two_complement_at_every_offset(seed: int) -> None:
    data = _bytes(seed, 64)
    want = [struct.unpack_from("<q", data.tobytes(), i)[0] for i in range(len(data) - 7)]
    assert _loads(data).tolist() == want
    assert [int(load_le64(data, i)) for i in range(len(data) - 7)] == want  # the plain function
    assert any(w < 0 for w in want) and any(w > 0 for w in want)


def test_every_byte_value_in_every_lane() -> None:
    for lane in range(8):
        for value in range(256):
            raw = bytearray(8)
            raw[lane] = value
            data = np.frombuffer(bytes(raw), dtype=np.uint8)
            want = struct.unpack("<q", bytes(raw))[0]
            assert int(load_le64(data, 0)) == want, (lane, value)
    data = np.frombuffer(bytes(range(256)) * 2, dtype=np.uint8)
    got = _loads(data).tolist()
    assert got == [struct.unpack_from("<q", data.tobytes(), i)[0] for i in range(len(data) - 7)]


def test_plain_function_refuses_a_short_tail() -> None:
    data = np.frombuffer(b"abcdefghij", dtype=np.uint8)
    assert int(load_le64(data, 2)) == struct.unpack_from("<q", b"abcdefghij", 2)[0]
    with pytest.raises(ValueError, match="needs 8 bytes from i=3"):
        load_le64(data, 3)


@kernel
def _packs(data: np.ndarray, b0: int, n: int) -> tuple[int, int]:
    return pt._pack(data, b0, n)


def _pack_by_bytes(raw: bytes, b0: int, n: int) -> tuple[int, int]:
    """The words by definition: bytes 0..7 little-endian, then bytes 8..11 | n << 32, as int64."""
    k0 = int.from_bytes(raw[b0:b0 + min(n, 8)], "little")
    k1 = int.from_bytes(raw[b0 + 8:b0 + n], "little") | (n << 32)
    return (k0 - (1 << 64) if k0 >= 1 << 63 else k0), k1


@pytest.mark.parametrize("seed", range(3))
def test_pack_word_loads_equal_the_byte_loop(seed: int) -> None:
    data = _bytes(100 + seed, 48)
    raw = data.tobytes()
    seen_fast = seen_loop = False
    with np.errstate(over="ignore"):
        for b0 in range(len(data)):
            for n in range(1, min(pt.PIECE_MAX, len(data) - b0) + 1):
                got = tuple(int(x) for x in _packs(data, b0, n))
                assert got == _pack_by_bytes(raw, b0, n), (b0, n)
                seen_fast = seen_fast or b0 + 16 <= len(data)
                seen_loop = seen_loop or b0 + 16 > len(data)
    assert seen_fast and seen_loop

