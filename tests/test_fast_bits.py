"""``tokspec.fast._bits.trailing_zeros64`` and ``leading_zeros64``: compiled (``llvm.cttz``,
``llvm.ctlz``) and interpreted, the same counts.

Contract: the number of zero bits below the lowest set bit of the 64-bit word (above the highest),
64 for zero; a negative int64 counts its two's-complement bits (the top bit alone gives 63 trailing
zeros and no leading zero).
"""

from __future__ import annotations

import random

import numpy as np
from tokspec._jit import kernel
from tokspec.fast._bits import leading_zeros64, trailing_zeros64


@kernel
def _counts(words: np.ndarray, leading: bool = False) -> np.ndarray:
    """``trailing_zeros64`` (``leading_zeros64`` if ``leading``) of each word (compiled when the JIT is on)."""
    out = np.empty(len(words), dtype=np.int64)
    for k in range(len(words)):
        out[k] = leading_zeros64(words[k]) if leading else trailing_zeros64(words[k])
    return out


def _by_loop(word: int) -> int:
    """Trailing zeros the slow way: shift until the low bit is set."""
    bits = word & ((1 << 64) - 1)
    if bits == 0:
        return 64
    count = 0
    while not bits & 1:
        bits >>= 1
        count += 1
    return count


def test_every_bit_position_with_any_bits_above() -> None:
    rng = random.Random(7)
    words = [0]
    for position in range(64):
        low = 1 << position
        words.append(low)
        words.append(low | (rng.getrandbits(64) << position) & ((1 << 64) - 1))  # bits above only
    signed = [w - (1 << 64) if w >= 1 << 63 else w for w in words]
    array = np.array(signed, dtype=np.int64)
    want = [_by_loop(w) for w in words]
    assert want[:3] == [64, 0, 0] and want[-2:] == [63, 63]
    assert _counts(array).tolist() == want
    assert [int(trailing_zeros64(w)) for w in array] == want  # the plain function
    assert int(trailing_zeros64(-1)) == 0 and int(trailing_zeros64(np.int64(-(1 << 63)))) == 63


def test_byte_index_of_the_first_marked_byte() -> None:
    """How Peek2 uses it: top bits of bytes, the lowest one's byte index is tz >> 3."""
    for lane in range(7):
        for above in range(1 << (6 - lane)):
            marks = (1 << (8 * lane + 7)) | sum(1 << (8 * (lane + 1 + k) + 7) for k in range(7 - lane - 1)
                                                 if above >> k & 1)
            got = _counts(np.array([marks], dtype=np.int64))[0] >> 3
            assert got == lane, (lane, above)


def _leading_by_loop(word: int) -> int:
    """Leading zeros the slow way: the trailing zeros of the word with its 64 bits reversed."""
    return _by_loop(int(format(word & ((1 << 64) - 1), "064b")[::-1], 2))


def test_leading_zeros_at_every_bit_position_with_any_bits_below() -> None:
    rng = random.Random(11)
    words = [0]
    for position in range(64):
        high = 1 << position
        words.append(high)
        words.append(high | rng.getrandbits(position))  # bits below only
    signed = [w - (1 << 64) if w >= 1 << 63 else w for w in words]
    array = np.array(signed, dtype=np.int64)
    want = [_leading_by_loop(w) for w in words]
    assert want[:3] == [64, 63, 63] and want[-2:] == [0, 0]
    assert _counts(array, True).tolist() == want
    assert [int(leading_zeros64(w)) for w in array] == want  # the plain function
    assert int(leading_zeros64(-1)) == 0 and int(leading_zeros64(np.int64(1))) == 63
