"""How often a long run prints a progress line: often on a terminal, sparsely into a log.

A person watching a terminal wants a line every second; a log file or CI console (stderr is not a
TTY) wants one every ``TOKSPEC_PROGRESS_SECONDS`` (default 30) so that a 10-minute run writes 20
lines, not 600. ``--quiet`` still silences both. O(1).
"""

from __future__ import annotations

import os
from typing import TextIO

from tokspec.errors import TokspecError

__all__ = ["TTY_SECONDS", "LOG_SECONDS", "progress_interval"]

TTY_SECONDS = 1.0
LOG_SECONDS = 30.0


def _is_tty(stream: TextIO | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a closed or file-like stream without a descriptor
        return False


def progress_interval(stream: TextIO | None) -> float:
    """Seconds between progress lines on ``stream``: :data:`TTY_SECONDS` on a terminal, else
    ``$TOKSPEC_PROGRESS_SECONDS`` or :data:`LOG_SECONDS` (a TokspecError names a bad value)."""
    if _is_tty(stream):
        return TTY_SECONDS
    raw = os.environ.get("TOKSPEC_PROGRESS_SECONDS", "")
    if not raw:
        return LOG_SECONDS
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise TokspecError(f"TOKSPEC_PROGRESS_SECONDS={raw!r} must be a positive number of seconds")
    return seconds
