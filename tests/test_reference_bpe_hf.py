"""reference/bpe_hf.py against HF ``tokenizers`` on small BPE models trained here (ByteLevel,
Whitespace with prefix/suffix/unk, byte fallback, every Split behavior, added tokens), on the
converted cl100k file, and its refusal of components it does not implement."""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tokenizers import Tokenizer, models, pre_tokenizers, trainers

import tokspec
from tokspec.corpus import build_corpus
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.models import trained_model
from tokspec.reference.bpe_hf import HfBpeEncoder, bpe_word, bytes_to_unicode, model_from_json
from tokspec.formats.vocab import load_tokenizer_json

CORPUS = build_corpus()
TEXTS = CORPUS[::3]  # a third of the corpus per model keeps this file within its time budget


@functools.lru_cache(maxsize=2)
def _whitespace_bpe_json(affixes: bool = True) -> str:
    """A Whitespace-pretokenized BPE with ``[UNK]`` (and, with ``affixes``, the ``##`` prefix and
    ``</w>`` suffix), trained on corpus text with a small alphabet so unknown characters are common."""
    extra: dict[str, Any] = {"continuing_subword_prefix": "##", "end_of_word_suffix": "</w>"} if affixes else {}
    tok = Tokenizer(models.BPE(unk_token="[UNK]", **extra))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    trainer = trainers.BpeTrainer(vocab_size=400, special_tokens=["[UNK]"], limit_alphabet=60,
                                  show_progress=False, **extra)
    tok.train_from_iterator(CORPUS, trainer)
    return tok.to_str()


def _write(tmp_path: Path, data: dict[str, Any], name: str = "t.json") -> str:
    path = tmp_path / name
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return str(path)


def _assert_same_as_hf(path: str, texts: list[str]) -> None:
    ref = tokspec.load_engine(f"reference:{path}")
    prod = tokspec.load_engine(f"hf:{path}")
    for text in texts:
        assert ref.encode(text) == prod.encode(text), text


def test_bytes_to_unicode_is_hf_bytelevel_alphabet() -> None:
    table = bytes_to_unicode()
    assert sorted(table) == list(range(256))
    assert set(table.values()) == set(pre_tokenizers.ByteLevel.alphabet())
    assert table[ord(" ")] == "\u0120" and table[ord("a")] == "a"


def test_trained_bytelevel_model_equals_hf() -> None:
    _assert_same_as_hf(str(trained_model("hf-bpe")), CORPUS)


@pytest.mark.parametrize("fuse_unk", [False, True])
def test_whitespace_prefix_suffix_unk_model_equals_hf(tmp_path: Path, fuse_unk: bool) -> None:
    data = json.loads(_whitespace_bpe_json())
    data["model"]["fuse_unk"] = fuse_unk
    _assert_same_as_hf(_write(tmp_path, data), TEXTS)


def test_byte_fallback_model_equals_hf(tmp_path: Path) -> None:
    """Byte fallback without prefix/suffix (with them, HF falls back on the prefixed string:
    finding hf-byte-fallback-prefix)."""
    data = json.loads(_whitespace_bpe_json(affixes=False))
    vocab = data["model"]["vocab"]
    for b in range(256):
        vocab[f"<0x{b:02X}>"] = len(vocab)
    data["model"]["byte_fallback"] = True
    _assert_same_as_hf(_write(tmp_path, data), TEXTS)


@pytest.mark.parametrize("behavior", ["Isolated", "Removed", "MergedWithPrevious", "MergedWithNext"])
@pytest.mark.parametrize("invert", [False, True])
def test_split_behaviors_equal_hf(tmp_path: Path, behavior: str, invert: bool) -> None:
    data = json.loads(trained_model("hf-bpe").read_text(encoding="utf-8"))
    data["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\s+|\p{P}"}, "behavior": behavior, "invert": invert},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False}]}
    _assert_same_as_hf(_write(tmp_path, data), TEXTS)


