"""``lopt:`` ids only: ``LoptEncoder.encode_ids`` and ``Runner.ids`` (issue 29, lopt on 2 threads).

The oracle is the inner engine's own ``encode_ids`` on the whole text. Chunk lengths are small so
each text is cut in many places; one text is past 1 MB with the default split (the seams of a real
run). Each test also checks that cuts were made, so an equality is never over a single chunk.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tokspec import Encoder, EncodingArrays, EngineInfo, load_engine
from tokspec._jit import JIT_ENABLED
from tokspec.app.bench.fast import chinese_like, code, english
from tokspec.corpus import build_corpus
from tokspec.errors import InvalidTextError
from tokspec.formats.models import trained_model
from tokspec.fast import merge_lopt, parallel
from tokspec.fast._chunking import MergeError
from tokspec.fast.merge_engines import LoptEncoder
from tokspec.fast.parallel import IDS_CHUNKS_PER_SLOT, MIN_IDS_CHUNK, Runner, ids_chunk_len, ids_split

FAST = ["fast:cl100k_base", "fast:o200k_base", "fast:mon-unigram"]


@pytest.fixture(scope="module", params=FAST)
def inner(request: pytest.FixtureRequest) -> Encoder:
    return load_engine(request.param)


def _cuts(engine: Encoder, text: str, chunk_len: int) -> list[int]:
    rule = merge_lopt.decision(engine).rule
    assert rule is not None, merge_lopt.decision(engine).why  # every fast family has a proved rule
    return merge_lopt.find_cuts(text, rule, chunk_len)


def test_lopt_ids_equal_serial_ids_on_corpus(inner: Encoder) -> None:
    lopt = LoptEncoder(inner, runner=Runner("threads", 2), chunk_len=7)
    n_cuts = 0
    for text in build_corpus(seed=3, size="small"):
        got = lopt.encode_ids(text)  # type: ignore[attr-defined]
        want = inner.encode_ids(text)  # type: ignore[attr-defined]
        assert got.dtype == want.dtype and got.tolist() == want.tolist(), repr(text[:80])
        n_cuts += len(_cuts(inner, text, 7))
    assert n_cuts > 100


@pytest.mark.skipif(not JIT_ENABLED, reason="interpreted kernels (mutation testing) take minutes on 1.2 MB; "
                    "tox -e py runs this compiled, and the tests above cut texts in many places")
def test_lopt_ids_equal_serial_past_a_megabyte(inner: Encoder) -> None:
    text = english(600_000, seed=1) + chinese_like(300_000, seed=2) + code(300_000)
    lopt = LoptEncoder(inner, runner=Runner("threads", 2))  # the default split: 4 chunks per worker
    reach, targets = ids_split(text, 2)
    rule = merge_lopt.decision(inner).rule
    assert rule is not None and len(merge_lopt.cuts_after(text, rule, targets, reach)) == 2 * IDS_CHUNKS_PER_SLOT - 1
    for _ in range(2):  # the second call with the slots' stores warm
        assert np.array_equal(lopt.encode_ids(text), inner.encode_ids(text))  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.sampled_from(["a", "b ", " ", "  ", "\n", "\n\n", "1", "234", "é", "中文",
                                       "😀", "'s", "\u00a0", "▁", "x" * 30, "!?", "\t"]), max_size=50),
       chunk_len=st.integers(1, 9))
def test_hyp_lopt_ids_equal_serial(parts: list[str], chunk_len: int) -> None:
    inner = load_engine("fast:cl100k_base")
    text = "".join(parts)
    got = LoptEncoder(inner, runner=Runner("threads", 2), chunk_len=chunk_len).encode_ids(text)  # type: ignore[attr-defined]
    assert got.tolist() == inner.encode_ids(text).tolist()  # type: ignore[attr-defined]


@settings(max_examples=60, deadline=None)
@given(parts=st.lists(st.sampled_from(["a", "b ", " ", "  ", "\n", "1", "234", "é", "中文", "😀", "'s", "x" * 30, "!?"]),
                      max_size=60),
       targets=st.lists(st.integers(0, 400), max_size=6), reach=st.integers(1, 50))
def test_hyp_lopt_ids_at_any_targets_equal_serial(parts: list[str], targets: list[int], reach: int) -> None:
    inner = load_engine("fast:cl100k_base")
    text = "".join(parts)
    got = merge_lopt.encode_ids(inner, text, chunk_len=reach, targets=sorted(targets),
                                encode_many=Runner("threads", 2).ids)
    assert got.tolist() == inner.encode_ids(text).tolist()  # type: ignore[attr-defined]


def test_lone_surrogate_is_named_at_its_index_in_the_whole_text() -> None:
    lopt = LoptEncoder(load_engine("fast:cl100k_base"), runner=Runner("threads", 2), chunk_len=1000)
    text = "word " * 4_000 + "\ud800" + " tail"
    with pytest.raises(InvalidTextError, match="at index 20000;"):
        lopt.encode_ids(text)  # type: ignore[attr-defined]
    with pytest.raises(InvalidTextError, match="must be str"):
        lopt.encode_ids(b"bytes")  # type: ignore[attr-defined]


def test_engine_without_a_sound_cut_rule_is_encoded_whole() -> None:
    # sentencepiece Unigram: no cut is sound (M6, float32 path scores over the whole text)
    inner = load_engine(f"fast:{trained_model('spm-unigram')}")
    assert merge_lopt.decision(inner).rule is None
    text = english(3000, seed=4)
    seen: list[str] = []

    def spy(engine: Encoder, texts: list[str]) -> list[np.ndarray]:
        seen.extend(texts)
        return Runner("serial").ids(engine, texts)

    got = merge_lopt.encode_ids(inner, text, chunk_len=5, encode_many=spy)
    assert got.tolist() == inner.encode_ids(text).tolist() and seen == []  # type: ignore[attr-defined]


def test_only_engines_with_encode_ids_get_it() -> None:
    assert not hasattr(LoptEncoder(load_engine("tiktoken:cl100k_base")), "encode_ids")
    assert callable(getattr(load_engine("lopt:fast:cl100k_base"), "encode_ids", None))


def test_ids_chunk_len_is_the_ceiling_share_and_never_tiny() -> None:
    assert ids_chunk_len(1_000_000, 2) == 500_000
    assert ids_chunk_len(1_000_001, 2) == 500_001
    assert ids_chunk_len(1_000_000, 1) == 1_000_000
    assert ids_chunk_len(10, 2) == MIN_IDS_CHUNK == 65_536
    assert ids_chunk_len(300_000, 0) == 300_000


@pytest.mark.parametrize("n, workers, parts", [(10, 2, 1), (2 * MIN_IDS_CHUNK - 1, 2, 1), (2 * MIN_IDS_CHUNK, 2, 2),
                                               (3 * MIN_IDS_CHUNK, 2, 2), (4 * MIN_IDS_CHUNK, 2, 4),
                                               (1_000_000, 2, 8), (1_000_000, 4, 12), (1_000_000, 1, 1),
                                               (1_000_000, 0, 1), (3 * MIN_IDS_CHUNK, 8, 3)])
def test_ids_split_gives_each_worker_up_to_ids_chunks_per_slot_spans_of_at_least_min_ids_chunk(n: int, workers: int, parts: int) -> None:
    text = "ab " * (n // 3) + "x" * (n % 3)
    reach, targets = ids_split(text, workers)
    assert len(targets) == parts - 1 and reach == ids_chunk_len(n, parts)
    assert targets == [n * k // parts for k in range(1, parts)]  # ASCII: equal characters


def _utf8_len(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("parts", [2, 3, 5])
def test_byte_balanced_targets_split_mixed_text_into_near_equal_bytes(parts: int) -> None:
    # English then Chinese-like (3 bytes a character) then code: equal characters would be far off
    text = english(400_000, seed=1) + chinese_like(600_000, seed=2) + code(200_000)
    targets = parallel.byte_balanced_targets(text, parts)
    assert targets == sorted(targets) and len(targets) == parts - 1
    bounds = [0, *targets, len(text)]
    sizes = [_utf8_len(text[a:b]) for a, b in zip(bounds, bounds[1:])]
    share = _utf8_len(text) / parts
    assert all(abs(size - share) < 0.03 * share for size in sizes), (sizes, share)
    by_chars = [len(text) * k // parts for k in range(1, parts)]
    assert targets != by_chars


def test_byte_balanced_targets_edge_cases() -> None:
    assert parallel.byte_balanced_targets("", 2) == [] and parallel.byte_balanced_targets("中文", 1) == []
    assert parallel.byte_balanced_targets("abcdef", 2) == [3]
    text = "é" * 100 + "\ud800" + "中" * 100  # a lone surrogate weighs 3 bytes and raises nothing here
    targets = parallel.byte_balanced_targets(text, 2, blocks=4, sample=8)
    assert len(targets) == 1 and 0 < targets[0] < len(text)
    assert parallel.byte_balanced_targets("中" * 10, 20) == sorted(parallel.byte_balanced_targets("中" * 10, 20))


def test_runner_ids_keeps_order_on_every_backend() -> None:
    inner = load_engine("fast:cl100k_base")
    texts = [f"piece {i} " * (i + 1) for i in range(9)]
    want = [inner.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]
    for runner in (Runner("threads", 2), Runner("serial", 2), Runner("threads", 1)):
        assert [a.tolist() for a in runner.ids(inner, texts)] == want


def test_runner_ids_ranges_equal_ids_of_the_slices_on_every_backend() -> None:
    inner = load_engine("fast:cl100k_base")
    text = "".join(f"piece {i} é中😀 " * (i + 1) for i in range(12))  # a four-byte-wide str
    bounds = [0, 7, 7, 40, 200, 333, len(text)]  # an empty span too
    spans = list(zip(bounds, bounds[1:]))
    want = [inner.encode_ids(text[a:b]).tolist() for a, b in spans]  # type: ignore[attr-defined]
    for runner in (Runner("threads", 2), Runner("serial", 2), Runner("threads", 1), Runner("batch", 2)):
        got = runner.ids_ranges(inner, text, spans)
        assert [a.dtype for a in got] == [np.dtype(np.int64)] * len(spans)
        assert [a.tolist() for a in got] == want, runner.backend


@pytest.mark.slow
def test_runner_ids_in_processes() -> None:
    inner = load_engine("fast:cl100k_base")
    texts = [f"piece {i} " * (i + 1) for i in range(5)]
    want = [inner.encode_ids(t).tolist() for t in texts]  # type: ignore[attr-defined]
    assert [a.tolist() for a in Runner("processes", 2).ids(inner, texts)] == want


class _ThreadNamedIds(Encoder):
    """An engine whose ids are the text's length and whose calls record the thread they ran on."""

    info = EngineInfo("thread-named", "tokenizer", "tests", "0", None, thread_safe=True)

    def __init__(self) -> None:
        self.threads: list[str] = []
        self._lock = threading.Lock()

    def _encode_arrays(self, text: str) -> EncodingArrays:  # pragma: no cover - not called here
        raise AssertionError("encode_ids only")

    def encode_ids(self, text: str) -> np.ndarray:
        time.sleep(0.02)  # long enough that a pool of more threads would use more of them
        with self._lock:
            self.threads.append(threading.current_thread().name)
        return np.array([len(text)], dtype=np.int64)


