"""Vocabularies the backtracking BPE (``tokspec.fast.bpe_backtrack``, ``bpe_kernel``) refuses, each with
its own named error and message: one defect at a time on an otherwise sound byte-level table, so
that each check is the one that fires."""

from __future__ import annotations

import pytest
from tokspec.fast.bpe_backtrack import BacktrackBPE, NonMonotoneVocabularyError
from tokspec.fast.bpe_kernel import CompiledBPE

from tokspec.errors import UnsupportedComponentError, VocabularyError


def _bytes_table() -> dict[bytes, int]:
    return {bytes([i]): i for i in range(256)}


def _with(**extra: int) -> dict[bytes, int]:
    ranks = _bytes_table()
    ranks.update({k.encode(): v for k, v in extra.items()})
    return ranks


@pytest.mark.parametrize("build", [BacktrackBPE, CompiledBPE.from_ranks])
def test_empty(build: object) -> None:
    with pytest.raises(VocabularyError, match=r"^ranks is empty: a BPE vocabulary needs at least the single bytes$"):
        build({})  # type: ignore[operator]


def test_shared_rank() -> None:
    with pytest.raises(VocabularyError, match=r"^ranks are not unique: two tokens share a rank \(token id\)$"):
        BacktrackBPE(_with(ab=256, bc=256))


@pytest.mark.parametrize("tok,rank", [(b"", 256), (b"ab", -1), ("ab", 256), (b"ab", 256.0)])
def test_bad_entry(tok: object, rank: object) -> None:
    ranks: dict = _bytes_table()
    ranks[tok] = rank
    want = f"bad vocabulary entry {tok!r}: {rank!r}; need non-empty bytes mapped to a rank >= 0"
    with pytest.raises(VocabularyError) as err:
        BacktrackBPE(ranks)
    assert str(err.value) == want


def test_missing_single_bytes_are_listed() -> None:
    ranks = {bytes([i]): i for i in range(3, 256)}
    ranks[b"\x00\x01"] = 256
    with pytest.raises(VocabularyError) as err:
        BacktrackBPE(ranks)
    assert str(err.value) == ("not a byte-level vocabulary: single bytes [0, 1, 2] have no rank; "
                              "every byte must be a token so that every input can be encoded")


def test_non_monotone_names_the_token() -> None:
    """abc (256) can be built only as ab + c with ab ranked above it (257)."""
    with pytest.raises(NonMonotoneVocabularyError) as err:
        BacktrackBPE(_with(abc=256, ab=257))
    assert isinstance(err.value, UnsupportedComponentError) and err.value.token_id == 256
    assert str(err.value) == ("token id=256 bytes=b'abc' is reachable by BPE only through a higher-ranked "
                              "token (non-monotone merge history); the backtracking encoder assumes rank = "
                              "merge time")


def test_unreachable_but_monotone_is_accepted() -> None:
    """abc (256) with neither ab nor bc: BPE never builds it, no error, never emitted."""
    enc = BacktrackBPE(_with(abc=256))
    assert enc.unreachable == [256] and enc.encode(b"abc") == list(b"abc")
    assert CompiledBPE.from_ranks(_with(abc=256)).encode_bytes(b"abc").tolist() == list(b"abc")


def test_compiled_tables_refuse_vocabularies_beyond_their_id_bits() -> None:
    """Pair keys pack two ids in 20 bits each, trie nodes take 24 bits: larger tables are refused
    by name (only the sizes are read before the refusal, so a stand-in with those sizes suffices)."""
    from types import SimpleNamespace

    from tokspec.fast.bpe_tables import arrays_of
    too_many_ids = SimpleNamespace(tokens=[b""] * (1 << 20), _term=[-1])
    with pytest.raises(UnsupportedComponentError,
                       match=r"^vocabulary of 1048576 ids: the compiled BPE takes ids < 2\*\*20$"):
        arrays_of(too_many_ids)  # type: ignore[arg-type]
    too_many_nodes = SimpleNamespace(tokens=[b""] * 1000, _term=[-1] * ((1 << 24) - 1000))
    with pytest.raises(UnsupportedComponentError,
                       match=r"^trie of 16776216 nodes: the compiled BPE takes < 2\*\*24 ids$"):
        arrays_of(too_many_nodes)  # type: ignore[arg-type]
    just_fits = BacktrackBPE({bytes([i]): i for i in range(256)})
    assert len(arrays_of(just_fits)["tok_len"]) == 256


def _merge_loop(ranks: dict[bytes, int], data: bytes) -> list[int]:
    """tiktoken's merge loop by definition: merge the leftmost lowest-ranked adjacent pair."""
    parts = [data[i:i + 1] for i in range(len(data))]
    while True:
        found = [(ranks[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1)
                 if parts[i] + parts[i + 1] in ranks]
        if not found:
            return [ranks[p] for p in parts]
        _, i = min(found)
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def test_unreachable_tokens_whose_prefix_is_a_token_are_accepted() -> None:
    """abc (257) has neither ab nor bc; abcd (258) merges only cd and stops at [a, b, cd]. Both are
    unreachable (their own merge loop is not the token) but monotone: accepted, never emitted, and
    a token prefix (abc of abcd) is no merge step."""
    ranks = _with(cd=256, abc=257, abcd=258)
    enc = BacktrackBPE(ranks)
    assert enc.unreachable == [r for t, r in ranks.items() if _merge_loop(ranks, t) != [r]] == [257, 258]
    for data in (b"abc", b"abcd", b"abcdabcd", b"xabcdcd"):
        assert enc.encode(data) == _merge_loop(ranks, data)


def test_non_monotone_history_through_two_disjoint_merges_is_refused() -> None:
    """abcd (256) is built by the merge loop from ab (257) and cd (258), both ranked above it: the
    check must replay both merges (each replacing exactly one pair) to see it."""
    ranks = _with(abcd=256, ab=257, cd=258)
    assert _merge_loop(ranks, b"abcd") == [256]  # BPE does build it, through higher ranks
    with pytest.raises(NonMonotoneVocabularyError) as err:
        BacktrackBPE(ranks)
    assert err.value.token_id == 256


def test_token_ranked_below_its_own_bytes_is_refused() -> None:
    """A pair token at rank 0 (its bytes ranked 1..256) is built only from higher-ranked tokens:
    rank 0 is a real rank, refused like any other."""
    ranks = {bytes([i]): i + 1 for i in range(256)}
    ranks[b"ab"] = 0
    assert _merge_loop(ranks, b"ab") == [0]
    with pytest.raises(NonMonotoneVocabularyError) as err:
        BacktrackBPE(ranks)
    assert err.value.token_id == 0


def test_ranks_with_gaps_leave_no_tokens_there() -> None:
    """Ranks need not be contiguous: the ids between (here 256..299) are no tokens (not listed as
    unreachable, never emitted), and the tokens after the gap are built and merged as usual."""
    ranks = _with(ab=300, abc=301)
    enc = BacktrackBPE(ranks)
    assert enc.unreachable == []
    for data in (b"ab", b"abc", b"abcab", b"cab"):
        assert enc.encode(data) == _merge_loop(ranks, data)
    assert enc.encode(b"abc") == [301]


def test_many_missing_single_bytes_list_the_first_five() -> None:
    ranks = {bytes([i]): i for i in range(10, 256)}
    with pytest.raises(VocabularyError) as err:
        BacktrackBPE(ranks)
    assert str(err.value) == ("not a byte-level vocabulary: single bytes [0, 1, 2, 3, 4] have no rank; "
                              "every byte must be a token so that every input can be encoded")
