"""``fast:`` BPE ``encode_ids`` of many texts in two kernel calls (``tokspec.fast._bpe_batch``).

Contract: ``encode_ids_batch(texts)`` is ``[encode_ids(t) for t in texts]``, for every Peek2
pattern, compiled and interpreted alike: texts that start or end in spaces, newlines, digits and
contractions (where a pretoken crossing a text's end would change the ids), empty texts,
characters of every UTF-8 length next to the cuts, texts of 1 MB among short ones, from several
threads at once; bad texts raise what ``encode_ids`` raises. ``Runner.ids`` gives each slot its
share in one batch call and equals the loop.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from tokspec import InvalidTextError, load_engine
from tokspec.fast import _bpe_batch
from tokspec.fast import parallel
from tokspec.fast import pretok_peek2 as p2
from tokspec.fast._bpe_batch import ids_of_texts, spans_of_texts_for
from tokspec.fast._bpe_text import ids_of_text
from tokspec.fast.bpe_kernel import CompiledBPE

from _threads import batch_failures_in_threads

# every UTF-8 length on both sides of each text's end; runs a joined text would merge
EDGES = ["", " ", "a ", " b", "'s", "'S x", "\n\n", "\r\n", "123", "4567", " 89", "x\n", "  ", "\t", "!!",
         "\u007f", "\u0080", "\u07ff", "\u0800", "\uffff", "\U00010000", "caf\u00e9", "\u4e2d\u6587", "Don't",
         "ll", "'ll", "ve"]


def _texts(seed: int, count: int = 60) -> list[str]:
    rng = random.Random(seed)
    alphabet = ["a", "b", "c", " ", " ", "\n", "'", "s", "1", "2", ".", "\u00e9", "\u4e2d", "\U0001f600", "A"]
    out = [rng.choice(EDGES) for _ in range(count // 2)]
    out += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(count // 2)]
    rng.shuffle(out)
    return out


def _compiled() -> CompiledBPE:
    """Byte tokens plus tokens that span what a text's end must cut: spaces before and after
    letters, digit runs, newline runs, a contraction."""
    ranks = {bytes([b]): b for b in range(256)}
    for extra in (b"a ", b" b", b"ab", b"12", b"123", b"\n\n", b"  ", b"'s", b"ll", b" a", b"ba", b"\r\n"):
        ranks[extra] = len(ranks)
    return CompiledBPE.from_ranks(ranks)


@pytest.mark.parametrize("pattern", p2.PATTERN_NAMES)
def test_ids_of_texts_equal_each_text_alone(pattern: str) -> None:
    compiled = _compiled()
    peek2, args = p2.kernel_args(pattern)
    for seed in range(6):
        texts = _texts(seed)
        got = ids_of_texts(texts, spans_of_texts_for(peek2), args, compiled._tables)
        want = [ids_of_text(np.frombuffer(t.encode(), dtype=np.uint8), p2.code_points(t), peek2, args,
                            compiled._tables) for t in texts]
        assert len(got) == len(texts)
        assert [g.tolist() for g in got] == [w.tolist() for w in want], seed
    assert [a.tolist() for a in ids_of_texts(["", ""], spans_of_texts_for(peek2), args, compiled._tables)] == [[], []]
    assert ids_of_texts([], spans_of_texts_for(peek2), args, compiled._tables) == []
    with pytest.raises(ValueError, match="no spans loop"):
        spans_of_texts_for(len)


@pytest.mark.parametrize("vocab", ["cl100k_base", "o200k_base"])
def test_encode_ids_batch_equals_encode_ids_on_real_vocabularies(vocab: str) -> None:
    """Short texts, every edge case, and a 1 MB text in the middle of the batch."""
    from tokspec.app.bench.fast import english
    from tokspec.app.bench.latency import short_texts

    fast = load_engine(f"fast:{vocab}")
    texts = short_texts(120, seed=3) + EDGES + _texts(9)
    texts.insert(50, english(1_000_000, seed=4))
    got = fast.encode_ids_batch(texts)  # type: ignore[attr-defined]
    assert len(got) == len(texts)
    for text, ids in zip(texts, got):
        assert ids.dtype == np.int64 and ids.tolist() == fast.encode_ids(text).tolist(), repr(text[:40])  # type: ignore[attr-defined]
    assert fast.encode_ids_batch([]) == []  # type: ignore[attr-defined]


def test_encode_ids_batch_from_threads_at_once() -> None:
    fast = load_engine("fast:cl100k_base")
    batches = [_texts(seed, 80) for seed in range(4)]
    want = [[fast.encode_ids(t).tolist() for t in b] for b in batches]  # type: ignore[attr-defined]
    assert batch_failures_in_threads(fast.encode_ids_batch, batches, want) == []  # type: ignore[attr-defined]


def test_batch_interpreted_equals_compiled() -> None:
    from tokspec._interpreted import interpreted_module

    plain = interpreted_module(_bpe_batch)
    plain_p2 = interpreted_module(p2)
    compiled = load_engine("fast:o200k_base").bpe  # type: ignore[attr-defined]
    texts = EDGES + _texts(2, 30)
    for pattern, loop in (("o200k_base", plain.o200k_spans_of_texts), ("cl100k_base", plain.cl100k_spans_of_texts)):
        peek2, args = p2.kernel_args(pattern)
        want = [a.tolist() for a in ids_of_texts(texts, spans_of_texts_for(peek2), args, compiled._tables)]
        with np.errstate(over="ignore"):  # the copy's kernels are plain numpy (JIT_ENABLED is global)
            got = [a.tolist() for a in plain.ids_of_texts(texts, loop, plain_p2.kernel_args(pattern)[1],
                                                          compiled._tables)]
        assert got == want, pattern


def test_batch_compiles_no_merge_version_of_its_own() -> None:
    from tokspec.fast.bpe_kernel import _encode

    fast = load_engine("fast:cl100k_base")
    fast.encode_ids("warm up")  # type: ignore[attr-defined]
    versions = set(getattr(_encode, "overloads", {}))
    fast.encode_ids_batch(["one", "two three"])  # type: ignore[attr-defined]
    assert set(getattr(_encode, "overloads", {})) == versions


def test_bad_texts_raise_what_encode_ids_raises() -> None:
    fast = load_engine("fast:cl100k_base")
    with pytest.raises(InvalidTextError, match="index 1"):
        fast.encode_ids_batch(["fine", "a\ud800"])  # type: ignore[attr-defined]
    with pytest.raises(InvalidTextError):
        fast.encode_ids_batch(["fine", b"bytes"])  # type: ignore[attr-defined, list-item]


def test_runner_ids_gives_each_slot_one_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = load_engine("fast:cl100k_base")
    texts = _texts(5, 200)
    want = [fast.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]
    calls: list[int] = []
    real = type(fast).encode_ids_batch  # type: ignore[attr-defined]

    def spy(self: object, batch: list[str]) -> list[np.ndarray]:
        calls.append(len(batch))
        return real(self, batch)  # type: ignore[no-any-return]

    monkeypatch.setattr(type(fast), "encode_ids_batch", spy)
    for workers in (1, 2, 3):
        calls.clear()
        got = parallel.Runner(workers=workers).ids(fast, texts)
        assert [g.tolist() for g in got] == want
        assert len(calls) == len(parallel._shares(texts, workers)) == workers and sum(calls) == len(texts)
    calls.clear()
    long_texts = ["x " * 70_000, "y"]  # mean over 64K characters: encode_ids' own long-text path
    assert [g.tolist() for g in parallel.Runner(workers=2).ids(fast, long_texts)] == \
        [fast.encode_ids(t).tolist() for t in long_texts]  # type: ignore[attr-defined]
    assert calls == []


def test_shares_are_contiguous_balanced_and_never_empty() -> None:
    rng = random.Random(1)
    for _ in range(200):
        texts = ["x" * rng.choice([0, 1, 5, 100]) for _ in range(rng.randint(1, 30))]
        parts = rng.randint(1, 5)
        shares = parallel._shares(texts, parts)
        assert [t for s in shares for t in s] == texts
        assert 1 <= len(shares) <= min(parts, len(texts)) and all(len(s) for s in shares)
    shares = parallel._shares(["a" * 10] * 10, 2)
    assert [len(s) for s in shares] == [5, 5]


@pytest.mark.parametrize("pattern", ["cl100k_base", "o200k_base"])
def test_spans_of_texts_are_each_texts_own_spans_shifted(pattern: str) -> None:
    """The spans loop writes each text's own Peek2 spans moved to where the text starts in the
    joined text, and each text's UTF-8 end (the merge reads only the ends of contiguous spans,
    so the starts are checked here)."""
    peek2, args = p2.kernel_args(pattern)
    texts = _texts(4, 40)
    cps = p2.code_points("".join(texts))
    bounds = np.cumsum([0] + [len(t) for t in texts]).astype(np.int64)
    starts = np.full(len(cps), -1, dtype=np.int64)
    ends = np.full(len(cps), -1, dtype=np.int64)
    byte_ends = np.full(len(texts), -1, dtype=np.int64)
    count = spans_of_texts_for(peek2)(cps, bounds, *args, starts, ends, byte_ends)
    want_starts, want_ends = [], []
    for a, text in zip(bounds.tolist(), texts):
        s, e = p2.spans_of_code_points(p2.code_points(text), pattern)
        want_starts += (s + a).tolist()
        want_ends += (e + a).tolist()
    assert starts[:count].tolist() == want_starts and ends[:count].tolist() == want_ends
    assert byte_ends.tolist() == np.cumsum([len(t.encode()) for t in texts]).tolist()


def test_batch_goes_in_groups_of_bounded_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts are encoded in groups of at most BATCH_GROUP characters, a text that long alone by
    encode_ids, in order; the ids are the same as text by text."""
    from tokspec.fast import bpe_encoder

    fast = load_engine("fast:cl100k_base")
    monkeypatch.setattr(bpe_encoder, "BATCH_GROUP", 10)
    groups: list[list[str]] = []
    real = bpe_encoder.ids_of_texts

    def spy(texts: list[str], *rest: object) -> list[np.ndarray]:
        groups.append(list(texts))
        return real(texts, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(bpe_encoder, "ids_of_texts", spy)
    texts = ["abc", "defg", "hi", "x" * 12, "", "jk", "lmnopqrs", "t"]
    got = fast.encode_ids_batch(texts)  # type: ignore[attr-defined]
    assert [g.tolist() for g in got] == [fast.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]
    assert groups == [["abc", "defg", "hi"], ["", "jk", "lmnopqrs"], ["t"]]
    with pytest.raises(InvalidTextError, match="index 1"):
        fast.encode_ids_batch(["ok", "x", "y\ud800z"])  # type: ignore[attr-defined]
