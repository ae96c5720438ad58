"""How many worker processes a run may start: no more than it has work for, or memory for.

``--workers 1000`` must not start hundreds of Python processes of a few hundred MB each (each
loads its own engines). :func:`cap_workers` lowers the request to the number of jobs (when known)
and to the available memory divided by :data:`WORKER_BYTES`, and says so in one note on stderr.
Available memory: ``MemAvailable`` of ``/proc/meminfo`` (Linux), else no memory cap.
Out of scope: remote Dask schedulers (their workers are not started here).
"""

from __future__ import annotations

from typing import TextIO

from tokspec.app.executors import usable_cores

__all__ = ["cap_workers", "available_memory", "WORKER_BYTES"]

#: memory budgeted per worker process (interpreter, numpy/numba, two loaded engines)
WORKER_BYTES = 400 << 20


def available_memory() -> int | None:
    """Bytes of memory available for new processes, or None if unknown."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def cap_workers(requested: int, *, jobs: int | None = None, err: TextIO | None = None,
                memory: int | None = None) -> int:
    """``requested`` lowered to ``jobs`` and to what memory allows (at least 1); a note on ``err``
    (None: quiet) when memory lowered it, or when more workers than usable cores were asked for
    (fewer than the cores, for want of jobs, is the usual case: silent, as before)."""
    memory = available_memory() if memory is None else memory
    limits: list[tuple[int, str]] = []
    if jobs is not None:
        limits.append((max(1, jobs), f"{jobs} batch{'es' if jobs != 1 else ''} of inputs"))
    if memory is not None:
        limits.append((max(1, memory // WORKER_BYTES),
                       f"{memory / (1 << 30):.1f} GiB available at {WORKER_BYTES >> 20} MiB per worker"))
    allowed, why = min(limits, default=(requested, ""))
    if allowed >= requested:
        return requested
    if err is not None and (requested > usable_cores() or "GiB" in why):  # a few spare workers: silent
        print(f"tokspec: --workers {requested} capped to {allowed} ({why})", file=err)
    return allowed
