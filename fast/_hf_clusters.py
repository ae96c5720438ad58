"""Extended grapheme clusters of a text as one boolean per character: ``joined[i]`` is true when
character ``i`` continues the cluster of character ``i - 1``.

HF's ``Precompiled`` looks characters up per extended grapheme cluster (UAX #29); the readable
version (``tokspec.formats.spm_normalize.hf_precompiled``) walks ``regex``'s ``\\X``. Two ways here:

- :func:`joined_cps`, what the compiled pipeline runs: ``tokspec.fast._hf_precompiled.cluster_flags``
  (the UAX #29 rules as a kernel) over the tables of :func:`break_tables`, built from ``regex``'s
  own properties (so the same Unicode data as its ``\\X``). O(n), no Python step per character.
- :func:`joined`, the same from ``\\X`` with a Python step only per cluster that can hold more than
  one character (the tests' second oracle). Theorem used (UAX #29's rules GB3-GB13, checked
  against ``\\X`` over every pair of classes by ``tests/test_fast_hf_precompiled.py``): call
  :data:`JOINERS` the characters of Grapheme_Cluster_Break Extend, ZWJ, SpacingMark, Prepend, L, V,
  T, Regional_Indicator, and CR. Every rule that forbids a break between ``p`` and ``c`` has ``p``
  or ``c`` in JOINERS (CR x LF; Prepend x; L x; V/T after LV/V/LVT/T; x Extend/ZWJ/SpacingMark; ZWJ
  x Extended_Pictographic; RI x RI; a conjunct's consonant after a linker, which is Extend). So two
  neighbours outside JOINERS are always separate clusters, a match of ``(?:[^J](?![J]))+`` is a
  run of one-character clusters that ends at a boundary, and ``\\X`` from a boundary gives the
  next cluster.

Tables: built once per process (a scan of every code point per property value, about 0.5 s).
"""

from __future__ import annotations

import functools
from types import ModuleType

import numpy as np
import regex

from tokspec.fast import _hf_precompiled

__all__ = ["JOINERS", "break_tables", "joined", "joined_cps"]

_GCB = ("Extend", "ZWJ", "SpacingMark", "Prepend", "L", "V", "T", "Regional_Indicator")
#: The characters that can be on either side of a no-break (module docstring).
JOINERS = "[" + "".join(f"\\p{{Grapheme_Cluster_Break={v}}}" for v in _GCB) + "\\r]"
_ANY_JOINER = regex.compile(JOINERS)
_CLUSTERS = regex.compile(f"(?:[^{JOINERS[1:-1]}](?!{JOINERS}))+|(\\X)", flags=regex.DOTALL)


def joined(text: str) -> np.ndarray | None:
    """Per character: continues the previous one's cluster; None when no character does."""
    if _ANY_JOINER.search(text) is None:
        return None
    out = np.zeros(len(text), dtype=np.bool_)
    hit = False
    for m in _CLUSTERS.finditer(text):
        s, e = m.span(1)
        if e - s > 1:
            out[s + 1:e] = True
            hit = True
    return out if hit else None


def joined_cps(cps: np.ndarray, kernels: ModuleType = _hf_precompiled) -> np.ndarray | None:
    """:func:`joined` of the text whose code points are ``cps``, compiled
    (``tokspec.fast._hf_precompiled.cluster_flags`` over :func:`break_tables`)."""
    out = np.empty(len(cps), dtype=np.bool_)
    return out if kernels.cluster_flags(cps, *break_tables(), out) else None


@functools.lru_cache(maxsize=1)
def break_tables() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per code point: Grapheme_Cluster_Break (numbered as ``_hf_precompiled.GCB_VALUES``),
    Extended_Pictographic, Indic_Conjunct_Break (``_hf_precompiled``'s numbers), as ``regex``
    has them (the same data as its ``\\X``). One scan of every code point per value (about 0.5 s)."""
    index = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)])
    text = index.astype(np.uint32).tobytes().decode("utf-32-le")
    gcb, pict, incb = (np.zeros(0x110000, dtype=np.uint8) for _ in range(3))

    def mark(table: np.ndarray, prop: str, value: int) -> None:
        for m in regex.finditer(f"\\p{{{prop}}}+", text):
            table[index[m.start():m.end()]] = value
    for value, name in enumerate(_hf_precompiled.GCB_VALUES[1:], start=1):
        mark(gcb, f"Grapheme_Cluster_Break={name}", value)
    mark(pict, "Extended_Pictographic", 1)
    for value, name in ((_hf_precompiled.CONSONANT, "Consonant"), (_hf_precompiled.LINKER, "Linker"),
                        (_hf_precompiled.INCB_EXTEND, "Extend")):
        mark(incb, f"Indic_Conjunct_Break={name}", value)
    return gcb, pict, incb
