"""reference/engines.py: every listed name resolves (or fails with a clear error), infos are right,
bad names raise UnknownEngineError naming the value, and WordPiece/Unigram names are delegated."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

import tokspec
from tokspec.errors import UnknownEngineError
from tokspec.reference import engines as provider
from tokspec.formats.vocab import NAMED_FILES, named_path, read_verified

LOADABLE = ["pretok:cl100k_base", "pretok:o200k_base", "pretok:r50k_base", "pretok:llama3", "pretok:qwen2",
            "pretok:o200k_base-u17", "pretok:hf-split-qwen2", "reference:cl100k_base",
            "reference:o200k_base", "reference:qwen", "reference:cl100k_base-u17",
            "hf-converted:cl100k_base", "hf-converted:o200k_base"]


@pytest.mark.parametrize("name", LOADABLE)
def test_named_engines_load_and_encode(name: str) -> None:
    engine = tokspec.load_engine(name)
    assert engine.info.name == name
    enc = engine.encode("Hello, world 123!")
    assert (enc.ids is None) == (engine.info.kind == "pretokenizer")
    assert enc.offsets[0][0] == 0 and enc.offsets[-1][1] == len("Hello, world 123!")
    assert engine.encode("") == tokspec.Encoding(None if enc.ids is None else (), ())


def test_every_listed_engine_name_is_handled() -> None:
    for name, desc in provider.engines():
        assert desc
        if "PATH" in name or "," in name or "hf-converted" in name:
            continue  # PATH forms are tested below; hf-converted names in LOADABLE
        if name in ("reference:bert-base-uncased", "reference:mon-unigram"):
            continue  # delegated: see test_wordpiece_and_unigram_names_are_delegated
        assert tokspec.load_engine(name).info.name == name


def test_vocab_sha256_is_recorded() -> None:
    assert tokspec.load_engine("reference:cl100k_base").info.vocab_sha256 == NAMED_FILES["cl100k_base"].sha256
    assert tokspec.load_engine("pretok:llama3").info.vocab_sha256 is None


def test_tiktoken_path_uses_the_cl100k_pattern(tmp_path: Path) -> None:
    src = named_path("cl100k_base")
    path = tmp_path / "copy.tiktoken"
    path.write_bytes(read_verified(src)[0])  # next to tiktoken < 0.12 the named file is bpe-openai's .gz
    by_path = tokspec.load_engine(f"reference:{path}")
    by_name = tokspec.load_engine("reference:cl100k_base")
    text = "It's 12345 o'clock\n\n  ok"
    assert by_path.encode(text) == by_name.encode(text)


@pytest.mark.parametrize("name", ["reference:nope", "pretok:nope", "hf-converted:qwen", "reference:x.txt",
                                  "pretok:nope-u17", "reference:hf-converted-qwen"])
def test_bad_names_raise_naming_the_value(name: str) -> None:
    with pytest.raises(UnknownEngineError, match="nope|qwen|x.txt"):
        tokspec.load_engine(name)


def test_missing_model_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(UnknownEngineError, match="absent.model"):
        tokspec.load_engine(f"reference:{tmp_path / 'absent.model'}")


def test_provider_rejects_foreign_prefix() -> None:
    with pytest.raises(UnknownEngineError, match="prefix='tiktoken'"):
        provider.load("tiktoken", "cl100k_base")


@pytest.mark.parametrize("name, module", [("bert-base-uncased", "wordpiece"), ("mon-unigram", "unigram")])
def test_wordpiece_and_unigram_names_are_delegated(name: str, module: str) -> None:
    """Engineer C's modules build these; without them the error says which module is missing."""
    if importlib.util.find_spec(f"tokspec.reference.{module}") is None:
        with pytest.raises(UnknownEngineError, match=f"tokspec.reference.{module}"):
            tokspec.load_engine(f"reference:{name}")
        return
    engine = tokspec.load_engine(f"reference:{name}")
    assert engine.info.name == f"reference:{name}"
    assert engine.encode("hello world").ids


def test_json_path_dispatches_by_model_type() -> None:
    """A WordPiece tokenizer.json given by path goes to the WordPiece reference, not to bpe_hf."""
    path = named_path("bert-base-uncased")
    if importlib.util.find_spec("tokspec.reference.wordpiece") is None:
        with pytest.raises(UnknownEngineError, match="wordpiece"):
            tokspec.load_engine(f"reference:{path}")
    else:
        assert type(tokspec.load_engine(f"reference:{path}")).__module__ != "tokspec.reference.bpe_hf"
