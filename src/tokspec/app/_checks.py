"""Argument checks shared by the subcommands, run before any engine is loaded.

Each raises :class:`ArgumentError` (a :class:`~tokspec.errors.TokspecError`: one line, exit 2)
naming the option and the value. :func:`check_output_dir` runs at start so that a bad ``--report``
is found before the first finding, not when that finding would be written (and lost).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from tokspec._escape import escape
from tokspec._registry import load_engine
from tokspec._types import Encoder
from tokspec.errors import TokspecError

__all__ = ["ArgumentError", "check_output_dir", "positive_seconds", "at_least", "load_engine_checked"]


class ArgumentError(TokspecError):
    """A command-line option has a value that cannot work; the message names it."""


def positive_seconds(value: float, option: str) -> float:
    """``value`` if it is a finite number > 0 (``nan`` and ``inf`` are refused)."""
    if not (math.isfinite(value) and value > 0):
        raise ArgumentError(f"{option} must be a finite number of seconds > 0, got {value!r}")
    return value


def at_least(value: int | None, minimum: int, option: str) -> None:
    """Refuse an integer option below ``minimum`` (None = not given: accepted)."""
    if value is not None and value < minimum:
        raise ArgumentError(f"{option} must be >= {minimum}, got {value!r}")


def check_output_dir(path: str | os.PathLike[str], option: str) -> None:
    """Refuse ``path`` unless it is a writable folder or can be created as one (it is not created).

    Walks up to the nearest existing ancestor: that must be a folder tokspec may write into.
    """
    p = Path(path)
    if p.exists() or p.is_symlink():
        if not p.is_dir():
            raise ArgumentError(f"{option} {escape(str(path))!r} exists and is not a folder")
        if not os.access(p, os.W_OK | os.X_OK):
            raise ArgumentError(f"{option} {escape(str(path))!r}: folder not writable")
        return
    parent = p.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ArgumentError(f"{option} {escape(str(path))!r}: cannot be created, {escape(str(parent))!r} "
                            "is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ArgumentError(f"{option} {escape(str(path))!r}: cannot be created in {escape(str(parent))!r} "
                            "(not writable)")


def load_engine_checked(name: str) -> Encoder:
    """:func:`tokspec.load_engine`, but anything a broken provider raises -- ``sys.exit`` included,
    Ctrl-C excepted -- becomes one TokspecError line (exit 2)."""
    try:
        return load_engine(name)
    except (TokspecError, KeyboardInterrupt):
        raise
    except BaseException as exc:  # noqa: BLE001 - a broken provider must still give one line, exit 2
        raise TokspecError(f"cannot load engine {escape(name)!r}: {escape(type(exc).__name__)}: "
                           f"{escape(exc)}") from None
