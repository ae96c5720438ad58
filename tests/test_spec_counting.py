"""spec/counting.py and reference/bpe_counting.py: definitions, theorems C1-C4, refuted beliefs.

The theorems are checked on tiny trained vocabularies (hypothesis) and the seed's dictionary; the
definitions of the reference are checked against spec's (a different BPE implementation); the stored
witnesses of the refuted beliefs are replayed against tiktoken and the references.
"""

from __future__ import annotations

import functools
import json

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec._paths import corpora_dir
from tokspec.fuzz.strategies import trained_bpe_ranks
from tokspec.reference import bpe_counting as R
from tokspec.reference.pretok_regex import compiled
from tokspec.spec import counting as C
from tokspec.spec._verdict import CLAIMS
from tokspec.spec.bpe import SEED_EXAMPLE_DICT
from tokspec.formats.vocab import load_named_tiktoken

SEED = {tok: rank for rank, tok in enumerate(SEED_EXAMPLE_DICT)}
WS = r"\s+(?!\S)|\s+|[^\s]+"


@functools.lru_cache(maxsize=None)
def tiny(seed: int) -> dict[bytes, int]:
    return trained_bpe_ranks(seed, alphabet=b"ab c", merges=25)


def test_seed_example_count_drops_when_a_byte_is_appended() -> None:
    assert C.seed_example_counts() == (3, 2)
    assert R.prefix_counts(SEED, b"abacbb") == [1, 1, 2, 2, 3, 2]
    assert C.appending_counts(SEED, b"abacbb") == [1, 1, 2, 2, 3, 2]
    assert C.prepending_counts(SEED, b"abacbb") == R.suffix_counts(SEED, b"abacbb")
    assert C.prepending_counts(SEED, b"") == []


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 50), data=st.binary(max_size=9).map(lambda b: bytes(b"ab c"[x % 4] for x in b)))
@example(seed=0, data=b"abacbb")
def test_hyp_theorems_c1_c3_and_reference(seed: int, data: bytes) -> None:
    ranks = tiny(seed)
    assert C.prop_appending(ranks, data).holds
    assert C.prop_prepending(ranks, data).holds
    assert C.prop_interval(ranks, data).holds
    want = [C.count(ranks, data[:e]) for e in range(1, len(data) + 1)]
    assert R.prefix_counts(ranks, data) == want
    assert R.suffix_counts(ranks, data) == [C.count(ranks, data[s:]) for s in range(len(data) - 1, -1, -1)]
    for i in range(len(data) + 1):
        for j in range(i, len(data) + 1):
            assert R.count_slice(ranks, data, i, j) == C.interval_count(ranks, data, i, j)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 50), text=st.text(alphabet="ab c", max_size=10), n=st.integers(0, 6))
