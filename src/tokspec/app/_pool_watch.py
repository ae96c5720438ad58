"""Waiting for a worker's result without waiting forever, and saying which worker died.

- :class:`PoolWatch`: a ``ProcessPoolExecutor`` whose worker was killed raises
  ``BrokenProcessPool`` with a traceback; this turns it into :class:`WorkerLostError`, one line
  naming the worker's pid and how it ended (signal or exit status).
- :func:`dask_result`: waits for a Dask future in slices of ``poll`` seconds; when the cluster has
  had no worker for ``lost_after`` seconds (all died) or the scheduler is gone, raises
  :class:`WorkerLostError` instead of waiting forever (Dask itself waits for workers to come back).

Out of scope: retrying the lost jobs (the run ends with the error; exit 2).
"""

from __future__ import annotations

import signal
import time
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from tokspec.errors import TokspecError

__all__ = ["WorkerLostError", "PoolWatch", "dask_result", "LOST_AFTER", "fuzz_deadline", "overdue_workers"]

#: seconds a fuzz worker may run past ``--time`` + ``--shrink-time`` (its last shrink, its report)
FUZZ_GRACE = 10.0

#: seconds a Dask cluster may have no worker at all before the run is given up
LOST_AFTER = 30.0


class WorkerLostError(TokspecError):
    """A worker process or the Dask scheduler died while jobs were running."""


def _how(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


class PoolWatch:
    """Submits to a ``ProcessPoolExecutor`` remembering its worker processes (the pool forgets
    them once broken), so that :meth:`result` can name the one that died."""

    def __init__(self, pool: Any) -> None:
        self.pool = pool
        self.seen: dict[int, Any] = {}

    def submit(self, fn: Any, job: Any) -> Any:
        future = self.pool.submit(fn, job)
        self.seen.update(getattr(self.pool, "_processes", None) or {})
        return future

    def result(self, future: Any) -> Any:
        """``future.result()``; a dead pool worker becomes :class:`WorkerLostError` (module docstring)."""
        try:
            return future.result()
        except BrokenProcessPool:
            # the pool's manager thread reaps the workers after breaking the futures; a join racing
            # it loses the exit status (waitpid: ECHILD), so let it finish first
            manager = getattr(self.pool, "_executor_manager_thread", None)
            if manager is not None:
                manager.join(timeout=2)
            for p in self.seen.values():
                p.join(timeout=1)  # its exit code is known once it is reaped
            dead = [f"pid {pid} ({_how(p.exitcode)})" for pid, p in self.seen.items()
                    if p.exitcode not in (None, 0)]
            who = ", ".join(dead) if dead else "a worker"
            raise WorkerLostError(f"--workers process died: {who}; the run is incomplete (out of memory? "
                                  "killed?); rerun, or use --workers 1 to see the error") from None


def dask_result(client: Any, future: Any, *, poll: float = 1.0, lost_after: float | None = None) -> Any:
    """``future.result()``, given up with :class:`WorkerLostError` when the cluster has had no
    worker for ``lost_after`` seconds or the scheduler is unreachable (module docstring)."""
    limit = LOST_AFTER if lost_after is None else lost_after
    empty_since: float | None = None
    while True:
        try:
            return future.result(timeout=poll)
        except (FutureTimeout, TimeoutError):
            pass
        except (OSError, EOFError) as exc:
            raise WorkerLostError(f"lost the Dask scheduler ({type(exc).__name__}: {exc}); the run is "
                                  "incomplete") from None
        except Exception as exc:
            if type(exc).__name__ == "KilledWorker":  # Dask gave up after workers died running it
                raise WorkerLostError(f"Dask workers died running a job ({exc}); the run is incomplete"
                                      ) from None
            if type(exc).__name__ in {"CancelledError", "CommClosedError", "FutureCancelledError"}:
                raise WorkerLostError(f"lost the Dask scheduler or the job ({type(exc).__name__}); the run "
                                      "is incomplete") from None
            raise
        try:
            workers = len(client.scheduler_info().get("workers", {}))
        except Exception as exc:  # noqa: BLE001 - any failure to ask is a lost scheduler
            raise WorkerLostError(f"lost the Dask scheduler ({type(exc).__name__}); the run is "
                                  "incomplete") from None
        now = time.monotonic()
        if workers:
            empty_since = None
        elif empty_since is None:
            empty_since = now
        elif now - empty_since >= limit:
            raise WorkerLostError(f"the Dask cluster has had no worker for {limit:.0f} s (all died?); "
                                  "the run is incomplete")


def fuzz_deadline(seconds: float, shrink_seconds: float) -> float:
    """The ``time.monotonic()`` by which fuzz workers started now must have ended."""
    return time.monotonic() + seconds + shrink_seconds + FUZZ_GRACE


def overdue_workers(procs: list[Any], deadline: float, seconds: float) -> str | None:
    """One line naming the fuzz workers still alive past ``deadline`` (they are then killed by the
    caller), or None. A worker stuck in an engine call that never returns would otherwise keep
    tokspec waiting forever."""
    if time.monotonic() < deadline:
        return None
    late = [f"pid {p.pid}" for p in procs if p.is_alive()]
    if not late:
        return None
    return (f"fuzz worker {', '.join(late)} still running {FUZZ_GRACE:.0f} s after --time {seconds:g} "
            "and --shrink-time: killed (an engine call that never returns?)")
