"""``tokspec.formats.vocab.named_tiktoken_lazily``: a named rank file checked at once, parsed on first
read; and the ``fast:`` BPE engines, whose tables are cached under the vocabulary's sha256, never
parsing it on a start with a filled cache (issue 29, cold start)."""

from __future__ import annotations

from pathlib import Path

import pytest
from tokspec import load_engine
from tokspec.errors import VocabularyError
from tokspec.fast.bpe_tables import cache_path
from tokspec.fast.bpe_encoder import FastBpeEncoder
from tokspec.formats import vocab as vocab_module
from tokspec.formats.vocab import load_named_tiktoken, named_tiktoken_lazily


def test_lazy_ranks_read_like_the_parsed_dict() -> None:
    eager = load_named_tiktoken("cl100k_base")
    lazy = named_tiktoken_lazily("cl100k_base")
    assert (lazy.path, lazy.sha256) == (eager.path, eager.sha256)
    assert not lazy.ranks.parsed
    assert lazy.ranks[b" the"] == eager.ranks[b" the"] == 279
    assert lazy.ranks.parsed
    assert len(lazy.ranks) == len(eager.ranks) == 100256
    assert b"hello" in lazy.ranks and b"\xff\xfe\xfd not a token" not in lazy.ranks
    assert lazy.ranks.get(b"\xff\xfe\xfd not a token", -1) == -1
    assert dict(lazy.ranks) == eager.ranks
    assert list(lazy.ranks) == list(eager.ranks) == list(lazy.ranks.keys())
    assert list(lazy.ranks.items()) == list(eager.ranks.items())
    assert list(lazy.ranks.values()) == list(eager.ranks.values())
    with pytest.raises(KeyError):
        lazy.ranks[b"\xff\xfe\xfd not a token"]


def test_a_file_that_fails_its_pin_is_refused_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "cl100k_base.tiktoken"
    bad.write_bytes(b"YQ== 0\n")
    monkeypatch.setattr(vocab_module, "named_path", lambda name: bad)
    with pytest.raises(VocabularyError, match="sha256"):
        named_tiktoken_lazily("cl100k_base")


def test_fast_engine_with_cached_tables_parses_ranks_only_to_decode() -> None:
    FastBpeEncoder(named_tiktoken_lazily("cl100k_base"), "cl100k_base", "fast:cl100k_base")  # fills the cache
    vocab = named_tiktoken_lazily("cl100k_base")
    engine = FastBpeEncoder(vocab, "cl100k_base", "fast:cl100k_base")
    ids = list(engine.encode("hello world, the cache").ids)
    assert ids == list(load_engine("tiktoken:cl100k_base").encode("hello world, the cache").ids)
    assert "(100256 ranks)" in engine.info.description
    cached = cache_path(vocab.sha256) is not None  # no usable cache folder: built, so parsed
    assert vocab.ranks.parsed is not cached
    assert engine.decode(ids) == "hello world, the cache"
    assert vocab.ranks.parsed
