"""reference/engines.py: the listed name forms are real (each placeholder, filled in with a file of
that kind or a known name, loads an engine of that name), rank files load plain or gzipped with
the cl100k pattern, and every refusal names the value and lists what would be accepted."""

from __future__ import annotations

import base64
import dataclasses
import gzip
import re
import types
from pathlib import Path

import pytest
import tiktoken

import tokspec
from tokspec.errors import UnknownEngineError, VocabularyError
from tokspec.formats.models import trained_model
from tokspec.reference import engines as provider
from tokspec.reference.pretok_regex import PATTERNS

#: a byte-complete rank table with a few merges
RANKS = {bytes([b]): b for b in range(256)} | {b"ab": 256, b" a": 257, b"abc": 258, b"12": 259, b"123": 260}
TEXTS = ["abc ab", " a 1234567", "It's abc's\n\n x"]


def _rank_file(path: Path) -> Path:
    lines = [f"{base64.b64encode(tok).decode()} {rank}" for tok, rank in RANKS.items()]
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


def _fill(name: str, tmp_path: Path) -> list[str]:
    """Concrete engine names for one listed name form (placeholders filled in)."""
    out = []
    for form in name.split(", "):
        if form == "reference:PATH.tiktoken":
            out.append(f"reference:{_rank_file(tmp_path / 'r.tiktoken')},pattern=cl100k_base")
        elif form == "reference:PATH.json":
            out.append(f"reference:{trained_model('hf-bpe')}")
        elif form == "reference:PATH.model":
            out.append(f"reference:{trained_model('spm-unigram')}")
        elif form == "pretok:P-u17":
            out.append("pretok:qwen2-u17")
        elif form == "reference:NAME-u17":
            out.append("reference:qwen-u17")
        else:
            out.append(form)
    return out


def test_every_listed_name_form_loads(tmp_path: Path) -> None:
    listed = provider.engines()
    names = [n for name, _ in listed for n in _fill(name, tmp_path)]
    assert len(names) == len(set(names))
    skip = {"hf-converted:cl100k_base", "hf-converted:o200k_base", "reference:hf-converted-cl100k_base",
            "reference:hf-converted-o200k_base"}  # loaded in test_reference_engines / test_reference_bpe_hf
    skip |= {f"pretok:{p}" for p in PATTERNS} | {f"pretok:hf-split-{p}" for p in PATTERNS}  # ditto, and below
    skip |= {f"reference:{n}" for n in [*provider.TIKTOKEN_PATTERNS, *provider.NAMED_JSON]} | {"reference:qwen-u17"}
    for name in names:
        if name in skip:
            continue  # the named vocabularies take seconds to load: test_reference_engines loads them
        engine = tokspec.load_engine(name)
        assert engine.info.name == name
        assert engine.encode("ab 12").offsets[-1][1] == len("ab 12")
    assert {f"pretok:{p}" for p in PATTERNS} | {f"pretok:hf-split-{p}" for p in PATTERNS} <= set(names)
    assert {f"reference:{n}" for n in provider.TIKTOKEN_PATTERNS} <= set(names)
    assert {f"reference:{n}" for n in provider.NAMED_JSON} | {"reference:qwen-u17"} <= set(names)
    assert {f"hf-converted:{n}" for n in provider.CONVERTED} | {f"reference:hf-converted-{n}" for n in provider.CONVERTED} \
        <= set(names)
    for name, description in listed:
        assert description.strip() == description and description and "\n" not in description, name


@pytest.mark.parametrize("suffix", [".tiktoken", ".tiktoken.gz"])
def test_rank_file_equals_tiktoken_with_the_cl100k_pattern(tmp_path: Path, suffix: str) -> None:
    path = _rank_file(tmp_path / f"tiny{suffix}")
    engine = tokspec.load_engine(f"reference:{path},pattern=cl100k_base")
    prod = tiktoken.Encoding("tiny", pat_str=PATTERNS["cl100k_base"], mergeable_ranks=RANKS, special_tokens={})
    for text in TEXTS:
        assert list(engine.encode(text).ids) == prod.encode_ordinary(text), text
    assert engine.info.name == f"reference:{path},pattern=cl100k_base"
    assert engine.info.library == "tokspec.reference.bpe_naive"
    assert "cl100k_base pattern" in engine.info.description and "Unicode 16.0" in engine.info.description
    assert engine.info.vocab_sha256 is not None and len(engine.info.vocab_sha256) == 64


def test_unknown_reference_name_lists_the_accepted_forms() -> None:
    known = ", ".join([*provider.TIKTOKEN_PATTERNS, *provider.NAMED_JSON])
    message = (f"unknown engine name='reference:nope'; use reference:NAME with NAME in {known}, or "
               "reference:PATH ending in .tiktoken, .tiktoken.gz, .json or .model")
    with pytest.raises(UnknownEngineError, match=f"^{re.escape(message)}$"):
        provider.load("reference", "nope")


@pytest.mark.parametrize("prefix", ["reference", "pretok"])
@pytest.mark.parametrize("name", ["cl100k_base-u16", "cl100k_base_u17", "o200k_base-u1"])
def test_only_the_u17_suffix_selects_unicode_17_tables(prefix: str, name: str) -> None:
    """A suffix as long as ``-u17`` after a known name is not ``-u17``: refused, not loaded."""
    with pytest.raises(UnknownEngineError, match=f"^unknown engine name='{prefix}:{name}'"):
        provider.load(prefix, name)


