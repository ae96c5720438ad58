"""Run many chunk encodings at once: the backends behind the merge strategies' ``encode_many``.

=============  ==============================================================================
backend        how, and when ``auto`` picks it
=============  ==============================================================================
``batch``      the engine's own ``encode_batch_arrays(texts)`` (or ``encode_batch``; HF's batch
               API runs on every core with the GIL released); picked when the engine overrides
               ``Encoder._encode_batch_arrays`` (the default is a serial loop)
``threads``    a thread pool calling ``engine.encode_arrays``: pays where the engine's work
               releases the GIL (compiled kernels, tiktoken, bpe-openai, sentencepiece); picked
               for the rest when declared or checked thread-safe. Works in any context: a script without a ``__main__``
               guard, ``python -c``, a program read from stdin. ``ids``: on *slots* instead, the
               calling thread and one dedicated thread per other worker, each keeping to its
               share of the chunks (``tokspec.fast._slots``; per-thread caches stay warm)
``processes``  a process pool (spawned workers, each loads the engine by its registry name once);
               only when asked for explicitly (spawned workers re-import ``__main__``, so the
               caller needs an ``if __name__ == "__main__":`` guard)
``serial``     this thread, one text after another; picked for engines not thread-safe: declared
               so (``EngineInfo.thread_safe`` False; a ``cmd:`` program serves one request at a
               time) or, when undeclared, failing the concurrency check run once at first use
               (:func:`tokspec.concurrency.thread_safety`): threads are never assumed
=============  ==============================================================================

Where an engine holds the GIL for most of its work (pure-Python engines, Python-level offset
conversion), threads cannot overlap it and the ratio stays near 1x: lossless, never wrong.

All backends return encodings in input order and re-raise the first engine exception. Pools are
created on first use and kept per (backend, workers, engine name) until :func:`shutdown` (which
also stops the slots' threads).
Out of scope: scheduling across several texts at once (the merge strategies pass one text's chunks).
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Literal

import numpy as np

from tokspec import Encoder, Encoding, EncodingArrays, load_engine
from tokspec.concurrency import declared_thread_safe, thread_safety
from tokspec.errors import EngineFault
from tokspec.fast._chunking import MergeError
from tokspec.fast._slots import in_slot_thread, shutdown_slots, slot_map

__all__ = ["Backend", "BACKENDS", "Runner", "auto_backend", "byte_balanced_targets", "default_workers",
           "default_chunk_len", "ids_chunk_len", "ids_split", "IDS_CHUNKS_PER_SLOT", "MIN_IDS_CHUNK",
           "shutdown", "slot_map"]

Backend = Literal["auto", "serial", "threads", "processes", "batch"]
BACKENDS: tuple[str, ...] = ("auto", "serial", "threads", "processes", "batch")

_pools: dict[tuple[str, int, str], Executor] = {}
_pools_lock = threading.Lock()  # two threads starting the same pool at once get one pool
_worker_engine: Encoder | None = None


def default_workers() -> int:
    """One worker per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def auto_backend(engine: Encoder) -> str:
    """The backend ``auto`` resolves to for ``engine`` (see the module table)."""
    if declared_thread_safe(engine) is False:
        return "serial"
    if _has_batch(engine):  # the engine's own batch API: its concurrency is its own business
        return "batch"
    return "threads" if thread_safety(engine).safe else "serial"


def _has_own_batch_arrays(engine: Encoder) -> bool:
    own = getattr(type(engine), "_encode_batch_arrays", None)
    return own is not None and own is not getattr(Encoder, "_encode_batch_arrays", None)


def _has_batch(engine: Encoder) -> bool:
    """True when the engine has its own batch API: it overrides ``Encoder._encode_batch_arrays``
    (the default is a loop) or offers ``encode_batch``."""
    return _has_own_batch_arrays(engine) or callable(getattr(engine, "encode_batch", None))


