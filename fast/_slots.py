"""Run chunks on threads that each keep to their own share: the threads backend of ``Runner.ids``.

Why: the ``fast:`` BPE engines keep a store of merged pieces per thread (``_piece_store``). From a
shared pool's queue a chunk often landed on a thread that had not encoded it the call before, and
ran at new-text speed (issue 29: two chunks 6.2 ms on two threads against 3.8 ms serially; lopt
over its own serial call ranged 1.01x to 2.64x over five runs). Here the chunks of a call are
dealt out in contiguous shares, one per *slot*: slot 0 is the calling thread, slot ``j >= 1`` one
dedicated thread (:func:`slot_executor`) shared by every caller. A slot encodes its own share front
to back; a slot done with its share takes the last unclaimed chunk of the slot with most left (work
stealing), so a slot whose core is busy with another process, or whose thread is busy with another
caller's chunks, delays the call by at most the chunk it is in. When the slots keep pace, chunk
``k`` of a text runs on the same thread call after call.

Exactness: nothing here touches what a chunk encodes to; results come back in input order (each
chunk is encoded exactly once: a claim pops it from its share under a lock). The first exception in
input order is re-raised once every chunk is done. Thread safety: a slot's thread runs one task at
a time, so an engine's per-thread state is used by its own thread only. A slot's thread calling
:func:`slot_map` again (nested) would queue work behind itself: ``in_slot_thread()`` lets callers
encode serially there instead. Out of scope: processes (``tokspec.fast.parallel``).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

__all__ = ["Claims", "in_slot_thread", "shutdown_slots", "slot_executor", "slot_map"]

_Item = TypeVar("_Item")  # what a chunk is: a text, or a span of one (``Runner.ids_ranges``)

_executors: dict[int, ThreadPoolExecutor] = {}
_lock = threading.Lock()
_local = threading.local()  # ``busy`` True on the slots' threads


def _mark() -> None:
    _local.busy = True


def in_slot_thread() -> bool:
    """True on the thread of a slot ``>= 1``."""
    return bool(getattr(_local, "busy", False))


def slot_executor(j: int) -> ThreadPoolExecutor:
    """The one-thread executor of slot ``j >= 1``, started on first use and shared by every caller."""
    with _lock:
        if j not in _executors:
            _executors[j] = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"tokspec-slot{j}",
                                               initializer=_mark)
        return _executors[j]


def shutdown_slots() -> None:
    """Stop the slots' threads (after their current tasks); new calls start new ones."""
    with _lock:
        executors = list(_executors.values())
        _executors.clear()
    for executor in executors:
        executor.shutdown(wait=True, cancel_futures=True)


class Claims:
    """Chunks ``0..n-1`` in contiguous shares, share ``j`` = ``[j*n//slots, (j+1)*n//slots)``.
    :meth:`claim` for slot ``j``: the first chunk left in its share, else the last chunk of the
    share with most left, else None. O(slots) a claim."""

    def __init__(self, n: int, slots: int) -> None:
        self._lock = threading.Lock()
        self.left = [deque(range(j * n // slots, (j + 1) * n // slots)) for j in range(slots)]

    def claim(self, slot: int) -> int | None:
        with self._lock:
            own = self.left[slot]
            if own:
                return own.popleft()
            victim = max(self.left, key=len)
            return victim.pop() if victim else None


def slot_map(work: Callable[[_Item], Any], texts: Sequence[_Item], workers: int,
             ran_on: list[int] | None = None) -> list[Any]:
    """``[work(t) for t in texts]`` on ``min(workers, len(texts))`` slots (module docstring), in
    input order; the first exception in input order re-raised after every chunk is done.
    ``ran_on`` (tests, traces): filled with the slot that encoded each chunk."""
    n = len(texts)
    slots = max(1, min(workers, n))
    claims = Claims(n, slots)
    results: list[Any] = [None] * n
    errors: dict[int, BaseException] = {}
    where = [-1] * n
    done = threading.Condition()
    remaining = [n]

    def drain(slot: int) -> None:
        while (k := claims.claim(slot)) is not None:
            where[k] = slot
            try:
                results[k] = work(texts[k])
            except BaseException as exc:  # re-raised by the caller below, in input order
                errors[k] = exc
            with done:
                remaining[0] -= 1
                if remaining[0] == 0:
                    done.notify_all()

    for j in range(1, slots):
        slot_executor(j).submit(drain, j)
    drain(0)
    with done:
        done.wait_for(lambda: remaining[0] == 0)
    if ran_on is not None:
        ran_on[:] = where
    if errors:
        raise errors[min(errors)]
    return results
