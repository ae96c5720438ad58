"""reference/wordpiece.py and bert_normalizer.py read every option of a WordPiece tokenizer.json
as HF ``tokenizers`` does: the four BertNormalizer switches, ``unk_token``,
``continuing_subword_prefix`` and ``max_input_chars_per_word`` (tiny vocabularies built with HF's
own API, compared ids AND offsets on short adversarial texts), and refuse what they do not
implement with an error naming the file and the component."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

from tokspec import TokspecError
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.reference.bert_normalizer import BertNormalizerConfig
from tokspec.reference.wordpiece import WordPieceConfig, WordPieceReference, wordpiece_encoder_from_tokenizer_json

#: characters that each switch of the normalizer changes: controls and NUL (clean_text), CJK
#: (handle_chinese_chars), accents precomposed and combining (strip_accents), capitals (lowercase)
ALPHABET = "aAbB \t\n,!\u00e9\u00c9e\u0301\u4e00\u4e01\x00\x07\ufffd\u00ad\u3000x"
TEXTS = ["Ab ab", "\u00c9t\u00e9 e\u0301", "a\u4e00b\u4e01", "a\x00b\x07c\ufffdd", "AB,ab!", "x\u00ady\u3000z",
         "aaaaaa bbbbbbb", "\tA\n", "xa xb", "ba\u00e9"]


def _vocab(unk: str, prefix: str) -> dict[str, int]:
    """Every normalized character of ALPHABET, alone and continued, plus a few longer pieces."""
    chars = sorted({c for c in ALPHABET + "eE\u0301" if not c.isspace()})
    entries = [unk, *chars, *(prefix + c for c in chars), "ab", prefix + "ab", "aaa", prefix + "aa"]
    return {p: i for i, p in enumerate(dict.fromkeys(entries))}


def _write_tokenizer(tmp_path: Path, *, unk: str = "[UNK]", prefix: str = "##", max_chars: int = 100,
                     normalizer: Any = None, name: str = "wp.json") -> Path:
    tok = Tokenizer(models.WordPiece(_vocab(unk, prefix), unk_token=unk, continuing_subword_prefix=prefix,
                                     max_input_chars_per_word=max_chars))
    tok.normalizer = normalizer if normalizer is not None else normalizers.BertNormalizer()
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    path = tmp_path / name
    path.write_text(tok.to_str(), encoding="utf-8")
    return path


def _assert_same_as_hf(path: Path, texts: list[str]) -> None:
    hf = Tokenizer.from_file(str(path))
    ref = wordpiece_encoder_from_tokenizer_json(path, "reference:wp", offsets="library")
    for text in texts:
        enc = hf.encode(text, add_special_tokens=False)
        got = ref.encode(text)
        assert (got.ids, got.offsets) == (tuple(enc.ids), tuple(map(tuple, enc.offsets))), text
        assert got.pieces == tuple(enc.tokens), text


SWITCHES = list(itertools.product([False, True], [False, True], [None, False, True], [False, True]))


@pytest.mark.parametrize("clean, chinese, strip, lower", SWITCHES)
def test_every_normalizer_switch_equals_hf(tmp_path: Path, clean: bool, chinese: bool, strip: bool | None,
                                          lower: bool) -> None:
    norm = normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                                      lowercase=lower)
    _assert_same_as_hf(_write_tokenizer(tmp_path, normalizer=norm), TEXTS)


@given(st.text(st.sampled_from(ALPHABET), max_size=12), st.sampled_from(SWITCHES))
def test_hyp_normalizer_switches_equal_hf(text: str, switches: tuple[bool, bool, bool | None, bool]) -> None:
    clean, chinese, strip, lower = switches
    hf = normalizers.BertNormalizer(clean_text=clean, handle_chinese_chars=chinese, strip_accents=strip,
                                    lowercase=lower)
    from tokspec.reference.bert_normalizer import bert_normalize
    ours = bert_normalize(text, BertNormalizerConfig(clean, chinese, strip, lower))
    assert ours.text == hf.normalize_str(text)


def test_normalizer_json_defaults_are_hfs() -> None:
    """A BertNormalizer object with no switches: HF's defaults (all on, strip_accents as lowercase)."""
    cfg = BertNormalizerConfig.from_json({"type": "BertNormalizer"})
    assert cfg == BertNormalizerConfig(True, True, None, True, "hf")
    assert BertNormalizerConfig.from_json({"type": "BertNormalizer"}, cjk_ranges="bert").cjk_ranges == "bert"
    spelled = {"type": "BertNormalizer", "clean_text": False, "handle_chinese_chars": False,
               "strip_accents": True, "lowercase": False}
    assert BertNormalizerConfig.from_json(spelled) == BertNormalizerConfig(False, False, True, False)


@pytest.mark.parametrize("unk, prefix", [("<unk>", "@@"), ("[UNK]", "##"), ("?", "")])
def test_unk_token_and_prefix_are_read_from_the_file(tmp_path: Path, unk: str, prefix: str) -> None:
    path = _write_tokenizer(tmp_path, unk=unk, prefix=prefix)
    _assert_same_as_hf(path, [*TEXTS, "q \u00e9q ab?", "zz"])
    ref = wordpiece_encoder_from_tokenizer_json(path, "reference:wp")
    assert (ref.cfg.unk_token, ref.cfg.prefix) == (unk, prefix)


@pytest.mark.parametrize("max_chars", [0, 1, 3, 5])
def test_max_input_chars_per_word_is_read_from_the_file(tmp_path: Path, max_chars: int) -> None:
    path = _write_tokenizer(tmp_path, max_chars=max_chars)
    _assert_same_as_hf(path, ["a ab aaa aaaa aaaaa aaaaaa", "b\u00e9 x"])
    assert wordpiece_encoder_from_tokenizer_json(path, "reference:wp").cfg.max_chars == max_chars


