"""reference/bpe_merges_from_ranks.py: recovered merges are consistent, the generated tokenizer.json
is cached atomically and runs in HF, and HF on it equals tiktoken semantics exactly when no token is
unreachable (a conjecture checked by hypothesis; the unreachable cases are stored findings)."""

from __future__ import annotations

import functools
import json
from pathlib import Path

import pytest
import tokenizers
from hypothesis import assume, example, given
from hypothesis import strategies as st

import tokspec
from tokspec.corpus import build_corpus
from tokspec.fuzz.strategies import bpe_any_ranks, bpe_merge_ranks
from tokspec.reference.bpe_hf import bytes_to_unicode
from tokspec.reference.bpe_merges_from_ranks import (converted_json_path, merge_pair, merges_from_ranks,
                                                     tokenizer_json_from_ranks)
from tokspec.reference.bpe_naive import bpe_pieces
from tokspec.reference.pretok_regex import PATTERNS
from tokspec.formats.vocab import load_named_tiktoken


@functools.lru_cache(maxsize=1)
def _cl100k() -> tuple[dict[bytes, int], list[tuple[bytes, bytes]], list[bytes]]:
    ranks = load_named_tiktoken("cl100k_base").ranks
    merges, unreachable = merges_from_ranks(ranks)
    return ranks, merges, unreachable


def test_cl100k_every_token_has_a_merge_of_lower_ranked_tokens() -> None:
    ranks, merges, unreachable = _cl100k()
    assert unreachable == []
    assert len(merges) == sum(1 for t in ranks if len(t) >= 2)
    produced = [a + b for a, b in merges]
    assert produced == sorted(produced, key=ranks.__getitem__)  # listed in the order of their rank
    for a, b in merges:
        assert max(ranks[a], ranks[b]) < ranks[a + b]


def test_merge_pair_of_bytes_and_unreachable_tokens() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"abc": 256, b"ab": 257}
    assert merge_pair(b"a", ranks) is None
    assert merge_pair(b"ab", ranks) == (b"a", b"b")
    assert merge_pair(b"abc", ranks) is None  # ab has a higher rank than abc: unreachable
    assert merges_from_ranks(ranks) == ([(b"a", b"b")], [b"abc"])


def test_generated_json_shape() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"  ": 256}
    data = tokenizer_json_from_ranks(ranks, PATTERNS["o200k_base"])
    table = bytes_to_unicode()
    assert data["model"]["vocab"][table[32] * 2] == 256
    assert data["model"]["merges"] == [[table[32], table[32]]]
    assert data["pre_tokenizer"]["pretokenizers"][0]["pattern"] == {"Regex": PATTERNS["o200k_base"]}
    assert data["model"]["ignore_merges"] is True
    tokenizers.Tokenizer.from_str(json.dumps(data))  # HF accepts it


def test_converted_json_is_cached_and_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOKSPEC_CACHE", str(tmp_path))
    ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256}
    first = converted_json_path(ranks, "sha-x", "cl100k_base")
    mtime = first.stat().st_mtime_ns
    assert converted_json_path(ranks, "sha-x", "cl100k_base") == first
    assert first.stat().st_mtime_ns == mtime
    assert converted_json_path(ranks, "sha-x", "cl100k_base", ignore_merges=False) != first
    assert [p.name for p in first.parent.iterdir() if p.suffix == ".tmp"] == []


@pytest.mark.parametrize("name", ["o200k_base"])
def test_hf_converted_equals_tiktoken_on_corpus(name: str) -> None:
    """o200k has no ``{n,m}+``: HF on the converted file is exactly tiktoken (cl100k differs only
    through finding hf-onig-interval-plus, replayed in test_reference_bpe_findings.py)."""
    hfc, prod = tokspec.load_engine(f"hf-converted:{name}"), tokspec.load_engine(f"tiktoken:{name}")
    for text in build_corpus():
        assert hfc.encode(text) == prod.encode(text), text


def _hf(ranks: dict[bytes, int], ignore_merges: bool) -> tokenizers.Tokenizer:
    data = tokenizer_json_from_ranks(ranks, r"[a-c]+|[^a-c]+", ignore_merges=ignore_merges)
    return tokenizers.Tokenizer.from_str(json.dumps(data))


def _full(ranks: dict[bytes, int]) -> dict[bytes, int]:
    """Make a tiny vocabulary byte-complete (the converted file needs every byte)."""
    out = {bytes([b]): 1000 + b for b in range(256) if bytes([b]) not in ranks}
    return out | ranks


@given(st.one_of(bpe_merge_ranks(), bpe_any_ranks()), st.text("abc", max_size=12), st.booleans())
@example({b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5}, "abcbc", False)
def test_hyp_hf_on_recovered_merges_equals_tiktoken_when_all_reachable(
        ranks: dict[bytes, int], text: str, ignore_merges: bool) -> None:
    ranks = _full(ranks)
    assume(not merges_from_ranks(ranks)[1])
    expected = [ranks[p] for p in bpe_pieces(text.encode(), ranks)]
    assert _hf(ranks, ignore_merges).encode(text, add_special_tokens=False).ids == expected
