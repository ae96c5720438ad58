"""Backtracking BPE (tokspec.fast.bpe_backtrack) against merge-loop BPE, without pretokenization.

Oracles: a naive merge loop written here (tiny vocabularies), tiktoken's Rust merge loop on one
piece (``encode_single_piece``; no pretokenization), and the encoder's own second algorithm
(``encode_via_table``). Exactness means identical id lists.
"""

from __future__ import annotations

import functools
import random

import pytest
import tiktoken
from hypothesis import assume, example, given
from hypothesis import strategies as st

from tokspec.corpus import build_corpus
from tokspec.errors import VocabularyError
from tokspec.fuzz.strategies import trained_bpe_ranks
from tokspec.fast.bpe_backtrack import BacktrackBPE, NonMonotoneVocabularyError, SelfCheckError
from tokspec.formats.vocab import load_named_tiktoken


def naive_bpe(ranks: dict[bytes, int], data: bytes) -> list[int]:
    """Merge loop: merge the leftmost lowest-rank adjacent pair until none concatenates to a token."""
    parts = [bytes([b]) for b in data]
    while True:
        best: tuple[int, int] | None = None
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best[0]):
                best = (r, i)
        if best is None:
            return [ranks[p] for p in parts]
        i = best[1]
        parts[i:i + 2] = [parts[i] + parts[i + 1]]


def random_ranks(seed: int, alphabet: bytes = b"abc", merges: int = 30, max_len: int = 7) -> dict[bytes, int]:
    """All 256 bytes, then ``merges`` random concatenations of earlier tokens (rank = merge order).

    Some generated tokens are unreachable under tiktoken semantics (their bytes merge differently),
    and some are reachable only through a higher-ranked token (the encoder rejects those tables).
    """
    rng = random.Random(seed)
    ranks = {bytes([i]): i for i in range(256)}
    pool = [bytes([c]) for c in alphabet]
    tries = 0
    while len(ranks) < 256 + merges and tries < 10_000:
        tries += 1
        tok = rng.choice(pool) + rng.choice(pool)
        if len(tok) <= max_len and tok not in ranks:
            ranks[tok] = len(ranks)
            pool.append(tok)
    return ranks


def trained_ranks(seed: int, alphabet: bytes = b"abc", merges: int = 30) -> dict[bytes, int]:
    """A table learned like BPE training (``tokspec.fuzz.strategies.trained_bpe_ranks``)."""
    return trained_bpe_ranks(seed, alphabet=alphabet, merges=merges)


def build_or_none(ranks: dict[bytes, int]) -> BacktrackBPE | None:
    """The encoder, or None if it rightly rejects a non-monotone table (checked by the merge loop)."""
    try:
        return BacktrackBPE(ranks)
    except NonMonotoneVocabularyError as exc:
        tok = next(t for t, r in ranks.items() if r == exc.token_id)
        assert naive_bpe(ranks, tok) == [exc.token_id]  # the rejection is justified
        return None