def test_bytelevel_prefix_space_equals_hf_adapter(tmp_path: Path) -> None:
    """Same ids everywhere; same offsets, except that a token made only of the inserted prefix space
    covers no input, so the reference gives it an empty span where the HF library reports the next
    character's span (see the next test; the hf: adapter converts it to the empty span too)."""
    data = json.loads(trained_model("hf-bpe").read_text(encoding="utf-8"))
    data["pre_tokenizer"] = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": False,
                             "use_regex": True}
    path = _write(tmp_path, data)
    ref, prod = tokspec.load_engine(f"reference:{path}"), tokspec.load_engine(f"hf:{path}")
    rare_starts = ["\x00x", "\x01\x02", "\U0001f600 x", "\u0378", "\tx"]  # Ġ + a rare byte: no merge
    for text in [*TEXTS, *rare_starts, " x", "Hello", "a\u00e9 b"]:
        a, b = ref.encode(text), prod.encode(text)
        assert a.ids == b.ids, text
        for (s, e), hf_span in zip(a.offsets, b.offsets):
            assert (s, e) == hf_span or (s == e and hf_span == (s, s + 1) and text[s] != " "), text


def test_hf_library_gives_the_inserted_prefix_space_the_next_characters_span() -> None:
    """The library behaviour the reference departs from (a token of inserted text covers nothing)."""
    path = Path(__file__).resolve().parent.parent / "corpora/reference-bpe/vocabs/hf-bytelevel-prefix-space.json"
    hf = Tokenizer.from_file(str(path)).encode("\tx", add_special_tokens=False)
    ref = tokspec.load_engine(f"reference:{path}").encode("\tx")
    assert hf.tokens[0] == "\u0120" and hf.offsets[0] == (0, 1)
    assert ref.ids == tuple(hf.ids) and ref.offsets[0] == (0, 0)


def test_split_on_a_literal_string_equals_hf(tmp_path: Path) -> None:
    data = json.loads(trained_model("hf-bpe").read_text(encoding="utf-8"))
    data["pre_tokenizer"] = {"type": "Split", "pattern": {"String": "e"}, "behavior": "Isolated",
                             "invert": False}
    data["model"]["ignore_merges"] = True
    path = _write(tmp_path, data)
    ref, prod = tokspec.load_engine(f"reference:{path}"), tokspec.load_engine(f"hf:{path}")
    for text in ["eee", "hello,there", "e.e"]:  # printable ASCII only: no ByteLevel mapping here
        assert ref.encode(text) == prod.encode(text)


