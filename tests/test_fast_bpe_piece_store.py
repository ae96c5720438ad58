"""The compiled BPE's store of merged short pieces kept across calls (``tokspec.fast._piece_store``).

Contracts: an entry gives back exactly the ids put for exactly its bytes (every length 1..24, up
to 8 ids of any value below 2**31); a piece it does not hold misses (same length and prefix, or a
set's evicted older entry); longer pieces, longer encodings and the empty store keep nothing; a
set holds its two latest pieces; ``_encode`` consults the store for short pieces and fills it, and
its ids equal those without a store and tiktoken's, over calls and in threads each with its own
store; the self-check runs without one.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tokspec import load_engine
from tokspec._jit import JIT_ENABLED
from tokspec.fast import _piece_store as ps
from tokspec.fast.bpe_kernel import CompiledBPE, _encode
from tokspec.fast.peek2_unicode import code_points
from tokspec.fast.pretok_peek2 import spans_of_code_points
from tokspec.fuzz.strategies import trained_bpe_ranks

from _threads import run_in_threads


def _bytes(raw: bytes) -> np.ndarray:
    return np.frombuffer(bytes(raw), dtype=np.uint8)  # read-only, as _encode gets it


def _put(store: np.ndarray, piece: bytes, ids: list[int]) -> None:
    out = np.array([7, *ids], dtype=np.int32)  # an id before ``base``: only out[base:count] is kept
    with np.errstate(over="ignore"):
        assert ps.store_op(store, _bytes(piece), 0, len(piece), out, 1, 1 + len(ids), 1) == 1 + len(ids)


def _get(store: np.ndarray, piece: bytes, prefix: bytes = b"") -> list[int] | None:
    """The ids stored for ``piece`` (read at offset ``len(prefix)`` of ``prefix + piece``), written
    after two ids already in the output."""
    out = np.full(12, -5, dtype=np.int32)
    out[:2] = (3, 4)
    with np.errstate(over="ignore"):
        count = int(ps.store_op(store, _bytes(prefix + piece), len(prefix), len(piece), out, 0, 2, 0))
    if count < 0:
        assert count == -1 and out[2:].tolist() == [-5] * 10  # a miss writes nothing
        return None
    assert out[:2].tolist() == [3, 4] and out[count:].tolist() == [-5] * (12 - count)
    return out[2:count].tolist()


def _wrap(x: int) -> int:
    x &= (1 << 64) - 1
    return x - (1 << 64) if x >> 63 else x


def _set_of(piece: bytes, sets: int) -> int:
    """The set of ``piece`` by the module's documented hash (int64 arithmetic, wrapping): builds
    colliding inputs; were it to differ from the kernel's, the eviction asserts would fail."""
    k0, k1, k2 = (_wrap(int.from_bytes(piece[i:i + 8].ljust(8, b"\0"), "little")) for i in (0, 8, 16))
    h = _wrap(_wrap(_wrap(k0 * ps._M0) ^ _wrap(k1 * ps._M1)) + _wrap(k2 * ps._M2) + len(piece))
    return (_wrap((h ^ (h >> 32)) * ps._M3) >> 32) & (sets - 1)


def _same_set(store: np.ndarray, length: int, k: int, seed: int = 0) -> list[bytes]:
    """``k`` distinct pieces of ``length`` bytes that fall in one set of ``store``."""
    rng = random.Random(seed)
    sets: dict[int, list[bytes]] = {}
    while True:
        piece = bytes(rng.randrange(256) for _ in range(length))
        group = sets.setdefault(_set_of(piece, len(store) >> 4), [])
        if piece not in group:
            group.append(piece)
        if len(group) == k:
            return group


def _kernel_set_of(piece: bytes, sets: int) -> int:
    """The set the kernel's own ``store_set`` gives ``piece`` in a store of ``sets`` sets."""
    data = _bytes(piece + bytes(24))
    words = ps.store_words(*(np.int64(int.from_bytes(bytes(data[i:i + 8]), "little", signed=True)) for i in (0, 8, 16)),
                           len(piece))
    with np.errstate(over="ignore"):
        return int(ps.store_set(*words, len(piece), sets - 1)) // 16


