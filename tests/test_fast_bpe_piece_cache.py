"""The compiled BPE's per-call cache of merged pieces (``tokspec.fast._piece_cache``).

Contract: a lookup answers only for a piece whose bytes equal, in full, those of the piece recorded
in its slot (same length, every byte: pieces sharing their first 16 bytes and length land in one
slot and must not be confused), and copies exactly the recorded ids; the kernel's output with the
cache equals the Python backtracking encoder piece by piece, on texts built to repeat pieces and to
collide in slots; compiled and interpreted kernels agree.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from tokspec.fast import _piece_cache as pc
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast.bpe_kernel import CompiledBPE
from tokspec.fast.interpreted import modules
from tokspec.fuzz.strategies import trained_bpe_ranks


def _buf(data: bytes) -> np.ndarray:
    return np.frombuffer(bytes(data), dtype=np.uint8)  # read-only, as _encode gets it


@pytest.mark.parametrize("plain", [False, True], ids=["compiled", "interpreted"])
def test_get_answers_only_for_equal_bytes(plain: bool) -> None:
    get = pc.cache_get.py_func if plain and hasattr(pc.cache_get, "py_func") else pc.cache_get
    put = pc.cache_put.py_func if plain and hasattr(pc.cache_put, "py_func") else pc.cache_put
    head = b"0123456789abcdef"  # 16 bytes: the part the slot hash reads
    data = _buf(head + b"XYZ" + head + b"XYZ" + head + b"XYQ" + head + b"XY" + b"ab" + b"ab")
    n = 19
    out = np.zeros(64, dtype=np.int32)
    out[:3] = [7, 8, 9]
    cache = pc.cache_for(len(data))
    assert len(cache) == 2 * 16
    with np.errstate(over="ignore"):
        assert get(cache, data, 0, n, out, 3) == -1, "empty cache"
        put(cache, data, 0, n, 0, 3)
        assert get(cache, data, n, n, out, 3) == 6, "equal bytes elsewhere: a hit"
        assert out[3:6].tolist() == [7, 8, 9]
        assert get(cache, data, 2 * n, n, out, 6) == -1, "same slot, last byte differs"
        assert get(cache, data, 3 * n, n - 1, out, 6) == -1, "a prefix of the cached piece"
        assert get(cache, data, 0, 0, out, 6) == -1
        put(cache, data, 4 * n - 1, 2, 1, 2)  # "ab" -> [8]
        assert get(cache, data, 4 * n + 1, 2, out, 10) == 11 and out[10] == 8
    assert out[6:10].tolist() == [0, 0, 0, 0], "nothing written on a miss"


def test_cache_size_follows_input() -> None:
    assert [len(pc.cache_for(n)) // 2 for n in (0, 1024, 64 * 100, 10**6, 10**8)] == [16, 16, 128, 4096, 4096]
    assert not any(pc.cache_for(n).any() for n in (0, 64 * 100, 10**8)), "a new cache is all zeros (empty slots)"


def _colliding_pieces(seed: int) -> list[bytes]:
    """Pieces of ``abc`` with repeats, and long pieces sharing a 16-byte head and their length."""
    rng = random.Random(seed)
    base = [bytes(rng.choice(b"abc") for _ in range(rng.randint(2, 24))) for _ in range(30)]
    head = bytes(rng.choice(b"abc") for _ in range(16))
    twins = [head + bytes(rng.choice(b"abc") for _ in range(6)) for _ in range(20)]
    return [rng.choice(base + twins) for _ in range(400)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kernel_with_cache_equals_python_encoder(seed: int) -> None:
    ranks = trained_bpe_ranks(seed, alphabet=b"abc", merges=60, segments=20, segment_len=(10, 40))
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    plain = modules()[1].CompiledBPE(compiled.arrays)
    pieces = _colliding_pieces(seed)
    bounds = np.concatenate([[0], np.cumsum([len(p) for p in pieces])])
    want = [t for p in pieces for t in python.encode(p)]
    assert sum(len(python.encode(p)) > 1 for p in set(pieces)) >= 10, "multi-token pieces repeat"
    assert compiled.encode_pieces(b"".join(pieces), bounds).tolist() == want
    assert plain.encode_pieces(b"".join(pieces), bounds).tolist() == want


def test_slot_hash_reads_the_leading_bytes_and_the_length() -> None:
    """Pieces that differ in one byte among bytes 0..4 or 8..12, or only in their length, spread
    over distinct slots of the largest cache (a hash that dropped a byte or the length would put
    them all in a few slots: every lookup a miss, every put an eviction). Bytes 5..7 and 13..15
    reach the slot only weakly (bits 32..43 of a product depend on the key's low 44 bits only)."""
    slot_of = getattr(pc._slot_of, "py_func", pc._slot_of)
    rng = random.Random(0)
    base = bytes(rng.randrange(256) for _ in range(48))
    mask = 4096 - 1
    with np.errstate(over="ignore"):
        for i in (*range(5), *range(8, 13)):
            slots = set()
            for v in range(256):
                piece = bytearray(base[:16])
                piece[i] = v
                slots.add(slot_of(_buf(bytes(piece)), 0, 16, mask))
            assert len(slots) >= 200, (i, len(slots))
        by_length = {slot_of(_buf(base), 0, n, mask) for n in range(1, 49)}
        assert len(by_length) >= 40
        assert all(0 <= s <= mask for s in by_length)


def test_one_byte_pieces_are_cached_and_the_bounds_write_nothing() -> None:
    """The contract's range is ``1 <= n < 2**23``: a one-byte piece is stored and found; an empty
    piece and one of ``2**23`` bytes are neither stored (the cache stays all zeros, so no entry is
    evicted) nor found."""
    get = getattr(pc.cache_get, "py_func", pc.cache_get)
    put = getattr(pc.cache_put, "py_func", pc.cache_put)
    data = _buf(b"q" * (1 << 23))
    out = np.zeros(8, dtype=np.int32)
    out[:2] = [5, 6]
    cache = pc.cache_for(64)
    with np.errstate(over="ignore"):
        put(cache, data, 3, 0, 1, 2)
        put(cache, data, 0, 1 << 23, 1, 2)
        assert not cache.any(), "nothing stored for n = 0 or n = 2**23"
        assert get(cache, data, 0, 0, out, 2) == -1
        put(cache, data, 7, 1, 1, 2)  # "q" -> [6]
        assert get(cache, data, 9, 1, out, 2) == 3 and out[2] == 6
        assert get(cache, data, 0, 0, out, 3) == -1, "the empty piece misses beside a stored one"
