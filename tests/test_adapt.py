"""tokspec.adapt: ids-returning libraries as engines, ids-only comparison, the equal-ids label."""

from __future__ import annotations

import io
import unicodedata
from argparse import Namespace

import numpy as np
import pytest
import tiktoken

import tokspec
from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.adapt import normalized_origins
from tokspec.diff import compare

TEXTS = ["hello world", "naïve café 🙂 的的 x", "  \n\r\n\t a'S b'll", "é" * 7 + "🙂" * 3,
         "\u0915\u094d\u0937 한국어 ٣٤٥", "x\x00y\u2028z"]


def _cl100k() -> tiktoken.Encoding:
    """tiktoken's cl100k_base from the vocabulary tokspec ships (tiktoken.get_encoding needs the network)."""
    from tokspec.spec.pretok import cl100k_pattern
    from tokspec.formats.vocab import load_named_tiktoken

    return tiktoken.Encoding("cl100k", pat_str=cl100k_pattern(),
                             mergeable_ranks=load_named_tiktoken("cl100k_base").ranks, special_tokens={})


@pytest.fixture(scope="module")
def enc() -> tiktoken.Encoding:
    return _cl100k()


def test_three_line_adapter_agrees_with_the_production_adapter(enc: tiktoken.Encoding) -> None:
    mine = tokspec.engine_from_ids(enc.encode_ordinary, enc.decode_single_token_bytes, name="mine", decode=enc.decode)
    prod = load_engine("tiktoken:cl100k_base")
    for text in TEXTS:
        c = compare(mine, prod, text)
        assert c.agree, (text, c.classification)
    assert mine.token_piece(enc.encode_ordinary(" world")[0]) == " world"
    assert mine.decode(enc.encode_ordinary("abc")) == "abc"  # type: ignore[attr-defined]


def test_adapter_offsets_match_a_slow_oracle(enc: tiktoken.Encoding) -> None:
    table = {i: enc.decode_single_token_bytes(i) for i in range(100)}  # a dict works as token_bytes too
    text = "🙂é!"
    ids = enc.encode_ordinary(text)
    lookup = {**table, **{i: enc.decode_single_token_bytes(i) for i in ids}}
    e = tokspec.engine_from_ids(enc.encode_ordinary, lookup, name="dict").encode(text)
    pos, want = 0, []  # oracle: character of the first byte to one past the character of the last
    owner = [i for i, ch in enumerate(text) for _ in ch.encode()]
    for i in ids:
        n = len(lookup[i])
        want.append((owner[pos], owner[pos + n - 1] + 1))
        pos += n
    assert list(e.offsets) == want


def test_token_bytes_that_do_not_spell_the_text_is_a_fault(enc: tiktoken.Encoding) -> None:
    wrong = tokspec.engine_from_ids(lambda t: enc.encode_ordinary(t + "x"), enc.decode_single_token_bytes, name="w")
    c = compare(wrong, load_engine("tiktoken:cl100k_base"), "abc")
    assert c.classification == "engine fault" and "token bytes add up to 4 bytes, the text has 3" in str(c.a.fault)


def test_nfc_library_offsets_map_back_to_the_original(enc: tiktoken.Encoding) -> None:
    def nfc_encode(text: str) -> list[int]:
        return enc.encode_ordinary(unicodedata.normalize("NFC", text))

    mine = tokspec.engine_from_ids(nfc_encode, enc.decode_single_token_bytes, name="nfc", normalize="NFC")
    text = "cafe\u0301 e\u0301\u0301x \ufb01"  # decomposed é (two marks), a ligature NFC keeps
    out = mine.encode(text)
    assert list(out.ids or ()) == nfc_encode(text)
    # every original character is covered, starts never decrease, the composed é covers e + U+0301
    covered = set().union(*(range(s, e) for s, e in out.offsets))
    assert covered == set(range(len(text)))
    assert [s for s, _ in out.offsets] == sorted(s for s, _ in out.offsets)
    assert any(s <= 3 and e >= 5 for s, e in out.offsets)
    # on NFC text it is the plain adapter
    assert compare(mine, load_engine("tiktoken:cl100k_base"), "naïve café").agree


