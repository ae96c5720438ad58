"""Compiled one-character HF normalizers (``Lowercase``, ``StripAccents``: ``tokspec.fast._hf_char_maps``)
and ``Replace`` of a run (``" {2,}"``): the tables equal their definitions, ``StripAccents``' marks are
HF's (finding ``hf-unicode-tables-marks``: Python's M* is not), the compiled pipeline equals the
general path and HF ``tokenizers`` (ids and offsets). Fast in interpreted mode (a mutation killer).

Regenerate the finding's file with ``python tests/test_fast_hf_maps.py``."""

from __future__ import annotations

import json
import sys
import unicodedata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from tokspec import _hf_unicode as hfu
from tokspec.app.bench.normalizing import normalizing_texts
from tokspec.fast import _hf_char_maps as maps
from tokspec.fast._hf_compiled import _RUN, compiled_plan
from tokspec.formats.hf_pipeline import is_hf_mark, strip_accents
from tokspec.formats.normalize import Aligned

from _hf_unigram_checks import assert_compiled_equals_reference_and_hf
from test_fast_hf_norm import _compiled, _data, _general, _hf_variant

FINDING = Path(__file__).resolve().parents[1] / "corpora" / "reference-wp-unigram" / "findings" / "hf-unicode-tables-marks.json"

