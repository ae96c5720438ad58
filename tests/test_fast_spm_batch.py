"""``encode_ids`` of many texts in one kernel call: ``DatrieUnigram.encode_ids_batch`` of a
sentencepiece model (``tokspec.fast._spm_ids.spm_ids_batch`` / ``ids_of_texts``).

Contract: ``encode_ids_batch(texts)`` is ``[encode_ids(t) for t in texts]`` and so sentencepiece's
``encode`` of each text: for three trained models, compiled and interpreted alike, with empty
texts, texts whose normalized form outgrows the work buffers or whose ids outgrow the output array
(both regrow and go on from the text that did not fit), groups of bounded size, several threads
at once, a 1 MB text among short ones; a text ``encode_ids`` rejects raises the same error.
``tie_break="last"`` (which ``spm_ids`` does not implement) goes text by text.
``Runner.ids`` gives each slot its share in one batch call (``tests/test_fast_unigram_batch.py``).
"""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest
import sentencepiece

from tokspec import InvalidTextError
from tokspec.fast import _spm_ids
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.formats.models import trained_model

from _threads import batch_failures_in_threads

KINDS = ["spm-unigram-bytes", "spm-unigram", "spm-unigram-identity"]
PIECES = ["", " ", "  ", "a", "hello world", " x ", "\t\n", "\u00e9\u0301", "\u4e2d\u6587", "\U0001f642",
          "\ufdfa", "\u3300\ufb01", "<\u0338", "\x01\x7f~", "Don't  stop ", "\u0e01\u0e34", "x\u0301y"]


def _texts(seed: int, count: int = 60) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 6))) for _ in range(count)]


@functools.cache
def engine(kind: str, jit: bool = True) -> DatrieUnigram:
    return datrie_encoder(str(trained_model(kind)), jit=jit)


@functools.cache
def processor(kind: str) -> sentencepiece.SentencePieceProcessor:
    return sentencepiece.SentencePieceProcessor(model_file=str(trained_model(kind)))


@pytest.mark.parametrize("kind", KINDS)
def test_batch_equals_sentencepiece_and_encode_ids(kind: str) -> None:
    fast = engine(kind)
    for seed in range(4):
        texts = _texts(seed)
        got = fast.encode_ids_batch(texts)
        assert [g.dtype for g in got] == [np.dtype(np.int64)] * len(texts)
        assert [g.tolist() for g in got] == [fast.encode_ids(t).tolist() for t in texts]
        assert [g.tolist() for g in got] == processor(kind).encode(texts)
    assert fast.encode_ids_batch([]) == []


def test_a_fresh_engine_regrows_and_goes_on_from_the_text_that_did_not_fit() -> None:
    """Buffers are sized by the longest text's bytes. nmt_nfkc's U+FDFA (3 bytes) normalizes to 18
    characters, so its text overflows the work buffers (``state[1]``: the size they need), and its
    ids the output array sized by the batch's bytes (``state[2]``). Each time, the kernel stops at
    that text, the caller grows what overflowed and calls again from that text: the texts before
    it are not encoded again, and the ids are still sentencepiece's."""
    kind = "spm-unigram-bytes"
    calls: list[tuple[int, ...]] = []
    real = _spm_ids.spm_ids_batch

    class Spy:
        def spm_ids_batch(self, *args: object) -> None:
            real(*args)  # type: ignore[arg-type]
            calls.append((int(args[2]), *map(int, args[-1])))  # type: ignore[call-overload]

    texts = ["ab", "\ufdfa" * 300, "cd"]
    got, bufs = _spm_ids.ids_of_texts(Spy(), [t.encode() for t in texts], engine(kind)._spm_model, None)
    assert [g.tolist() for g in got] == processor(kind).encode(texts)
    firsts, stops, work, out = zip(*calls)
    assert firsts[0] == 0 and stops[-1] == len(texts) and set(firsts[1:]) == {1} and set(stops[:-1]) == {1}
    assert any(w > 0 for w in work) and any(o > 0 for o in out)  # both kinds of overflow happened
    assert bufs.capacity >= max(work) > 3 * 900 + 8
    calls.clear()
    fits = ["a b c d " * 4] * 3  # one byte a token at most: the output array is big enough
    got, _ = _spm_ids.ids_of_texts(Spy(), [t.encode() for t in fits], engine(kind)._spm_model, None)
    assert calls == [(0, 3, 0, 0)] and [g.tolist() for g in got] == processor(kind).encode(fits)