@pytest.mark.parametrize("runner, n_texts, in_pool", [
    (Runner("threads", 2), 8, True), (Runner("auto", 2), 8, True), (Runner("serial", 2), 8, False),
    (Runner("batch", 2), 8, False), (Runner("threads", 1), 8, False), (Runner("threads", 2), 1, False)])
def test_runner_ids_uses_the_pool_exactly_when_it_should(runner: Runner, n_texts: int, in_pool: bool) -> None:
    engine = _ThreadNamedIds()
    texts = ["x" * (k + 1) for k in range(n_texts)]
    got = runner.ids(engine, texts)
    assert [a.tolist() for a in got] == [[k + 1] for k in range(n_texts)]  # in order
    main = threading.main_thread().name
    if in_pool:  # the calling thread is slot 0, each other slot one thread
        assert main in engine.threads and len(set(engine.threads)) == runner.workers
    else:
        assert set(engine.threads) == {main}


class _ThreadNamedRanges(_ThreadNamedIds):
    """As :class:`_ThreadNamedIds`, with ``encode_ids_range`` (ids: the span's length)."""

    def encode_ids_range(self, text: str, start: int, end: int) -> np.ndarray:
        return self.encode_ids(text[start:end])


@pytest.mark.parametrize("runner, n_spans, in_pool", [
    (Runner("threads", 2), 6, True), (Runner("auto", 2), 6, True), (Runner("serial", 2), 6, False),
    (Runner("threads", 1), 6, False), (Runner("threads", 2), 1, False)])
