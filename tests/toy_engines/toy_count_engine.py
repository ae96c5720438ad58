"""Toy engines for the fuzz runner's tests (put this folder on PYTHONPATH): ``toy_count_engine:good``
and ``toy_count_engine:bad``, one character per token.

- Every construction appends ``NAME PID`` to the file ``$TOY_LOADS``, so a test counts engine loads
  per process.
- ``bad`` has two bugs: the id of ``x`` is off by one, and ``z`` is dropped; with ``$TOY_HANG`` set
  it sleeps that many seconds on every text containing U+0007 (a hanging engine).

Out of scope: anything but the runner's tests.
"""

from __future__ import annotations

import os
import time

from tokspec import Encoder, Encoding, EngineInfo

__all__ = ["Toy", "good", "bad"]


class Toy(Encoder):
    """Characters as tokens (id = code point), with ``bad``'s bugs."""

    def __init__(self, name: str, bug: bool) -> None:
        with open(os.environ["TOY_LOADS"], "a", encoding="utf-8") as fh:
            fh.write(f"{name} {os.getpid()}\n")
        self.bug = bug
        self.info = EngineInfo(name=name, kind="tokenizer", library="toy", library_version="0", vocab_sha256=None)

    def _encode(self, text: str) -> Encoding:
        if self.bug and "\x07" in text and os.environ.get("TOY_HANG"):
            time.sleep(float(os.environ["TOY_HANG"]))
        keep = [i for i, c in enumerate(text) if not (self.bug and c == "z")]
        ids = [ord(text[i]) + (1 if self.bug and text[i] == "x" else 0) for i in keep]
        return Encoding.of(ids, [(i, i + 1) for i in keep])


def good() -> Toy:
    return Toy("toy_count_engine:good", False)


def bad() -> Toy:
    return Toy("toy_count_engine:bad", True)
