"""``encode_ids`` of many texts of an HF Unigram pipeline in one kernel call
(``tokspec.fast._unigram_batch``: ``fast:mon-unigram`` on the texts its normalizer leaves alone).

Contract: ``encode_ids_batch(texts)`` is ``[encode_ids(t) for t in texts]`` and so HF
``tokenizers``' ids of each text: texts the normalizer leaves alone (one kernel call a group) and
texts it changes (one by one) mixed in order, empty texts, leading, trailing and repeated spaces,
byte fallback; both tries and both tie-breaks; compiled and interpreted alike; groups of bounded
size; several threads at once; a 1 MB text among short ones. A text ``encode_ids`` rejects raises
the same error. ``in_groups`` keeps the order whatever goes to the group call; texts of
``BATCH_TEXT_MAX`` characters or more go through ``encode_ids`` alone.
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from tokspec import InvalidTextError, load_engine
from tokspec.fast import _unigram_batch, parallel
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import trained_model

from _threads import batch_failures_in_threads

# ASCII, Burmese (the model's script), marks NFC composes (the normalizer changes those texts),
# characters the vocabulary lacks (byte fallback), spaces everywhere
PIECES = ["", " ", "  ", "a", "hello world", " x ", "\u1000\u102c\u1004\u103a", "\u1019\u103c\u1014\u103a\u1019\u102c",
          "A\u030a", "e\u0301", "\u4e2d\u6587", "\U0001f642", "\u0f75", "tab\there", "\n", "Don't  stop "]


def _texts(seed: int, count: int = 60) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))) for _ in range(count)]


@functools.cache
def engine(trie: str = "double-array", tie_break: str | None = None, jit: bool = True) -> DatrieUnigram:
    return datrie_encoder("mon-unigram", trie=trie, tie_break=tie_break, jit=jit)  # type: ignore[arg-type]


@functools.cache
def hf_ids() -> object:
    return load_engine("hf:mon-unigram")


def test_batch_equals_encode_ids_and_hf() -> None:
    fast, hf = engine(), hf_ids()
    assert fast._identity is not None
    for seed in range(4):
        texts = _texts(seed)
        kinds = {fast._identity.applies(t) for t in texts}
        assert kinds == {True, False}  # both paths in every batch
        got = fast.encode_ids_batch(texts)
        assert [g.dtype for g in got] == [np.dtype(np.int64)] * len(texts)
        assert [g.tolist() for g in got] == [fast.encode_ids(t).tolist() for t in texts]
        assert [g.tolist() for g in got] == [list(hf.encode(t).ids) for t in texts]  # type: ignore[attr-defined]
    assert fast.encode_ids_batch([]) == []


@pytest.mark.parametrize(("trie", "tie_break"), [("hash", None), ("double-array", "last")])
def test_other_tries_and_tie_breaks(trie: str, tie_break: str | None) -> None:
    fast = engine(trie, tie_break)
    texts = _texts(11)
    assert [g.tolist() for g in fast.encode_ids_batch(texts)] == [fast.encode_ids(t).tolist() for t in texts]


def test_interpreted_equals_compiled() -> None:
    texts = _texts(5, 20)
    got = [g.tolist() for g in engine(jit=False).encode_ids_batch(texts)]
    assert got == [g.tolist() for g in engine().encode_ids_batch(texts)]


def test_bad_texts_raise_what_encode_ids_raises() -> None:
    fast = engine()
    for bad in (["fine", "a\ud800 b"], ["fine", "A\u030a\udfff"]):  # left alone by the normalizer / changed
        with pytest.raises(InvalidTextError, match="surrogate"):
            fast.encode_ids_batch(bad)
    with pytest.raises(InvalidTextError, match="must be str"):
        fast.encode_ids_batch(["fine", b"bytes"])  # type: ignore[list-item]


def test_groups_are_bounded_and_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = datrie_encoder("mon-unigram")
    monkeypatch.setattr(_unigram_batch, "BATCH_BYTES", 10)
    groups: list[list[bytes]] = []
    real = _unigram_batch.ids_of_texts

    def spy(bk: object, encoded: list[bytes], *rest: object) -> list[np.ndarray]:
        groups.append(list(encoded))
        return real(bk, encoded, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(_unigram_batch, "ids_of_texts", spy)
    texts = ["abc", "defg", "A\u030a", "hi", "x" * 12, "", "jk", "lmnopqrs", "t"]
    got = fast.encode_ids_batch(texts)
    assert [g.tolist() for g in got] == [list(hf_ids().encode(t).ids) for t in texts]  # type: ignore[attr-defined]
    assert groups == [[b"abc", b"defg", b"hi"], [b"x" * 12], [b"jk", b"lmnopqrs"], [b"t"]]
    groups.clear()
    monkeypatch.setattr(_unigram_batch, "BATCH_TEXT_MAX", 4)  # longer texts: encode_ids alone
    got = fast.encode_ids_batch(texts)
    assert [g.tolist() for g in got] == [list(hf_ids().encode(t).ids) for t in texts]  # type: ignore[attr-defined]
    assert groups == [[b"abc", b"hi", b"jk", b"t"]]


def test_in_groups_keeps_the_order() -> None:
    calls: list[list[bytes]] = []

    def run_group(group: list[bytes]) -> list[np.ndarray]:
        calls.append(list(group))
        return [np.array([len(g)]) for g in group]

    texts = ["aa", "-b", "ccc", "-", "dddd", "e"]
    got = _unigram_batch.in_groups(texts, lambda t: not t.startswith("-"), run_group,
                                   lambda t: np.array([-len(t)]), 5)
    assert [g.tolist() for g in got] == [[2], [-2], [3], [-1], [4], [1]]
    assert calls == [[b"aa", b"ccc"], [b"dddd", b"e"]]
    assert _unigram_batch.in_groups([], bool, run_group, len, 5) == []  # type: ignore[arg-type]


def test_batch_from_threads_at_once() -> None:
    fast = engine()
    batches = [_texts(seed, 80) for seed in range(4)]
    want = [[fast.encode_ids(t).tolist() for t in b] for b in batches]
    assert batch_failures_in_threads(fast.encode_ids_batch, batches, want) == []


@pytest.mark.parametrize("model", ["mon-unigram", "spm-unigram-bytes"])
def test_runner_ids_gives_each_slot_one_batch(model: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both batch paths (an HF pipeline's, a ``.model``'s): one batch call a slot, ids as the loop."""
    fast = datrie_encoder(model if model == "mon-unigram" else str(trained_model(model)))
    texts = _texts(9, 200)
    want = [fast.encode_ids(t).tolist() for t in texts]
    calls: list[int] = []
    real = DatrieUnigram.encode_ids_batch

    def spy(self: DatrieUnigram, batch: list[str]) -> list[np.ndarray]:
        calls.append(len(batch))
        return real(self, batch)

    monkeypatch.setattr(DatrieUnigram, "encode_ids_batch", spy)
    for workers in (1, 2, 3):
        calls.clear()
        assert [g.tolist() for g in parallel.Runner(workers=workers).ids(fast, texts)] == want
        assert len(calls) == workers and sum(calls) == len(texts)


def test_a_megabyte_text_among_short_ones() -> None:
    fast = engine()
    rng = random.Random(3)
    words = ["the", "of", "tokenizer", "\u1000\u102c\u1004\u103a", "\u4e2d\u6587", "  ", "42", "\U0001f642"]
    long_text = " ".join(rng.choice(words) for _ in range(200_000))
    assert len(long_text.encode()) > 1_000_000 and fast._identity is not None and fast._identity.applies(long_text)
    texts = ["short one", long_text, "", "tail text ", long_text[:_unigram_batch.BATCH_TEXT_MAX - 1]]
    got = fast.encode_ids_batch(texts)
    assert [g.tolist() for g in got] == [list(hf_ids().encode(t).ids) for t in texts]  # type: ignore[attr-defined]