SPECS: list[Any] = [
    {"type": "Lowercase"}, {"type": "StripAccents"},
    {"type": "Sequence", "normalizers": [{"type": "NFKD"}, {"type": "StripAccents"}, {"type": "Lowercase"}]},
    {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "},
    {"type": "Sequence", "normalizers": [{"type": "Replace", "pattern": {"Regex": "[ab]+"}, "content": "\u00b7\u00b7"},
                                         {"type": "Replace", "pattern": {"Regex": "\\p{Zs}{3,}"}, "content": ""},
                                         {"type": "Lowercase"}]},
    # what HF's SentencePieceUnigramTokenizer writes (tokenizers.implementations)
    {"type": "Sequence", "normalizers": [{"type": "Nmt"}, {"type": "NFKC"},
                                         {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
]
PIECES = list("aAbB \u00c9e\u0301\u0323\u07fd\u1cf2\u1cf3\u0130\u00df\u03a3\u1e9e\u2126\u3000\u00a0\u1c89\U00010d50"
              "\U0001e900\u0903\u20dd\x01\x7f\x9f\t\n\r\u200b\u2581\ufffd\ufb01") + ["  ", "   ", "aab", "\u3000 \u00a0", "\r\n"]
TEXTS = st.lists(st.sampled_from(PIECES), min_size=0, max_size=14).map("".join)


@given(TEXTS, st.sampled_from(range(len(SPECS))), st.sampled_from(["always", "never"]))
@example("\u0130 \u00c9", 2, "always")   # Lowercase grows a character; NFKD then StripAccents
@example("a  b   c", 3, "always")        # runs of 2 and 3 spaces, one space left alone
@example("ab \u3000\u00a0 aab", 4, "never")
@example("xy  z \u3000 w", 4, "always")  # runs of two Zs (too short for {3,}) after the start
@example("\u07fd\u1cf2e\u0301", 1, "always")  # HF's marks, not Python's (the finding)
@example("\x01a\r\n\u2581 \u200b\ufb01\x9f", 5, "always")  # Nmt deletes, spaces; then the run
def test_hyp_compiled_equals_general(text: str, spec: int, scheme: str) -> None:
    data = _data(SPECS[spec], scheme)
    assert _compiled(data, text) == _general(data, text)


def test_tables_hold_their_definitions() -> None:
    """Every code point with an entry decodes to its mapping; a sample of the others maps to itself."""
    for kind, fn in maps.MAPS.items():
        start, flat = maps.char_map(kind)
        assert len(start) == 0x110000
        mapped = np.flatnonzero(start >= 0)
        assert len(mapped) >= 45  # Nmt 45, StripAccents and Lowercase over a thousand
        for cp in mapped.tolist():
            at = int(start[cp])
            assert "".join(map(chr, flat[at + 1:at + 1 + flat[at]].tolist())) == fn(chr(cp)) != chr(cp)
        for cp in [*range(0, 0xD800, 11), *range(0xE000, 0x110000, 97)]:
            assert (start[cp] >= 0) == (fn(chr(cp)) != chr(cp))
    assert maps.MAPS["Lowercase"]("\u0130") == "i\u0307" and maps.MAPS["StripAccents"]("\u0301") == ""
    rows, flat = maps.stacked(["StripAccents", "Lowercase"])
    assert rows.shape == (2, 0x110000)
    assert flat[rows[1, ord("A")]] == 1 and flat[rows[1, ord("A")] + 1] == ord("a") and flat[rows[0, 0x301]] == 0
    assert maps.stacked([])[0].shape == (1, 1)


def test_run_patterns() -> None:
    for source, least in ((" {2,}", 2), ("[ab]+", 1), ("\\p{Zs}{3,}", 3), ("\\.{2,}", 2), ("x{10,}", 10)):
        m = _RUN.fullmatch(source)
        assert m is not None and (1 if m.group("plus") else int(m.group("k"))) == least
    for source in (" {2,}?", " {2,3}", " {0,}", "ab+", "\\s{2,}", " *", ". {2,}", "(a)+", "{2,}"):
        assert _RUN.fullmatch(source) is None or compiled_plan(_data(
            {"type": "Replace", "pattern": {"Regex": source}, "content": ""})) is None, source


def test_hf_marks_equal_hf_strip_accents() -> None:
    """``is_hf_mark`` equals HF's ``StripAccents`` on every Python-M* character, the extras, and a
    sample of all others (``tests/test_unigram_model.py`` style: the tables cannot go stale)."""
    tokenizers = pytest.importorskip("tokenizers")
    strip = tokenizers.normalizers.StripAccents()
    marks = [cp for cp in range(0x110000) if not 0xD800 <= cp < 0xE000 and unicodedata.category(chr(cp))[0] == "M"]
    extra = [cp for lo, hi in hfu.MARK_EXTRA for cp in range(lo, hi + 1)]
    for cp in [*marks, *extra, *range(0, 0xD800, 13), *range(0xE000, 0x110000, 101)]:
        assert is_hf_mark(chr(cp)) == (strip.normalize_str(chr(cp)) == ""), hex(cp)


def test_nmt_equals_hf_on_every_code_point() -> None:
    """``nmt_char`` is HF's ``Nmt`` on every code point (one call on all of them, separated by a
    character Nmt keeps)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokspec.formats.hf_pipeline import nmt_char
    chars = [chr(c) for c in [*range(0xD800), *range(0xE000, 0x110000)] if c != ord("a")]
    nmt = tokenizers.normalizers.Nmt()
    got = nmt.normalize_str("a".join(chars) + "a").split("a")[:-1]
    assert len(got) == len(chars) and [nmt_char(c) for c in chars] == got
    assert nmt.normalize_str("a") == nmt_char("a") == "a"


def _finding() -> dict[str, Any]:
    """HF's StripAccents vs Python's General_Category M* (what tokspec's reference used before)."""
    tokenizers = pytest.importorskip("tokenizers")
    strip = tokenizers.normalizers.StripAccents()
    cases = []
    for text in ("a\u07fdb", "a\u1cf2b"):
        python = "".join(c for c in text if not unicodedata.category(c).startswith("M"))
        cases.append({"input": text, "a": python, "b": strip.normalize_str(text),
                      "reference_reproduces_b": strip_accents(Aligned.of(text)).text == strip.normalize_str(text)})
    return {"engines": ["python unicodedata General_Category M* (Unicode 14.0)", "hf tokenizers StripAccents"],
            "classification": "normalized text differs", "cases": cases,
            "counts": {"kept_by_hf": sum(hi - lo + 1 for lo, hi in hfu.MARK_UNKNOWN),
                       "stripped_by_hf_only": sum(hi - lo + 1 for lo, hi in hfu.MARK_EXTRA)}}


def test_finding_hf_unicode_tables_marks_replays() -> None:
    stored = json.loads(FINDING.read_text(encoding="utf-8"))
    assert _finding() == stored
    assert all(case["a"] != case["b"] and case["reference_reproduces_b"] for case in stored["cases"])


@pytest.mark.parametrize("spec", [0, 2, 3, 5])
def test_equals_hf_tokenizers(spec: int) -> None:
    """ids equal HF's, and in library mode the offsets equal HF's own."""
    fast, hf = _hf_variant(SPECS[spec])
    fast.offsets = "library"
    for text in normalizing_texts(20 + spec, 5) + ["\u0130stanbul  \u00c9COLE \u07fd\u1cf2x", "A   B  c",
                                                   "\x01a\r\n\u2581 \u200bb\ufb01\x9f  \t"]:
        want = hf.encode(text, add_special_tokens=False)
        got = fast.encode(text)
        assert (list(got.ids), list(got.offsets)) == (want.ids, want.offsets), text
        assert fast.encode_ids(text).tolist() == want.ids, text


if __name__ == "__main__":
    FINDING.write_text(json.dumps(_finding(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print("written", FINDING, file=sys.stderr)


def test_hf_trained_sentencepiece_unigram_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Unigram model trained offline by HF's own ``SentencePieceUnigramTokenizer`` (normalizer
    Nmt, NFKC, Replace(" {2,}"); Metaspace): ``fast:PATH`` never takes the Python path, and its ids
    and offsets equal HF's (library mode) and ``reference:``'s (contract)."""
    tokenizers = pytest.importorskip("tokenizers")
    from tokspec.fast.unigram_datrie import datrie_encoder
    from tokspec.reference.unigram import unigram_encoder_from_tokenizer_json
    trainer = tokenizers.SentencePieceUnigramTokenizer()
    trainer.train_from_iterator(normalizing_texts(3, 400), vocab_size=400, show_progress=False,
                                special_tokens=["<unk>"], unk_token="<unk>")
    path = tmp_path / "hf-unigram.json"
    trainer.save(str(path))
    fast = datrie_encoder(str(path))
    assert fast._compiled is not None
    hf = tokenizers.Tokenizer.from_file(str(path))
    ref = unigram_encoder_from_tokenizer_json(path, "r")
    texts = normalizing_texts(4, 8) + ["\x01a\r\nb\u200b  c\ufffd", "  \uff21\u2460 x\t"]
    assert_compiled_equals_reference_and_hf(fast, ref, hf, texts, monkeypatch)