@pytest.mark.parametrize("position", range(ps.STORE_MAX))
def test_every_byte_of_a_piece_reaches_its_set(position: int) -> None:
    """The 256 pieces of 24 bytes that differ only at ``position`` spread over the default store's
    sets (a multiply's high bits never see a word's top bytes: before the fold, bytes 6-7, 14-15
    and 22-23 left the set unchanged, and runs of one byte of lengths 6-8, 14-16 and 22-24 shared
    a set); and the same for runs of one byte: no three lengths share a set."""
    sets = ps.SLOTS // 2
    base = bytes(range(97, 97 + ps.STORE_MAX))
    seen = {_kernel_set_of(base[:position] + bytes([v]) + base[position + 1:], sets) for v in range(256)}
    assert len(seen) >= 240  # 256 values into 16K sets: about 254 distinct expected
    assert _kernel_set_of(base, sets) == _set_of(base, sets)  # the documented hash is the kernel's
    byte = bytes([32 + position])
    runs = [_kernel_set_of(byte * n, sets) for n in range(1, ps.STORE_MAX + 1)]
    assert max(runs.count(s) for s in runs) <= 2


def test_round_trip_every_length_and_id_count() -> None:
    store = ps.new_store(64)
    rng = random.Random(1)
    kept = {}
    for n in range(1, ps.STORE_MAX + 1):
        piece = bytes(rng.randrange(256) for _ in range(n))
        ids = [rng.randrange(2**31) for _ in range(1 + n % ps.IDS_MAX)]
        store = ps.new_store(64)  # one entry at a time: no eviction
        _put(store, piece, ids)
        assert _get(store, piece) == ids
        assert _get(store, piece, prefix=b"xyz") == ids  # found wherever the piece sits
        kept[piece] = ids
    full = [2**31 - 1, 0, 1, 2**16, 2**20 + 3, 5, 6, 2**30]
    store = ps.new_store(64)
    _put(store, b"\xff" * 24, full)  # high bytes in every word, the top id bit below 2**31
    assert _get(store, b"\xff" * 24) == full


def test_misses_for_other_pieces_and_limits() -> None:
    store = ps.new_store(64)
    _put(store, b"abcdefghij", [1, 2])
    assert _get(store, b"abcdefghij") == [1, 2]
    assert _get(store, b"abcdefghik") is None   # last byte differs (word 1)
    assert _get(store, b"bbcdefghij") is None   # first byte differs
    assert _get(store, b"abcdefghi") is None    # a prefix
    assert _get(store, b"abcdefghij\0") is None  # zero padding is not a byte: the length tells
    long = bytes(range(65, 65 + ps.STORE_MAX + 1))
    _put(store, long, [9])
    assert _get(store, long) is None  # 25 bytes: not kept
    assert _get(store, long[:ps.STORE_MAX]) is None
    _put(store, long[:ps.STORE_MAX], [9])
    assert _get(store, long[:ps.STORE_MAX]) == [9]
    _put(store, b"many", list(range(ps.IDS_MAX + 1)))
    assert _get(store, b"many") is None  # 9 ids: not kept
    _put(store, b"many", list(range(ps.IDS_MAX)))
    assert _get(store, b"many") == list(range(ps.IDS_MAX))
    _put(store, b"none", [])
    assert _get(store, b"none") is None  # no ids: nothing kept
    assert _get(store, b"") is None


def test_empty_store_keeps_nothing_and_slots_are_checked() -> None:
    empty = ps.new_store(0)
    assert len(empty) == 0
    _put(empty, b"abc", [1])
    assert _get(empty, b"abc") is None
    assert len(ps.new_store()) == 8 * ps.SLOTS and not ps.new_store().any()
    for bad in (3, 6, 100):
        with pytest.raises(ValueError, match=f"slots={bad}"):
            ps.new_store(bad)


