"""tokspec.diff compares EncodingArrays: same Comparison (first divergence, classification) as the
tuple definition written out here, on random pairs of encodings; EncodingArrays round trips."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokspec import Encoder, Encoding, EncodingArrays, EngineFault, EngineInfo
from tokspec.diff import compare, make_record, run_engine
from tokspec.records import dumps_record, record_output


def tuple_first_divergence(ea: Encoding, eb: Encoding) -> int | None:
    """The definition: compare (id, start, end) tuples (or spans) in order."""
    def units(enc: Encoding) -> list[tuple[Any, ...]]:
        if enc.ids is None:
            return [tuple(s) for s in enc.offsets]
        return [(i, s, e) for i, (s, e) in zip(enc.ids, enc.offsets)]
    ta, tb = units(ea), units(eb)
    for i, (x, y) in enumerate(zip(ta, tb)):
        if x != y:
            return i
    return None if len(ta) == len(tb) else min(len(ta), len(tb))


def tuple_classify(ea: Encoding, eb: Encoding) -> str:
    """Rules 3-5 and the coverage form of rule 2 of tokspec.diff, on tuples (rule 3 first: equal
    ids stand for the same text, whatever the offsets cover)."""
    def covered(enc: Encoding) -> set[int]:
        return {i for s, e in enc.offsets for i in range(s, e)}
    if ea.ids is not None and ea.ids == eb.ids:
        return "same ids, different offsets"
    if covered(ea) != covered(eb):
        return "decoded text differs"
    if ea.offsets == eb.offsets:
        return "same segmentation, different ids"
    return "different segmentation"


class Fixed(Encoder):
    """Returns a given encoding for any text (tuples or arrays, to exercise both run paths)."""

    def __init__(self, name: str, enc: Encoding, kind: str = "tokenizer") -> None:
        self.info = EngineInfo(name, kind, "toy", "0", None)  # type: ignore[arg-type]
        self.enc = enc

    def _encode(self, text: str) -> Encoding:
        return self.enc


class FixedArrays(Fixed):
    """The same, producing arrays natively (so tokspec.diff asks it for arrays)."""

    def _encode_arrays(self, text: str) -> EncodingArrays:
        return EncodingArrays.from_encoding(self.enc)

    def _encode(self, text: str) -> Encoding:
        raise AssertionError("tokspec.diff must ask an array engine for arrays")


def make(name: str, enc: Encoding, arrays: bool, kind: str) -> Fixed:
    return (FixedArrays if arrays else Fixed)(name, enc, kind)


@st.composite
def encoding_of(draw: st.DrawFn, n: int, ids: bool = True) -> Encoding:
    k = draw(st.integers(0, 8))
    spans = []
    for _ in range(k):
        s = draw(st.integers(0, n))
        spans.append((s, draw(st.integers(s, n))))
    spans.sort()
    return Encoding.of([draw(st.integers(0, 3)) for _ in spans] if ids else None, spans)


@given(st.data(), st.booleans(), st.booleans(), st.booleans())
def test_hyp_array_comparison_equals_tuple_definition(data: st.DataObject, arrays_a: bool, arrays_b: bool,
                                                     with_ids: bool) -> None:
    text = "abcdef"[:data.draw(st.integers(1, 6))]
    ea = data.draw(encoding_of(len(text), with_ids))
    eb = data.draw(st.one_of(st.just(ea), encoding_of(len(text), with_ids)))
    kind = "tokenizer" if with_ids else "pretokenizer"
    a, b = make("toy:a", ea, arrays_a, kind), make("toy:b", eb, arrays_b, kind)
    c = compare(a, b, text)
    index = tuple_first_divergence(ea, eb)
    assert c.index == index
    assert c.classification == (None if index is None else tuple_classify(ea, eb))
    assert c.a.encoding == ea and c.b.encoding == eb  # tuple form for reports is unchanged
    if not c.agree:
        record = make_record(a, b, c)
        stored = record_output(json.loads(dumps_record(record)), "a")  # tokspec.records layout
        assert stored is not None and stored.same_as(EncodingArrays.from_encoding(ea))


@given(st.data())
def test_hyp_encoding_arrays_round_trip(data: st.DataObject) -> None:
    enc = data.draw(encoding_of(10, data.draw(st.booleans())))
    arrays = EncodingArrays.from_encoding(enc)
    assert arrays.to_encoding() == enc
    assert arrays.same_as(EncodingArrays.from_encoding(arrays.to_encoding()))
    assert arrays.validate("x" * 10) is arrays
    for a in (arrays.ids, arrays.starts, arrays.ends):
        assert a is None or a.dtype == np.int64
    other = data.draw(encoding_of(10, enc.ids is not None))
    first = arrays.first_difference(EncodingArrays.from_encoding(other))
    assert first == tuple_first_divergence(enc, other)


def test_validate_rejects_bad_arrays() -> None:
    z = np.zeros(1, dtype=np.int64)
    with pytest.raises(EngineFault, match="outside"):
        EncodingArrays(z, z, z + 5).validate("abc")
    with pytest.raises(EngineFault, match="lengths"):
        EncodingArrays(np.zeros(2, dtype=np.int64), z, z).validate("abc")
    with pytest.raises(EngineFault, match="int64"):
        EncodingArrays(z, z.astype(np.int32), z).validate("abc")


def test_array_engine_faults_are_reported() -> None:
    class Bad(FixedArrays):
        def _encode_arrays(self, text: str) -> EncodingArrays:
            z = np.zeros(1, dtype=np.int64)
            return EncodingArrays(z, z, z + 99)
    out = run_engine(Bad("toy:bad", Encoding.of([], [])), "abc")
    assert out.arrays is None and out.fault is not None and "outside text" in out.fault


@pytest.mark.parametrize("arrays_a, arrays_b", [(False, False), (True, False), (True, True)])
def test_equal_ids_with_different_coverage_are_same_ids(arrays_a: bool, arrays_b: bool) -> None:
    # hypothesis' falsifying example of the tuple definition above, before it put rule 3 first
    ea = Encoding.of([0, 0, 0, 0, 1], [(0, 0)] * 5)
    eb = Encoding.of([0, 0, 0, 0, 1], [(0, 0)] * 4 + [(0, 1)])
    c = compare(make("toy:a", ea, arrays_a, "tokenizer"), make("toy:b", eb, arrays_b, "tokenizer"), "a")
    assert c.index == 4 and c.classification == "same ids, different offsets" == tuple_classify(ea, eb)
