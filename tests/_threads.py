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
