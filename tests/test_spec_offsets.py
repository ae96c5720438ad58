"""Unit tests of tokspec.spec.offsets: each property accepts correct offsets and rejects a broken one."""

from __future__ import annotations

from tokspec.spec import offsets as O


def test_oracle_follows_the_contract_for_split_characters() -> None:
    text = "a😀b"  # the emoji is 4 bytes; split it 2 + 2
    assert O.offsets_from_token_bytes(text, [1, 2, 2, 1]) == [(0, 1), (1, 2), (1, 2), (2, 3)]
    assert O.offsets_from_token_bytes(text, [3, 3]) == [(0, 2), (1, 3)]


def test_contiguous_partition() -> None:
    assert O.prop_contiguous_partition("ab c", [(0, 2), (2, 4)]).holds
    assert O.prop_contiguous_partition("a😀", [(0, 2), (1, 2)]).holds  # shared multi-byte char
    assert not O.prop_contiguous_partition("ab c", [(0, 2), (3, 4)]).holds  # gap
    assert not O.prop_contiguous_partition("abc", [(0, 2), (1, 3)]).holds  # overlap on ASCII
    assert not O.prop_contiguous_partition("abc", [(0, 3), (3, 3)]).holds  # empty span
    assert not O.prop_contiguous_partition("abc", [(0, 2)]).holds  # stops early


def test_offsets_match_bytes() -> None:
    text = "h€"
    toks = [b"h", "€".encode()[:1], "€".encode()[1:]]
    assert O.prop_offsets_match_bytes(text, [(0, 1), (1, 2), (1, 2)], toks).holds
    v = O.prop_offsets_match_bytes(text, [(0, 1), (1, 2), (2, 2)], toks)
    assert not v.holds and v.witness is not None and v.witness["first_diff"] == 2


def test_monotone_cover() -> None:
    assert O.prop_monotone_cover("ab cd", [(0, 2), (3, 5)]).holds  # the space is skippable
    assert not O.prop_monotone_cover("ab cd", [(0, 2), (4, 5)]).holds  # 'c' uncovered
    assert not O.prop_monotone_cover("ab cd", [(3, 5), (0, 2)]).holds  # out of order
    assert not O.prop_monotone_cover("ab", [(0, 3)]).holds  # out of bounds
    assert O.prop_monotone_cover("ﬁ", [(0, 1), (0, 1)]).holds  # one char, two tokens (NFKC)
    assert O.prop_monotone_cover("\t", [(0, 0), (0, 1)]).holds  # inserted metaspace, then the tab
    assert not O.prop_monotone_cover("ab", [(1, 0)]).holds  # reversed
    assert O.prop_monotone_cover("a\u0323", [(0, 0), (0, 2), (0, 2), (0, 2)]).holds  # composed by NFC
    assert not O.prop_monotone_cover("abc", [(0, 3), (1, 2)]).holds  # end goes backwards


def test_canonical_reordering_steps_back_inside_a_cluster() -> None:
    ex = O.REORDERING_COUNTEREXAMPLE
    assert not O.prop_monotone_cover(ex["text"], ex["offsets"], allow_reordering=False).holds
    assert O.prop_monotone_cover(ex["text"], ex["offsets"]).holds
    assert not O.prop_monotone_cover("ab", [(1, 2), (0, 1)]).holds  # no marks: no excuse


def test_reordering_counterexample_is_what_the_engines_do() -> None:
    """The stored offsets are computed by both HF (adapter) and the reference today."""
    from tokspec import load_engine
    ex = O.REORDERING_COUNTEREXAMPLE
    for name in ("hf:mon-unigram", "reference:mon-unigram"):
        assert list(load_engine(name).encode(ex["text"]).offsets) == ex["offsets"], name