def test_a_set_keeps_its_two_latest_pieces() -> None:
    store = ps.new_store(4)  # 2 sets of 2 ways: collisions are easy to find
    for length in (3, 11, 20):
        a, b, c = _same_set(store, length, 3, seed=length)
        _put(store, a, [1])
        _put(store, b, [2, 3])
        assert (_get(store, a), _get(store, b)) == ([1], [2, 3])
        _put(store, c, [4])
        assert (_get(store, a), _get(store, b), _get(store, c)) == (None, [2, 3], [4])
        _put(store, a, [5])
        assert (_get(store, a), _get(store, b), _get(store, c)) == ([5], None, [4])


def _encode_with(compiled: CompiledBPE, text: str, store: np.ndarray) -> list[int]:
    cps = code_points(text)
    starts, ends = spans_of_code_points(cps, "cl100k_base")
    data = _bytes(text.encode())
    with np.errstate(over="ignore"):
        ids = _encode(data, np.empty(0, dtype=np.int64), cps, starts, ends, False, *compiled._shared, store)
    return ids.tolist()  # type: ignore[no-any-return]


def test_encode_fills_and_reads_the_store() -> None:
    """Pieces merged in one call are read back in the next; a planted entry is what comes out,
    which shows the short pieces really go through the store (and long ones do not)."""
    ranks = trained_bpe_ranks(5, alphabet=b"abcd ", merges=60, segments=20, segment_len=(10, 40))
    compiled = CompiledBPE.from_ranks(ranks)
    words = ["abcabcdab", "dddcbaab", "cabbadcab", "a" * 30]
    text = " ".join(words * 3)
    want = _encode_with(compiled, text, ps.new_store(0))
    store = ps.new_store(64)
    assert _encode_with(compiled, text, store) == want
    assert store.any()
    assert _encode_with(compiled, text, store) == want  # now from the store
    piece = b" dddcbaab"
    _put(store, piece, [0, 1, 2])
    got = _encode_with(compiled, " dddcbaab", store)
    assert got == [0, 1, 2]
    assert _encode_with(compiled, " dddcbaab", ps.new_store(0)) != got
    long_piece = b" " + b"a" * 30  # 31 bytes: merged every time, whatever a store holds
    _put(store, long_piece[:ps.STORE_MAX], [0])
    assert _encode_with(compiled, " " + "a" * 30, store) == _encode_with(compiled, " " + "a" * 30, ps.new_store(0))


def test_encode_reads_what_store_op_reads_at_every_length_and_distance_from_the_end() -> None:
    """``_encode`` writes the store's lookup out (word loads, or a byte loop in the text's last 23
    bytes): a planted piece of every length 2..24 (one byte is a whole token: the piece table
    answers first), of any byte values (high bits set), comes out with its planted ids whether the
    text ends right after it or 1..30 bytes later; a piece differing in its last byte only, or one
    byte shorter, misses and is merged (as ``store_op``'s lookup misses it)."""
    compiled = CompiledBPE.from_ranks({bytes([b]): b for b in range(256)})  # a piece merges to its bytes
    rng = random.Random(5)
    no_cps = np.empty(0, dtype=np.uint32)
    no_cps.flags.writeable = False
    for length in range(2, 25):
        piece = bytes(rng.randrange(256) for _ in range(length))
        planted = [rng.randrange(256) for _ in range(rng.randrange(1, min(8, length) + 1))]  # <= 1 id per byte, as any BPE
        if planted == list(piece):
            planted = planted[1:]
        planted_store = ps.new_store(64)
        _put(planted_store, piece, planted)
        for probe, want in ((piece, planted), (piece[:-1] + bytes([piece[-1] ^ 0x80]), list(piece[:-1]) + [piece[-1] ^ 0x80]),
                            (piece[:-1], list(piece[:-1]))):
            assert _get(planted_store, probe) == (planted if probe == piece else None)
            for tail in range(31):
                filler = bytes(rng.randrange(256) for _ in range(tail))
                data = _bytes(probe + filler)
                bounds = np.array([0, len(probe), len(probe) + tail][:3 if tail else 2], dtype=np.int64)
                k = len(bounds) - 1
                with np.errstate(over="ignore"):
                    ids = _encode(data, bounds, no_cps, np.arange(k), np.arange(1, k + 1), False,
                                  *compiled._shared, planted_store.copy()).tolist()
                assert ids == want + list(filler), (length, tail, probe)


