"""Mistral's tekken files (mistral-common 1.13.1, sha256-checked): ``reference:`` (reference/tekken.py,
naive BPE on the shifted ranks with the file's pattern) equals ``mistral:`` (mistral-common's own
Tekkenizer) on hypothesis texts, ids and offsets; ``hf:`` refuses the file with a clear message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokspec
from tokspec.errors import UnknownEngineError, VocabularyError
from tokspec.reference.tekken import tekken_encoder
from tokspec.tekken import load_tekken

import mistral_common  # noqa: E402 - a test dependency: missing, this file fails to collect
DATA = Path(mistral_common.__file__).parent / "data"
TEKKEN = {"tekken_240911.json": "1948e2d48b0e7377f1bb5f1210f1ae5f984934e75713fc07e2452729b8365316",
          "tekken_240718.json": "eccd1665d2e477697c33cb7f0daa6f6dfefc57a0a6bceb66d4be52952f827516"}
SEEDS = ["Hello world, 12345!", "  x\n\n\ty  ", "naïve café कि", "日本語 😀 DON'T", "", "a/b\r\n"]


@pytest.fixture(scope="module", params=sorted(TEKKEN))
def pair(request: pytest.FixtureRequest) -> tuple[tokspec.Encoder, tokspec.Encoder]:
    path = DATA / request.param
    load_tekken(path, TEKKEN[request.param])
    return tekken_encoder(path, f"reference:{path}"), tokspec.load_engine(f"mistral:{path}")


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=20))
def test_hyp_reference_equals_mistral_common(pair: tuple[tokspec.Encoder, tokspec.Encoder], text: str) -> None:
    ref, prod = pair
    for t in (text, *SEEDS):
        assert ref.encode(t) == prod.encode(t), t


def test_ids_are_shifted_past_the_special_tokens(pair: tuple[tokspec.Encoder, tokspec.Encoder]) -> None:
    ref, _ = pair
    config = json.loads((DATA / "tekken_240911.json").read_text(encoding="utf-8"))["config"]
    ids = ref.encode("Hello \x00 world").ids or ()
    assert min(ids) >= config["default_num_special_tokens"]
    assert ids[2] == config["default_num_special_tokens"] + 0  # the NUL byte has rank 0


def test_engine_names_and_refusals() -> None:
    path = DATA / "tekken_240911.json"
    assert type(tokspec.load_engine(f"reference:{path}")).__name__ == "NaiveBpeEncoder"
    with pytest.raises(VocabularyError, match="is a Mistral tekken file, not an HF tokenizer.json"):
        tokspec.load_engine(f"hf:{path}")
    with pytest.raises(UnknownEngineError, match="is not an existing tekken file"):
        tokspec.load_engine("mistral:/no/such/tekken.json")


def test_malformed_tekken_files_are_named(tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    bad.write_text(json.dumps({"config": {"pattern": ".", "default_vocab_size": 300,
                                          "default_num_special_tokens": 10}, "vocab": []}))
    with pytest.raises(VocabularyError, match="keeps 290 tokens, the vocab lists 0"):
        load_tekken(bad)
    bad.write_text(json.dumps({"vocab": []}))
    with pytest.raises(VocabularyError, match="is not a tekken file"):
        load_tekken(bad)


def test_fast_names_the_files_it_has_no_engine_for() -> None:
    from tokspec.errors import UnsupportedComponentError
    with pytest.raises(UnsupportedComponentError, match=r"fast: has no engine for tekken JSON files yet"):
        tokspec.load_engine(f"fast:{DATA / 'tekken_240911.json'}")


def test_reference_engine_info_exactly() -> None:
    path = DATA / "tekken_240911.json"
    ref = tekken_encoder(path, "reference:t")
    assert (ref.info.library, ref.info.vocab_sha256) == ("tokspec.reference.bpe_naive", TEKKEN["tekken_240911.json"])
    assert ref.info.description == "naive min-rank BPE on tekken v3 ranks (+1000), the file's pattern, Unicode 16.0"
    from tokspec.errors import UnsupportedComponentError
    with pytest.raises(UnsupportedComponentError) as info:
        tokspec.load_engine(f"fast:{path}")
    assert str(info.value) == (f"engine name='fast:{path}': fast: has no engine for tekken JSON files yet; use "
                               "reference:PATH (the specification) or mistral:PATH")
