"""Hanging engines in the fuzz runner: recorded once, minimized by time, never scheduled again.

libFuzzer stops a harness when one input runs longer than ``-timeout`` (the per-call timeout,
``$TOKSPEC_FUZZ_CALL_TIMEOUT``, default 60 s) and writes it as a ``timeout-<sha1>`` artifact. The
runner then (:func:`hang_artifact`) takes that input, shrinks it *by time* (:func:`minimize_hang`:
a smaller input is kept only if one call on it still exceeds the per-call timeout, checked in a
worker process that is killed and restarted at each hang), within a bounded budget, and writes one
hang report per target; the target is marked hung and not run again in this run.

The worker (``python -m tokspec.fuzz._hangs TARGET``) loads the target's engines once, then reads
hex-encoded inputs, one per line, and answers ``done`` after checking each. A worker is reused
across inputs that do not hang, so the engines load once per hang found, plus once.

Complexity: ddmin-like chunk deletion over bytes, at most ``max_tests`` calls, each bounded by the
per-call timeout; the whole minimization stops at ``budget_s``.

Out of scope: slow-but-finishing inputs (no timeout, no hang); hangs of hypothesis targets (their
inputs are not texts; they are recorded unminimized).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

__all__ = ["CALL_TIMEOUT_S", "call_timeout", "hang_artifact", "minimize_hang", "HangWorker"]

CALL_TIMEOUT_S = 60.0


def call_timeout() -> float:
    """The per-call timeout in seconds: ``$TOKSPEC_FUZZ_CALL_TIMEOUT`` (positive), else 60."""
    raw = os.environ.get("TOKSPEC_FUZZ_CALL_TIMEOUT", "")
    value = float(raw) if raw else CALL_TIMEOUT_S
    if not value > 0:
        raise ValueError(f"TOKSPEC_FUZZ_CALL_TIMEOUT={raw!r}: need a positive number of seconds")
    return value


def hang_artifact(stderr: str) -> Path | None:
    """The input libFuzzer wrote when a call exceeded ``-timeout`` (None if the run did not hang)."""
    if "ERROR: libFuzzer: timeout" not in stderr:
        return None
    m = re.search(r"Test unit written to (\S*timeout-[0-9a-f]+)", stderr)
    return Path(m.group(1)) if m and Path(m.group(1)).is_file() else None


class HangWorker:
    """A process holding the target's engines; :meth:`hangs` says whether one call on ``data``
    exceeds ``timeout`` seconds (the worker is then killed; the next call starts a new one)."""

    def __init__(self, harness_name: str, timeout: float, load_s: float = 120.0) -> None:
        self.name, self.timeout, self.load_s = harness_name, timeout, load_s
        self.proc: subprocess.Popen[str] | None = None
        self.starts = 0

    def _start(self) -> subprocess.Popen[str]:
        from tokspec import _procs
        self.starts += 1
        proc = _procs.spawn([sys.executable, "-m", "tokspec.fuzz._hangs", self.name], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout is not None
        if not _line_within(proc, self.load_s).startswith("ready"):
            self.close(proc)
            raise RuntimeError(f"hang worker for {self.name!r} did not load within {self.load_s:.0f} s")
        return proc

    def hangs(self, data: bytes) -> bool:
        proc = self.proc = self.proc or self._start()
        assert proc.stdin is not None
        proc.stdin.write(data.hex() + "\n")
        proc.stdin.flush()
        if _line_within(proc, self.timeout).startswith("done"):
            return False
        self.close(proc)
        self.proc = None
        return True

    def close(self, proc: subprocess.Popen[str] | None = None) -> None:
        from tokspec import _procs
        proc = proc or self.proc
        if proc is not None:
            _procs.stop(proc)
        if proc is self.proc:
            self.proc = None


def _line_within(proc: subprocess.Popen[str], seconds: float) -> str:
    """The next stdout line of ``proc`` if it comes within ``seconds``, else ``""``."""
    import selectors
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    try:
        return proc.stdout.readline() if sel.select(timeout=seconds) else ""
    finally:
        sel.close()


def minimize_hang(harness_name: str, data: bytes, *, timeout: float, budget_s: float,
                  max_tests: int = 200) -> tuple[bytes, int]:
    """(smallest input found that still hangs, calls made). Deletes chunks of halving size while the
    result still exceeds ``timeout`` per call; stops at ``budget_s`` seconds or ``max_tests`` calls.
    ``data`` itself is not re-checked (libFuzzer saw it hang)."""
    end = time.monotonic() + budget_s
    worker = HangWorker(harness_name, timeout)
    best, calls = data, 0
    try:
        chunk = max(1, len(best) // 2)
        while chunk >= 1 and time.monotonic() < end and calls < max_tests:
            i, shrunk = 0, False
            while i < len(best) and time.monotonic() + timeout < end and calls < max_tests:
                trial = best[:i] + best[i + chunk:]
                calls += 1
                if trial and worker.hangs(trial):
                    best, shrunk = trial, True  # keep the deletion; retry at the same place
                else:
                    i += chunk
            if not shrunk:
                chunk //= 2
    finally:
        worker.close()
    return best, calls


def _worker(name: str) -> int:
    """Load ``name``'s checker once; check each hex line of stdin; answer ``done`` per input."""
    from tokspec.fuzz.harness import _load_target
    from tokspec.fuzz.targets import make_checker, text_for
    target = _load_target(name)
    check = make_checker(target)
    print("ready", flush=True)
    for line in sys.stdin:
        check(text_for(target, bytes.fromhex(line.strip())))
        print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(_worker(sys.argv[1]))
