"""``tokspec.fast.parallel``: which backend ``auto`` picks, chunk sizing, pool lifecycle, workers.

Engine stand-ins declare exactly the features the choice looks at (``thread_safe``, an own
``_encode_batch_arrays``, an ``encode_batch``). Pool lifecycle is checked on thread pools holding a
task that blocks on an event, so "shut down and waited", "cancelled the queue" and "returned at
once" are each visible. The process workers' functions are called in this process.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool

import pytest

from tokspec import Encoder, Encoding, EncodingArrays, EngineInfo, load_engine
from tokspec.fast import parallel
from tokspec.errors import EngineFault
from tokspec.fast._chunking import MergeError
from tokspec.fast.parallel import Runner, auto_backend, default_chunk_len


class Plain(Encoder):
    """No batch API of its own."""

    info = EngineInfo("toy:plain", "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


class NotThreadSafe(Plain):
    thread_safe = False


class ThreadSafeDeclared(Plain):
    thread_safe = True


class OwnBatchArrays(Plain):
    """Overrides ``_encode_batch_arrays`` (like the hf: adapter) and has no ``encode_batch``."""

    def _encode_batch_arrays(self, texts: list[str]) -> list[EncodingArrays]:
        return [self._encode_arrays(t) for t in texts]


class WithEncodeBatch(Plain):
    """Offers ``encode_batch`` and keeps the default ``_encode_batch_arrays``."""

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        return [self.encode(t) for t in texts]


class NotThreadSafeWithBatch(WithEncodeBatch):
    thread_safe = False


class DuckEngine:
    """Not an Encoder subclass: only ``encode`` and ``info`` (the choice must not need more)."""

    info = EngineInfo("toy:duck", "tokenizer", "toy", "0", None)

    def encode(self, text: str) -> Encoding:
        return Plain().encode(text)


class EncodeBatchAttribute(Plain):
    """An ``encode_batch`` attribute that is not callable is no batch API."""

    encode_batch = None


@pytest.mark.parametrize(("engine", "backend"), [
    (Plain(), "threads"),
    (ThreadSafeDeclared(), "threads"),
    (NotThreadSafe(), "serial"),
    (NotThreadSafeWithBatch(), "serial"),
    (OwnBatchArrays(), "batch"),
    (WithEncodeBatch(), "batch"),
    (DuckEngine(), "threads"),
    (EncodeBatchAttribute(), "threads"),
])
def test_auto_backend_choice(engine: Encoder, backend: str) -> None:
    assert auto_backend(engine) == backend
    assert Runner("auto", 2).resolve(engine) == backend


def test_batch_backends_use_the_engines_batch_api() -> None:
    texts = ["ab", "", "cde"]
    for engine in (OwnBatchArrays(), WithEncodeBatch()):
        assert Runner("auto", 2)(engine, texts) == [engine.encode(t) for t in texts]
        got = Runner("auto", 2).arrays(engine, texts)
        assert all(g.same_as(engine.encode_arrays(t)) for g, t in zip(got, texts, strict=True))


def test_default_chunk_len_is_the_ceiling_share_and_an_int() -> None:
    # one chunk per worker for processes, four per worker otherwise, never below 2048
    assert default_chunk_len(1_000_001, 2, "processes") == 500_001
    assert default_chunk_len(1_000_001, 2, "threads") == 125_001
    assert default_chunk_len(1_000_000, 1, "processes") == 1_000_000
    assert default_chunk_len(1_000_000, 1, "threads") == 250_000
    assert default_chunk_len(5000, 0, "processes") == 5000
    for n in (0, 1, 2047, 2048, 8193, 10**6 + 7):
        for workers in (1, 2, 3, 8):
            for backend in ("processes", "threads", "batch", "serial"):
                got = default_chunk_len(n, workers, backend)
                per = workers * (1 if backend == "processes" else 4)
                assert type(got) is int
                assert got == max(2048, -(-n // per))


def _blocked_pool() -> tuple[ThreadPoolExecutor, threading.Event, object, object]:
    """A one-thread pool running a task blocked on ``go`` (set by a timer after 0.3 s), with a
    second task queued behind it."""
    pool = ThreadPoolExecutor(max_workers=1)
    go, started = threading.Event(), threading.Event()

    def blocked() -> str:
        started.set()
        go.wait(5)
        return "ran"

    running = pool.submit(blocked)
    queued = pool.submit(lambda: "queued ran")
    assert started.wait(5)
    threading.Timer(0.3, go.set).start()
    return pool, go, running, queued


def test_shutdown_waits_cancels_queued_work_and_drops_every_pool() -> None:
    parallel.shutdown()
    pool, go, running, queued = _blocked_pool()
    parallel._pools[("threads", 7, "")] = pool
    try:
        parallel.shutdown()
        assert parallel._pools == {}
        assert running.done() and running.result() == "ran"  # waited for the running task
        assert queued.cancelled()  # the queue was cancelled
        with pytest.raises(RuntimeError):
            pool.submit(lambda: None)
        parallel.shutdown()  # a second shutdown is harmless
        assert parallel._pools == {}
    finally:
        go.set()
        pool.shutdown(wait=True)


def test_shutdown_stops_the_pools_a_runner_started() -> None:
    engine = Plain()
    texts = ["abc", "de", "f"]
    assert Runner("threads", 3)(engine, texts) == [engine.encode(t) for t in texts]
    pools = list(parallel._pools.values())
    assert pools
    parallel.shutdown()
    assert parallel._pools == {}
    for pool in pools:
        with pytest.raises(RuntimeError):
            pool.submit(lambda: None)
    assert Runner("threads", 3)(engine, texts) == [engine.encode(t) for t in texts]  # a fresh pool
    parallel.shutdown()


def test_drop_pool_drops_only_that_engines_process_pool_without_waiting() -> None:
    engine = Plain()
    pool, go, running, queued = _blocked_pool()
    other = ThreadPoolExecutor(max_workers=1)
    key = ("processes", 3, engine.info.name)
    parallel._pools[key] = pool
    parallel._pools[("processes", 3, "toy:other")] = other
    try:
        parallel._drop_pool(engine, 3)
        assert key not in parallel._pools
        assert ("processes", 3, "toy:other") in parallel._pools
        assert not running.done()  # returned without waiting for the running task
        assert queued.cancelled()
        with pytest.raises(RuntimeError):
            pool.submit(lambda: None)
        parallel._drop_pool(engine, 3)  # nothing left to drop: harmless
        parallel._drop_pool(engine, 4)
    finally:
        go.set()
        pool.shutdown(wait=True)
        parallel.shutdown()


def test_worker_functions_encode_with_the_engine_the_initializer_loaded() -> None:
    saved = parallel._worker_engine
    try:
        parallel._worker_engine = None
        with pytest.raises(AssertionError, match="^worker initializer did not run"):
            parallel._encode_in_worker("abc")
        with pytest.raises(AssertionError, match="^worker initializer did not run"):
            parallel._arrays_in_worker("abc")
        parallel._init_worker("tiktoken:cl100k_base")
        engine = load_engine("tiktoken:cl100k_base")
        assert parallel._worker_engine is not None
        assert parallel._worker_engine.info == engine.info
        text = "workers encode  the text they are given, 12345"
        assert parallel._encode_in_worker(text) == engine.encode(text)
        assert parallel._arrays_in_worker(text).same_as(engine.encode_arrays(text))
    finally:
        parallel._worker_engine = saved


class Recording(Plain):
    """Counts calls per entry point, to see which path a runner took."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def encode(self, text: str) -> Encoding:
        self.calls.append("encode")
        return super().encode(text)

    def encode_arrays(self, text: str) -> EncodingArrays:
        self.calls.append("encode_arrays")
        return super().encode_arrays(text)


