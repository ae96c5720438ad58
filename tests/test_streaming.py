"""Streaming decoders (tokspec.streaming): HF DecodeStream and the byte-level reference stream satisfy
S1/S2 on real vocabularies; broken streams are caught."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.streaming import ByteLevelStream, check_stream, hf_stream_factory


@functools.lru_cache(maxsize=None)
def _hf(name: str) -> Any:
    if name == "hf-bpe":
        from tokspec.formats.models import trained_model
        return load_engine(f"hf:{trained_model('hf-bpe')}")
    return load_engine(name)


@pytest.mark.parametrize("name", ["hf:mon-unigram", "hf:bert-base-uncased", "hf-bpe"])
@settings(max_examples=30)
@given(data=st.data())
def test_hf_decode_stream_is_a_prefix_and_complete(name: str, data: st.DataObject) -> None:
    engine = _hf(name)
    make = hf_stream_factory(engine._decoder_tokenizer())
    assert make is not None  # tokenizers >= 0.21 has DecodeStream (pyproject pins such a range)
    if data.draw(st.booleans()):
        ids = list(engine.encode(data.draw(st.text(max_size=30))).ids)
    else:
        ids = data.draw(st.lists(st.integers(0, engine.n_vocab - 1), max_size=8))
    violation, _ = check_stream(make, engine.decode, ids)
    assert violation is None, violation


@settings(max_examples=50)
@given(ids=st.lists(st.integers(0, 100255), max_size=8) | st.text(max_size=20).map(
    lambda t: list(load_engine("tiktoken:cl100k_base").encode(t).ids)))
def test_bytelevel_reference_stream_against_tiktoken(ids: list[int]) -> None:
    tik = load_engine("tiktoken:cl100k_base")
    violation, emitted = check_stream(lambda: ByteLevelStream(tik.token_bytes), tik.decode, ids)
    assert violation is None, violation


def test_reference_stream_holds_back_an_incomplete_character() -> None:
    table = {0: b"a\xf0\x9f", 1: b"\x99\x82", 2: b"\xff", 3: b"b"}
    stream = ByteLevelStream(table.__getitem__)
    assert stream.step(0) == "a" and stream.step(1) == "\U0001f642"
    assert stream.step(2) == "\ufffd" and stream.step(3) == "b" and stream.step(0) == "a"


class _Eager:
    """A broken stream: decodes each token alone (U+FFFD for a character split over tokens)."""

    def __init__(self, table: dict[int, bytes]) -> None:
        self.table = table

    def step(self, token: int) -> str | None:
        return self.table[token].decode("utf-8", "replace")


def test_broken_streams_are_caught() -> None:
    table = {0: b"a\xf0\x9f", 1: b"\x99\x82", 3: b"b", 4: b"\xf0\x9f"}

    def decode(ids: list[int]) -> str:
        return b"".join(table[i] for i in ids).decode("utf-8", "replace")

    violation, emitted = check_stream(lambda: _Eager(table), decode, [3, 0, 1])
    assert violation is not None and violation.rule == "S1" and violation.step == 1 and violation.ids == (3, 0)
    assert violation.as_json()["emitted"] == "ba\ufffd"

    class Silent:
        def step(self, token: int) -> None:
            return None

    violation, _ = check_stream(Silent, decode, [3])
    assert violation is not None and violation.rule == "S2"
    assert check_stream(Silent, decode, [4])[0] is None  # only a held-back incomplete character
    assert check_stream(Silent, decode, [0])[0] is not None  # "a" was never emitted
