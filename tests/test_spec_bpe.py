"""Unit tests of tokspec.spec.bpe: the definition on hand examples, each property passing on the
definition and FAILING on a deliberately wrong encoder (no property that cannot fail)."""

from __future__ import annotations

import pytest

from tokspec.spec import bpe, load_claims

RANKS = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3, b"bc": 4, b"abc": 5}


def _greedy_left(ranks: dict[bytes, int]) -> bpe.BytesEncoder:
    """A wrong encoder: longest token from the left (the 'greedy' non-BPE encoder of the seed)."""
    def enc(data: bytes) -> list[bytes]:
        out, i = [], 0
        while i < len(data):
            j = max(j for j in range(i + 1, len(data) + 1) if data[i:j] in ranks or j == i + 1)
            out.append(data[i:j])
            i = j
        return out
    return enc


def test_definition_merges_lowest_rank_leftmost() -> None:
    assert bpe.bpe_encode(RANKS, b"abc") == [b"abc"]
    assert bpe.bpe_encode({b"a": 0, b"aa": 1}, b"aaa") == [b"aa", b"a"]  # leftmost on ties
    assert bpe.bpe_encode(RANKS, b"") == []
    assert bpe.bpe_encode({b"x": 0}, b"\xff\x00") == [b"\xff", b"\x00"]  # bytes outside ranks stay


def test_seed_example_holds_for_the_definition() -> None:
    assert bpe.prop_seed_example().holds


def test_seed_example_catches_greedy() -> None:
    v = bpe.prop_seed_example(lambda r, d: _greedy_left(r)(d))
    assert not v.holds and v.witness is not None and "prefix" in v.witness


def test_engine_is_bpe_detects_difference() -> None:
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}
    assert bpe.prop_engine_is_bpe(ranks, b"abc", lambda d: bpe.bpe_encode(ranks, d)).holds
    v = bpe.prop_engine_is_bpe(ranks, b"abc", _greedy_left(ranks))
    assert not v.holds and v.witness == {"data": "616263", "expected": ["61", "6263"], "got": ["6162", "63"]}


@pytest.mark.parametrize("prop", [bpe.prop_substrings_valid, bpe.prop_last_token_determines])
def test_corollaries_hold_on_definition_and_fail_on_unstable(prop) -> None:  # type: ignore[no-untyped-def]
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}
    assert prop(ranks, b"abcab").holds

    def unstable(d: bytes) -> list[bytes]:  # merges only inputs of even length
        return bpe.bpe_encode(ranks, d) if len(d) % 2 == 0 else [d[i:i + 1] for i in range(len(d))]
    assert not prop(ranks, b"abcabc", unstable).holds


def test_corollary_III_and_IIIa() -> None:
    ranks = {b"a": 0, b"b": 1, b"ab": 2, b"ba": 3}
    v = bpe.prop_shared_token_concat(ranks, b"ab", b"ab", b"ab")
    assert v.holds and "Corollary III" in v.explanation  # premise met: not vacuous
    v = bpe.prop_compatible_extension(ranks, b"ab", b"ab")
    assert v.holds and "Corollary IIIa" in v.explanation

    def broken(d: bytes) -> list[bytes]:  # forgets a merge on long inputs only
        out = bpe.bpe_encode(ranks, d)
        return [d[:1], d[1:2], *out[1:]] if len(d) >= 6 else out
    assert not bpe.prop_shared_token_concat(ranks, b"ab", b"ab", b"ab", broken).holds
    assert not bpe.prop_compatible_extension(ranks, b"abab", b"ab", broken).holds


def test_output_valid_rejects_foreign_tokens() -> None:
    v = bpe.prop_output_valid(RANKS, b"ca", lambda d: [d])
    assert not v.holds and "not in the vocabulary" in v.explanation


def test_byte_roundtrip() -> None:
    table = {0: b"h", 1: "é".encode()}
    assert bpe.prop_byte_roundtrip("hé", [0, 1], table.__getitem__).holds
    v = bpe.prop_byte_roundtrip("hé", [1, 0], table.__getitem__)
    assert not v.holds and v.witness is not None and v.witness["first_diff_byte"] == 0


def test_whole_piece_shortcut_is_falsified_by_its_stored_counterexample() -> None:
    claim = load_claims()["bpe.whole_piece_shortcut"]
    assert claim.status == "falsified" and claim.counterexample is not None
    v = claim.check(**claim.counterexample)
    assert not v.holds and v.witness is not None and v.witness["bpe"] == ["61", "6263", "64"]


def test_whole_piece_shortcut_matches_tiktoken_on_the_counterexample() -> None:
    """The falsified statement is what tiktoken does: it returns the whole token."""
    import tiktoken
    ranks = bpe.SHORTCUT_COUNTEREXAMPLE["ranks"]
    enc = tiktoken.Encoding("tiny", pat_str=r"(?s).+", mergeable_ranks=ranks, special_tokens={})
    assert enc.encode_ordinary("abcd") == [ranks[b"abcd"]]
    assert bpe.bpe_encode(ranks, b"abcd") == [b"a", b"bc", b"d"]
