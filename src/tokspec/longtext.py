"""Long texts for fuzzing: lengths that reach the sizes implementations use, built by extension moves.

Parallel merges, chunked encoders and fixed-size buffers fail only past some length: a seam every
N characters, a buffer of B bytes. This module gives every text generator the same length dimension:

- :func:`pick_length`: a target length and its unit. Half the time *boundary-targeted*: a power of
  two (2**10 .. 2**21) or of ten (10**3 .. 10**6), in characters or in UTF-8 bytes, plus or minus a
  few characters or a token's worth; otherwise *heavy-tailed*: log-uniform from 1,000 to 2**21
  characters (as many texts between 1K and 2K as between 1M and 2M).
- :func:`grow_text`: a text of exactly that length (characters; bytes: exactly, padded with ASCII),
  built by *length-extension moves*: append a corpus text, append an earlier input, repeat a short
  unit many times, double what is built so far. Then fragments that break seams (digit runs, CRLF
  runs, space runs, multi-byte characters, corpus snippets) are *planted across boundaries*:
  multiples of powers of two and of ten, in characters and in UTF-8 bytes.

Deterministic given the ``random.Random``. Cost O(n) per text. Out of scope: realistic language;
the contents only need to be diverse around boundaries.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

__all__ = ["MAX_LONG", "BOUNDARY_SIZES", "pick_length", "grow_text", "boundaries", "SEAM_FRAGMENTS"]

MAX_LONG = 2 ** 21
#: Sizes implementations use for chunks and buffers: powers of two and of ten.
BOUNDARY_SIZES: tuple[int, ...] = tuple(sorted({2 ** k for k in range(10, 22)} | {10 ** k for k in range(3, 7)}))
#: Fragments that change tokenization when a seam cuts through them.
SEAM_FRAGMENTS: tuple[str, ...] = ("1234567890" * 3, "0" * 17, "\r\n" * 5, " \r\n\r\n ", " " * 9, "\t\t\n",
                                   "é" * 7, "🙂" * 5, "中文字符" * 3, "e\u0301" * 4, "'s'll've", "abcdefghij" * 3)


def pick_length(rng: random.Random, *, max_size: int = MAX_LONG) -> tuple[int, str]:
    """A target length and its unit ("chars" or "bytes"), see module docstring."""
    if rng.random() < 0.5:
        size = rng.choice([s for s in BOUNDARY_SIZES if s <= max_size] or [max_size])
        delta = rng.choice([0, 0, -1, 1, -2, 2, -3, 3, -4, 4, -rng.randint(5, 16), rng.randint(5, 16)])
        return max(1, min(max_size, size + delta)), rng.choice(("chars", "bytes"))
    low = min(1000, max_size)
    return int(math.exp(rng.uniform(math.log(low), math.log(max_size)))), "chars"


def boundaries(n: int, rng: random.Random, *, limit: int = 64) -> list[int]:
    """Up to ``limit`` positions below ``n`` that are small multiples of a boundary size (all of
    them, below 2 MiB: a seam at one exact size is found only if that size gets a fragment)."""
    candidates = sorted({m * s for s in BOUNDARY_SIZES for m in (1, 2, 3, 5) if m * s < n})
    return sorted(rng.sample(candidates, min(limit, len(candidates))))


def _extend(rng: random.Random, n: int, pieces: Sequence[str], history: Sequence[str]) -> str:
    """At least ``n`` characters by length-extension moves (module docstring).

    No single move supplies much of the text (a repeat is at most ~1K characters, doubling starts
    only once a few kilobytes are built), so a long text stays diverse at every scale."""
    parts: list[str] = []
    size = 0
    while size < n:
        move = rng.random()
        if move < 0.6 and pieces:
            piece = rng.choice(pieces)
        elif move < 0.75 and history:
            piece = rng.choice(history)
        elif move < 0.9 or size < 4096:
            unit = rng.choice(pieces)[:rng.randint(1, 12)] if pieces and rng.random() < 0.5 else \
                rng.choice(SEAM_FRAGMENTS + ("a", " ", "ab ", "the ", "\n"))
            unit = unit or "a"  # a repeat of at most ~1K characters: as much text as a few corpus pieces
            length = int(math.exp(rng.uniform(math.log(2 * len(unit)), math.log(max(2 * len(unit), 1024)))))
            piece = unit * max(2, length // len(unit))
        else:
            piece = "".join(parts)  # double what is built so far: repeated structure, cheaply
        parts.append(piece)
        size += len(piece)
    return "".join(parts)


def _plant(text: str, positions: list[int], rng: random.Random) -> str:
    """Overwrite a seam fragment across each character position, so that the position falls
    strictly inside the fragment (at a random place in it)."""
    out: list[str] = []
    last = 0
    for p in positions:
        frag = rng.choice(SEAM_FRAGMENTS)
        start = max(last, p - rng.randint(1, max(1, len(frag) - 1)))
        if start >= len(text):
            break
        out.append(text[last:start])
        out.append(frag[:len(text) - start])
        last = start + min(len(frag), len(text) - start)
    out.append(text[last:])
    return "".join(out)


def _char_index_of_byte(data: bytes, b: int) -> int:
    """How many whole characters the first ``b`` bytes hold."""
    return len(data[:b].decode("utf-8", errors="ignore"))


def grow_text(rng: random.Random, n: int, *, unit: str = "chars", pieces: Sequence[str] = (),
              history: Sequence[str] = ()) -> str:
    """A text of exactly ``n`` characters (``unit="chars"``) or UTF-8 bytes (``"bytes"``). O(n)."""
    if unit not in ("chars", "bytes"):
        raise ValueError(f"unit must be 'chars' or 'bytes', got unit={unit!r}")
    text = _extend(rng, n, [p for p in pieces if p], [h for h in history if h])
    if unit == "chars":
        return _plant(text[:n], boundaries(n, rng), rng)
    data = text.encode("utf-8")
    char_positions = [_char_index_of_byte(data, b) for b in boundaries(n, rng)]
    text = _plant(text, char_positions, rng)
    cut = text.encode("utf-8")[:n].decode("utf-8", errors="ignore")
    return cut + "a" * (n - len(cut.encode("utf-8")))
