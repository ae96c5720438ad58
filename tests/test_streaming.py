"""Streaming decoders (tokspec.streaming): HF DecodeStream and the byte-level reference stream satisfy
S1/S2 on real vocabularies; broken streams are caught."""

from __future__ import annotations

import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
import tokenizers

from tokspec import load_engine
from tokspec.streaming import ByteLevelStream, check_stream, hf_stream_factory
from tokspec.versions import RECORDED

from _stream_findings import withheld_before_incomplete

FINDINGS = Path(__file__).resolve().parents[1] / "corpora" / "production" / "findings_old_releases.json"
(STALE_WINDOW,) = [r for r in json.loads(FINDINGS.read_text(encoding="utf-8"))
                   if r["id"] == "tokenizers-0.21.0-decode-stream-stale-window"]
#: the installed tokenizers is the release whose DecodeStream cuts its window at a stale index
STALE_RELEASE = tokenizers.__version__ == STALE_WINDOW["library"].split()[1]


class _Panic(Exception):
    """Where tokenizers 0.21.0's Rust code panics (Python sees pyo3_runtime.PanicException)."""


class _Stream0210:
    """tokenizers 0.21.0's ``DecodeStream.step``, transcribed from its ``step_decode_stream``: the
    window of ids is cut at ``read_index`` (the previous step's ``prefix_index``), the bug of
    finding tokenizers-0.21.0-decode-stream-stale-window. Lengths are UTF-8 bytes, as Rust's;
    ``prefix_index`` is a usize (wraps below 0)."""

    def __init__(self, tokenizer: Any) -> None:
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.prefix = ""
        self.prefix_index = 0
        self.read_index = 0

    def step(self, token: int) -> str | None:
        self.ids.append(token)
        string = self.tokenizer.decode(self.ids, skip_special_tokens=False)
        size = len(self.prefix.encode())
        if len(string.encode()) <= size or string.endswith("\ufffd"):
            return None
        assert string.startswith(self.prefix), "Invalid prefix encountered"
        new_text = string.encode()[size:].decode()
        new_prefix_index = (len(self.ids) - self.prefix_index) % 2**64
        if self.read_index > len(self.ids):  # Vec::drain(read_index..) out of range
            raise _Panic(f"slice index starts at {self.read_index} but ends at {len(self.ids)}")
        self.ids = self.ids[self.read_index:]
        self.prefix = self.tokenizer.decode(self.ids, skip_special_tokens=False)
        self.read_index = self.prefix_index
        self.prefix_index = new_prefix_index
        return new_text


def _steps(make: Any, ids: list[int]) -> tuple[list[str | None], str | None]:
    """Each step's output of a fresh stream, up to a panic (and its message)."""
    stream = make()
    chunks: list[str | None] = []
    for token in ids:
        try:
            chunks.append(stream.step(int(token)))
        except BaseException as exc:  # pyo3_runtime.PanicException is a BaseException
            if not (isinstance(exc, _Panic) or type(exc).__name__ == "PanicException"):
                raise
            return chunks, str(exc)
    return chunks, None


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
    if STALE_RELEASE:
        # this release's DecodeStream is its recorded bug (S1 violations, panics): every step,
        # panics included, equals the transcription of its code (test below: the finding's cases)
        tokenizer = engine._decoder_tokenizer()
        assert _steps(make, ids) == _steps(lambda: _Stream0210(tokenizer), ids)
        return
    violation, _ = check_stream(make, engine.decode, ids)
    # a known finding (hf-decode-stream-withholds-complete-text, replayed in
    # test_finding_hf_decode_stream): hf-bpe's token 964 ends in an incomplete character
    assert violation is None or withheld_before_incomplete(violation), violation


@pytest.mark.parametrize("case", STALE_WINDOW["cases"], ids=lambda c: str(c["engine"]))
def test_decode_stream_stale_window_finding(case: dict[str, Any]) -> None:
    """tokenizers 0.21.0's DecodeStream (finding tokenizers-0.21.0-decode-stream-stale-window):
    the transcription gives the recorded steps on any release; the library gives them on 0.21.0,
    and streams the same ids with no violation on tokspec's CI release."""
    engine = _hf(case["engine"])
    tokenizer = engine._decoder_tokenizer()
    want = (case["library_output"]["chunks"], case["library_output"].get("panic"))
    assert engine.decode(case["ids"]) == case["full_decode"]
    assert _steps(lambda: _Stream0210(tokenizer), case["ids"]) == want
    make = hf_stream_factory(tokenizer)
    assert make is not None
    if STALE_RELEASE:
        assert _steps(make, case["ids"]) == want
    if tokenizers.__version__ == RECORDED["tokenizers"]:
        assert check_stream(make, engine.decode, case["ids"])[0] is None


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
