"""Running one function in several threads at once, for the tests of thread-safe engines."""

from __future__ import annotations

import threading
from collections.abc import Callable


def run_in_threads(work: Callable[[int], object], n: int) -> None:
    """Start ``work(0)`` .. ``work(n - 1)`` each in its own thread, then wait for all of them.
    ``work`` records its own failures (an exception in a thread does not fail the test)."""
    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def batch_failures_in_threads(encode_batch: Callable[[list[str]], list[object]], batches: list[list[str]],
                              want: list[list[list[int]]], rounds: int = 5) -> list[str]:
    """Thread ``k`` encodes ``batches[k]`` ``rounds`` times with ``encode_batch`` (ids arrays)
    while the others do theirs; the threads whose ids ever differed from ``want[k]``."""
    failures: list[str] = []

    def work(k: int) -> None:
        for _ in range(rounds):
            if [ids.tolist() for ids in encode_batch(batches[k])] != want[k]:  # type: ignore[attr-defined]
                failures.append(f"thread {k}")

    run_in_threads(work, len(batches))
    return failures
