"""The ``property`` fuzz targets' check (``tokspec.fuzz.targets.make_checker``): one encode per input,
read by every property, with the same verdicts as before (rejected text holds, a crash fails, a
broken property fails); and the harness's warm-up input is ordinary short text."""

from __future__ import annotations

import pytest

from tokspec import Encoder, Encoding, InvalidTextError, load_engine
from tokspec.fuzz import targets
from tokspec.fuzz.harness import WARM_UP_INPUT
from tokspec.fuzz.targets import LONG_MARK, make_checker, target_by_name, text_from_bytes


class _Counting(Encoder):
    """tiktoken's cl100k_base, counting its calls; ``shift`` moves the last token's end (a broken
    offset partition), ``crash`` raises on every text."""

    def __init__(self, shift: int = 0, crash: bool = False) -> None:
        self.inner = load_engine("tiktoken:cl100k_base")
        self.info = self.inner.info
        self.calls, self.shift, self.crash = 0, shift, crash

    def _encode(self, text: str) -> Encoding:
        self.calls += 1
        if self.crash:
            raise RuntimeError("boom")
        enc = self.inner.encode(text)
        offsets = list(enc.offsets)
        if self.shift and offsets:
            s, e = offsets[-1]
            offsets[-1] = (s, e + self.shift)
        return Encoding.of(enc.ids, offsets)


def _check(monkeypatch: pytest.MonkeyPatch, engine: _Counting):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(targets, "_engine", lambda name: engine)
    return make_checker(target_by_name("prop--tiktoken_cl100k_base"))


def test_one_encode_per_input_and_the_properties_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = _Counting()
    check = _check(monkeypatch, engine)
    assert check("").holds
    for text in ["hello world", "a\r\n\r\n  b\u4e2d\u6587 12345!", "\x00" * 5000]:
        before = engine.calls
        v = check(text)
        assert v.holds, (text[:20], v.explanation)
        assert engine.calls - before == 1, "the properties must read the one Encoding, not encode again"


def test_rejected_text_holds_crash_and_broken_offsets_fail(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidTextError):
        load_engine("tiktoken:cl100k_base").encode("a\ud800")
    assert _check(monkeypatch, _Counting())("a\ud800").holds  # outside the text domain, rejected
    crashed = _check(monkeypatch, _Counting(crash=True))("abc")
    assert not crashed.holds and crashed.explanation == "engine crashed"
    assert crashed.witness is not None and crashed.witness["outputs"]["tiktoken:cl100k_base"] == {
        "crash": "RuntimeError: boom"}
    broken = _check(monkeypatch, _Counting(shift=1))("hello world")
    assert not broken.holds and broken.witness is not None and broken.witness["text"] == "hello world"
    assert "ids" in broken.witness["outputs"]["tiktoken:cl100k_base"]


def test_warm_up_input_is_short_valid_text() -> None:
    assert WARM_UP_INPUT[0] != LONG_MARK and len(WARM_UP_INPUT) < 64
    assert text_from_bytes(WARM_UP_INPUT) == WARM_UP_INPUT.decode("utf-8")
