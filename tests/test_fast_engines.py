"""The ``fast:*`` and ``peek2:*`` engines end to end: names, errors, and exactness (ids AND offsets)
against the reference engines and the production libraries on the conformance corpus."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import tokspec
from tokspec import InvalidTextError, UnknownEngineError, load_engine
from tokspec.corpus import build_corpus
from tokspec.fast import engines as fast_engines

CORPUS_DIR = Path(__file__).resolve().parent.parent / "corpora" / "fast"


@pytest.mark.parametrize("name", ["fast:nope", "fast:x.txt", "peek2:r50k_base", "peek2:"])
def test_unknown_names_are_named_errors(name: str) -> None:
    with pytest.raises(UnknownEngineError, match="unknown engine name"):
        load_engine(name)


def test_engines_listed_and_described() -> None:
    names = [n for n, _ in fast_engines.engines()]
    for want in ("fast:cl100k_base", "fast:o200k_base", "fast:mon-unigram", "peek2:cl100k_base", "peek2:o200k_base"):
        assert want in names
    info = load_engine("peek2:o200k_base").info
    assert info.kind == "pretokenizer" and info.vocab_sha256 is None
    assert info.library == "tokspec.fast" and info.name == "peek2:o200k_base"
    info = load_engine("fast:cl100k_base").info
    assert (info.kind, info.library, info.name) == ("tokenizer", "tokspec.fast", "fast:cl100k_base")
    assert info.library_version == tokspec.__version__


def test_fast_bpe_engine_info_built_directly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``FastBpeEncoder`` built here (not through the cached loader): a tokenizer whose work is
    done by this package, carrying the vocabulary's hash and the name it was given."""
    from tokspec.fast.bpe_encoder import FastBpeEncoder
    from tokspec.fuzz.strategies import trained_bpe_ranks
    from tokspec.formats.vocab import TiktokenVocab

    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    vocab = TiktokenVocab("generated", "ab" * 32, trained_bpe_ranks(0, alphabet=b"abc", merges=20))
    info = FastBpeEncoder(vocab, "cl100k_base", "fast:generated").info
    assert (info.name, info.kind, info.library, info.library_version, info.vocab_sha256) == (
        "fast:generated", "tokenizer", "tokspec.fast", tokspec.__version__, vocab.sha256)
    assert info.thread_safe is True  # declared: its kernels allocate per call (tests/test_concurrency.py checks)


@pytest.mark.parametrize("pattern", ["cl100k_base", "o200k_base", "llama3", "qwen2"])
def test_peek2_engine_reports_this_package_version(pattern: str) -> None:
    """The library doing a Peek2 engine's work is this package: its info carries tokspec's version."""
    info = load_engine(f"peek2:{pattern}").info
    assert (info.library, info.library_version) == ("tokspec.fast", tokspec.__version__)


@pytest.mark.parametrize("pattern", ["cl100k_base", "o200k_base", "llama3", "qwen2"])
def test_peek2_engine_equals_pretok_engine(pattern: str) -> None:
    fast, ref = load_engine(f"peek2:{pattern}"), load_engine(f"pretok:{pattern}")
    for text in build_corpus(seed=9)[::2]:
        assert fast.encode(text) == ref.encode(text), text[:80]


@pytest.mark.parametrize("vocab,peers", [
    ("cl100k_base", ["reference:cl100k_base", "tiktoken:cl100k_base", "bpe-openai:cl100k_base"]),
    ("o200k_base", ["reference:o200k_base", "tiktoken:o200k_base"]),
    ("qwen", ["reference:qwen"]),
])
def test_fast_bpe_equals_reference_and_production(vocab: str, peers: list[str]) -> None:
    fast = load_engine(f"fast:{vocab}")
    engines = [load_engine(p) for p in peers]
    for text in build_corpus(seed=10)[::3]:
        got = fast.encode(text)
        for peer, engine in zip(peers, engines):
            want = engine.encode(text)
            assert (got.ids, got.offsets) == (want.ids, want.offsets), (peer, text[:80])


@given(st.text(max_size=40))
def test_hyp_fast_cl100k_equals_tiktoken(text: str) -> None:
    got, want = load_engine("fast:cl100k_base").encode(text), load_engine("tiktoken:cl100k_base").encode(text)
    assert (got.ids, got.offsets) == (want.ids, want.offsets)


def test_lone_surrogate_rejected_centrally() -> None:
    for name in ("fast:cl100k_base", "peek2:o200k_base"):
        with pytest.raises(InvalidTextError, match="surrogate"):
            load_engine(name).encode("ab\ud800")


def test_token_piece_is_readable() -> None:
    fast = load_engine("fast:cl100k_base")
    ids = fast.encode("hello world").ids
    assert ids is not None
    assert "".join(fast.token_piece(i) for i in ids) == "hello world"


@pytest.mark.parametrize("path", sorted((CORPUS_DIR / "disagreements").glob("*.json")), ids=lambda p: p.stem)
def test_regression_recorded_disagreements(path: Path) -> None:
    """Replay each stored disagreement: every recorded engine still gives its recorded output,
    except that a record with status "fixed" requires every engine to give the output recorded for
    the first (correct) one: the fix must not come undone."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    first = next(iter(doc["engines"].values()))
    for name, out in doc["engines"].items():
        want = first if doc.get("status") == "fixed" else out
        enc = load_engine(name).encode(doc["text"])
        assert [list(o) for o in enc.offsets] == want["offsets"] and list(enc.ids or []) == want["ids"], name


def test_unigram_engine_rejects_non_unigram_files() -> None:
    from tokspec import TokspecError
    from tokspec.formats.models import trained_model
    for arg, msg in (("/nonexistent.json", "cannot read"), (str(trained_model("hf-bpe")), "has no such merge"),
                     (str(trained_model("spm-bpe")), "no sentencepiece BPE engine")):
        with pytest.raises(TokspecError, match=msg):
            load_engine(f"fast:{arg}")


def test_rank_file_path_engine_equals_reference() -> None:
    from tokspec.formats.vocab import named_path
    path = str(named_path("cl100k_base"))
    fast, ref = load_engine(f"fast:{path}"), load_engine(f"reference:{path}")
    assert fast.info.vocab_sha256 == ref.info.vocab_sha256
    for text in build_corpus(seed=12)[::10]:
        assert fast.encode(text) == ref.encode(text), text[:80]