def test_model_fields_default_to_hfs(tmp_path: Path) -> None:
    data = json.loads(_write_tokenizer(tmp_path).read_text(encoding="utf-8"))
    vocab = data["model"]["vocab"]
    data["model"] = {"type": "WordPiece", "vocab": vocab}
    path = tmp_path / "defaults.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    cfg = wordpiece_encoder_from_tokenizer_json(path, "r").cfg
    assert (cfg.unk_token, cfg.prefix, cfg.max_chars) == ("[UNK]", "##", 100)
    assert cfg.vocab == vocab


def test_negative_max_chars_is_refused() -> None:
    with pytest.raises(VocabularyError, match=r"^max_input_chars_per_word=-1 must be >= 0$"):
        WordPieceConfig({"[UNK]": 0}, max_chars=-1)
    assert WordPieceConfig({"[UNK]": 0}, max_chars=0).max_chars == 0


def test_unk_token_outside_the_vocab_is_named() -> None:
    with pytest.raises(VocabularyError, match=r"^WordPiece unk_token='<unk>' is not in the vocabulary$"):
        WordPieceConfig({"[UNK]": 0}, unk_token="<unk>")


def test_offsets_mode_is_checked_and_the_engine_describes_itself() -> None:
    cfg = WordPieceConfig({"[UNK]": 0, "a": 1, "##b": 2})
    with pytest.raises(TokspecError, match=r"^offsets='raw' must be 'contract' or 'library'$"):
        WordPieceReference(cfg, BertNormalizerConfig(), "wp", offsets="raw")
    engine = WordPieceReference(cfg, BertNormalizerConfig(), "wp", "f" * 64)
    assert engine.offsets == "contract"
    assert (engine.info.name, engine.info.kind, engine.info.vocab_sha256) == ("wp", "tokenizer", "f" * 64)
    assert engine.info.library == "tokspec.reference" and engine.info.library_version == "0"
    assert engine.info.description == "reference WordPiece, 3 entries"
    assert WordPieceReference(cfg, BertNormalizerConfig(), "wp").info.vocab_sha256 is None
    assert engine.encode("ab A").pieces == ("a", "##b", "a")


def _json_with(tmp_path: Path, **edit: Any) -> Path:
    data = json.loads(_write_tokenizer(tmp_path).read_text(encoding="utf-8"))
    for key, value in edit.items():
        if key == "model_type":
            data["model"]["type"] = value
        else:
            data[key] = value
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_unsupported_pipelines_are_named(tmp_path: Path) -> None:
    path = _json_with(tmp_path, pre_tokenizer={"type": "Whitespace"})
    with pytest.raises(UnsupportedComponentError,
                       match=rf"^{re.escape(str(path))}: pre_tokenizer type='Whitespace'; the WordPiece reference "
                             r"supports BertPreTokenizer only$"):
        wordpiece_encoder_from_tokenizer_json(path, "x")
    path = _json_with(tmp_path, pre_tokenizer=None)
    with pytest.raises(UnsupportedComponentError, match=r"pre_tokenizer type=None"):
        wordpiece_encoder_from_tokenizer_json(path, "x")
    flags = {"single_word": False, "lstrip": False, "rstrip": False, "normalized": False}
    added = [{"id": 0, "content": "[UNK]", "special": True, **flags},
             {"id": 1, "content": "hi", "special": False, **flags}]
    path = _json_with(tmp_path, added_tokens=added)
    with pytest.raises(UnsupportedComponentError, match=rf"^{re.escape(str(path))}: non-special added token 'hi'$"):
        wordpiece_encoder_from_tokenizer_json(path, "x")
    # HF refuses an entry without "special" (serde: missing field); so does the reference, by name
    path = _json_with(tmp_path, added_tokens=[{"id": 1, "content": "hi", **flags}])
    with pytest.raises(VocabularyError, match=r"added_tokens\[0\] is missing field 'special'$"):
        wordpiece_encoder_from_tokenizer_json(path, "x")
    path = _json_with(tmp_path, added_tokens=added[:1])  # a special added token is ordinary text: accepted
    assert wordpiece_encoder_from_tokenizer_json(path, "x").encode("ab").ids
    path = _json_with(tmp_path, normalizer={"type": "Lowercase"})
    with pytest.raises(UnsupportedComponentError,
                       match=r"^normalizer type='Lowercase': the WordPiece reference supports BertNormalizer only$"):
        wordpiece_encoder_from_tokenizer_json(path, "x")
    path = _json_with(tmp_path, normalizer=None)
    with pytest.raises(UnsupportedComponentError, match=r"normalizer type=None"):
        wordpiece_encoder_from_tokenizer_json(path, "x")


def test_a_non_wordpiece_model_is_named(tmp_path: Path) -> None:
    path = _json_with(tmp_path, model_type="BPE")
    with pytest.raises(VocabularyError, match=rf"^{re.escape(repr(str(path)))}: model.type='BPE', expected 'WordPiece'$"):
        wordpiece_encoder_from_tokenizer_json(path, "x")


def test_loader_takes_a_path_string_and_passes_the_options(tmp_path: Path) -> None:
    path = _write_tokenizer(tmp_path)
    engine = wordpiece_encoder_from_tokenizer_json(str(path), "reference:wp", offsets="library", cjk_ranges="bert")
    assert engine.offsets == "library" and engine.norm.cjk_ranges == "bert"
    assert engine.info.name == "reference:wp" and len(engine.info.vocab_sha256 or "") == 64
    assert engine.encode("a\U0002b840b").ids == engine.encode("a \U0002b840 b").ids  # Google's CJK range
