"""Inputs that can be read only once (stdin, pipes), and lines of bounded length.

tokspec reads an inputs PATH more than once (the format is sniffed from the first line, the inputs
are counted, then run). A pipe -- ``-`` (stdin), ``/dev/stdin``, a FIFO, a process substitution
``<(cmd)`` (``/dev/fd/N``) -- gives its data to the first reader only. :func:`open_input` therefore
copies any PATH that is not a regular file, on first use, into one private temporary file
(``tempfile``, mode 0600, unlinked at once on Linux and reopened through ``/proc/self/fd``, else
removed at exit), and every later open of the same PATH in this process reads that copy: the
stream is consumed exactly once. Cost: one copy on disk of what was piped (memory stays one buffer).

:func:`bounded_lines` yields lines of a binary file, refusing one longer than
:func:`tokspec._limits.max_input_bytes` before holding it whole (memory: the limit + one buffer).

Out of scope: a pipe shared with another program reading concurrently.
"""

from __future__ import annotations

import atexit
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from tokspec._limits import ResourceLimitError, max_input_bytes

__all__ = ["open_input", "bounded_lines", "is_stream", "STDIN"]

STDIN = "-"
_spooled: dict[str, str] = {}  # the PATH as given -> the path to open for its copy


def is_stream(path: Path) -> bool:
    """True for ``-`` and anything that exists but is not a regular file or a folder."""
    if str(path) == STDIN:
        return True
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _spool(path: Path) -> str:
    fd, name = tempfile.mkstemp(prefix="tokspec-inputs-", suffix=".spool")
    with os.fdopen(os.dup(fd), "wb") as out:
        if str(path) == STDIN:
            shutil.copyfileobj(sys.stdin.buffer, out, 1 << 20)
        else:
            with open(path, "rb") as src:
                shutil.copyfileobj(src, out, 1 << 20)
    if os.path.isdir("/proc/self/fd"):
        os.unlink(name)  # nothing left behind, even on SIGKILL; the open fd keeps the data
        return f"/proc/self/fd/{fd}"
    os.close(fd)
    atexit.register(_unlink_if_there, name)
    return name


def open_input(path: Path) -> BinaryIO:
    """Open ``path`` for reading; a stream (see :func:`is_stream`) is read through its one copy."""
    key = str(path)
    if key in _spooled:
        return open(_spooled[key], "rb")
    if is_stream(path):
        _spooled[key] = _spool(path)
        return open(_spooled[key], "rb")
    return path.open("rb")


def bounded_lines(fh: BinaryIO, where: str) -> Iterator[bytes]:
    """The lines of ``fh`` (each with its ``\\n``), none longer than the input limit."""
    limit = max_input_bytes()
    number = 0
    while True:
        raw = fh.readline(limit + 1)
        if not raw:
            return
        number += 1
        if len(raw) > limit and not (len(raw) == limit + 1 and raw.endswith(b"\n")):
            raise ResourceLimitError(f"{where}:line {number} is longer than TOKSPEC_MAX_INPUT_BYTES={limit} "
                                     "bytes; raise the limit or split the input")
        yield raw


def read_bounded(fh: BinaryIO, where: str) -> bytes:
    """All of ``fh`` (one ``.json`` record), refused past the input limit."""
    limit = max_input_bytes()
    data = fh.read(limit + 1)
    if len(data) > limit:
        raise ResourceLimitError(f"{where} is longer than TOKSPEC_MAX_INPUT_BYTES={limit} bytes; raise the "
                                 "limit or split the input")
    return data


def _unlink_if_there(name: str) -> None:
    if os.path.exists(name):
        os.unlink(name)
