"""The process side of ``cmd:`` engines: one program, its pipes, its stderr file, its stop.

Internal to :mod:`tokspec.engines.cmd` (which owns the protocol). The program is started with
:func:`tokspec._procs.spawn` (its own process group, dying with tokspec on any exit); replies are
read as whole lines from a byte buffer, each byte scanned once, and bounded in length
(:func:`_line_limit`); stderr goes to an anonymous temporary file whose tail is quoted, escaped,
in fault messages. Out of scope: more than one request in flight.
"""

from __future__ import annotations

import os
import selectors
import subprocess
import tempfile
import time
from typing import IO

from tokspec import _procs
from tokspec._escape import escape

__all__: list[str] = []


def _line_limit(request: bytes) -> int:
    """The longest reply line accepted for ``request``: 1 MiB, or 256 bytes per request byte.

    A reply spends at most ~45 bytes per character of text (id, offsets and an escaped piece per
    token, one token per character), so a conforming program never comes near it; a program that
    floods its stdout is stopped there instead of filling tokspec's memory.
    """
    return max(1 << 20, 256 * len(request))


class _Flood(Exception):
    """The program sent more than the line limit without a newline."""


class _Process:
    """One running engine program with a byte buffer over its stdout. Internal to CmdEngine."""

    def __init__(self, argv: list[str]):
        self.stderr: IO[bytes] = tempfile.TemporaryFile()
        try:
            self.proc = _procs.spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, bufsize=0)
        except BaseException:
            self.stderr.close()
            raise
        assert self.proc.stdin is not None and self.proc.stdout is not None
        os.set_blocking(self.proc.stdin.fileno(), False)
        self.buffer = bytearray()

    def exchange(self, request: bytes, deadline: float, limit: int) -> bytes | None:
        """Send ``request``; return the next full line, or None on EOF. TimeoutError at deadline,
        _Flood past ``limit`` bytes without a newline. O(bytes read): each byte is scanned once."""
        assert self.proc.stdin is not None and self.proc.stdout is not None
        pending = memoryview(request)
        scanned = 0
        end = self.buffer.find(b"\n")
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            if pending:
                sel.register(self.proc.stdin, selectors.EVENT_WRITE)
            while end < 0:
                if len(self.buffer) > limit:
                    raise _Flood
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                for key, _ in sel.select(left):
                    if key.fileobj is self.proc.stdin:
                        written = os.write(self.proc.stdin.fileno(), pending[:65536])
                        pending = pending[written:]
                        if not pending:
                            sel.unregister(self.proc.stdin)
                    else:
                        chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                        if not chunk:
                            return None
                        scanned = len(self.buffer)
                        self.buffer += chunk
                        found = chunk.find(b"\n")
                        end = -1 if found < 0 else scanned + found
        line = bytes(self.buffer[:end])
        del self.buffer[:end + 1]
        return line

    def stderr_tail(self, limit: int = 300) -> str:
        """The last ``limit`` bytes of the program's stderr, on one line, escaped."""
        try:
            self.stderr.seek(0, os.SEEK_END)
            size = self.stderr.tell()
            self.stderr.seek(max(0, size - limit))
            tail = self.stderr.read().decode("utf-8", "replace").strip().replace("\n", " | ")
            return escape(tail)
        except (OSError, ValueError):
            return ""

    def kill(self, grace: float = 1.0) -> None:
        """Close stdin, give the program ``grace`` s to exit, then kill its process group. Idempotent."""
        try:
            if self.proc.stdin is not None:
                try:
                    self.proc.stdin.close()
                except OSError:
                    pass
            _procs.stop(self.proc, grace=grace)
        finally:
            if self.proc.stdout is not None:
                self.proc.stdout.close()
            self.stderr.close()
