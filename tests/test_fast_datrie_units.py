"""``DoubleArray.units``: the packed (base, check, value, has-a-child) layout the Viterbi walks.

The fourth int32 of each slot lets ``forward_da`` stop at a node without children instead of
probing one more slot; it must be exactly "some slot's check names this one" (a 0 where a child
exists would cut walks short and change ids; a 1 where none exists would only cost time, which
no output shows: so it is checked here directly). Tries: small hand-picked key sets and the small
trained sentencepiece model's pieces.
"""

from __future__ import annotations

import numpy as np
import pytest

from tokspec.fast._double_array import DoubleArray
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


@pytest.mark.parametrize("keys", [
    [b"a"], [b"a", b"ab", b"abc"], [b"ab", b"b", b"\xff\x00", b"\x00"], [bytes([c]) for c in range(256)],
    [b"hello", b"help", b"he", b"world", b"\xe2\x96\x81the", b"\xe2\x96\x81"],
])
def test_units_layout_and_fertile_flag(keys: list[bytes]) -> None:
    da = DoubleArray(keys, list(range(len(keys))))
    units = da.units()
    assert units.dtype == np.int32 and units.shape == (4 * len(da),)
    assert units[0::4].tolist() == list(da.base) and units[1::4].tolist() == list(da.check)
    assert units[2::4].tolist() == list(da.value)
    assert units[3::4].tolist() == brute_fertile(da)
    assert [da.get(k) for k in keys] == list(range(len(keys)))


def test_fertile_flag_on_a_trained_model() -> None:
    engine = datrie_encoder(str(trained_model("spm-unigram-bytes")))
    assert engine.da is not None
    units = engine._da[0]
    assert units[3::4].tolist() == brute_fertile(engine.da)
    assert 0 < units[3::4].sum() < len(engine.da)  # some inner nodes, some leaves
