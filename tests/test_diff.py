"""Unit tests of tokspec.diff (comparison, classification, records) and tokspec.minimize (ddmin).

Toy engines defined here make each classification happen on purpose; their expected outputs are
computed from the text, never written by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokspec import Encoder, Encoding, EngineInfo, InvalidTextError, TokspecError
from tokspec.diff import (
    check_pair,
    compare,
    dumps_record,
    format_comparison,
    make_record,
    record_name,
    save_counterexample,
    token_window,
)
from tokspec.minimize import ddmin, minimize_text


class CharEngine(Encoder):
    """One token per character, id = code point."""

    def __init__(self, name: str = "toy:chars", kind: str = "tokenizer") -> None:
        self.info = EngineInfo(name, kind, "toy", "0", None)  # type: ignore[arg-type]

    def _encode(self, text: str) -> Encoding:
        ids = None if self.info.kind == "pretokenizer" else [ord(c) for c in text]
        return Encoding.of(ids, [(i, i + 1) for i in range(len(text))])


class WrongIdForX(CharEngine):
    def _encode(self, text: str) -> Encoding:
        enc = super()._encode(text)
        assert enc.ids is not None
        return Encoding.of([i + 1 if i == ord("x") else i for i in enc.ids], enc.offsets)


class MergesAB(CharEngine):
    """Like CharEngine but "ab" is one token (id 1000)."""

    def _encode(self, text: str) -> Encoding:
        ids, offsets, i = [], [], 0
        while i < len(text):
            n = 2 if text.startswith("ab", i) else 1
            ids.append(1000 if n == 2 else ord(text[i]))
            offsets.append((i, i + n))
            i += n
        return Encoding.of(ids, offsets)


class DropsSpaces(CharEngine):
    def _encode(self, text: str) -> Encoding:
        keep = [i for i, c in enumerate(text) if c != " "]
        return Encoding.of([ord(text[i]) for i in keep], [(i, i + 1) for i in keep])


class ByteOffsets(CharEngine):
    """Right ids, but offsets counted in UTF-8 bytes, clamped to the text (a classic bug)."""

    def _encode(self, text: str) -> Encoding:
        offsets, pos = [], 0
        for c in text:
            n = len(c.encode())
            offsets.append((min(pos, len(text)), min(pos + n, len(text))))
            pos += n
        return Encoding.of([ord(c) for c in text], offsets)


class Raises(CharEngine):
    def _encode(self, text: str) -> Encoding:
        if "!" in text:
            raise RuntimeError("boom on bang")
        return super()._encode(text)


class OutOfRange(CharEngine):
    def _encode(self, text: str) -> Encoding:
        return Encoding.of([1], [(0, len(text) + 1)])


A = CharEngine()


@pytest.mark.parametrize(("engine", "text", "classification", "index"), [
    (WrongIdForX("toy:x"), "abxd", "same segmentation, different ids", 2),
    (MergesAB("toy:ab"), "zzab", "different segmentation", 2),
    (DropsSpaces("toy:sp"), "a b", "decoded text differs", 1),
    (ByteOffsets("toy:bytes"), "abéab", "same ids, different offsets", 2),
    (Raises("toy:raise"), "hi!", "engine fault", None),
    (OutOfRange("toy:range"), "abc", "engine fault", None),
], ids=lambda v: v if isinstance(v, str) else None)
def test_classification_and_first_divergence(engine: Encoder, text: str, classification: str,
                                             index: int | None) -> None:
    c = compare(A, engine, text)
    assert not c.agree
    assert c.classification == classification
    assert c.index == index
    reversed_c = compare(engine, A, text)
    assert (reversed_c.classification, reversed_c.index) == (classification, index)


def test_agreement_requires_ids_and_offsets() -> None:
    for text in ["", "abc", "é🙂\x00\n"]:
        assert compare(A, CharEngine("toy:other"), text).agree
    assert compare(A, ByteOffsets("toy:b"), "abc").agree  # ASCII: bytes == chars
    assert not compare(A, ByteOffsets("toy:b"), "éa").agree


def test_prefix_divergence_is_at_the_shorter_length() -> None:
    c = compare(A, DropsSpaces("toy:sp"), "ab ")
    assert c.index == 2 and c.classification == "decoded text differs"


def test_fault_message_names_exception() -> None:
    c = compare(A, Raises("toy:raise"), "!")
    assert c.b.fault is not None and "RuntimeError" in c.b.fault and "boom" in c.b.fault
    assert c.a.encoding is not None and c.a.fault is None


def test_text_domain_is_checked_before_engines_run() -> None:
    with pytest.raises(InvalidTextError):
        compare(A, A, "a\ud800")


def test_tokenizer_vs_pretokenizer_is_a_usage_error() -> None:
    with pytest.raises(TokspecError, match="pretokenizer"):
        check_pair(A, CharEngine("toy:pre", kind="pretokenizer"))
    pre = CharEngine("toy:pre", kind="pretokenizer")
    assert compare(pre, CharEngine("toy:pre2", kind="pretokenizer"), "ab").agree


def test_window_bounds_and_content() -> None:
    text = "0123456789"
    enc = A.encode(text)
    window = token_window(A, text, enc, 0, 3)
    assert [t["index"] for t in window] == [0, 1, 2, 3]
    window = token_window(A, text, enc, 9, 2)
    assert [t["index"] for t in window] == [7, 8, 9]
    assert all(t["text"] == text[t["offsets"][0]:t["offsets"][1]] for t in window)


def test_record_fields(tmp_path: Path) -> None:
    b = MergesAB("toy:ab")
    c = compare(A, b, "xxab yy")
    record = make_record(A, b, c, reproduce="cmd")
    assert record["text"] == "xxab yy"
    assert bytes.fromhex(record["text_utf8_hex"]).decode() == record["text"]
    assert [e["name"] for e in record["engines"]] == ["toy:chars", "toy:ab"]
    assert record["first_divergence"]["index"] == 2
    assert record["first_divergence"]["a"]["text"] == "a"
    assert record["first_divergence"]["b"]["text"] == "ab"
    assert record["outputs"]["a"]["ids"] == [ord(ch) for ch in "xxab yy"]
    assert record["classification"] == "different segmentation"
    assert json.loads(dumps_record(record)) == record


def test_save_is_content_addressed_and_replaces_atomically(tmp_path: Path) -> None:
    b = WrongIdForX("toy:x")
    c = compare(A, b, "x")
    p1 = save_counterexample(A, b, c, tmp_path)
    p2 = save_counterexample(A, b, c, tmp_path)
    assert p1 == p2 and p1.name == record_name(A, b, "x")
    assert sorted(f.name for f in tmp_path.iterdir()) == [p1.name]  # no temp files left
    stored = json.loads(p1.read_text(encoding="utf-8"))
    assert stored == make_record(A, b, c, reproduce=stored["reproduce"])
    assert stored["reproduce"].endswith(str(p1)) and "toy:x" in stored["reproduce"]


def test_format_shows_both_windows_and_marks_divergence() -> None:
    b = MergesAB("toy:ab")
    out = format_comparison(A, b, compare(A, b, "zzab"))
    assert "different segmentation" in out and "first divergence at token #2" in out
    assert "A toy:chars" in out and "B toy:ab" in out
    assert "> #2" in out and "id=1000" in out
    fault = format_comparison(A, Raises("toy:r"), compare(A, Raises("toy:r"), "!"))
    assert "FAULT RuntimeError: boom on bang" in fault


# ----------------------------------------------------------------------------- minimize


def test_minimize_finds_the_single_cause() -> None:
    text = "x" * 500 + "é" + "y" * 500
    assert minimize_text(text, lambda t: "é" in t) == "é"


def test_minimize_simplifies_unneeded_characters() -> None:
    # Fails whenever there are two characters, the second a newline: the first can become 'a'.
    small = minimize_text("QQQ\u2603\nZZ", lambda t: len(t) >= 2 and "\n" in t[1:])
    assert small == "a\n"


def test_minimize_rejects_passing_input_and_bad_budget() -> None:
    with pytest.raises(ValueError, match="nothing to minimize"):
        minimize_text("abc", lambda t: False)
    with pytest.raises(ValueError, match="max_tests"):
        minimize_text("abc", lambda t: True, max_tests=0)


def test_minimize_respects_budget() -> None:
    calls = []

    def fails(t: str) -> bool:
        calls.append(t)
        return "a" in t and "b" in t

    small = minimize_text("a" + "x" * 300 + "b", fails, max_tests=5)
    assert fails(small)
    assert len(calls) <= 5 + 2 + 1  # budget, the initial check, "" and the check above


@given(st.text(alphabet="abc \n", max_size=60), st.sampled_from(["ab", "a a", "\n\n", "cc"]))
def test_hyp_ddmin_is_one_minimal(text: str, needle: str) -> None:
    text = text + needle

    def fails(t: str) -> bool:
        return needle in t

    small = ddmin(text, fails)
    assert fails(small)
    assert all(not fails(small[:i] + small[i + 1:]) for i in range(len(small)))
    assert small == needle
