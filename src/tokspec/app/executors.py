"""Executors of the diff runner: one small interface over "here", "all local cores" and "a cluster".

An :class:`Executor` runs a picklable task function over a stream of jobs and yields the results
**in job order**, with at most ``window`` jobs in flight (so a stream of any length needs bounded
memory). Three implementations:

- :class:`InlineExecutor`: in this process, one job at a time (``--workers 1``).
- :class:`ProcessExecutor`: ``concurrent.futures.ProcessPoolExecutor`` with a *spawn* context (safe
  with threads, numba and ``python -c``; children get this process' ``sys.path``); the workers die
  with this process, even on its SIGKILL (``tokspec._orphan``).
- :class:`DaskExecutor`: a ``dask.distributed`` client, on a ``LocalCluster`` (``"local"``) or on a
  running scheduler (``"tcp://HOST:8786"``). Dask is optional (``pip install 'tokspec[dask]'``);
  without it :func:`make_executor` raises :class:`SchedulerSetupError`.

Task functions keep per-process state (loaded engines) in module globals, so each worker loads its
engines once. Out of scope: Ray (a ``ray://`` executor would be one more class with ``submit``;
not built), retries of failed jobs (a job that raises ends the run with that error).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from typing import Any, Protocol

from tokspec._orphan import die_with_parent
from tokspec.app._pool_watch import PoolWatch, dask_result
from tokspec.errors import TokspecError

__all__ = ["Executor", "InlineExecutor", "ProcessExecutor", "DaskExecutor", "SchedulerSetupError",
           "make_executor", "usable_cores"]


class SchedulerSetupError(TokspecError):
    """A ``--scheduler`` cannot be used here (Dask missing, scheduler unreachable, bad address)."""


def usable_cores() -> int:
    """CPUs this process may run on (``os.sched_getaffinity``, else ``os.cpu_count``), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


class Executor(Protocol):
    """Runs ``fn`` over ``jobs``; results in job order; bounded jobs in flight."""

    workers: int

    def map(self, fn: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Any]: ...

    def close(self) -> None: ...


def _ordered(submit: Callable[[Any], Any], jobs: Iterable[Any], window: int,
             result: Callable[[Any], Any] = lambda future: future.result()) -> Iterator[Any]:
    """Submit jobs keeping at most ``window`` unfinished; yield ``result(future)`` in job order."""
    pending: deque[Any] = deque()
    for job in jobs:
        pending.append(submit(job))
        if len(pending) >= window:
            yield result(pending.popleft())
    while pending:
        yield result(pending.popleft())


class InlineExecutor:
    """This process, one job at a time."""

    workers = 1

    def map(self, fn: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Any]:
        return (fn(job) for job in jobs)

    def close(self) -> None:
        pass


class ProcessExecutor:
    """``workers`` spawned processes; ``2 * workers`` jobs in flight."""

    def __init__(self, workers: int):
        self.workers = workers
        self._pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                         initializer=die_with_parent, initargs=(os.getpid(),))

    def map(self, fn: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Any]:
        watch = PoolWatch(self._pool)  # names a worker that dies
        return _ordered(lambda job: watch.submit(fn, job), jobs, 2 * self.workers, watch.result)

    def close(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)


class DaskExecutor:
    """A ``dask.distributed`` client: ``"local"`` starts a LocalCluster of ``workers`` processes
    (one thread each); any other address is a running scheduler (``tcp://HOST:8786``).

    A worker process that dies is restarted by its nanny and Dask re-runs its jobs (the run's result
    is complete and unchanged); a job whose workers keep dying (Dask's ``allowed-failures``) ends
    the run with one line (:func:`tokspec.app._pool_watch.dask_result`;
    ``tests/test_dask_worker_killed.py``)."""

    def __init__(self, scheduler: str, workers: int):
        try:
            from distributed import Client, LocalCluster
        except ImportError as exc:
            raise SchedulerSetupError(
                f"--scheduler {scheduler!r} needs Dask distributed, which is not installed "
                f"({exc}); install it with: pip install 'tokspec[dask]'") from None
        self._cluster = None
        try:
            if scheduler == "local":
                # silence_logs=CRITICAL: a worker's death is reported once, by tokspec (dask_result);
                # at ERROR the in-process scheduler adds a log line per job it gives up
                self._cluster = LocalCluster(  # type: ignore[no-untyped-call]
                    n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                    silence_logs=logging.CRITICAL)
                self._client = Client(self._cluster)  # type: ignore[no-untyped-call]
            else:
                self._client = Client(scheduler, timeout="20s")  # type: ignore[no-untyped-call]
        except (OSError, TimeoutError, ValueError) as exc:
            if self._cluster is not None:
                self._cluster.close()
            raise SchedulerSetupError(f"cannot connect to Dask scheduler {scheduler!r}: "
                                      f"{type(exc).__name__}: {exc}") from None
        self.workers = max(1, len(self._client.scheduler_info().get("workers", {})) or workers)

    def map(self, fn: Callable[[Any], Any], jobs: Iterable[Any]) -> Iterator[Any]:
        # pure=False: two equal batches (repeated inputs) are still two tasks, each yielding its result
        return _ordered(lambda job: self._client.submit(fn, job, pure=False), jobs, 2 * self.workers,
                        lambda future: dask_result(self._client, future))

    def close(self) -> None:
        try:  # a lost scheduler must not turn the run's one-line error into a hang or a traceback
            self._client.close(timeout=10)  # type: ignore[no-untyped-call]
            if self._cluster is not None:
                self._cluster.close(timeout=10)
        except Exception:  # noqa: BLE001
            pass


def make_executor(workers: int, scheduler: str | None = None) -> Executor:
    """The executor for ``--workers`` / ``--scheduler`` (``None``, ``"local"`` or a scheduler address)."""
    if scheduler is not None:
        if scheduler != "local" and "://" not in scheduler:
            raise SchedulerSetupError(f"--scheduler must be 'local' or an address like tcp://HOST:8786, "
                                      f"got {scheduler!r}")
        if scheduler.startswith("ray://"):
            raise SchedulerSetupError("--scheduler ray:// is not supported yet (Dask only)")
        return DaskExecutor(scheduler, workers)
    return InlineExecutor() if workers <= 1 else ProcessExecutor(workers)