def test_runner_ids_ranges_uses_the_pool_exactly_when_it_should(runner: Runner, n_spans: int, in_pool: bool) -> None:
    engine = _ThreadNamedRanges()
    text = "x" * 100
    spans = [(3 * k, 3 * k + k + 1) for k in range(n_spans)]
    got = runner.ids_ranges(engine, text, spans)
    assert [a.tolist() for a in got] == [[k + 1] for k in range(n_spans)]  # in order
    main = threading.main_thread().name
    if in_pool:
        assert main in engine.threads and len(set(engine.threads)) == runner.workers
    else:
        assert set(engine.threads) == {main}


@pytest.mark.parametrize("backend", ["processes", "batch"])
def test_runner_ids_ranges_sends_other_backends_the_slices(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[list[str]] = []
    monkeypatch.setattr(Runner, "ids", lambda self, engine, texts: calls.append(list(texts)) or ["done"])
    assert Runner(backend, 2).ids_ranges(_ThreadNamedRanges(), "abcdef", [(0, 2), (2, 6)]) == ["done"]
    assert calls == [["ab", "cdef"]]


def test_runner_ids_sends_processes_to_the_worker_function(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(Runner, "_in_processes", lambda self, *args: calls.append(args) or ["done"])
    engine, texts = _ThreadNamedIds(), ["a", "b"]
    assert Runner("processes", 2).ids(engine, texts) == ["done"]
    assert calls == [(engine, texts, parallel._ids_in_worker)]


def test_ids_in_worker_encodes_with_the_worker_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "_worker_engine", None)
    # (no "$": where pytest rewrites the package's asserts it appends the failed expression)
    with pytest.raises(AssertionError, match="^worker initializer did not run(\n|$)"):
        parallel._ids_in_worker("abc")
    monkeypatch.setattr(parallel, "_worker_engine", _ThreadNamedIds())
    assert parallel._ids_in_worker("abcd").tolist() == [4]


def test_encode_ids_uses_the_given_pieces_function_and_serial_ids_without_one() -> None:
    inner = load_engine("fast:cl100k_base")
    text = "some words, more words\nand 123 numbers " * 20
    want = inner.encode_ids(text).tolist()  # type: ignore[attr-defined]
    seen: list[str] = []

    def spy(engine: Encoder, texts: list[str]) -> list[np.ndarray]:
        assert engine is inner
        seen.extend(texts)
        return [engine.encode_ids(t) for t in texts]  # type: ignore[attr-defined]

    assert merge_lopt.encode_ids(inner, text, chunk_len=40, encode_many=spy).tolist() == want
    assert len(seen) > 10 and "".join(seen) == text
    assert merge_lopt.encode_ids(inner, text, chunk_len=40).tolist() == want  # _serial_ids
    with pytest.raises(MergeError, match="chunk_len"):
        merge_lopt.encode_ids(inner, text, chunk_len=0)


class _RecordingRunner(Runner):
    """A threads runner that records the pieces ``LoptEncoder.encode_ids`` hands it."""

    def __init__(self) -> None:
        super().__init__("threads", 2)
        self.pieces: list[str] = []
        self.spans: list[tuple[int, int]] = []  # through ids_ranges: the engine encodes spans of the text

    def ids(self, engine: Encoder, texts: Sequence[str]) -> list[np.ndarray]:
        self.pieces.extend(texts)
        return [np.zeros(1, dtype=np.int64) for _ in texts]

    def ids_ranges(self, engine: Encoder, text: str, spans: Sequence[tuple[int, int]]) -> list[np.ndarray]:
        self.spans.extend(spans)
        return self.ids(engine, [text[a:b] for a, b in spans])


def test_lopt_encoder_splits_by_ids_split_through_its_runner() -> None:
    runner = _RecordingRunner()
    lopt = LoptEncoder(load_engine("fast:cl100k_base"), runner=runner)
    text = "ab " * 60_000  # 180,000 characters: ids_split(text, 2) = (90,000, [90,000])
    assert lopt.encode_ids(text).tolist() == [0] * len(runner.pieces)  # type: ignore[attr-defined]
    assert "".join(runner.pieces) == text
    assert ids_split(text, 2) == (90_000, [90_000])
    # the first sound cut at or after 90,000 ("ab" starts there): before the space, at 90,002
    assert [len(p) for p in runner.pieces] == [90_002, 89_998]
    assert runner.spans == [(0, 90_002), (90_002, 180_000)]  # fast: encodes spans, never slices
    runner.pieces.clear()
    lopt.chunk_len = 40_000  # a chunk length given: cuts after its multiples, as before
    lopt.encode_ids(text)  # type: ignore[attr-defined]
    bounds = [0, *_cuts(lopt.inner, text, 40_000), len(text)]
    assert len(bounds) == 6 and runner.pieces == [text[a:b] for a, b in zip(bounds, bounds[1:])]


class _ShortLenStr(str):
    """A str whose ``__len__`` undercounts (the split must not plan with it)."""

    def __len__(self) -> int:
        return 300_000


def test_a_str_subclass_is_split_by_its_stored_characters() -> None:
    inner = load_engine("fast:cl100k_base")
    plain = "words and more words " * 20_000  # 420,000 characters
    want = inner.encode_ids(plain).tolist()  # type: ignore[attr-defined]
    lopt = LoptEncoder(inner, runner=Runner("threads", 2))
    assert lopt.encode_ids(_ShortLenStr(plain)).tolist() == want  # type: ignore[attr-defined]
    head = plain[:200_000]  # here __len__ overcounts: the offsets path plans with the stored length too
    assert list(lopt.encode(_ShortLenStr(head)).ids or ()) == inner.encode_ids(head).tolist()  # type: ignore[attr-defined]


def test_non_str_text_is_named_by_its_type() -> None:
    lopt = LoptEncoder(load_engine("fast:cl100k_base"))
    with pytest.raises(InvalidTextError, match="got bytes"):
        lopt.encode_ids(b"bytes")  # type: ignore[attr-defined]


@pytest.mark.slow
def test_bench_fresh_peer_rows_check_ids_on_every_text() -> None:
    from tokspec.app.bench.parallel import peer_fresh_rows
    rows = peer_fresh_rows(quick=True)
    assert {r.case.split(" fresh")[0] for r in rows} == {"english-varied", "chinese-like", "code-varied"}
    assert all(r.case.endswith(" exact") and r.subject_s > 0 for r in rows), [r.case for r in rows]
    assert {r.subject for r in rows} == {"lopt:fast:cl100k_base ids x2", "lopt:fast:o200k_base ids x2"}
    assert "tiktoken encode_ordinary (1 thread)" in {r.baseline for r in rows}  # the always-installed peer
    assert not any("fast:" in r.baseline for r in rows)  # one fast: engine per text (the docstring's why)
