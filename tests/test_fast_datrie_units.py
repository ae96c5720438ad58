"""``DoubleArray.units``: the packed, pre-scaled (4 base, 4 check, value + 1, has-a-child) layout
the compiled walks read (``forward_da``, ``lookup_da``, ``_spm_ids.forward32``).

Checked against the plain arrays (``base``, ``check``, ``value``), independently of the kernels:
every transition of the double array is a transition of the units (``t4 = units[s4] + 4 c`` with
``units[t4 + 1] == s4``, landing on the child's unit) and every other (node, byte) pair is
rejected, for all 256 bytes of every node, including free slots and the root (``NO_UNIT``), and
childless nodes (base 0: their probe lands in the root's region and must fail). The fourth word
must be exactly "some slot's check names this one" (``forward32`` stops on it: a 0 where a child
exists would cut walks short and change ids; a 1 where none exists would only cost time, which no
output shows). Tries: hand-picked key sets and the small trained sentencepiece model's pieces.
"""

from __future__ import annotations

import numpy as np
import pytest

from tokspec.fast._double_array import NO_UNIT, DoubleArray
from tokspec.fast.unigram_datrie import datrie_encoder
from tokspec.formats.models import trained_model


def brute_fertile(da: DoubleArray) -> list[int]:
    """1 for every slot some child points back to (transition check), by trying every byte."""
    out = [0] * len(da)
    for s in range(len(da)):
        if s != 0 and da.check[s] < 0:
            continue  # a free slot is nobody's parent
        out[s] = int(any(da.check[da.base[s] + c] == s for c in range(256) if da.base[s] + c < len(da)))
    return out


def assert_same_transitions(da: DoubleArray, units: np.ndarray) -> None:
    """For every slot ``s`` and byte ``c``: the units' step accepts iff the plain arrays' does, and
    an accepted step lands on the child's unit, whose value word is the child's value + 1."""
    slots = len(da)
    base = np.asarray(da.base, dtype=np.int64)
    check = np.asarray(da.check, dtype=np.int64)
    u = units.astype(np.int64)
    s = np.arange(slots, dtype=np.int64)[:, None]
    c = np.arange(256, dtype=np.int64)[None, :]
    t = base[s] + c  # plain: always in range (padding)
    plain_ok = check[t] == s
    t4 = u[4 * s] + 4 * c
    assert t4.max() + 3 < len(u)  # the units' step is in range too
    units_ok = u[t4 + 1] == 4 * s
    assert np.array_equal(units_ok, plain_ok)
    assert np.array_equal(t4[plain_ok], 4 * t[plain_ok])  # the child's own unit
    assert plain_ok.sum() == (check >= 0).sum()  # every used slot but the root is someone's child


@pytest.mark.parametrize("keys", [
    [b"a"], [b"a", b"ab", b"abc"], [b"ab", b"b", b"\xff\x00", b"\x00"], [bytes([c]) for c in range(256)],
    [b"hello", b"help", b"he", b"world", b"\xe2\x96\x81the", b"\xe2\x96\x81"], [],
])
def test_units_layout_and_fertile_flag(keys: list[bytes]) -> None:
    da = DoubleArray(keys, list(range(len(keys))))
    units = da.units()
    assert units.dtype == np.uint32 and units.shape == (4 * len(da),)
    assert units[0::4].tolist() == [4 * b for b in da.base]
    assert units[1::4].tolist() == [4 * c if c >= 0 else NO_UNIT for c in da.check]
    assert units[2::4].tolist() == [v + 1 for v in da.value]
    assert units[3::4].tolist() == brute_fertile(da)
    assert_same_transitions(da, units)
    assert [da.get(k) for k in keys] == list(range(len(keys)))


def test_units_on_a_trained_model() -> None:
    engine = datrie_encoder(str(trained_model("spm-unigram-bytes")))
    assert engine.da is not None
    units = engine._da[0]
    assert units[3::4].tolist() == brute_fertile(engine.da)
    assert 0 < units[3::4].sum() < len(engine.da)  # some inner nodes, some leaves
    assert_same_transitions(engine.da, units)
    assert units[2::4].tolist() == [v + 1 for v in engine.da.value]


class _Slots(list[int]):
    """A check list claiming more slots than it holds (nothing that large is allocated)."""

    def __len__(self) -> int:
        return NO_UNIT // 4 + 1


def test_units_refuse_what_uint32_cannot_index() -> None:
    da = DoubleArray([b"a"], [0])
    da.units()  # a real trie fits
    da.check = _Slots(da.check)  # as many slots as the layout cannot index
    with pytest.raises(ValueError, match="uint32"):
        da.units()