@example(seed=0, text="  a  b", n=2)
def test_hyp_split_point_and_pretokenized(seed: int, text: str, n: int) -> None:
    ranks = tiny(seed)
    k = R.split_after(ranks, text, n)
    assert k == C.split_point(lambda s: C.count(ranks, s.encode()), text, n)
    assert C.count(ranks, text[:k].encode()) <= n
    assert all(C.count(ranks, text[:m].encode()) > n for m in range(k + 1, len(text) + 1))
    assert C.prop_pretokenized(ranks, WS, text, 0, len(text)).holds
    assert C.prop_pretokenized(ranks, WS, text, len(text) // 3, len(text)).holds
    pattern = __import__("regex").compile(WS)
    assert R.count_pretokenized(ranks, pattern, text) == sum(
        C.count(ranks, m.group().encode()) for m in pattern.finditer(text))


def test_split_point_is_longest_not_first_overflow() -> None:
    """abacb has 3 tokens, abacbb 2: with n=2 the split point skips the overflow at 5 bytes."""
    assert R.split_after(SEED, "abacbb", 2) == 6
    assert C.split_point(lambda s: C.count(SEED, s.encode()), "abacbb", 2) == 6
    assert R.split_after(SEED, "abacbbc", 2) == 6
    assert R.split_after(SEED, "abacbb", 0) == 0


def test_reference_real_vocab_short_text() -> None:
    ranks = load_named_tiktoken("cl100k_base").ranks
    data = "xhr déjà".encode()
    assert R.count_bytes(ranks, b"") == 0
    assert R.prefix_counts(ranks, data)[:3] == [1, 2, 1]
    text = "hello  world"
    ids = load_engine("tiktoken:cl100k_base").encode(text).ids
    assert R.count_pretokenized(ranks, compiled("cl100k_base"), text) == len(ids)


def test_naive_split_drops_to_boundary() -> None:
    tokens = [b"\xef\xbd", b"\x81\xef\xbd", b"\x81"]
    assert C.naive_split(tokens, "\uff41\uff41", 2) == 0
    assert C.naive_split(tokens, "\uff41\uff41", 3) == 2
    assert C.naive_split([b"ab", b"c"], "abc", 1) == 2


@pytest.mark.parametrize("name", sorted(n for n in CLAIMS if n.startswith("counting.")))
def test_counting_claims_registered_and_witnesses_replay(name: str) -> None:
    claim = CLAIMS[name]
    if claim.status == "falsified":
        assert claim.counterexample is not None
        assert not claim.check(**claim.counterexample).holds
    else:
        assert claim.counterexample is None


def test_belief_checks_hold_where_true() -> None:
    assert C.prop_monotone("cl100k_base", "xh", " ").holds
    assert C.prop_monotone("cl100k_base", "ab", "c").holds  # equal counts: 1 and 1
    assert C.prop_drop_to_boundary("cl100k_base", "hello world", 1).holds
    assert C.prop_drop_to_boundary("cl100k_base", "\u1792" * 3, 0).holds  # nothing fits: vacuous
    v = C.prop_drop_to_boundary("cl100k_base", "\u1792" * 3, 2)
    assert not v.holds and v.witness is not None and v.witness["split_point"] == 1
    assert C.prop_prefix_pretokens(WS, "x  y", 2).holds
    assert not C.prop_prefix_pretokens(WS, "x  y", 3).holds


def _stored() -> list[str]:
    return sorted(p.name for p in (corpora_dir() / "counting").glob("*.json"))


@pytest.mark.parametrize("file", _stored())
def test_regression_stored_witnesses(file: str) -> None:
    """Each stored witness still refutes its claim, by tiktoken and by the references."""
    w = json.loads((corpora_dir() / "counting" / file).read_text(encoding="utf-8"))
    tik = load_engine(f"tiktoken:{w['vocab']}")
    ref = load_engine(f"reference:{w['vocab']}")
    if w["claim"] == "counting.monotone":
        before, after = tik.encode(w["text"]).ids, tik.encode(w["text"] + w["appended"]).ids
        assert list(before) == w["outputs"]["tiktoken encode_ordinary(text)"]
        assert len(after) < len(before)
        assert len(ref.encode(w["text"] + w["appended"]).ids) < len(ref.encode(w["text"]).ids)
        assert not C.prop_monotone(w["vocab"], w["text"], w["appended"]).holds
    else:
        assert w["claim"] == "counting.drop_to_boundary"
        ids = tik.encode(w["text"]).ids
        assert list(ids) == w["outputs"]["tiktoken encode_ordinary(text)"] == list(ref.encode(w["text"]).ids)
        assert not C.prop_drop_to_boundary(w["vocab"], w["text"], w["n"]).holds
        assert w["outputs"]["naive split (characters kept)"] == 0
        assert w["outputs"]["split point after 5 tokens (characters)"] > 0
    assert w["id"] in {"non-monotone-cl100k_base", "non-monotone-o200k_base", "collapse-cl100k_base",
                       "collapse-o200k_base"}
