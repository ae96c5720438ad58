"""``tokspec.fast.bpe_decode.FlatBytes``: decode over one flat byte table equals the definition
(theorem D2 of tokspec.spec.decode: the tokens' bytes joined, UTF-8 decoded with each maximal invalid
subpart replaced by one U+FFFD) and tiktoken's own decode; unknown ids are refused by name."""

from __future__ import annotations

import random

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tokspec import load_engine
from tokspec.fast.bpe_decode import SHORT, FlatBytes, UnknownIdError
from tokspec.formats.vocab import load_named_tiktoken

# ids 2, 7, 8, 9 are holes; 4-6 are the three bytes of U+20AC; 10 is a special token only
TINY = {b"a": 0, b"b": 1, b"ab": 3, b"\xe2": 4, b"\x82": 5, b"\xac": 6}
SPECIALS = {"<s>": 10}


def decoded(flat: FlatBytes, ids: list[int]) -> str:
    """``flat.decode`` by both of its paths (a list of Python ints: the short path; an int64 array: numpy), which must agree."""
    short = flat.decode(list(ids))
    assert flat.decode(np.asarray(ids, dtype=np.int64)) == short
    return short


def definition(ranks: dict[bytes, int], specials: dict[str, int], ids: list[int]) -> str:
    table = {i: t for t, i in ranks.items()}
    for s, i in specials.items():
        table.setdefault(i, s.encode("utf-8"))
    return b"".join(table[i] for i in ids).decode("utf-8", errors="replace")


@pytest.mark.parametrize("ids, text", [
    ([], ""),
    ([0], "a"),
    ([3, 0, 1], "abab"),
    ([4, 5, 6], "\u20ac"),
    ([4], "\ufffd"),
    ([4, 0, 5, 6], "\ufffda\ufffd\ufffd"),  # a maximal invalid subpart is one U+FFFD each
    ([4, 5], "\ufffd"),
    ([10, 0, 10], "<s>a<s>"),
    ([1] * 5, "bbbbb"),
])
def test_tiny_vocabulary_with_holes_and_a_special(ids: list[int], text: str) -> None:
    flat = FlatBytes(TINY, SPECIALS)
    assert decoded(flat, ids) == text == definition(TINY, SPECIALS, ids)


def test_n_vocab_is_the_first_id_that_is_no_token() -> None:
    assert FlatBytes(TINY, SPECIALS).n_vocab == 2
    assert FlatBytes({b"x": 0, b"y": 1, b"z": 2}).n_vocab == 3  # no hole: the size
    assert FlatBytes({}).n_vocab == 0 and decoded(FlatBytes({}), []) == ""


@pytest.mark.parametrize("ids, bad", [([2], 2), ([-1], -1), ([11], 11), ([0, 7, 9], 7), ([10, 1000], 1000),
                                      ([0, 1, 8], 8)])
def test_an_id_that_is_no_token_is_refused_by_name(ids: list[int], bad: int) -> None:
    with pytest.raises(UnknownIdError, match=rf"^id={bad} is no token of this vocabulary$"):
        FlatBytes(TINY, SPECIALS).decode(ids)
    with pytest.raises(UnknownIdError, match=rf"^id={bad} is no token of this vocabulary$"):
        FlatBytes(TINY, SPECIALS).decode(np.asarray(ids, dtype=np.int64))
    with pytest.raises(UnknownIdError, match=rf"^id={bad} is no token of this vocabulary$"):
        FlatBytes(TINY, SPECIALS).decode([0] * SHORT + ids)  # past SHORT: the numpy path


def test_a_special_never_replaces_a_token_of_the_same_id() -> None:
    flat = FlatBytes(TINY, {"<x>": 0, "<y>": 2})
    assert decoded(flat, [0, 2]) == "a<y>" and flat.n_vocab == 7  # the hole 2 is filled by <y>


@given(st.lists(st.binary(min_size=1, max_size=4), min_size=1, max_size=12, unique=True),
       st.data())
def test_any_table_and_id_sequence_equal_the_definition(tokens: list[bytes], data: st.DataObject) -> None:
    ids = data.draw(st.lists(st.integers(0, 2 * len(tokens)), unique=True, min_size=len(tokens),
                             max_size=len(tokens)))
    ranks = dict(zip(tokens, ids))
    seq = data.draw(st.lists(st.sampled_from(ids), max_size=20))
    assert decoded(FlatBytes(ranks), seq) == definition(ranks, {}, seq)


def test_cl100k_equals_tiktoken_on_random_id_sequences() -> None:
    vocab = load_named_tiktoken("cl100k_base")
    reference = load_engine("tiktoken:cl100k_base")  # tiktoken itself, offline
    flat = FlatBytes(vocab.ranks, {"<|endoftext|>": 100257})
    assert flat.n_vocab == len(vocab.ranks) == 100256
    rng = random.Random(7)
    for _ in range(300):
        ids = [rng.randrange(100256) for _ in range(rng.randint(1, 12))] + rng.choice([[], [100257]])
        assert decoded(flat, ids) == reference.decode(ids), ids
    text = "héllo wörld 🙂 ünïcödé 中文"
    ids = list(reference.encode(text).ids)
    for end in range(len(ids) + 1):  # every prefix, cut characters included
        assert decoded(flat, ids[:end]) == reference.decode(ids[:end])


def test_short_lists_of_python_ints_take_the_short_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """The short path is taken for at most SHORT Python ints (the per-call cost the module docstring
    promises), the numpy path otherwise; both give the definition's text."""
    flat, calls = FlatBytes(TINY, SPECIALS), []
    real = flat._decode_short
    monkeypatch.setattr(flat, "_decode_short", lambda ids: calls.append(len(ids)) or real(ids))
    for ids in ([0] * SHORT, [0] * (SHORT + 1), np.zeros(3, dtype=np.int64), [0, np.int64(1)], [4, 5, 6], []):
        expect = definition(TINY, SPECIALS, [int(i) for i in ids])
        assert flat.decode(ids) == expect  # type: ignore[arg-type]
    assert calls == [SHORT, 3, 0]