@functools.lru_cache(maxsize=None)
def tiny(seed: int) -> tuple[dict[bytes, int], BacktrackBPE | None]:
    ranks = trained_ranks(seed // 2) if seed % 2 else random_ranks(seed // 2)
    return ranks, build_or_none(ranks)


@functools.lru_cache(maxsize=None)
def real(name: str) -> tuple[BacktrackBPE, tiktoken.Encoding]:
    vocab = load_named_tiktoken(name)
    core = tiktoken.Encoding(f"{name}-whole", pat_str=r"(?s).+", mergeable_ranks=vocab.ranks,
                             special_tokens={})
    return BacktrackBPE(vocab.ranks), core


@given(seed=st.integers(0, 400), text=st.text(alphabet="abc", max_size=40))
@example(seed=0, text="abcabcabc")
@example(seed=7, text="a" * 33)
def test_hyp_tiny_vocab_matches_merge_loop(seed: int, text: str) -> None:
    ranks, enc = tiny(seed)
    assume(enc is not None)
    assert enc is not None
    data = text.encode()
    want = naive_bpe(ranks, data)
    assert enc.encode(data) == want
    assert enc.encode_via_table(data) == want


@pytest.mark.parametrize("seed", range(60))
def test_tiny_vocab_every_token_and_tiktoken(seed: int) -> None:
    ranks, enc = tiny(seed)
    if enc is None:  # rightly rejected as non-monotone: tiny() asserted the merge loop agrees
        return
    core = tiktoken.Encoding(f"tiny{seed}", pat_str=r"(?s).+", mergeable_ranks=ranks, special_tokens={})
    rng = random.Random(seed)
    for _ in range(30):
        data = bytes(rng.choice(b"abc") for _ in range(rng.randint(1, 60)))
        want = naive_bpe(ranks, data)
        assert core._core_bpe.encode_single_piece(data) == want  # the oracles agree with each other
        assert enc.encode(data) == want
    for tok, rank in ranks.items():  # unreachable tokens encode to what the merge loop says
        assert enc.encode(tok) == naive_bpe(ranks, tok)
        assert enc.reachable[rank] == (naive_bpe(ranks, tok) == [rank])


@pytest.mark.parametrize("seed", [1, 3, 4])
def test_rank_zero_token_in_both_encoders(seed: int) -> None:
    """Byte 0 is token id 0 in these tables: texts full of it, alone and between merged tokens,
    encode like the merge loop in both encoders (id 0 is a real token, not a "none" marker)."""
    ranks, enc = tiny(seed)
    assert enc is not None and ranks[b"\x00"] == 0
    rng = random.Random(seed)
    texts = [b"\x00", b"\x00\x00", b"a\x00", b"\x00abc"]
    texts += [bytes(rng.choice(b"abc\x00") for _ in range(rng.randint(1, 30))) for _ in range(30)]
    for data in texts:
        want = naive_bpe(ranks, data)
        assert enc.encode(data) == want
        assert enc.encode_via_table(data) == want


def test_unreachable_token_never_emitted() -> None:
    ranks = {bytes([i]): i for i in range(256)}
    ranks[b"abc"] = 256  # no "ab" or "bc": BPE can never build it
    enc = BacktrackBPE(ranks)
    assert enc.unreachable == [256]
    assert enc.encode(b"abcabc") == list(b"abcabc")


@pytest.mark.parametrize("bad", [{}, {b"a": 0, b"b": 0}, {b"": 0}, {b"a": -1}, {b"a": 0, b"b": 1}])
def test_bad_vocabulary_is_named_error(bad: dict[bytes, int]) -> None:
    with pytest.raises(VocabularyError):
        BacktrackBPE(bad)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_real_vocab_whole_text_matches_tiktoken(name: str) -> None:
    enc, core = real(name)
    for text in build_corpus(seed=1)[::3]:
        data = text.encode()
        want = core._core_bpe.encode_single_piece(data) if data else []
        assert enc.encode(data) == want, text[:80]
        if len(data) < 2000:
            assert enc.encode_via_table(data) == want, text[:80]


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
@pytest.mark.parametrize("unit", ["a", "ab", " ", "的", "0", "=-", "'s", "🙂", "\n\n", "aé"])
def test_real_vocab_adversarial_repetitions(name: str, unit: str) -> None:
    enc, core = real(name)
    for reps in (1, 2, 3, 7, 64, 1000):
        data = (unit * reps).encode()
        want = core._core_bpe.encode_single_piece(data)
        assert enc.encode(data) == want
        assert enc.encode_via_table(data) == want


@given(st.binary(max_size=64))
def test_hyp_arbitrary_bytes_cl100k(data: bytes) -> None:
    enc, core = real("cl100k_base")
    want = core._core_bpe.encode_single_piece(data) if data else []
    assert enc.encode(data) == want
    assert enc.encode_via_table(data) == want


def test_generated_tables_mostly_accepted_and_trained_ones_all() -> None:
    verdicts = [tiny(seed)[1] is not None for seed in range(60)]
    assert all(verdicts[1::2]), "a training-like table was rejected"
    assert sum(verdicts[0::2]) >= 10, "too few random tables accepted for the tests to mean much"


def test_self_check_can_fail_and_names_the_token(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build-time self-check is live: break the encoder and it reports the first bad token."""
    ranks, enc = tiny(1)
    assert enc is not None
    enc.self_check()  # passes on a sound build
    monkeypatch.setattr(BacktrackBPE, "encode", lambda self, data: list(data))
    # the message names the token, what it encodes to, and what that means for the vocabulary
    with pytest.raises(SelfCheckError, match=r"self-check failed: token id=256 bytes=b'.*' encodes to \[.*\]; "
                       r"the vocabulary is not a BPE vocabulary under tiktoken semantics$"):
        enc.self_check()


def test_seed_worked_example_abacbb() -> None:
    """The seed's example: dictionary a b c ab cb ac bb cbb acbb (in that order) encodes
    'abacb' as ab a cb but 'abacbb' as ab acbb; the prefix table holds one last token per prefix."""
    ranks = {bytes([i]): i for i in range(256)}
    for tok in (b"ab", b"cb", b"ac", b"bb", b"cbb", b"acbb"):
        ranks[tok] = len(ranks)
    enc = BacktrackBPE(ranks)
    pieces = {v: k for k, v in ranks.items()}
    assert [pieces[i] for i in enc.encode(b"abacb")] == [b"ab", b"a", b"cb"]
    assert [pieces[i] for i in enc.encode(b"abacbb")] == [b"ab", b"acbb"]
    for text in (b"a", b"ab", b"aba", b"abac", b"abacb", b"abacbb"):
        assert enc.encode_via_table(text) == enc.encode(text) == naive_bpe(ranks, text)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_stress_size_ladder_whole_text(name: str) -> None:
    """Opt-in (TOKSPEC_SLOW=1): 10 B .. 1 MB single pieces, prose and pathological repetition."""
    enc, core = real(name)
    rng = random.Random(5)
    prose = " ".join(t for t in build_corpus(seed=11) if t.isascii()).encode()
    prose = (prose * (1_000_000 // len(prose) + 1))[:1_000_000]
    noise = bytes(rng.choice(b"ab \n") for _ in range(100_000))
    for size in (10, 100, 1000, 10_000, 100_000, 1_000_000):
        for data in (prose[:size], (b"a" * size), (b"ab" * size)[:size], noise[:size]):
            assert enc.encode(data) == core._core_bpe.encode_single_piece(data), (size, data[:20])


def test_regression_non_monotone_abc() -> None:
    """corpora/fast/non-monotone/abc.json: the smallest table breaking 'rank = merge time'."""
    import json
    from pathlib import Path
    doc = json.loads((Path(__file__).resolve().parent.parent / "corpora" / "fast" / "non-monotone"
                      / "abc.json").read_text(encoding="utf-8"))
    ranks = {bytes([i]): i for i in range(256)}
    ranks.update({k.encode(): v for k, v in doc["extra_ranks"].items()})
    assert naive_bpe(ranks, b"abc") == doc["outputs"]["tiktoken encode_single_piece(b'abc')"] == [256]
    with pytest.raises(NonMonotoneVocabularyError) as info:
        BacktrackBPE(ranks)
    assert info.value.token_id == 256