@pytest.mark.parametrize("kind", ["spm-unigram-bytes", "spm-unigram-identity"])
def test_interpreted_equals_compiled(kind: str) -> None:
    texts = _texts(7, 24) + ["\ufdfa" * 12, ""]
    plain, compiled = engine(kind, jit=False), engine(kind)
    with np.errstate(over="ignore"):
        got = [g.tolist() for g in plain.encode_ids_batch(texts)]
    assert got == [g.tolist() for g in compiled.encode_ids_batch(texts)]


def test_bad_texts_raise_what_encode_ids_raises() -> None:
    fast = engine("spm-unigram-bytes")
    with pytest.raises(InvalidTextError, match="surrogate"):
        fast.encode_ids_batch(["fine", "a\ud800"])
    with pytest.raises(InvalidTextError, match="must be str"):
        fast.encode_ids_batch(["fine", b"bytes"])  # type: ignore[list-item]

    class Text(str):
        pass

    assert [g.tolist() for g in fast.encode_ids_batch([Text("hello world"), "x"])] == \
        [fast.encode_ids("hello world").tolist(), fast.encode_ids("x").tolist()]


def test_groups_are_bounded_and_in_order(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = datrie_encoder(str(trained_model("spm-unigram-bytes")))
    monkeypatch.setattr(_spm_ids, "BATCH_BYTES", 10)
    groups: list[list[bytes]] = []
    real = _spm_ids.ids_of_texts

    def spy(ik: object, encoded: list[bytes], *rest: object) -> object:
        groups.append(list(encoded))
        return real(ik, encoded, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(_spm_ids, "ids_of_texts", spy)
    texts = ["abc", "defg", "hi", "x" * 12, "", "jk", "lmnopqrs", "t"]
    got = fast.encode_ids_batch(texts)
    assert [g.tolist() for g in got] == processor("spm-unigram-bytes").encode(texts)
    assert groups == [[b"abc", b"defg", b"hi"], [b"x" * 12], [b"", b"jk", b"lmnopqrs"], [b"t"]]


def test_batch_from_threads_at_once() -> None:
    fast = engine("spm-unigram-bytes")
    batches = [_texts(seed, 80) for seed in range(4)]
    want = [processor("spm-unigram-bytes").encode(b) for b in batches]
    assert batch_failures_in_threads(fast.encode_ids_batch, batches, want) == []


def test_tie_break_last_goes_text_by_text() -> None:
    texts = ["hello world", "", "\u1000\u102c x"]
    last = datrie_encoder(str(trained_model("spm-unigram-bytes")), tie_break="last")
    assert [g.tolist() for g in last.encode_ids_batch(texts)] == [last.encode_ids(t).tolist() for t in texts]


def test_a_megabyte_text_among_short_ones() -> None:
    fast = engine("spm-unigram-bytes")
    rng = random.Random(3)
    words = ["the", "of", "tokenizer", "caf\u00e9", "\u4e2d\u6587", "x\u0301", "  ", "\ufdfa", "42"]
    long_text = " ".join(rng.choice(words) for _ in range(230_000))
    assert len(long_text.encode()) > 1_000_000
    texts = ["short one", long_text, "", "tail text"]
    got = fast.encode_ids_batch(texts)
    assert [g.tolist() for g in got] == processor("spm-unigram-bytes").encode(texts)