def test_normalized_origins() -> None:
    assert normalized_origins("e\u0301x", "NFC") == ("\u00e9x", [(0, 2), (2, 3)])
    assert normalized_origins("\ufb01", "NFKC") == ("fi", [(0, 1), (0, 1)])
    assert normalized_origins("\u1100\u1161", "NFC")[1] == [(0, 2)]  # Hangul L + V compose
    with pytest.raises(ValueError, match="normalize="):
        normalized_origins("x", "NFX")  # type: ignore[arg-type]


def test_byte_spans_and_char_offsets_adapters(enc: tiktoken.Encoding) -> None:
    prod = load_engine("tiktoken:cl100k_base")

    def spans(text: str) -> tuple[list[int], list[tuple[int, int]]]:
        ids = enc.encode_ordinary(text)
        out, pos = [], 0
        for i in ids:
            n = len(enc.decode_single_token_bytes(i))
            out.append((pos, pos + n))
            pos += n
        return ids, out

    by_bytes = tokspec.engine_from_byte_spans(spans, name="spans")
    by_chars = tokspec.engine_from_offsets(lambda t: (prod.encode(t).ids, prod.encode(t).offsets), name="chars")
    for text in TEXTS:
        assert compare(by_bytes, prod, text).agree
        assert compare(by_chars, prod, text).agree


class _ShiftedOffsets(Encoder):
    """The right ids, offsets of another convention (every token also covers the previous character)."""

    def __init__(self) -> None:
        self.inner = load_engine("tiktoken:cl100k_base")
        self.info = EngineInfo("shifted", "tokenizer", "test", "0", None)

    def _encode(self, text: str) -> Encoding:
        e = self.inner.encode(text)
        return Encoding.of(e.ids, [(max(0, s - 1), max(0, s - 1)) for s, _ in e.offsets])


def test_equal_ids_are_never_labelled_decoded_text_differs() -> None:
    c = compare(_ShiftedOffsets(), load_engine("tiktoken:cl100k_base"), "ab cd ef")
    assert c.classification == "same ids, different offsets"


def test_ids_only_engine_compares_on_ids_with_a_label() -> None:
    prod = load_engine("tiktoken:cl100k_base")
    shifted = tokspec.ids_only(_ShiftedOffsets())
    assert shifted.info.offsets is False and prod.info.offsets is True
    assert compare(shifted, prod, "ab cd ef 🙂").agree
    enc = _cl100k()
    lossy = tokspec.ids_only(lambda t: enc.encode_ordinary(t.lower()), name="lower")
    c = compare(lossy, prod, "Ab")
    assert c.classification == "different ids" and c.index == 0
    decoding = tokspec.ids_only(lambda t: enc.encode_ordinary(t.lower()), name="lower", decode=enc.decode)
    exact = tokspec.ids_only(enc.encode_ordinary, name="exact", decode=enc.decode)
    assert compare(decoding, exact, "Ab").classification == "decoded text differs"
    with pytest.raises(ValueError, match="name="):
        tokspec.ids_only(lambda t: [])


def _diff(*argv: str, compare_on: str = "all") -> tuple[int, str]:
    from tokspec.app.cli_diff import add_arguments, run
    import argparse

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([*argv, "--workers", "1", "--quiet", "--compare", compare_on])
    out, err = io.StringIO(), io.StringIO()
    return run(args, out=out, err=err), out.getvalue() + err.getvalue()


def test_cli_compare_ids(tmp_path) -> None:  # type: ignore[no-untyped-def]
    inputs = tmp_path / "in.txt"
    inputs.write_text("naïve café\n🙂 x\nplain ascii\n", encoding="utf-8")
    bug = "tokspec.fuzz.authored_bugs:offsets_in_bytes"
    rc, text = _diff("tiktoken:cl100k_base", bug, "--inputs", str(inputs), "--report", str(tmp_path / "r"))
    assert rc == 1 and "2 disagreed" in text  # offsets in bytes: outside the text, or wrong
    rc, text = _diff("tiktoken:cl100k_base", bug, "--inputs", str(inputs), "--report", str(tmp_path / "r2"),
                     compare_on="ids")
    assert rc == 0 and "note: compared on ids only (--compare ids)" in text and "3 agreed" in text
    rc, text = _diff("tiktoken:cl100k_base", "tokspec.fuzz.authored_bugs:digits_by_two", "--inputs", str(inputs),
                     "--report", str(tmp_path / "r3"), compare_on="ids")
    assert rc == 0  # no digits in these inputs
