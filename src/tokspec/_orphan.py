"""Worker processes that die with the tokspec process that started them, even on its SIGKILL.

The ``cmd:`` supervisor (:mod:`tokspec._procs`) covers the programs tokspec starts; this module
covers tokspec's own Python workers (``--workers`` pools, fuzz workers). :func:`die_with_parent`,
called first thing in a worker, arranges two independent ways out:

1. the kernel's parent-death signal (Linux ``prctl(PR_SET_PDEATHSIG, SIGKILL)``), immediate;
2. a daemon thread that polls ``os.getppid()`` every ``poll`` seconds and SIGKILLs this process
   when the parent is gone (the parent-death signal fires when the *thread* that forked the worker
   exits, and does not exist outside Linux).

A worker's own ``cmd:`` engines are under supervisors whose parent-death signal fires when the
worker dies, so the whole tree goes. :func:`exit_at` is the same watch for a wall-clock deadline.
Out of scope: workers of a Dask cluster (Dask's nannies own them).
"""

from __future__ import annotations

import os
import signal
import threading
import time

__all__ = ["die_with_parent", "exit_at"]


def _set_pdeathsig(sig: int) -> None:
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(sig), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the polling thread alone
        pass


def _watch(parent: int, poll: float) -> None:
    while os.getppid() == parent:
        time.sleep(poll)
    os.kill(os.getpid(), signal.SIGKILL)


def die_with_parent(parent: int | None = None, *, poll: float = 0.25) -> None:
    """Make this process die (SIGKILL) when ``parent`` (default: the current parent) is gone."""
    parent = os.getppid() if parent is None else parent
    _set_pdeathsig(signal.SIGKILL)
    if os.getppid() != parent:  # the parent died before we got here
        os.kill(os.getpid(), signal.SIGKILL)
    threading.Thread(target=_watch, args=(parent, poll), daemon=True, name="tokspec-orphan-watch").start()


def exit_at(deadline: float) -> None:
    """SIGKILL this process once ``time.monotonic()`` passes ``deadline`` (a daemon thread)."""
    def watch() -> None:
        while (left := deadline - time.monotonic()) > 0:
            time.sleep(min(left, 0.5))
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, daemon=True, name="tokspec-deadline").start()
