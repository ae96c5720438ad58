"""Planted engines that are exact on every single call: wrong only under threads, or only slow.

The companions of :mod:`tokspec.fuzz.authored_bugs` for the two bug classes one ``encode`` at a
time cannot show (issue 24). Each hazard has a clean twin with the same output and none of the
hazard, so a check that flags the twin is a false alarm:

=====================  =====================================================================
``shared_scratch``     cl100k_base through tiktoken, its ids copied one by one into a list kept on
                       ``self`` and reused by every call (cleared at the start of a call): two
                       threads interleave their ids. Twin: ``local_scratch`` (a local list)
``quadratic_offsets``  cl100k_base through tiktoken with offsets computed by re-measuring the
                       UTF-8 prefix before each token: O(n * tokens), exact. Twin:
                       ``linear_offsets`` (one running sum)
=====================  =====================================================================

Engine names are ``tokspec.fuzz.authored_hazards:NAME`` (zero-argument factories). None of them
declares ``thread_safe`` (a user engine usually does not). Out of scope: crashes of the process.
"""

from __future__ import annotations

from tokspec import Encoder, EngineInfo
from tokspec.fuzz.authored_bugs import _Cl100k
from tokspec.spec.pretok import cl100k_pattern
from tokspec.formats.vocab import load_named_tiktoken

__all__ = ["shared_scratch", "local_scratch", "quadratic_offsets", "linear_offsets", "HAZARDS"]

_ME = "tokspec.fuzz.authored_hazards:"


class _Pieces(_Cl100k):
    """cl100k_base through tiktoken, ids copied one by one into a list (the user's "buffer").
    Declares its structure as a user would, so ``lopt:`` may cut its texts."""

    merge_structure = {"format": "regex-bpe", "pattern": cl100k_pattern()}

    def __init__(self, name: str, description: str) -> None:
        super().__init__(name, description)
        self.info = EngineInfo(_ME + name, "tokenizer", "tokspec.fuzz.authored_hazards", "0",
                               load_named_tiktoken("cl100k_base").sha256, description)


class _SharedScratch(_Pieces):
    def __init__(self, name: str, description: str) -> None:
        super().__init__(name, description)
        self.scratch: list[int] = []  # BUG: one buffer for every call, in every thread

    def ids(self, text: str) -> list[int]:
        self.scratch.clear()
        for i in self.enc.encode_ordinary(text):
            self.scratch.append(i)
        return list(self.scratch)


class _LocalScratch(_Pieces):
    def ids(self, text: str) -> list[int]:
        scratch: list[int] = []  # the clean twin: one buffer per call
        for i in self.enc.encode_ordinary(text):
            scratch.append(i)
        return scratch


class _QuadraticOffsets(_Pieces):
    def offsets(self, text: str, ids: list[int]) -> list[tuple[int, int]]:
        data = text.encode("utf-8")
        out, used = [], 0
        for i in ids:  # BUG (cost only): the character position is re-counted from the start
            size = len(self.token_bytes[i])
            start = len(data[:used].decode("utf-8", errors="ignore"))
            end = len(data[:used + size].decode("utf-8", errors="ignore"))
            if used + size < len(data) and (data[used + size] & 0xC0) == 0x80:
                end += 1  # a token ending inside a character covers the whole character
            out.append((start, end))
            used += size
        return out


def shared_scratch() -> Encoder:
    return _SharedScratch("shared_scratch", "per-call ids in a list shared by all calls (not thread-safe)")


def local_scratch() -> Encoder:
    return _LocalScratch("local_scratch", "per-call ids in a local list (clean twin of shared_scratch)")


def quadratic_offsets() -> Encoder:
    return _QuadraticOffsets("quadratic_offsets", "offsets by re-decoding the UTF-8 prefix per token")


def linear_offsets() -> Encoder:
    return _Pieces("linear_offsets", "offsets by one running sum (clean twin of quadratic_offsets)")


HAZARDS: dict[str, tuple[str, str]] = {  # hazard -> (its clean twin, the class a check reports)
    "shared_scratch": ("local_scratch", "not thread-safe"),
    "quadratic_offsets": ("linear_offsets", "superlinear cost"),
}

assert all(callable(globals()[n]) for pair in HAZARDS.items() for n in (pair[0], pair[1][0]))
