"""Round-trip theorems D1-D4 (tokspec.spec.decode) on real vocabularies, and that each fails on a
decoder that breaks it."""

from __future__ import annotations

import functools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.spec import decode as sd

TEXT = st.text(st.characters(codec="utf-8"), max_size=40) | st.sampled_from(
    ["a🙂b", "héllo wörld", "日本語 テスト", "  lead", "x\u0301", "Don't stop, ok? yes! no.", "\U0001d538"])


@functools.lru_cache(maxsize=None)
def _engine(name: str) -> Any:
    if name.startswith("spm:") or name.startswith("spmref:"):
        from tokspec.formats.models import trained_model
        path = trained_model("spm-unigram-bytes")
        return load_engine(("reference:" if name.startswith("spmref:") else "spm:") + str(path))
    return load_engine(name)


class _Broken:
    """An engine whose decode is replaced (the encode is the wrapped engine's)."""

    def __init__(self, inner: Any, decode: Any) -> None:
        self.inner, self.decode = inner, decode

    def encode(self, text: str) -> Any:
        return self.inner.encode(text)

    def token_piece(self, i: int) -> str:
        return str(self.inner.token_piece(i))


@pytest.mark.parametrize("name", ["tiktoken:cl100k_base", "reference:cl100k_base", "fast:cl100k_base",
                                  "tiktoken:o200k_base"])
@settings(max_examples=20)
@given(text=TEXT)
def test_d1_d2_bytelevel(name: str, text: str) -> None:
    engine = _engine(name)
    assert sd.prop_bytelevel_round_trip(engine, text)
    ref = _engine("reference:cl100k_base" if "cl100k" in name else "reference:o200k_base")
    assert sd.prop_bytelevel_prefixes(engine, text, lambda i: ref.decode.by_id[i])


def test_d1_d2_fail_on_broken_decoders() -> None:
    tik = _engine("tiktoken:cl100k_base")
    by_id = _engine("reference:cl100k_base").decode.by_id
    ignore = _Broken(tik, lambda ids: b"".join(by_id[i] for i in ids).decode("utf-8", "ignore"))
    verdict = sd.prop_bytelevel_prefixes(ignore, "a🙂", lambda i: by_id[i])
    assert not verdict and verdict.witness and verdict.witness["decoded"] == "a"
    assert sd.prop_bytelevel_round_trip(ignore, "a🙂")  # whole texts still round-trip
    lower = _Broken(tik, lambda ids: tik.decode(ids).lower())
    assert not sd.prop_bytelevel_round_trip(lower, "Ab") and sd.prop_bytelevel_round_trip(lower, "ab")
    # a decode that gives the right bytes back but not a prefix of the text
    shifted = _Broken(tik, lambda ids: tik.decode(ids[1:]))
    assert not sd.prop_bytelevel_prefixes(shifted, "ab cd", lambda i: by_id[i])


def test_d2_accepts_a_real_replacement_character_in_the_text() -> None:
    tik = _engine("tiktoken:cl100k_base")
    assert sd.prop_bytelevel_prefixes(tik, "a\ufffd🙂\ufffd", lambda i: _engine("reference:cl100k_base").decode.by_id[i])


@pytest.mark.parametrize("name", ["hf:bert-base-uncased", "reference:bert-base-uncased"])
@settings(max_examples=40)
@given(text=TEXT)
def test_d4_wordpiece(name: str, text: str) -> None:
    engine, ref = _engine(name), _engine("reference:bert-base-uncased")
    words = [w.text for w in ref.words(text)]
    assert sd.prop_wordpiece_round_trip(engine, text, words, 100)


def test_d4_examples_and_failure() -> None:
    bert = _engine("hf:bert-base-uncased")
    assert sd.expected_wordpiece(["don", "'", "t", "stop", ",", "ok", "?"]) == "don ' t stop, ok?"
    assert sd.expected_wordpiece([]) == "" and sd.expected_wordpiece([".", "a"]) == ". a"
    assert bert.decode(list(bert.encode("Don't stop, ok?").ids)) == "don ' t stop, ok?"
    upper = _Broken(bert, lambda ids: bert.decode(ids).upper())
    assert not sd.prop_wordpiece_round_trip(upper, "ab", ["ab"], 100)
    unk = sd.prop_wordpiece_round_trip(upper, "\U0001d538", ["\U0001d538"], 100)
    assert unk and "out of scope" in unk.explanation


@pytest.mark.parametrize("name", ["hf:mon-unigram", "reference:mon-unigram", "spm:", "spmref:"])
@settings(max_examples=30)
@given(text=TEXT)
def test_d3_metaspace(name: str, text: str) -> None:
    engine = _engine(name)
    ref = _engine("reference:mon-unigram") if "mon" in name else _engine("spmref:")
    normalized = "".join(p.text for p in ref.model.pretokenize(text))
    assert sd.prop_metaspace_round_trip(engine, text, normalized, ref.model.unk_id)


def test_d3_examples_and_failure() -> None:
    assert sd.expected_metaspace("\u2581a\u2581b") == "a b" and sd.expected_metaspace("a\u2581") == "a "
    assert sd.expected_metaspace("") == ""
    mon = _engine("hf:mon-unigram")
    keep = _Broken(mon, lambda ids: " " + mon.decode(ids))
    assert not sd.prop_metaspace_round_trip(keep, "hello", "\u2581hello", 0)
    assert sd.prop_metaspace_round_trip(mon, "hello", "\u2581hello", 0)
    assert mon.token_piece(list(mon.encode("hello").ids)[0]) == "\u2581"  # a first marker alone: in scope
    out = sd.prop_metaspace_round_trip(keep, "  x", "\u2581\u2581x", 0)
    assert out and "out of scope" in out.explanation
