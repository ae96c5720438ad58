"""What ``tokspec.fast.engines`` tells about its engines: the listing and the token pieces.

- ``engines()`` (shown by ``tokspec engines``): every listed name loads once ``PATH`` is replaced by a
  file with the listed suffix, and each description says only what the loaded engine says about
  itself (its ``info.description``, the same words, case and all), plus the input it reads;
- ``token_piece``: the token's bytes as UTF-8, invalid bytes as backslash escapes, for every id,
  computed here from the rank file.
"""

from __future__ import annotations

import base64
import re
from pathlib import Path

import pytest
from tokspec.fast import engines as fast_engines
from tokspec.fuzz.strategies import trained_bpe_ranks

from tokspec import UnknownEngineError, load_engine
from tokspec.formats.models import trained_model
from tokspec.formats.vocab import load_named_tiktoken

# Words a description may add about the input file (not about the algorithm).
INPUT_WORDS = {".tiktoken": {"on", "a", "rank", "file"},
               ".json": {"on", "a", "tokenizer.json"},
               ".model": {"on", "a", "sentencepiece", "model"}}


def _words(text: str) -> set[str]:
    return set(re.split(r"[\s\-+(),]+", text)) - {""}


def _path_for(suffix: str, tmp_path: Path) -> Path:
    if suffix == ".tiktoken":
        ranks = trained_bpe_ranks(0)  # a small rank file in tiktoken's format
        path = tmp_path / "cl100k_base.tiktoken"  # a family's file name: its pattern (rank_families)
        path.write_text("".join(f"{base64.b64encode(tok).decode()} {rank}\n" for tok, rank in ranks.items()))
        return path
    kind = {".json": "hf-unigram", ".model": "spm-unigram"}[suffix]
    return trained_model(kind)


def test_every_listed_engine_loads_and_is_described_by_what_it_is(tmp_path: Path) -> None:
    listed = fast_engines.engines()
    names = [n for n, _ in listed]
    assert len(set(names)) == len(names)
    assert {n.split(":")[0] for n in names} == {"fast", "peek2"}
    templates = set()
    for name, desc in listed:
        extra: set[str] = set()
        if "PATH" in name:
            prefix, template = name.split(":", 1)
            stem, suffix = template.split(".", 1)
            assert (prefix, stem) == ("fast", "PATH"), name
            suffix = "." + suffix
            templates.add(suffix)
            engine = load_engine(f"fast:{_path_for(suffix, tmp_path)}")
            extra = INPUT_WORDS[suffix]
            assert extra - {"on", "a"} <= _words(desc), f"{name}: the description names the input read"
        else:
            engine = load_engine(name)
            assert engine.info.name == name
        allowed = _words(engine.info.description) | _words(name) | extra
        assert _words(desc) <= allowed, f"{name}: {desc!r} says {_words(desc) - allowed} (engine: {engine.info.description!r})"
        assert desc[0].isalpha() and desc == desc.strip()
    assert templates == {".tiktoken", ".json", ".model"}


def test_named_bpe_and_peek2_engines_are_all_listed() -> None:
    names = {n for n, _ in fast_engines.engines()}
    assert {f"fast:{v}" for v in fast_engines.BPE_PATTERNS} <= names
    from tokspec.fast.pretok_peek2 import PATTERN_NAMES
    assert {f"peek2:{p}" for p in PATTERN_NAMES} <= names


def test_token_piece_is_the_tokens_bytes_with_backslash_escapes() -> None:
    engine = load_engine("fast:cl100k_base")
    ranks = load_named_tiktoken("cl100k_base").ranks
    invalid = 0
    for token, rank in ranks.items():
        want = token.decode("utf-8", errors="backslashreplace")
        invalid += want != token.decode("utf-8", errors="replace")
        assert engine.token_piece(rank) == want, (rank, token)  # type: ignore[attr-defined]
    assert invalid > 100, "the vocabulary has tokens that are not valid UTF-8 alone"
    assert engine.token_piece(ranks[b"\x80"]) == "\\x80"  # type: ignore[attr-defined]


# -- names that do not resolve: the error says what would ------------------------------------------

def test_unknown_peek2_pattern_lists_the_known_ones() -> None:
    from tokspec.fast.pretok_peek2 import PATTERN_NAMES
    with pytest.raises(UnknownEngineError) as err:
        fast_engines.load("peek2", "r50k_base")
    msg = str(err.value)
    assert msg.startswith("unknown engine name='peek2:r50k_base'; known: ")
    assert msg.split("known: ")[1] == ", ".join(f"peek2:{p}" for p in PATTERN_NAMES)


def test_unknown_fast_name_says_what_fast_takes() -> None:
    """The whole message, word for word: the names joined by ", " and each path form spelled out."""
    with pytest.raises(UnknownEngineError) as err:
        fast_engines.load("fast", "nope.txt")
    known = ", ".join([*fast_engines.BPE_PATTERNS, "mon-unigram"])
    assert str(err.value) == (f"unknown engine name='fast:nope.txt'; use fast:NAME with NAME in {known}, or "
                              "fast:PATH ending in .tiktoken, .tiktoken.gz, .json or .model (Unigram)")


def test_foreign_prefix_is_refused_by_name() -> None:
    with pytest.raises(UnknownEngineError, match=r"^prefix='lopt' is not provided by tokspec\.fast\.engines$"):
        fast_engines.load("lopt", "cl100k_base")


def test_gzipped_rank_file_loads_with_the_cl100k_pattern(tmp_path: Path) -> None:
    import gzip
    plain = _path_for(".tiktoken", tmp_path)
    packed = tmp_path / "cl100k_base.tiktoken.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    a, b = load_engine(f"fast:{plain}"), load_engine(f"fast:{packed}")
    assert b.info.name == f"fast:{packed}" and b.pattern == "cl100k_base"  # type: ignore[attr-defined]
    text = "abc cab'S 123 \u4e2d!!\n\n"
    assert a.encode(text) == b.encode(text)


def test_interpreted_engines_describe_themselves() -> None:
    for factory, compiled in (("fast_cl100k", "fast:cl100k_base"), ("fast_o200k", "fast:o200k_base")):
        engine, ref = load_engine(f"tokspec.fast.interpreted:{factory}"), load_engine(compiled)
        info = engine.info
        assert (info.name, info.kind, info.vocab_sha256) == (f"{compiled} (interpreted kernels)", "tokenizer",
                                                             ref.info.vocab_sha256)
        assert info.library == "tokspec.fast" and compiled in info.description
        assert engine.encode("It's 42!") == ref.encode("It's 42!")
    peek = load_engine("tokspec.fast.interpreted:peek2_o200k").info
    assert (peek.kind, peek.vocab_sha256) == ("pretokenizer", None)


@pytest.mark.parametrize("factory", ["fast_cl100k", "peek2_o200k"])
def test_interpreted_engines_name_tokspec_and_its_version_as_the_library(factory: str) -> None:
    """The kernels doing the work are tokspec's own: library and version are tokspec's, as for the
    compiled ``fast:`` engines."""
    import tokspec

    info = load_engine(f"tokspec.fast.interpreted:{factory}").info
    assert (info.library, info.library_version) == ("tokspec.fast", tokspec.__version__)
    assert load_engine("fast:cl100k_base").info.library_version == tokspec.__version__