@pytest.mark.parametrize(("backend", "workers", "texts"), [
    ("serial", 4, ["ab", "c"]), ("threads", 4, ["ab"]), ("threads", 1, ["ab", "c"]),
    ("processes", 1, ["ab", "c"]), ("batch", 2, ["abc"])])
def test_trivial_work_runs_in_this_thread(backend: str, workers: int, texts: list[str]) -> None:
    engine = Recording()
    before = dict(parallel._pools)
    assert Runner(backend, workers)(engine, texts) == [Plain().encode(t) for t in texts]
    assert engine.calls == ["encode"] * len(texts)
    engine.calls.clear()
    got = Runner(backend, workers).arrays(engine, texts)
    assert all(g.same_as(Plain().encode_arrays(t)) for g, t in zip(got, texts, strict=True))
    assert engine.calls == ["encode_arrays"] * len(texts)
    assert parallel._pools == before  # no pool was started


def test_threads_map_in_input_order() -> None:
    engine = Recording()
    texts = [chr(0x61 + k) * (k + 1) for k in range(9)]
    assert Runner("threads", 3)(engine, texts) == [Plain().encode(t) for t in texts]
    got = Runner("threads", 3).arrays(engine, texts)
    assert all(g.same_as(Plain().encode_arrays(t)) for g, t in zip(got, texts, strict=True))
    assert ("threads", 3, "") in parallel._pools  # thread pools are shared by all engines
    parallel.shutdown()


