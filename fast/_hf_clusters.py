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
next cluster. Cost: one C-level search when the text has no JOINERS (the common case: no
cluster joins), else one ``finditer`` step per run or multi-character cluster.
"""

from __future__ import annotations

import numpy as np
import regex

__all__ = ["JOINERS", "joined"]

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
