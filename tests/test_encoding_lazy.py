"""``Encoding.from_arrays`` (what ``Encoder.encode`` returns for engines built on arrays) is
indistinguishable from the eager ``EncodingArrays.to_encoding()`` it replaced: fields, equality,
hash, repr, pickle bytes, copies, ``len`` before and after the fields are read."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import threading

import numpy as np
import pytest

from tokspec import load_engine
from tokspec._types import Encoding, EncodingArrays
from tokspec.corpus import build_corpus
from tokspec.errors import EngineFault


def _arrays(ids: list[int] | None, spans: list[tuple[int, int]]) -> EncodingArrays:
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([e for _, e in spans], dtype=np.int64)
    return EncodingArrays(None if ids is None else np.array(ids, dtype=np.int64), starts, ends)


def _same(lazy: Encoding, eager: Encoding) -> None:
    """Every public observation of ``lazy`` equals that of ``eager``."""
    assert type(lazy) is Encoding
    assert len(lazy) == len(eager)  # before any field is read: from the arrays
    assert pickle.dumps(lazy) == pickle.dumps(eager)
    assert lazy.ids == eager.ids and lazy.offsets == eager.offsets and lazy.pieces is None
    assert lazy == eager and eager == lazy and hash(lazy) == hash(eager)
    assert repr(lazy) == repr(eager)
    assert all(type(i) is int for i in lazy.ids or ())
    assert all(type(s) is int and type(e) is int for s, e in lazy.offsets)
    assert pickle.loads(pickle.dumps(lazy)) == eager
    assert "_arrays" not in vars(lazy)  # both read: the arrays are let go


def test_from_arrays_equals_to_encoding_by_hand() -> None:
    arrays = _arrays([5, 7, 5], [(0, 1), (1, 3), (3, 3)])
    eager = arrays.to_encoding()
    assert eager == Encoding.of([5, 7, 5], [(0, 1), (1, 3), (3, 3)])
    _same(Encoding.from_arrays(arrays), eager)
    lazy = Encoding.from_arrays(arrays)
    assert lazy.offsets == ((0, 1), (1, 3), (3, 3)) and "_arrays" in vars(lazy)  # ids not read yet
    assert lazy.ids == (5, 7, 5) and "_arrays" not in vars(lazy)
    assert Encoding.from_arrays(arrays) != Encoding.of([5, 7, 6], [(0, 1), (1, 3), (3, 3)])
    assert Encoding.from_arrays(arrays) != Encoding.of([5, 7, 5], [(0, 1), (1, 2), (3, 3)])


def test_from_arrays_pretokenizer_and_empty() -> None:
    _same(Encoding.from_arrays(_arrays(None, [(0, 2), (2, 5)])), Encoding(None, ((0, 2), (2, 5))))
    assert Encoding.from_arrays(_arrays(None, [(0, 2)])).ids is None
    _same(Encoding.from_arrays(EncodingArrays.empty()), Encoding((), ()))
    _same(Encoding.from_arrays(EncodingArrays.empty(tokenizer=False)), Encoding(None, ()))


def test_from_arrays_copies_replace_validate_and_attributes() -> None:
    arrays = _arrays([1, 2], [(0, 2), (2, 4)])
    eager = arrays.to_encoding()
    assert copy.copy(Encoding.from_arrays(arrays)) == eager
    assert copy.deepcopy(Encoding.from_arrays(arrays)) == eager
    assert dataclasses.replace(Encoding.from_arrays(arrays), pieces=("ab", "cd")).pieces == ("ab", "cd")
    assert dataclasses.astuple(Encoding.from_arrays(arrays)) == dataclasses.astuple(eager)
    assert Encoding.from_arrays(arrays).validate("abcd") == eager
    with pytest.raises(EngineFault, match="outside text of length 3"):
        Encoding.from_arrays(arrays).validate("abc")
    lazy = Encoding.from_arrays(arrays)
    with pytest.raises(AttributeError, match="idz"):
        lazy.idz  # noqa: B018
    assert not hasattr(lazy, "idz") and not hasattr(Encoding(None, ()), "_arrays")
    with pytest.raises(dataclasses.FrozenInstanceError):
        lazy.ids = (3,)  # type: ignore[misc]


def test_from_arrays_read_by_many_threads_at_once() -> None:
    arrays = _arrays(list(range(20_000)), [(i, i + 1) for i in range(20_000)])
    eager = arrays.to_encoding()
    for _ in range(5):
        lazy = Encoding.from_arrays(arrays)
        seen: list[object] = []
        threads = [threading.Thread(target=lambda f=f: seen.append(getattr(lazy, f)))
                   for f in ("ids", "offsets") * 4]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert seen.count(eager.ids) == 4 and seen.count(eager.offsets) == 4
        assert lazy == eager


@pytest.mark.parametrize("name", ["fast:cl100k_base", "peek2:cl100k_base"])
def test_encode_lazy_equals_eager_on_short_texts(name: str) -> None:
    engine = load_engine(name)
    texts = build_corpus(machine=False)[:150]
    for text in texts:
        lazy = engine.encode(text)
        eager = engine.encode_arrays(text).to_encoding() if text else lazy
        _same(lazy, eager)


def test_encode_lazy_equals_eager_on_one_megabyte() -> None:
    from tokspec.app.bench.fast import english

    engine = load_engine("fast:cl100k_base")
    text = english(1_000_000, seed=29) + "".join(chr(0x4E00 + i % 2000) for i in range(20_000))
    lazy = engine.encode(text)
    eager = engine.encode_arrays(text).to_encoding()
    assert len(lazy) == len(eager) > 200_000
    _same(lazy, eager)


@pytest.mark.parametrize(("starts", "ends", "bad"), [
    ([0, 9223372036854775807], [2, -9223372036854775808], 1),  # ends - starts would overflow to 1
    ([0, 3], [2, 2], 1), ([-1, 0], [0, 2], 0), ([0, 2], [2, 5], 1), ([0, 0], [0, 0], None)])
def test_arrays_validate_names_the_first_bad_span_and_cannot_be_overflowed(starts: list[int], ends: list[int],
                                                                             bad: int | None) -> None:
    """EncodingArrays.validate checks by reductions first; extreme values from a hostile engine
    (a start of 2**63 - 1 over an end of -2**63) are refused, with the first bad span named."""
    arrays = EncodingArrays(np.zeros(2, dtype=np.int64), np.array(starts, dtype=np.int64),
                            np.array(ends, dtype=np.int64))
    if bad is None:
        assert arrays.validate("abcd") is arrays
        return
    with pytest.raises(EngineFault, match=f"returned offset {bad}=\\({starts[bad]}, {ends[bad]}\\) outside text of length 4"):
        arrays.validate("abcd", "engine")
