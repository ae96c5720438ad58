"""Extended grapheme clusters of a text as one boolean per character, in as few Python steps as we can.

HF's ``Precompiled`` looks characters up per extended grapheme cluster (UAX #29); the readable
version (``tokspec.formats.spm_normalize.hf_precompiled``) walks ``regex``'s ``\\X``. :func:`joined`
gives ``joined[i]``: character ``i`` continues the cluster of character ``i - 1``, with the same
``\\X``, but a Python step only per cluster that can hold more than one character.

Theorem used (UAX #29's rules GB3-GB13, checked against ``\\X`` by
``tests/test_fast_hf_precompiled.py`` over every pair of classes): call :data:`JOINERS` the
characters of Grapheme_Cluster_Break Extend, ZWJ, SpacingMark, Prepend, L, V, T,
Regional_Indicator, and CR. Every rule that forbids a break between ``p`` and ``c`` has ``p`` or
``c`` in JOINERS (CR x LF; Prepend x; L x; V/T after LV/V/LVT/T; x Extend/ZWJ/SpacingMark; ZWJ x
Extended_Pictographic; RI x RI; a conjunct's consonant after a linker, which is Extend). So two
neighbours outside JOINERS are always separate clusters, and a match of ``(?:[^J](?![J]))+``
is a run of one-character clusters that ends at a boundary; ``\\X`` from a boundary gives the
next cluster. Cost: :func:`joined_cps` first looks the code points up in a table of JOINERS (numpy,
O(n)): with none but CR (the common case) only CR LF joins; else one ``finditer`` step per run or
multi-character cluster. The table is built once per process (a scan of every code point, about
0.1 s).
"""

from __future__ import annotations

import functools

import numpy as np
import regex

__all__ = ["JOINERS", "joined", "joined_cps", "joiner_table"]

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


@functools.lru_cache(maxsize=1)
def joiner_table() -> np.ndarray:
    """bool per code point (0..0x10FFFF): is it in :data:`JOINERS` and not CR (:func:`joined_cps`)."""
    index = np.concatenate([np.arange(0xD800), np.arange(0xE000, 0x110000)])
    text = index.astype(np.uint32).tobytes().decode("utf-32-le")
    table = np.zeros(0x110000, dtype=np.bool_)
    table[index[np.array([m.start() for m in _ANY_JOINER.finditer(text)], dtype=np.int64)]] = True
    table[13] = False
    return table


def joined_cps(cps: np.ndarray) -> np.ndarray | None:
    """:func:`joined` of the text whose code points are ``cps``. When CR is the only joiner present
    (text with CR LF line ends), the flags come from numpy: CR joins nothing but a following LF
    (GB3; GB4 and GB5 break around CR, LF and controls on every other side)."""
    table = joiner_table()
    if table[cps].any():
        return joined(cps.astype(np.uint32).tobytes().decode("utf-32-le"))
    flags = np.zeros(len(cps), dtype=np.bool_)
    flags[1:] = (cps[1:] == 10) & (cps[:-1] == 13)
    return flags if flags.any() else None
