"""The piece table's filter (``tokspec.fast._piece_table.piece_filter``) and its use by the merge.

Contract: the filter has four bits per slot of its table (at least 64); the bit ``filter_bit(k0,
k1, mask)`` of the key of every occupied slot is set (no false negatives, so a clear bit proves a
key absent), and no bit is set without such a key; the empty table's filter is all clear. The
merge's longest-match probes read it (reads counted through the interpreted kernel), and the ids,
interpreted and compiled, are the Python encoder's with the built filter and with one whose every
bit is set (no probe skipped). numpy's build and the kernel's ``filter_bit`` agree bit for bit.
(A filter with a false negative breaks the merge's premise that the longest token is found: the
kernel may then pop past the piece's first token, so that case is not run.)
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from tokspec import load_engine
from tokspec._interpreted import interpreted_module
from tokspec.fast import _bpe_encode
from tokspec.fast import _piece_table as pt
from tokspec.fast.bpe_backtrack import BacktrackBPE
from tokspec.fast._piece_store import new_store
from tokspec.fast.bpe_kernel import _NO_CPS, CompiledBPE
from tokspec.fuzz.strategies import trained_bpe_ranks


def _occupied_keys(table: np.ndarray) -> list[tuple[int, int]]:
    return [(w0, w1 & ((1 << 36) - 1)) for w0, w1 in table.reshape(-1, 2).tolist() if w1 != 0]


def _bits_of(filt: np.ndarray) -> set[int]:
    return {64 * w + b for w, word in enumerate(filt.tolist()) for b in range(64) if (word >> b) & 1}


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_named_filter_holds_exactly_the_bits_of_the_occupied_keys(name: str) -> None:
    bpe = load_engine(f"fast:{name}").bpe  # type: ignore[attr-defined]
    table, filt = bpe.pieces, bpe.pieces_filter
    assert len(filt) * 64 == 4 * (len(table) >> 1)
    mask = 64 * len(filt) - 1
    keys = _occupied_keys(table)
    want = {int(pt.filter_bit(k0, k1, mask)) for k0, k1 in keys}  # the kernel's bits (compiled if on)
    assert _bits_of(filt) == want
    assert 0.02 < len(want) / (mask + 1) < 0.2  # selective: most absent keys find their bit clear


def test_small_and_empty_tables() -> None:
    assert pt.piece_filter(pt.empty_piece_table()).tolist() == [0]
    ranks = trained_bpe_ranks(0, alphabet=b"abcd", merges=60)
    compiled = CompiledBPE.from_ranks(ranks)
    mask = 64 * len(compiled.pieces_filter) - 1
    keys = _occupied_keys(compiled.pieces)
    assert keys and _bits_of(compiled.pieces_filter) == {int(pt.filter_bit(k0, k1, mask)) for k0, k1 in keys}


def _long_ascii_ranks(seed: int) -> dict[bytes, int]:
    """Byte-level ranks trained on ASCII words, so the merge's probes (ASCII windows) decide."""
    return trained_bpe_ranks(seed, alphabet=b"abcde", merges=200, segment_len=(20, 60))


class _CountingReads(np.ndarray):
    """An int64 array that counts item reads (the interpreted kernel indexes it word by word)."""

    reads = 0

    def __getitem__(self, key):  # type: ignore[no-untyped-def]  # numpy's indexing protocol
        _CountingReads.reads += 1
        return super().__getitem__(key)


@pytest.mark.parametrize("seed", range(3))
def test_the_probes_consult_the_filter_and_only_skip(seed: int) -> None:
    ranks = _long_ascii_ranks(seed)
    python = BacktrackBPE(ranks, self_check=False)
    compiled = CompiledBPE.from_ranks(ranks)
    rng = random.Random(seed)
    pieces = [bytes(rng.choice(b"abcde") for _ in range(rng.randint(3, 40))) for _ in range(200)]
    pieces.append(b"a" * 16)  # the last bytes: the kernel's probes need 16 readable bytes
    bounds = np.concatenate([[0], np.cumsum([len(p) for p in pieces])])
    data = np.frombuffer(b"".join(pieces), dtype=np.uint8)
    want = [t for p in pieces for t in python.encode(p)]
    tables = list(compiled._tables)
    at = next(i for i, t in enumerate(tables) if t is compiled.pieces_filter)
    plain = interpreted_module(_bpe_encode)
    for filt in (compiled.pieces_filter, np.full_like(compiled.pieces_filter, -1)):  # real; all set
        tables[at] = filt.view(_CountingReads)
        tables[-1] = new_store()  # an empty store: every piece takes the merge
        _CountingReads.reads = 0
        with np.errstate(over="ignore"):  # the copy's hashes wrap in numpy int64
            got = plain._encode(data, bounds, _NO_CPS, np.arange(len(bounds) - 1), np.arange(1, len(bounds)),
                                False, *tables)
        assert got.tolist() == want
        assert _CountingReads.reads > len(pieces)  # read by the probes (at least one per piece)
        tables[-1] = new_store()
        assert _bpe_encode._encode(data, bounds, _NO_CPS, np.arange(len(bounds) - 1), np.arange(1, len(bounds)),
                                   False, *tables[:at], filt, *tables[at + 1:]).tolist() == want
