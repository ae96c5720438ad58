"""Resource limits: how large one input may be, and out-of-memory as a setup error.

- :func:`max_input_bytes`: the largest single input (one line of an inputs file, one ``.json``
  record) tokspec reads, ``$TOKSPEC_MAX_INPUT_BYTES`` (default 64 MiB). A longer one is refused
  with an error naming the limit before it is held in memory: a reader holds at most the limit plus
  one buffer, and an engine is never asked to encode more (the compiled kernels allocate
  about 8 bytes per character per array).
- :class:`ResourceLimitError`: a limit was exceeded or memory ran out (``MemoryError``). It is a
  setup error (exit 2), not an engine fault: the machine, not the engine, failed.

Out of scope: limits on the number of inputs (streamed, so unbounded) and on engine processes'
memory (``cmd:`` engines' own business).
"""

from __future__ import annotations

import os

from tokspec.errors import TokspecError

__all__ = ["ResourceLimitError", "DeadlineExceeded", "max_input_bytes", "DEFAULT_MAX_INPUT_BYTES"]

DEFAULT_MAX_INPUT_BYTES = 64 << 20


class ResourceLimitError(TokspecError):
    """An input exceeds a size limit, or memory ran out; the message names the limit."""


def max_input_bytes() -> int:
    """``$TOKSPEC_MAX_INPUT_BYTES`` (a positive integer), else 64 MiB."""
    raw = os.environ.get("TOKSPEC_MAX_INPUT_BYTES", "").strip()
    if not raw:
        return DEFAULT_MAX_INPUT_BYTES
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value <= 0:
        raise ResourceLimitError(f"TOKSPEC_MAX_INPUT_BYTES={raw!r} is not a positive integer (bytes)")
    return value


class DeadlineExceeded(ResourceLimitError):
    """A wall-clock bound (``check_against(max_seconds=...)``) passed while an engine call was
    still running. Not an engine fault: comparison code re-raises it (``tokspec.diff.run_engine``)."""
