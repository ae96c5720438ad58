"""Writing a whole result to stdout (``--out -``) so that a reader going away is never success.

CPython's buffered ``sys.stdout.write`` of a large string into a pipe can return normally when the
reader closes the pipe mid-write: the kernel reports the bytes written so far and the rest is
dropped without an error (seen with ``tokspec encode --out - | head -1``: exit 0, the golden file cut).
:func:`write_stdout` writes the bytes itself with :func:`os.write` until every byte is out, so a
closed pipe raises :class:`BrokenPipeError` (the CLI then exits 141, as ``| head`` expects).
"""

from __future__ import annotations

import os
import sys

__all__ = ["write_stdout"]


def write_stdout(text: str) -> None:
    """Write ``text`` (UTF-8) to stdout completely, or raise OSError (BrokenPipeError). O(len)."""
    sys.stdout.flush()  # whatever was printed before comes first
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):  # not a file (captured, StringIO): its own write
        sys.stdout.write(text)
        return
    view = memoryview(text.encode("utf-8"))
    while view:
        view = view[os.write(fd, view):]