def test_batch_backend_without_a_batch_api_is_a_named_error() -> None:
    with pytest.raises(MergeError, match=r"backend='batch' needs an engine with its own batch API .*'toy:plain' has none"):
        Runner("batch", 2)(Plain(), ["a", "b"])


class _BrokenPool:
    def __init__(self) -> None:
        self.stopped = False

    def map(self, fn, texts):  # an Executor stand-in
        raise BrokenProcessPool("a child died")

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        self.stopped = True


@pytest.mark.parametrize("method", ["__call__", "arrays"])
def test_a_dead_worker_becomes_an_engine_fault_and_drops_the_pool(method: str) -> None:
    engine = Plain()
    broken = _BrokenPool()
    parallel._pools[("processes", 2, engine.info.name)] = broken  # type: ignore[assignment]
    try:
        with pytest.raises(EngineFault, match=r"a worker process of 'toy:plain' died \(a child died\).*__main__"):
            getattr(Runner("processes", 2), method)(engine, ["a", "b"])
        assert ("processes", 2, engine.info.name) not in parallel._pools
        assert broken.stopped
    finally:
        parallel._pools.pop(("processes", 2, engine.info.name), None)


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "2"])
def test_bad_workers_are_named(bad: object) -> None:
    with pytest.raises(MergeError, match=f"workers must be an int >= 1, got workers={bad!r}"):
        Runner("threads", bad)  # type: ignore[arg-type]


def test_default_workers_and_backends() -> None:
    assert Runner().workers == parallel.default_workers() >= 1
    assert Runner().backend == "auto"
    assert Runner("threads", 3).workers == 3
    with pytest.raises(MergeError, match=r"unknown backend='gpu'; choose one of auto, serial, threads, processes, batch"):
        Runner("gpu")


class BatchRecorder(WithEncodeBatch):
    """Records which API each text went through and on which thread."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        self.seen.append(("encode_batch", threading.get_ident()))
        return [Plain().encode(t) for t in texts]

    def encode(self, text: str) -> Encoding:
        self.seen.append(("encode", threading.get_ident()))
        return super().encode(text)

    def encode_arrays(self, text: str) -> EncodingArrays:
        self.seen.append(("encode_arrays", threading.get_ident()))
        return super().encode_arrays(text)


class SerialRecorder(BatchRecorder):
    thread_safe = False


def test_auto_runner_takes_the_path_auto_backend_names() -> None:
    texts = ["ab", "cd", "ef"]
    here = threading.get_ident()
    batch = BatchRecorder()
    Runner("auto", 2)(batch, texts)
    assert batch.seen == [("encode_batch", here)]
    batch.seen.clear()
    Runner("auto", 2).arrays(batch, texts)
    assert batch.seen == [("encode_batch", here)]
    serial = SerialRecorder()
    Runner("auto", 2)(serial, texts)
    Runner("auto", 2).arrays(serial, texts)
    assert serial.seen == [("encode", here)] * 3 + [("encode_arrays", here)] * 3


def test_default_workers_without_affinity_falls_back_to_the_cpu_count(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    if hasattr(os, "sched_getaffinity"):
        assert parallel.default_workers() == max(1, len(os.sched_getaffinity(0)))
        monkeypatch.delattr(os, "sched_getaffinity")
    monkeypatch.setattr(os, "cpu_count", lambda: 6)
    assert parallel.default_workers() == 6
    monkeypatch.setattr(os, "cpu_count", lambda: None)  # unknown: one worker
    assert parallel.default_workers() == 1


def test_default_workers_is_one_on_a_single_core(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this platform")
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {3})  # this process may use one core
    assert parallel.default_workers() == 1


class Concurrency(Plain):
    """Holds each encode for a moment and records how many ran at once."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.now = self.peak = 0

    def _hold(self) -> None:
        import time

        with self.lock:
            self.now += 1
            self.peak = max(self.peak, self.now)
        time.sleep(0.02)
        with self.lock:
            self.now -= 1

    def encode(self, text: str) -> Encoding:
        self._hold()
        return super().encode(text)

    def encode_arrays(self, text: str) -> EncodingArrays:
        self._hold()
        return super().encode_arrays(text)


