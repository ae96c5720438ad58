"""The public strategies deliver what their docstrings promise."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tokspec.fuzz import strategies as ts


def test_exports_are_complete() -> None:
    public = {n for n in dir(ts) if not n.startswith("_") and callable(getattr(ts, n))
              and getattr(getattr(ts, n), "__module__", "") == ts.__name__}
    assert public <= set(ts.__all__)


@settings(max_examples=400, database=None)
@given(st.data())
def test_every_general_category_is_reachable(data: st.DataObject) -> None:
    cat = data.draw(st.sampled_from(ts.GENERAL_CATEGORIES))
    ch = data.draw(st.characters(categories=[cat]))  # type: ignore[list-item]
    assert unicodedata.category(ch) == cat


def test_unicode_char_covers_categories() -> None:
    seen: set[str] = set()

    @settings(max_examples=600, database=None)
    @given(ts.unicode_char())
    def collect(ch: str) -> None:
        seen.add(unicodedata.category(ch))
    collect()
    assert len(seen) >= 20, sorted(seen)  # most of the 29 categories in a few hundred draws


@given(ts.unicode_text())
def test_no_surrogates_by_default(text: str) -> None:
    assert not any(0xD800 <= ord(c) <= 0xDFFF for c in text)


def test_surrogates_on_request() -> None:
    from hypothesis import find
    found = find(ts.unicode_text(allow_surrogates=True, min_size=1),
                 lambda t: any(0xD800 <= ord(c) <= 0xDFFF for c in t),
                 settings=settings(database=None, deadline=None, max_examples=5000,
                                   suppress_health_check=list(HealthCheck)))
    assert found


@given(ts.repetitions(chunk_len=16))
def test_repetitions_cross_a_chunk_boundary(text: str) -> None:
    assert len(text) > 17  # prefix ends before the boundary at 16, the run is longer than the gap


@given(ts.bpe_merge_ranks())
def test_merge_ranks_are_merge_tables(ranks: dict[bytes, int]) -> None:
    by_rank = sorted(ranks, key=ranks.__getitem__)
    for i, tok in enumerate(by_rank):
        if len(tok) > 1:
            earlier = set(by_rank[:i])
            assert any(tok[:k] in earlier and tok[k:] in earlier for k in range(1, len(tok)))


@given(ts.bpe_any_ranks())
def test_any_ranks_distinct(ranks: dict[bytes, int]) -> None:
    assert len(set(ranks.values())) == len(ranks) and all(bytes([b]) in ranks for b in b"abc")


@given(ts.vocab_text([b"ab", b"\xe2\x82", b"\xac"]))
def test_vocab_text_bytes_decode(text: str) -> None:
    assert isinstance(text, str) and text


@given(ts.unigram_scores(), ts.wordpiece_vocab())
def test_tiny_vocabularies(scores: dict[str, float], vocab: frozenset[str]) -> None:
    assert all(c in scores for c in "abc") and all(v < 0 for v in scores.values())
    assert all(p.startswith("##") or "#" not in p for p in vocab)


def test_bad_arguments_raise() -> None:
    with pytest.raises(ValueError, match="tokens"):
        ts.vocab_text([])
    with pytest.raises(ValueError, match="tokens"):
        ts.single_token([])
