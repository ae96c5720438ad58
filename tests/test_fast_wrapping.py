"""``tokspec.fast._wrapping``: int64 products and sums that wrap, and the hashes built on them.

Contract: ``mul64(a, b)`` / ``add64(a, b)`` are ``a * b`` / ``a + b`` modulo 2**64 as two's-complement
int64, compiled (an LLVM ``mul``/``add`` without ``nsw``) and interpreted (Python ints). The hashes of
the compiled BPE's tables give the bits numpy's int64 arithmetic gives where the tables are filled,
also where LLVM can prove the product overflows: the kernel ``_home_of_12_bytes`` below is the one
that, with numba's own ``*``, compiled to a wrong slot (LLVM dropped the ``>> 32``: for twelve
``#``, 6491 here and 7120 in the first kernel seen, instead of numpy's 3990), a lookup that
silently misses. Without ``_wrapping`` in ``_piece_table._home`` the four cases of
:func:`test_piece_home_matches_numpy_where_llvm_sees_the_overflow` fail (checked).
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from tokspec._jit import kernel
from tokspec.fast import _bpe_probe, _piece_cache, _piece_store, _piece_table
from tokspec.fast._wrapping import add64, mul64

_EDGES = (0, 1, -1, 2, 3, (1 << 31) - 1, 1 << 31, (1 << 32) + 7, (1 << 62) + 1, (1 << 63) - 1, -(1 << 63),
          0x5851F42D4C957F2D, 0x2545F4914F6CDD1D, 0x1B873593CC9E2D51, 0x2323232323232323, -0x7F7F7F7F7F7F7F80)


def _wrap(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >= 1 << 63 else x


@kernel
def _both(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.empty(2 * len(a), dtype=np.int64)
    for i in range(len(a)):
        out[2 * i] = mul64(a[i], b[i])
        out[2 * i + 1] = add64(a[i], b[i])
    return out


def _pairs(seed: int) -> tuple[list[int], list[int]]:
    rng = random.Random(seed)
    pairs = [(x, y) for x in _EDGES for y in _EDGES]
    pairs += [(_wrap(rng.getrandbits(64)), _wrap(rng.getrandbits(64))) for _ in range(500)]
    return [p[0] for p in pairs], [p[1] for p in pairs]


@pytest.mark.parametrize("seed", range(2))
def test_products_and_sums_wrap_like_python_ints(seed: int) -> None:
    xs, ys = _pairs(seed)
    got = _both(np.array(xs, dtype=np.int64), np.array(ys, dtype=np.int64)).tolist()
    want = [v for x, y in zip(xs, ys) for v in (_wrap(x * y), _wrap(x + y))]
    assert got == want
    plain = [int(v) for x, y in zip(xs[:60], ys[:60]) for v in (mul64(x, y), add64(x, y))]  # interpreted
    assert plain == want[:120]
    assert any(v < 0 for v in want) and any(v > 0 for v in want)


@kernel
def _home_of_12_bytes(data: np.ndarray, pos: int, mask: int) -> tuple[int, int, int]:
    """``_piece_table._home`` of the 12 bytes at ``pos``, packed as ``_pack`` packs them: LLVM knows
    ``k1 >= 12 << 32``, so ``k1 * _M1`` always overflows (the miscompiled shape)."""
    k0 = np.int64(0)
    for i in range(8):
        k0 |= np.int64(data[pos + i]) << (8 * i)
    low = np.int64(0)
    for i in range(4):
        low |= np.int64(data[pos + 8 + i]) << (8 * i)
    k1 = (np.int64(12) << 32) | low
    return k0, k1, _piece_table._home(k0, k1, mask)


@kernel
def _slot_of_high_key(low: int, mask: int) -> int:
    """``_bpe_probe._slot`` of a key with a known high bit (a pair key ``a << 20 | b`` with a big ``a``)."""
    return _bpe_probe._slot((np.int64(99_000) << 20) | (low & 0xFFFFF), mask)


def _home_numpy(k0: int, k1: int, mask: int) -> int:
    """The slot as ``_piece_table._fill`` computes it (numpy int64 arrays, whose products wrap)."""
    with np.errstate(over="ignore"):
        a0, a1 = np.array([k0], dtype=np.int64), np.array([k1], dtype=np.int64)
        return int((((a0 * np.int64(_piece_table._M0)) ^ (a1 * np.int64(_piece_table._M1))) >> 32)[0] & mask)


@pytest.mark.parametrize("text", [b"#" * 16, b"abcdefghijklmnop", bytes(range(200, 216)), b"\xff" * 16],
                         ids=["hashes", "letters", "bytes200-215", "ff"])  # ASCII ids (mutation/run.py)
def test_piece_home_matches_numpy_where_llvm_sees_the_overflow(text: bytes) -> None:
    data = np.frombuffer(text, dtype=np.uint8)
    k0, k1, home = (int(x) for x in _home_of_12_bytes(data, 0, 8191))
    assert home == _home_numpy(k0, k1, 8191)
    if text == b"#" * 16:
        assert home == 3990  # numpy's slot; miscompiled: 6491


def test_pair_slot_matches_numpy_for_known_high_keys() -> None:
    for low in (0, 1, 12345, 0xFFFFF, 77777):
        key = (99_000 << 20) | low
        with np.errstate(over="ignore"):
            want = int(((np.array([key], dtype=np.int64) * np.int64(_bpe_probe._M)) >> 32)[0] & ((1 << 18) - 1))
        assert _slot_of_high_key(low, (1 << 18) - 1) == want


def test_store_and_cache_hashes_equal_the_wrapped_formula() -> None:
    """The store's set and the per-call cache's slot, compiled, against Python ints."""
    rng = random.Random(7)
    store = _piece_store.new_store(1 << 6)
    for n in (1, 7, 8, 9, 16, 17, 24):
        raw = bytes(rng.randrange(256) for _ in range(n))
        data = np.frombuffer(raw + bytes(32), dtype=np.uint8)
        ids = np.arange(3, dtype=np.int32)
        _piece_store.store_op(store, data, 0, n, ids, 0, 3, 1)
        words = [int.from_bytes(raw[8 * w:8 * w + 8], "little") for w in range(3)]
        k0, k1, k2 = (_wrap(w) for w in words)
        mixed = _wrap(_wrap(_wrap(k0 * _piece_store._M0) ^ _wrap(k1 * _piece_store._M1)) + _wrap(k2 * _piece_store._M2) + n)
        folded = _wrap((mixed ^ (mixed >> 32)) * _piece_store._M3)  # the high half folded down, mixed again
        at = 16 * ((folded >> 32) & ((len(store) >> 4) - 1))
        assert int(store[at + 3]) & 0xFF == n and [int(store[at + w]) for w in range(3)] == [k0, k1, k2]
        got = np.zeros(8, dtype=np.int32)
        assert _piece_store.store_op(store, data, 0, n, got, 0, 0, 0) == 3
        c0 = _wrap(int.from_bytes(raw[:8], "little"))
        c1 = n
        for i in range(8, min(n, 16)):
            c1 ^= raw[i] << (8 * (i - 8))
        want_slot = (_wrap(_wrap(c0 * _piece_cache._M0) ^ _wrap(c1 * _piece_cache._M1)) >> 32) & 1023
        assert _cache_slot(data, n) == want_slot


@kernel
def _cache_slot(data: np.ndarray, n: int) -> int:
    return _piece_cache._slot_of(data, 0, n, 1023)
