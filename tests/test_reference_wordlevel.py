"""reference/wordlevel.py: HF WordLevel models (whole pretokens looked up, else unk_token) equal HF
``tokenizers`` (through ``hf:``) on tiny models with several normalizers and pretokenizers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokspec
from tokspec.engines._hf import HfEngine
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.reference.wordlevel import WordLevelEncoder
from tokspec.formats.vocab import TokenizerJson

VOCAB = {"[UNK]": 0, "ab": 1, "abc": 2, "a": 3, ",": 4, "12": 5, "1": 6, "é": 7, "b": 8}
SETUPS: dict[str, tuple[Any, Any]] = {
    "whitespace": (None, {"type": "Whitespace"}),
    "bert": ({"type": "BertNormalizer", "clean_text": True, "handle_chinese_chars": True,
              "strip_accents": None, "lowercase": True}, {"type": "BertPreTokenizer"}),
    "digits-nfc": ({"type": "NFC"}, {"type": "Sequence", "pretokenizers": [
        {"type": "WhitespaceSplit"}, {"type": "Digits", "individual_digits": True}]}),
}


def _data(normalizer: Any, pre: Any, unk: str | None = "[UNK]") -> dict[str, Any]:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "normalizer": normalizer,
            "pre_tokenizer": pre, "post_processor": None, "decoder": None,
            "model": {"type": "WordLevel", "vocab": VOCAB, "unk_token": unk}}


@pytest.mark.parametrize("setup", sorted(SETUPS))
@settings(max_examples=30, deadline=None)
@given(text=st.text(alphabet="abcAB ,12é\u0301e\u4e2d\t", max_size=14))
def test_hyp_wordlevel_equals_hf(setup: str, text: str) -> None:
    tj = TokenizerJson("w.json", "0" * 64, _data(*SETUPS[setup]))
    ref, prod = WordLevelEncoder(tj, "reference:w.json"), HfEngine("hf:w.json", tj)
    for t in (text, "ab abc, 12 x", "AB e\u0301"):
        assert ref.encode(t) == prod.encode(t), t


def test_engine_name_and_refusals(tmp_path: Path) -> None:
    path = tmp_path / "w.json"
    path.write_text(json.dumps(_data(None, {"type": "Whitespace"})), encoding="utf-8")
    engine = tokspec.load_engine(f"reference:{path}")
    assert type(engine) is WordLevelEncoder and engine.info.library == "tokspec.reference.wordlevel"
    assert list(engine.encode("ab zz").ids or ()) == [1, 0]
    with pytest.raises(VocabularyError) as info:
        WordLevelEncoder(TokenizerJson("w.json", "0" * 64, _data(None, {"type": "Whitespace"}, None)), "r")
    assert str(info.value) == "w.json: a WordLevel model needs an unk_token string, got None (HF refuses the file too)"
    missing = WordLevelEncoder(TokenizerJson("w.json", "0" * 64, _data(None, {"type": "Whitespace"}, "<unk>")), "r")
    with pytest.raises(VocabularyError) as info:
        missing.encode("zz")
    assert str(info.value) == "WordLevel: 'zz' is not in the vocabulary and unk_token '<unk>' is not either"
    byte_level = _data(None, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": True})
    with pytest.raises(UnsupportedComponentError) as info2:
        WordLevelEncoder(TokenizerJson("w.json", "0" * 64, byte_level), "r")
    assert str(info2.value) == "w.json: WordLevel with a ByteLevel pre_tokenizer is not supported"
