"""Counterexample records (``tokspec.records``): text once, outputs compact, both versions readable.

The toy engines make outputs of any length on purpose; every check decodes what was stored and
compares it with the arrays it came from, so nothing here is a hard-coded expected value.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tokspec import Encoder, Encoding, EncodingArrays, EngineInfo
from tokspec import records
from tokspec.diff import compare, format_comparison
from tokspec.records import (HEX_CHARS, INLINE_TOKENS, dumps_record, make_record, read_record, record_name,
                             record_output, save_counterexample)

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "diff"


class Chars(Encoder):
    """One token per character, id = code point (arrays-native: no tuples are ever built)."""

    def __init__(self, name: str = "toy:chars", bump: str = "") -> None:
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)
        self.bump = bump

    def _encode_arrays(self, text: str) -> EncodingArrays:
        ids = np.array([ord(c) + (1 if c in self.bump else 0) for c in text], dtype=np.int64)
        starts = np.arange(len(text), dtype=np.int64)
        return EncodingArrays(ids, starts, starts + 1)


class Pairs(Encoder):
    """Tokens of two characters (the last may be one): a different segmentation than Chars."""

    info = EngineInfo("toy:pairs", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        spans = [(i, min(i + 2, len(text))) for i in range(0, len(text), 2)]
        return Encoding.of([ord(text[s]) for s, _ in spans], spans)


def _roundtrip(record: dict, side: str, original: EncodingArrays) -> None:
    stored = record_output(json.loads(dumps_record(record)), side)
    assert stored is not None and stored.same_as(original)


@pytest.mark.parametrize("n", [3, INLINE_TOKENS, INLINE_TOKENS + 1, 5000])
def test_outputs_decode_to_what_the_engines_gave(n: int) -> None:
    text = ("ab\u00e9\U0001f642 " * n)[:n]
    a, b = Chars(), Pairs()
    c = compare(a, b, text)
    assert not c.agree
    record = make_record(a, b, c)
    _roundtrip(record, "a", a.encode_arrays(text))
    _roundtrip(record, "b", b.encode_arrays(text))
    inline = n <= INLINE_TOKENS
    assert ("packed" in record["outputs"]["a"]) is not inline
    assert record["text_size"] == {"chars": n, "utf8_bytes": len(text.encode())}


def test_wide_values_fall_back_to_int64() -> None:
    class Huge(Chars):
        def _encode_arrays(self, text: str) -> EncodingArrays:
            base = super()._encode_arrays(text)
            return EncodingArrays(base.ids + 2**40, base.starts, base.ends)  # type: ignore[operator]
    text = "x" * 1000
    record = make_record(Huge("toy:huge"), Chars(), compare(Huge("toy:huge"), Chars(), text))
    assert record["outputs"]["a"]["packed"]["dtype"] == "<i8"
    _roundtrip(record, "a", Huge("toy:huge").encode_arrays(text))


def test_long_text_is_stored_once_and_compactly() -> None:
    text = "".join(chr(0x41 + i % 50) for i in range(200_000))  # one token per char: the worst case
    a, b = Chars(), Chars("toy:chars2", bump="Z")
    c = compare(a, b, text)
    record = make_record(a, b, c)
    assert "text_utf8_hex" not in record and len(text) > HEX_CHARS
    size = len(dumps_record(record).encode())
    # the old layout spent ~30 bytes per token per side; this one, the text plus a few bytes per token
    assert size < len(text.encode()) + 2 * 3 * len(text) // 4, size
    first = record["first_divergence"]
    assert first["index"] == text.index("Z") and first["char"] == text.index("Z")
    lo = record["context"]["start"]
    assert lo == max(0, first["char"] - 200) and record["context"]["text"] == text[lo:first["char"] + 200]


def test_short_text_keeps_its_hex_and_record_format_is_json() -> None:
    a, b = Chars(), Pairs()
    record = make_record(a, b, compare(a, b, "a\u200bc"))
    assert bytes.fromhex(record["text_utf8_hex"]).decode() == record["text"]
    assert json.loads(dumps_record(record)) == record


@pytest.mark.parametrize("text", ["", "x", "é\U0001f642\"\\\n", "a\u2028" * 700])
def test_record_name_is_the_hash_of_the_json_triple(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(records, "_CHUNK", 7)  # slices that cut between any two characters
    a, b = Chars(), Pairs()
    key = json.dumps([a.info.name, b.info.name, text], ensure_ascii=True)
    assert record_name(a, b, text) == hashlib.sha256(key.encode("ascii")).hexdigest()[:20] + ".json"


def test_saved_record_reproduces(tmp_path: Path) -> None:
    a, b = Chars(), Pairs()
    c = compare(a, b, "hello" * 100)
    path = save_counterexample(a, b, c, tmp_path)
    stored = read_record(path)
    assert stored["reproduce"].endswith(str(path)) and stored["text"] == c.text


@pytest.mark.parametrize("path", sorted(CORPUS.glob("*.json")), ids=lambda p: p.stem)
def test_version_1_records_are_read(path: Path) -> None:
    record = read_record(path)
    for side in ("a", "b"):
        stored = record["outputs"][side]
        got = record_output(record, side)
        if "fault" in stored:
            assert got is None
            continue
        assert got is not None
        assert (None if got.ids is None else got.ids.tolist()) == stored["ids"]
        assert np.stack([got.starts, got.ends], axis=1).tolist() == stored["offsets"]


def test_long_outputs_are_held_as_arrays_only() -> None:
    a, b = Chars(), Chars("toy:chars2", bump="q")
    c = compare(a, b, "x" * 10_000 + "q")
    assert c.index == 10_000 and c.classification == "same segmentation, different ids"
    make_record(a, b, c)
    format_comparison(a, b, c)
    # neither the comparison, the record nor the report built a tuple per token
    assert isinstance(c.a.shown(), EncodingArrays) and isinstance(c.b.shown(), EncodingArrays)
    long_pairs = compare(Pairs(), a, "y" * 20_000)  # a tuple engine: its long Encoding is dropped
    assert isinstance(long_pairs.a.shown(), EncodingArrays)
    short_pairs = compare(Pairs(), a, "yy")  # a short one is kept (for the engine's pieces)
    assert isinstance(short_pairs.a.shown(), Encoding)