def test_non_special_added_tokens_equal_hf(tmp_path: Path) -> None:
    data = json.loads(trained_model("hf-bpe").read_text(encoding="utf-8"))
    n = len(data["model"]["vocab"])
    data["added_tokens"] = [
        {"id": n, "content": "the", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": True, "special": False},
        {"id": n + 1, "content": "<sep>", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False},
        {"id": n + 2, "content": "<sep>x", "single_word": False, "lstrip": False, "rstrip": False,
         "normalized": False, "special": False},
    ]
    texts = ["the<sep>theme", "<sep>xthe", "a<sep", "other <sep><sep>x the", *TEXTS[:20]]
    _assert_same_as_hf(_write(tmp_path, data), texts)


def test_duplicate_merge_takes_its_last_rank_as_hf_does(tmp_path: Path) -> None:
    vocab = {"a": 0, "b": 1, "c": 2, "ab": 3, "bc": 4}
    data = json.loads(trained_model("hf-bpe").read_text(encoding="utf-8"))
    data["pre_tokenizer"] = None
    data["model"] = {"type": "BPE", "vocab": vocab, "merges": ["a b", "b c", "a b"]}
    _assert_same_as_hf(_write(tmp_path, data), ["abc", "ab", "bcab"])


def test_bytelevel_reference_equals_hf_on_converted_cl100k() -> None:
    hfc = tokspec.load_engine("hf-converted:cl100k_base")
    ref = tokspec.load_engine("reference:hf-converted-cl100k_base")
    assert ref.info.name == "reference:hf-converted-cl100k_base"   # reports name it, not the file
    for text in TEXTS:
        assert ref.encode(text) == hfc.encode(text), text


def test_regex_dialect_reproduces_tiktoken_on_converted_cl100k() -> None:
    tj = load_tokenizer_json(tokspec.load_engine("hf-converted:cl100k_base").json_path)  # type: ignore[attr-defined]
    ref = HfBpeEncoder(tj, "r", dialect="regex")
    prod = tokspec.load_engine("tiktoken:cl100k_base")
    for text in TEXTS:
        assert ref.encode(text) == prod.encode(text), text


# ---- the merge loop on tiny models ----------------------------------------------------------------

@given(st.text("abc", max_size=10))
def test_hyp_bpe_word_spans_tile_the_word(word: str) -> None:
    model = model_from_json({"vocab": {"a": 0, "b": 1, "c": 2, "ab": 3, "abc": 4, "ca": 5},
                             "merges": [["a", "b"], ["c", "a"], ["ab", "c"]]})
    ends = [0, *[e for _, _, e in bpe_word(model, word)]]
    assert [s for _, s, _ in bpe_word(model, word)] == ends[:-1]
    assert ends[-1] == len(word)


# ---- refusals --------------------------------------------------------------------------------------

def _base() -> dict[str, Any]:
    return copy.deepcopy(json.loads(trained_model("hf-bpe").read_text(encoding="utf-8")))


@pytest.mark.parametrize("edit, needle", [
    (lambda d: d.update(pre_tokenizer={"type": "UnicodeScripts"}), "'UnicodeScripts'"),
    (lambda d: d["model"].update(dropout=0.1), "dropout=0.1"),
    (lambda d: d.update(pre_tokenizer={"type": "Metaspace"}), "'Metaspace'"),
    (lambda d: d.update(post_processor={"type": "ByteLevel", "trim_offsets": True}), "trim_offsets=True"),
    (lambda d: d.update(added_tokens=[{"id": 0, "content": "x", "single_word": False, "lstrip": True, "rstrip": False,
                                       "normalized": False, "special": False}]), "lstrip=true"),
])
def test_unsupported_components_are_named(tmp_path: Path, edit: Any, needle: str) -> None:
    data = _base()
    edit(data)
    with pytest.raises(UnsupportedComponentError, match=needle.replace("(", r"\(")):
        tokspec.load_engine(f"reference:{_write(tmp_path, data)}")


def test_merge_outside_the_vocab_is_a_vocabulary_error(tmp_path: Path) -> None:
    data = _base()
    data["model"]["merges"] = [["not-a-token", "x"]]
    with pytest.raises(VocabularyError, match="not-a-token"):
        tokspec.load_engine(f"reference:{_write(tmp_path, data)}")


def _unicode17_texts() -> list[str]:
    """One text per range of characters new in Unicode 17.0, each character in letter, digit and
    space contexts (the regex module knows them, HF's tables do not)."""
    from tokspec.reference.pretok_regex import UNICODE17_CHANGED, UNICODE17_NEW
    ranges = [*UNICODE17_NEW, *((cp, cp) for cp in UNICODE17_CHANGED)]
    return ["".join(f"a{chr(cp)}b {chr(cp)}1 ." for cp in range(lo, min(hi, lo + 40) + 1)) for lo, hi in ranges]


@pytest.mark.parametrize("model", ["bytelevel", "whitespace"])
def test_unicode17_characters_follow_hf_tables(tmp_path: Path, model: str) -> None:
    if model == "bytelevel":
        path = str(trained_model("hf-bpe"))
    else:
        path = _write(tmp_path, json.loads(_whitespace_bpe_json()))
    _assert_same_as_hf(path, _unicode17_texts())