@pytest.mark.parametrize("name", sorted(provider.NAMED_JSON))
def test_a_named_tokenizer_json_is_verified_against_its_sha256(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The installed file must be the one whose sha256 tokspec names: a registry that names
    another digest refuses the file instead of loading it."""
    entry = provider.NAMED_FILES[name]
    monkeypatch.setitem(provider.NAMED_FILES, name, dataclasses.replace(entry, sha256="0" * 64))
    with pytest.raises(VocabularyError, match="sha256"):
        provider.load("reference", name)


def test_unknown_pattern_lists_the_known_patterns() -> None:
    message = f"unknown engine name='pretok:nope'; known patterns: {', '.join(sorted(PATTERNS))}"
    with pytest.raises(UnknownEngineError, match=f"^{re.escape(message)}$"):
        provider.load("pretok", "nope")
    with pytest.raises(UnknownEngineError, match="name='pretok:hf-split-nope'"):
        provider.load("pretok", "hf-split-nope")


def test_unknown_converted_name_lists_the_known_ones() -> None:
    message = "unknown engine name='hf-converted:qwen'; known: hf-converted:cl100k_base, hf-converted:o200k_base"
    with pytest.raises(UnknownEngineError, match=f"^{re.escape(message)}$"):
        provider.load("hf-converted", "qwen")


def test_missing_delegate_module_or_function_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_module(name: str) -> types.ModuleType:
        raise ImportError(f"No module named {name!r}")

    monkeypatch.setattr(provider.importlib, "import_module", no_module)
    message = ("tokspec.reference.wordpiece.wordpiece_encoder_from_tokenizer_json is not available (No module "
               "named 'tokspec.reference.wordpiece'); the wordpiece reference is not built in this checkout")
    with pytest.raises(UnknownEngineError, match=f"^{re.escape(message)}$"):
        provider.load("reference", "bert-base-uncased")
    monkeypatch.setattr(provider.importlib, "import_module", lambda name: types.ModuleType(name))
    with pytest.raises(UnknownEngineError, match=r"^tokspec\.reference\.unigram\.unigram_encoder_from_spm_model "
                                                 r"is not available \(.*unigram_encoder_from_spm_model.*\); "
                                                 r"the unigram reference is not built in this checkout$"):
        provider.load("reference", str(trained_model("spm-unigram")))


@pytest.mark.parametrize("kind, module", [("hf-bpe", "tokspec.reference.bpe_hf"),
                                          ("hf-wordpiece", "tokspec.reference.wordpiece"),
                                          ("hf-unigram", "tokspec.reference.unigram")])
def test_json_path_is_dispatched_by_model_type(kind: str, module: str) -> None:
    path = trained_model(kind)
    engine = provider.load("reference", str(path))
    assert type(engine).__module__ == module and engine.info.name == f"reference:{path}"


def test_listed_descriptions_speak_the_reference_layers_words() -> None:
    """``tokspec engines`` shows these descriptions: every word is a word of the reference layer's
    docstrings (case and all), and a word standing alone (not part of a name such as bpe_hf,
    hf-converted, tokenizer.json) is written the way the docstrings mostly write it alone (BPE, HF,
    Unigram, JSON, Unicode), so a garbled or re-cased description is caught."""
    import importlib
    import pkgutil
    from collections import Counter

    import tokspec.reference as reference
    docs = []
    for info in pkgutil.iter_modules(reference.__path__):
        module = importlib.import_module(f"tokspec.reference.{info.name}")
        docs += [x.__doc__ or "" for x in [module, *vars(module).values()] if x is module or callable(x)]
    text = "\n".join(sorted(set(docs)))       # each docstring once (mutation testing copies functions)
    words = set(re.findall(r"[A-Za-z0-9_]+", text))
    alone = re.compile(r"(?<![\w.\-/:])([A-Za-z][A-Za-z0-9]*)(?![\w\-/:]|\.\w)")
    spellings = Counter(alone.findall(text))
    for name, description in provider.engines():
        unknown = [w for w in re.findall(r"[A-Za-z0-9_]+", description) if w not in words]
        assert not unknown, f"{name}: {description!r} says {unknown}, no word of the reference docstrings"
        for word in alone.findall(description):
            total = sum(n for w, n in spellings.items() if w.lower() == word.lower())
            assert spellings[word] * 4 >= total, f"{name}: {word!r} is mostly spelled otherwise in the docstrings"


@pytest.mark.parametrize("name", provider.NAMED_JSON)
def test_named_json_description_names_the_model_type_of_its_tokenizer_json(name: str) -> None:
    """The listed line of ``reference:NAME`` for a named tokenizer.json names the model it runs as
    that file's ``model.type`` spells it (WordPiece, Unigram: the types HF tokenizers writes)."""
    from tokspec.formats.vocab import load_tokenizer_json, named_path
    model_type = load_tokenizer_json(named_path(name)).model_type
    described = dict(provider.engines())[f"reference:{name}"]
    assert re.search(rf"(?<![A-Za-z]){re.escape(model_type)}(?![A-Za-z])", described), (model_type, described)