@pytest.mark.parametrize("method", ["__call__", "arrays"])
def test_threads_run_at_most_workers_encodes_at_once(method: str) -> None:
    parallel.shutdown()  # a fresh pool, sized by this runner
    engine = Concurrency()
    texts = [chr(0x61 + k) * (k + 1) for k in range(12)]
    try:
        got = getattr(Runner("threads", 2), method)(engine, texts)
        want = [Plain().encode(t) for t in texts]
        assert [g if method == "__call__" else g.to_encoding() for g in got] == want
        assert 1 <= engine.peak <= 2
    finally:
        parallel.shutdown()


def test_process_pools_spawn_workers_that_load_the_engine_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pool's configuration, read before any worker starts (starting one costs seconds):
    ``workers`` processes, started by ``spawn`` (fork after HF/rayon threads can deadlock), each
    running the initializer that loads the engine by its registry name."""
    from concurrent.futures import ProcessPoolExecutor

    monkeypatch.setattr(parallel, "_pools", {})
    engine = Plain()
    pool = parallel._pool("processes", 3, engine)
    try:
        assert isinstance(pool, ProcessPoolExecutor)
        assert pool._mp_context.get_start_method() == "spawn"
        assert pool._max_workers == 3
        assert pool._initializer is parallel._init_worker and pool._initargs == ("toy:plain",)
        assert parallel._pool("processes", 3, engine) is pool  # kept for the next call
    finally:
        pool.shutdown(wait=True)


@pytest.mark.parametrize("method", ["__call__", "arrays"])
def test_a_dead_worker_fault_says_how_to_fix_the_script(method: str) -> None:
    engine = Plain()
    parallel._pools[("processes", 2, engine.info.name)] = _BrokenPool()  # type: ignore[assignment]
    try:
        with pytest.raises(EngineFault) as fault:
            getattr(Runner("processes", 2), method)(engine, ["a", "b"])
        assert str(fault.value) == (
            "a worker process of 'toy:plain' died (a child died); scripts using the processes backend "
            "need an `if __name__ == '__main__':` guard (spawned workers re-import __main__), or use "
            "backend='serial'")
    finally:
        parallel._pools.pop(("processes", 2, engine.info.name), None)


def test_batch_arrays_without_a_batch_api_is_the_same_named_error() -> None:
    # arrays() is "like calling the runner": no silent serial loop where a call is refused
    with pytest.raises(MergeError, match=r"backend='batch' needs an engine with its own batch API .*'toy:plain' has none"):
        Runner("batch", 2).arrays(Plain(), ["a", "b"])


class BothBatchApis(OwnBatchArrays):
    """Its own batch arrays and an ``encode_batch`` that must not be needed for arrays."""

    def encode_batch(self, texts: list[str]) -> list[Encoding]:
        raise AssertionError("arrays() went through Encodings")


def test_batch_arrays_use_the_engines_own_batch_arrays_first() -> None:
    engine = BothBatchApis()
    texts = ["ab", "", "cde"]
    got = Runner("batch", 2).arrays(engine, texts)
    assert all(g.same_as(Plain().encode_arrays(t)) for g, t in zip(got, texts, strict=True))