def test_a_piece_of_more_ids_than_an_entry_holds_is_merged_outside_the_store() -> None:
    """A short piece of IDS_MAX ids is kept in the store; one of more ids is not (the per-call
    cache takes it); both encode exactly, on a first call and a second one."""
    ranks = {bytes([b]): b for b in range(256)}
    ranks[b"ab"] = 256
    compiled = CompiledBPE.from_ranks(ranks)
    eight, nine = " " + "x" * (ps.IDS_MAX - 1), " " + "y" * ps.IDS_MAX  # 8 and 9 single-byte tokens
    text = " ".join([eight, nine, eight, nine])
    want = _encode_with(compiled, text, ps.new_store(0))
    assert want == [ranks[c.encode()] for c in text]
    store = ps.new_store(64)
    for _ in range(2):
        assert _encode_with(compiled, text, store) == want
        assert _get(store, eight.encode()) == [ranks[c.encode()] for c in eight]
        assert _get(store, nine.encode()) is None
    # a mode other than 1 reads and never writes
    out = np.zeros(4, dtype=np.int32)
    assert ps.store_op(store, _bytes(b"new"), 0, 3, out, 0, 2, 2) == -1 and _get(store, b"new") is None


def test_threads_have_their_own_store_and_the_self_check_none() -> None:
    compiled = load_engine("fast:cl100k_base").bpe  # type: ignore[attr-defined]
    mine = compiled._tables
    assert mine is compiled._tables and len(mine[-1]) == 8 * ps.SLOTS
    assert len(compiled._tables_no_shortcut[-1]) == 0
    other: list[object] = []
    run_in_threads(lambda k: other.append(compiled._tables[-1]), 1)
    assert other[0] is not mine[-1]
    assert load_engine("fast:o200k_base").bpe._tables[-1] is not mine[-1]  # type: ignore[attr-defined]


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
def test_ids_equal_tiktoken_over_calls_and_threads(vocab: str) -> None:
    """Texts sharing many multi-token words, encoded in turn by several threads (each filling its
    own store across calls): every result equals tiktoken's."""
    fast = load_engine(f"fast:{vocab}")
    lib = load_engine(f"tiktoken:{vocab}").library_encoding  # type: ignore[attr-defined]
    rng = random.Random(vocab)
    words = ["".join(rng.choice("qxzjkvw\u00e9\u4e2d") for _ in range(rng.randint(3, 16))) for _ in range(300)]
    size = 400 if JIT_ENABLED else 100  # interpreted (mutation runs): the same paths, less text
    texts = [" ".join(rng.choice(words) for _ in range(size)) for _ in range(8)]
    want = [lib.encode_ordinary(t) for t in texts]
    errors: list[str] = []

    def work(k: int) -> None:
        for i in range(12):
            j = (i * 3 + k) % len(texts)
            if fast.encode_ids(texts[j]).tolist() != want[j]:  # type: ignore[attr-defined]
                errors.append(f"thread {k} text {j}")
            if fast.encode_arrays(texts[j]).ids.tolist() != want[j]:
                errors.append(f"thread {k} text {j} (arrays)")

    run_in_threads(work, 3)
    assert not errors


def test_a_pickled_engine_starts_with_no_store_and_encodes_the_same() -> None:
    import pickle

    fast = load_engine("fast:cl100k_base")
    text = "unbelievably qxzjkv words, unbelievably qxzjkv"
    want = fast.encode_ids(text).tolist()  # type: ignore[attr-defined]
    mine = fast.bpe._tables[-1]  # type: ignore[attr-defined]
    assert mine.any()
    copy = pickle.loads(pickle.dumps(fast))
    assert not hasattr(copy.bpe._local, "tables")
    assert copy.encode_ids(text).tolist() == want
    assert copy.bpe._tables[-1] is not mine
