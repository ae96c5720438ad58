"""Per-code-point tables of HF's one-character normalizers (``Lowercase``, ``StripAccents``, ``Nmt``).

Each table is ``start`` (int32, one entry per code point; -1: the character maps to itself) into
``flat`` (a mapping stored as its length, then its code points; length 0 deletes the character),
what ``tokspec.fast._hf_norm_kernels``'s ``MAP`` step reads. Definitions (the readable versions,
the oracles of ``tests/test_fast_hf_maps.py``):

- ``Lowercase``: ``tokspec.formats.normalize._lower`` (Rust ``char::to_lowercase``: Python's
  ``str.lower`` corrected by ``tokspec._hf_unicode.LOWER``), possibly several characters;
- ``StripAccents``: ``tokspec.formats.hf_pipeline.is_hf_mark`` deletes the character;
- ``Nmt``: ``tokspec.formats.hf_pipeline.nmt_char`` (controls deleted, some spaces and separators
  made U+0020).

Build: one Python step per code point (about 0.3 s per table), once per process and only for the
tables a pipeline uses. Out of scope: context-dependent mappings (final sigma: HF has none).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from tokspec.formats.hf_pipeline import is_hf_mark, nmt_char
from tokspec.formats.normalize import _lower

__all__ = ["MAPS", "char_map", "stacked"]

def _strip_accent(c: str) -> str:
    return "" if is_hf_mark(c) else c


#: The normalizer types with a table, and the per-character function that defines it.
MAPS: dict[str, Callable[[str], str]] = {"Lowercase": _lower, "StripAccents": _strip_accent, "Nmt": nmt_char}


@functools.lru_cache(maxsize=None)
def char_map(kind: str) -> tuple[np.ndarray, np.ndarray]:
    """(start, flat) of normalizer ``kind`` (module docstring)."""
    fn = MAPS[kind]
    start = np.full(0x110000, -1, dtype=np.int32)
    flat: list[int] = []
    for cp in [*range(0xD800), *range(0xE000, 0x110000)]:
        c = chr(cp)
        new = fn(c)
        if new != c:
            start[cp] = len(flat)
            flat += [len(new), *map(ord, new)]
    return start, np.array(flat or [0], dtype=np.int32)


def stacked(kinds: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The tables of ``kinds`` as rows of one 2-D ``start`` over one shared ``flat`` (row ``j`` is
    ``kinds[j]``); a 1 x 1 placeholder when there is none."""
    if not kinds:
        return np.full((1, 1), -1, dtype=np.int32), np.zeros(1, dtype=np.int32)
    starts, flats, base = [], [], 0
    for kind in kinds:
        start, flat = char_map(kind)
        starts.append(np.where(start >= 0, start + base, -1).astype(np.int32))
        flats.append(flat)
        base += len(flat)
    return np.stack(starts), np.concatenate(flats)