def default_chunk_len(n_chars: int, workers: int, backend: str) -> int:
    """Chunk length for an ``n_chars`` text: 4 chunks per worker for in-process backends (load
    balance), one per worker for processes (each chunk is pickled both ways); never below 2048."""
    per = 1 if backend == "processes" else 4
    return max(2048, -(-n_chars // max(1, workers * per)))


#: the least characters a thread gets from an ids-only split: below about 0.3 ms of kernel work a
#: thread pool's hand-off (tens of microseconds, more under load) eats what the split saves.
MIN_IDS_CHUNK = 1 << 16


def ids_chunk_len(n_chars: int, parts: int) -> int:
    """The ceiling share of ``n_chars`` in ``parts`` chunks, never below :data:`MIN_IDS_CHUNK`:
    how far past a target of :func:`ids_split` a sound cut is looked for."""
    return max(MIN_IDS_CHUNK, -(-n_chars // max(1, parts)))


#: chunks per slot of an ids-only split: the spare ones are what a slot with time to spare takes
#: from a slow slot's share (``_slots``: a core busy with another process, or a chunk of text that
#: costs more per byte). 4 against 2 (``lopt:fast:X`` x2 on new 1-2 MB texts, interleaved, 9-13
#: rounds): code x1.03-1.05, English x1.06, Chinese-like x1.02; 8 as 4
IDS_CHUNKS_PER_SLOT = 4


def byte_balanced_targets(text: str, parts: int, blocks: int = 64, sample: int = 256) -> list[int]:
    """``parts - 1`` increasing character positions splitting ``text`` into ``parts`` spans of
    about equal UTF-8 bytes (the kernels' work follows bytes more closely than characters: a CJK
    character is 3 bytes). ASCII text: equal characters. Else each of ``blocks`` equal character
    blocks is weighed by the bytes per character of its first ``sample`` characters (O(blocks *
    sample), not O(n): an estimate, exact for text uniform within each block), and a target is
    interpolated in the block where the running weight reaches its share. A balance only: the cuts
    are then the sound cuts found after the targets, so the split's output does not depend on it."""
    n = len(text)
    if parts <= 1 or n == 0:
        return []
    if text.isascii():
        return [n * k // parts for k in range(1, parts)]
    edges = [n * b // blocks for b in range(blocks + 1)]
    weights: list[float] = []
    for lo, hi in zip(edges, edges[1:]):
        probe = text[lo:min(hi, lo + sample)]
        if probe.isascii():  # most blocks of code and English: no encode (2 MB of code 100 -> 35 us)
            per_char = 1.0 if probe else 0.0
        else:
            per_char = len(probe.encode("utf-8", "surrogatepass")) / len(probe)
        weights.append(per_char * (hi - lo))
    total = sum(weights)
    targets: list[int] = []
    run = 0.0
    b = 0
    for k in range(1, parts):
        goal = total * k / parts
        while b < blocks - 1 and run + weights[b] < goal:
            run += weights[b]
            b += 1
        within = (goal - run) / weights[b] if weights[b] else 0.0
        at = edges[b] + int(within * (edges[b + 1] - edges[b]))
        targets.append(max(at, targets[-1] if targets else 0))
    return targets


def ids_split(text: str, workers: int) -> tuple[int, list[int]]:
    """``(reach, targets)`` for ``merge_lopt.encode_ids`` of ``text`` over ``workers`` threads:
    :data:`IDS_CHUNKS_PER_SLOT` chunks per worker (fewer for a shorter text: each at least
    :data:`MIN_IDS_CHUNK` characters, a whole number per worker while there are as many as workers;
    one chunk, serial, below twice that or for one worker), of about equal bytes
    (:func:`byte_balanced_targets`); ``reach`` (:func:`ids_chunk_len`): how far past a target a sound cut is looked for."""
    workers = max(1, workers)
    if workers == 1:  # no other thread to take a share: one chunk, no seams
        return ids_chunk_len(len(text), 1), []
    per = min(IDS_CHUNKS_PER_SLOT, len(text) // (MIN_IDS_CHUNK * workers))
    parts = workers * per if per else max(1, min(workers, len(text) // MIN_IDS_CHUNK))
    return ids_chunk_len(len(text), parts), byte_balanced_targets(text, parts)


#: characters: a batch of texts this long on average or less goes to ``encode_ids_batch``
_BATCH_MEAN = 1 << 16


def _shares(texts: Sequence[str], parts: int) -> list[Sequence[str]]:
    """``texts`` in at most ``parts`` contiguous shares of about equal total length (characters),
    none empty, in order. O(len(texts))."""
    total = sum(str.__len__(t) if isinstance(t, str) else 1 for t in texts)
    shares: list[Sequence[str]] = []
    start = 0
    seen = 0
    for k, t in enumerate(texts):
        seen += str.__len__(t) if isinstance(t, str) else 1
        if seen * parts >= total * (len(shares) + 1) and len(shares) < parts - 1:
            shares.append(texts[start:k + 1])
            start = k + 1
    if start < len(texts):
        shares.append(texts[start:])
    return shares


def _init_worker(name: str) -> None:
    global _worker_engine
    _worker_engine = load_engine(name)


def _encode_in_worker(text: str) -> Encoding:
    assert _worker_engine is not None, "worker initializer did not run"
    return _worker_engine.encode(text)


def _arrays_in_worker(text: str) -> EncodingArrays:
    assert _worker_engine is not None, "worker initializer did not run"
    return _worker_engine.encode_arrays(text)


def _ids_in_worker(text: str) -> np.ndarray:
    assert _worker_engine is not None, "worker initializer did not run"
    ids: np.ndarray = getattr(_worker_engine, "encode_ids")(text)
    return ids


def _pool(backend: str, workers: int, engine: Encoder) -> Executor:
    key = (backend, workers, engine.info.name if backend == "processes" else "")
    with _pools_lock:
        return _pools[key] if key in _pools else _new_pool(key, backend, workers, engine)


def _new_pool(key: tuple[str, int, str], backend: str, workers: int, engine: Encoder) -> Executor:
    if key not in _pools:
        if backend == "threads":
            _pools[key] = ThreadPoolExecutor(max_workers=workers)
        else:
            ctx = multiprocessing.get_context("spawn")  # fork after HF/rayon threads can deadlock
            _pools[key] = ProcessPoolExecutor(max_workers=workers, mp_context=ctx,
                                              initializer=_init_worker, initargs=(engine.info.name,))
    return _pools[key]


def shutdown() -> None:
    """Stop every pool this module started, and the slots' threads (``_slots``)."""
    while _pools:
        _, pool = _pools.popitem()
        pool.shutdown(wait=True, cancel_futures=True)
    shutdown_slots()


atexit.register(shutdown)


def _drop_pool(engine: Encoder, workers: int) -> None:
    pool = _pools.pop(("processes", workers, engine.info.name), None)
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)


class Runner:
    """``runner(engine, texts) -> encodings`` through one backend; usable as ``encode_many``."""

    def __init__(self, backend: str = "auto", workers: int | None = None) -> None:
        if backend not in BACKENDS:
            raise MergeError(f"unknown backend={backend!r}; choose one of {', '.join(BACKENDS)}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int)
                                    or workers < 1):
            raise MergeError(f"workers must be an int >= 1, got workers={workers!r}")
        self.backend = backend
        self.workers = workers or default_workers()

    def resolve(self, engine: Encoder) -> str:
        """The concrete backend used for ``engine``."""
        return auto_backend(engine) if self.backend == "auto" else self.backend

    def __call__(self, engine: Encoder, texts: Sequence[str]) -> list[Encoding]:
        backend = self.resolve(engine)
        if backend == "serial" or len(texts) <= 1 or self.workers == 1:
            return [engine.encode(t) for t in texts]
        if backend == "batch":
            batch = getattr(engine, "encode_batch", None)
            if callable(batch):
                return list(batch(list(texts)))
            if _has_own_batch_arrays(engine):  # e.g. the hf: adapter (HF encode_batch underneath)
                return [a.to_encoding() for a in engine.encode_batch_arrays(list(texts))]
            raise MergeError(f"backend='batch' needs an engine with its own batch API (encode_batch or "
                             f"_encode_batch_arrays); "
                             f"{engine.info.name!r} has none (use backend='auto')")
        if backend == "processes":
            return self._in_processes(engine, texts)
        return list(_pool(backend, self.workers, engine).map(engine.encode, texts))

    def arrays(self, engine: Encoder, texts: Sequence[str]) -> list[EncodingArrays]:
        """Like calling the runner, as :class:`EncodingArrays` (no Python object per token)."""
        backend = self.resolve(engine)
        if backend == "serial" or len(texts) <= 1 or self.workers == 1:
            return [engine.encode_arrays(t) for t in texts]
        if backend == "batch":
            if _has_own_batch_arrays(engine):  # its own arrays first: no Encoding per token
                return list(engine.encode_batch_arrays(list(texts)))
            # encode_batch, or the named error for an engine without a batch API (as when called)
            return [EncodingArrays.from_encoding(e) for e in self(engine, texts)]
        if backend == "processes":
            return self._in_processes(engine, texts, _arrays_in_worker)
        return list(_pool(backend, self.workers, engine).map(engine.encode_arrays, texts))

    def ids(self, engine: Encoder, texts: Sequence[str]) -> list[np.ndarray]:
        """``engine.encode_ids`` of each text (engines that offer it), in order: on the runner's
        threads or processes as the backend resolves; an engine whose backend is its own batch API
        serially (that API returns encodings, not ids alone).

        An engine with ``encode_ids_batch`` (``fast:`` BPE) gets each share in one batch call
        (two kernel calls), on its slot's thread: called text by text, threads spent more time
        taking the GIL back between short kernel calls than they saved (``tokspec.fast._bpe_batch``).
        Threads: the texts dealt out in contiguous shares, one per slot, the calling thread being
        slot 0 (``tokspec.fast._slots``: a slot keeps to its share unless it runs out of work, so a
        chunk runs on the same thread call after call and finds that thread's store of merged
        pieces warm). A slot's thread calling ``ids`` again (nested) encodes serially.
        """
        ids_of = getattr(engine, "encode_ids")
        batch_of = getattr(engine, "encode_ids_batch", None)  # fast: BPE: a share in two kernel calls
        if batch_of is not None and sum(str.__len__(t) for t in texts if isinstance(t, str)) > _BATCH_MEAN * len(texts):
            batch_of = None  # long texts: encode_ids' own long-text path (blocks, GIL-free fill)
        backend = self.resolve(engine)
        if (backend in ("serial", "batch") or len(texts) <= 1 or self.workers == 1
                or in_slot_thread()):
            return list(batch_of(texts)) if batch_of is not None else [ids_of(t) for t in texts]
        if backend == "processes":
            return self._in_processes(engine, texts, _ids_in_worker)
        if batch_of is not None:  # one batch per slot: a GIL hand-off per share, not per text
            shares = _shares(texts, self.workers)
            return [ids for share in slot_map(batch_of, shares, self.workers) for ids in share]
        return slot_map(ids_of, texts, self.workers)

    def ids_ranges(self, engine: Encoder, text: str, spans: Sequence[tuple[int, int]]) -> list[np.ndarray]:
        """``engine.encode_ids_range(text, a, b)`` for each span ``(a, b)`` of ``text``, in order,
        for an engine that offers it (``fast:`` BPE): as :meth:`ids` of the slices, but on threads
        no slice is made and each chunk becomes the kernels' arrays on its own thread, without the
        GIL. Serial (one span, one worker, or called from a slot's thread): the spans in order on
        this thread. Processes and batch: the slices through :meth:`ids` (a worker process gets
        its text pickled anyway)."""
        backend = self.resolve(engine)
        if backend == "processes" or backend == "batch":
            return self.ids(engine, [text[a:b] for a, b in spans])
        ranged = getattr(engine, "encode_ids_range")
        if backend == "serial" or len(spans) <= 1 or self.workers == 1 or in_slot_thread():
            return [ranged(text, a, b) for a, b in spans]
        return slot_map(lambda span: ranged(text, span[0], span[1]), spans, self.workers)

    def _in_processes(self, engine: Encoder, texts: Sequence[str],
                      work: Callable[[str], Any] = _encode_in_worker) -> list[Any]:
        """Map over the process pool; a dead worker becomes an EngineFault (and a fresh pool)."""
        try:
            return list(_pool("processes", self.workers, engine).map(work, texts))
        except BrokenProcessPool as exc:
            _drop_pool(engine, self.workers)
            raise EngineFault(
                f"a worker process of {engine.info.name!r} died ({exc}); scripts using the processes "
                "backend need an `if __name__ == '__main__':` guard (spawned workers re-import "
                "__main__), or use backend='serial'") from exc
