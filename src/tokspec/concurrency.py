"""Thread safety: what an engine declares, and a check that calls it from several threads at once.

An engine is *thread-safe* when any number of threads may call its ``encode``/``encode_arrays`` on
one instance at the same time and each call returns exactly what it returns alone. Engines say so
in :attr:`EngineInfo.thread_safe <tokspec.EngineInfo>` (True, False, or None = unknown, the default
for user engines); an older class attribute ``thread_safe = False`` (``cmd:`` engines) counts too.

:func:`concurrency_fault` is the check: each text's serial result first, then ``threads`` threads
released together by a barrier, thread ``k`` encoding the texts in an order rotated by ``k`` (so
different texts are in flight at once), ``rounds`` times; every result is compared with the serial
one (ids and offsets). A difference or an exception is a :class:`ConcurrencyFault`. While it runs,
the interpreter's switch interval is lowered (:func:`sys.setswitchinterval`) and the checking
threads run with a profile hook that yields the GIL and the CPU every few calls, so pure-Python
engines are interleaved inside their code rather than every 5 ms, even on a busy machine: a per-call
state shared between calls (a scratch buffer on ``self``) then shows within a few calls. A passing check is evidence, not
proof: a race that needs a rarer interleaving can pass it.

:func:`thread_safety` is what ``lopt:`` asks: the declaration if there is one, else the check on
:data:`PROBE_TEXTS`, done once per engine instance and remembered on it.

:func:`minimize_fault` shrinks a fault to the smallest pair of texts and thread count that still
shows it (each candidate re-checked ``rounds`` times; racy faults may need more than one try).

Cost: ``threads * rounds * len(texts)`` encodes plus one serial pass. Out of scope: process-level
crashes of an engine (a segfault ends this process; the CLI's stage runs in-process), async engines.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from tokspec._limits import DeadlineExceeded
from tokspec._types import Encoder, EncodingArrays

__all__ = ["ConcurrencyFault", "ThreadSafety", "declared_thread_safe", "concurrency_fault",
           "minimize_fault", "thread_safety", "PROBE_TEXTS", "SWITCH_INTERVAL"]

SWITCH_INTERVAL = 1e-6  # seconds between forced GIL hand-overs during a check (default 5e-3)

# Distinct texts of different lengths and scripts: per-call state shows when unlike texts interleave.
PROBE_TEXTS: tuple[str, ...] = (
    "The quick brown fox jumps over the lazy dog. " * 12,
    "def f(x):\n    return x ** 2  # 42 lines, 3.14159\n" * 8,
    "Grüße aus Köln, naïve café; Привет мир! こんにちは世界 " * 6,
    "1234567890 " * 30 + "!!!???..." * 10,
    "a" * 700,
    " \t\n  spaces   and\ttabs\n\n" * 15,
)


@dataclass(frozen=True)
class ConcurrencyFault:
    """``threads`` threads calling one engine at once on ``texts`` went wrong: ``kind`` is
    ``"differs"`` (text ``index`` gave another result than alone) or ``"raised"`` (its call raised
    ``detail``)."""

    texts: tuple[str, ...] = field(repr=False)
    threads: int
    index: int
    kind: str
    detail: str

    def describe(self) -> str:
        what = "returned another result than alone" if self.kind == "differs" else f"raised {self.detail}"
        return (f"{self.threads} threads over {len(self.texts)} texts: text {self.index} "
                f"({len(self.texts[self.index])} chars) {what}")


@dataclass(frozen=True)
class ThreadSafety:
    """The answer for one engine: ``safe`` and where it comes from (``"declared"`` or ``"checked"``)."""

    safe: bool
    source: str
    fault: ConcurrencyFault | None = None

    def describe(self) -> str:
        if self.source == "declared":
            return f"declared {'thread-safe' if self.safe else 'not thread-safe'}"
        if self.safe:
            return "passed the concurrency check at load"
        assert self.fault is not None
        return f"failed the concurrency check at load ({self.fault.describe()})"


def declared_thread_safe(engine: Encoder) -> bool | None:
    """``engine.info.thread_safe`` if set, else a boolean class attribute ``thread_safe``, else None."""
    info = getattr(engine, "info", None)
    declared = getattr(info, "thread_safe", None)
    if isinstance(declared, bool):
        return declared
    legacy = getattr(type(engine), "thread_safe", None)
    return legacy if isinstance(legacy, bool) else None


_YIELD_EVERY = 4


def _yield_now_and_then(frame: object, event: str, arg: object) -> None:
    """Profile hook of the checking threads: every few Python or C calls, give up the GIL and the
    CPU (``time.sleep(0)``), so threads interleave inside an engine's Python code even when the
    machine is busy (a thread waiting for the GIL that the OS does not schedule cannot ask for it:
    on a loaded 2-core machine the race of a shared buffer was then missed most of the time)."""
    local = _yield_state
    local.n = getattr(local, "n", 0) + 1
    if local.n % _YIELD_EVERY == 0:
        time.sleep(0)


_yield_state = threading.local()


def _arrays(engine: Encoder, text: str) -> EncodingArrays:
    """``engine.encode_arrays(text)``, or its ``encode`` converted (duck-typed engines)."""
    arrays = getattr(engine, "encode_arrays", None)
    return arrays(text) if callable(arrays) else EncodingArrays.from_encoding(engine.encode(text))


def _same(a: object, b: object) -> bool:
    return isinstance(a, EncodingArrays) and isinstance(b, EncodingArrays) and a.same_as(b)


def concurrency_fault(engine: Encoder, texts: Sequence[str], *, threads: int = 4, rounds: int = 3,
                      serial: Sequence[EncodingArrays] | None = None) -> ConcurrencyFault | None:
    """The first fault seen calling ``engine`` from ``threads`` threads at once (module docstring),
    or None. ``serial`` may pass the texts' serial results if known. An exception in the serial
    pass propagates (that is a fault of the engine alone, not of concurrency)."""
    texts = tuple(texts)
    if threads < 2 or not texts:
        return None
    expected = list(serial) if serial is not None else [_arrays(engine, t) for t in texts]
    n = len(texts)
    found: list[ConcurrencyFault] = []
    bounded: list[DeadlineExceeded] = []
    stop = threading.Event()  # the first fault ends the check: the rest of the rounds cannot undo it

    def work(k: int, barrier: threading.Barrier) -> None:
        barrier.wait()
        for j in range(n):
            if stop.is_set():
                return
            i = (j + k) % n
            try:
                got = _arrays(engine, texts[i])
            except DeadlineExceeded as exc:  # a time bound, not the engine's fault: re-raised below
                bounded.append(exc)
                stop.set()
                return
            except BaseException as exc:  # noqa: BLE001 - the engine's fault is the finding
                # (SystemExit too: a thread must not die silently)
                found.append(ConcurrencyFault(texts, threads, i, "raised", f"{type(exc).__name__}: {exc}"[:300]))
                stop.set()
                return
            if not _same(got, expected[i]):
                found.append(ConcurrencyFault(texts, threads, i, "differs", ""))
                stop.set()
                return

    old = sys.getswitchinterval()
    try:
        sys.setswitchinterval(SWITCH_INTERVAL)
        for _ in range(rounds):
            if stop.is_set():
                break
            barrier = threading.Barrier(threads)
            pool = [threading.Thread(target=work, args=(k, barrier), daemon=True) for k in range(threads)]
            threading.setprofile(_yield_now_and_then)  # for the threads started here
            try:
                for t in pool:
                    t.start()
            finally:
                threading.setprofile(None)
            for t in pool:
                t.join()
    finally:
        sys.setswitchinterval(old)
    if bounded:
        raise bounded[0]
    return found[0] if found else None


def minimize_fault(engine: Encoder, fault: ConcurrencyFault, *, rounds: int = 10,
                   tries: int = 3, deadline: float | None = None) -> ConcurrencyFault:
    """The smallest fault found from ``fault``: fewest threads (2 upward), then the pair of texts
    of least total length (the faulting text with each other one, shortest first; the text with
    itself too), then each text of the pair halved while the fault persists. Each candidate gets
    ``tries`` checks of ``rounds`` rounds and counts only if every one of them faults (so the
    witness replays, not just once by luck). Among many candidates some pass by luck (a race that
    shows one time in three passes three tries one time in 27), so the result is confirmed again
    with ``VERIFY_TRIES`` tries, walking back to larger accepted candidates until one holds.
    Returns ``fault`` itself when nothing smaller shows and holds.

    ``deadline`` (a :func:`time.monotonic` time): no candidate is tried after it; the smallest
    confirmed fault so far is returned (a time bound shortens the search, it never loses the fault)."""
    def shows(texts: tuple[str, ...], threads: int, n: int = tries) -> ConcurrencyFault | None:
        if deadline is not None and time.monotonic() >= deadline:
            return None
        hits: list[ConcurrencyFault] = []
        for _ in range(n):
            try:
                found = concurrency_fault(engine, texts, threads=threads, rounds=rounds)
            except (Exception, SystemExit):  # noqa: BLE001 - fails alone: not a concurrency witness
                return None
            if found is None:
                return None  # every try must fault: a witness that replays
            hits.append(found)
        return hits[0]

    accepted = [fault]
    culprit = fault.texts[fault.index]
    others = sorted(set(fault.texts), key=len)
    for threads in range(2, fault.threads + 1):
        pairs = [(culprit, o) for o in others]
        pairs.sort(key=lambda p: len(p[0]) + len(p[1]))
        hit = next((f for p in pairs if (f := shows(p, threads)) is not None), None)
        if hit is not None:
            accepted.append(hit)
            break
    pair = list(accepted[-1].texts)
    for k in range(len(pair)):  # halve each text (keep the first half, then the second) while it shows
        while len(pair[k]) > 1:
            half = len(pair[k]) // 2
            for cut in (pair[k][:half], pair[k][half:]):
                trial = tuple(cut if j == k else t for j, t in enumerate(pair))
                hit = shows(trial, accepted[-1].threads)
                if hit is not None:
                    pair = list(trial)
                    accepted.append(hit)
                    break
            else:
                break
    for candidate in reversed(accepted[1:]):  # the smallest that holds under a stricter check
        confirmed = shows(candidate.texts, candidate.threads, VERIFY_TRIES)
        if confirmed is not None:
            return confirmed
    return fault


#: Tries (each must fault) that confirm a minimized witness (:func:`minimize_fault`).
VERIFY_TRIES = 6


_LOCK = threading.Lock()


def thread_safety(engine: Encoder, *, threads: int = 4, rounds: int = 3) -> ThreadSafety:
    """The declaration of ``engine`` if any, else the check on :data:`PROBE_TEXTS` (once per
    instance: remembered as the attribute ``_tokspec_thread_safety``). A pretokenizer is probed
    the same way. An engine that raises on a probe text alone is treated as unsafe (no threads)."""
    declared = declared_thread_safe(engine)
    if declared is not None:
        return ThreadSafety(declared, "declared")
    known = getattr(engine, "_tokspec_thread_safety", None)
    if isinstance(known, ThreadSafety):
        return known
    with _LOCK:
        try:
            fault = concurrency_fault(engine, PROBE_TEXTS, threads=threads, rounds=rounds)
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - an engine failing alone gets no threads
            fault = ConcurrencyFault(PROBE_TEXTS, 1, 0, "raised", f"{type(exc).__name__}: {exc}"[:300])
        verdict = ThreadSafety(fault is None, "checked", fault)
        try:
            engine._tokspec_thread_safety = verdict  # type: ignore[attr-defined]
        except AttributeError:  # __slots__: check again next time
            pass
    return verdict
