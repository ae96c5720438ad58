"""HF ``Split(Regex, Isolated)`` steps run on the ``regex`` module, for Split patterns Peek2 does not know.

A sequence of Splits cuts a text as HF does: each step cuts every piece the previous steps left,
its matches and the gaps between them each becoming a piece (behavior ``Isolated``), the regex
run on the piece alone (a lookahead sees the piece's end as the text's end, as in HF).

Where the ``regex`` module and HF's Oniguruma read a pattern differently, the pattern is refused
(:func:`check_pattern`): ``{n,m}+`` (possessive in ``regex``, "one or more of ``{n,m}``" in
Oniguruma: finding ``hf-onig-interval-plus``), anchors or word boundaries (``$`` is end of line
in Oniguruma's Ruby syntax) and nested character classes. Unicode tables: ``regex`` has 17.0, HF 16.0. Code points assigned in
17.0 that HF's tables leave unassigned (``Cn``; derived once from HF's own regex engine and cached,
as Peek2's flags are) are replaced by U+0378, unassigned in both, before matching: exact for
patterns written with classes (``\\p{..}``, ``\\s``, ``\\w``), which all production patterns are;
a literal range spanning a 17.0 addition would differ (none does). The one 17.0 *change* of
category (U+0295, Lo -> Ll) matters only to patterns naming ``Ll``/``Lo``.

Cost: one ``regex`` pass per step over the text, O(pieces) Python objects. Out of scope: other
behaviors, ``invert``, String patterns.
"""

from __future__ import annotations

import functools

import numpy as np
import regex

from tokspec.errors import UnsupportedComponentError
from tokspec.fast._cache import cache_dir, load_arrays, save_arrays
from tokspec.unicode_domain import hf_regex_inside, scalar_text, scalar_values

__all__ = ["RegexSplits", "check_pattern", "unicode17_only"]

STAND_IN = "\u0378"
_INTERVAL_PLUS = regex.compile(r"\{\d+(?:,\d*)?\}\+")


def _anchor(source: str) -> tuple[int, str] | None:
    """The first construct outside a character class that HF's Oniguruma reads differently, or a
    nested class: ``$``, ``^``, ``\\A``, ``\\b``, ``\\B``, ``\\z``, ``\\Z``, ``\\G``, or ``[`` or ``&&`` inside
    ``[...]`` (a nested set or an intersection in Oniguruma, literals here); (position, text), else None. A ``]``
    right after ``[`` or ``[^`` is literal, as in both."""
    in_class, i = False, 0
    while i < len(source):
        c = source[i]
        if c == "\\":
            if not in_class and source[i + 1:i + 2] in ("A", "b", "B", "z", "Z", "G"):
                return i, source[i:i + 2]
            i += 2
            continue
        if in_class and source[i:i + 2] == "&&":
            return i, "&&"  # a class intersection in Oniguruma, two literal '&' here
        if c == "[":
            if in_class:
                return i, c
            in_class = True
            i += 2 if source[i + 1:i + 2] == "^" else 1
            i += 1 if source[i:i + 1] == "]" else 0
            continue
        if c == "]" and in_class:
            in_class = False
        elif c in "$^" and not in_class:
            return i, c
        i += 1
    return None


def check_pattern(source: str, where: str) -> None:
    """Refuse a Split regex the ``regex`` module would read differently from HF (module docstring)."""
    interval = _INTERVAL_PLUS.search(source)
    found = [(interval.start(), interval.group(), "an interval followed by '+' (possessive here, "
              "repeated in HF's Oniguruma)")] if interval else []
    anchor = _anchor(source)
    if anchor is not None:
        found.append((*anchor, "an anchor, word boundary or nested class (read differently by HF's "
                               "Oniguruma)"))
    if found:
        at, text, what = min(found)
        raise UnsupportedComponentError(
            f"{where}: Split regex {source!r} has {what} at {at} ({text!r}); fast: does not run it "
            "(use reference:PATH or hf:PATH)")


@functools.lru_cache(maxsize=1)
def unicode17_only() -> np.ndarray:
    """Code points the ``regex`` module calls assigned and HF's regex engine ``\\p{Cn}`` (int64,
    sorted); cached on disk per (tokenizers, regex) version pair."""
    import tokenizers
    folder = cache_dir("hf-split")
    key = f"cn-tokenizers-{tokenizers.__version__}-regex-{regex.__version__}"
    loaded = None if folder is None else load_arrays(folder / f"{key}.npz", key)
    if loaded is not None and set(loaded) == {"cps"}:
        return loaded["cps"]
    cps = _derive()
    if folder is not None:
        save_arrays(folder / f"{key}.npz", key, {"cps": cps})
    return cps


def _derive() -> np.ndarray:
    """The code points HF's ``\\p{Cn}`` holds and the ``regex`` module's does not (HF's probe:
    :func:`tokspec.unicode_domain.hf_regex_inside`, as ``scripts/peek2_classes.py`` uses it)."""
    cps, text = scalar_values(), scalar_text()
    hf_cn = hf_regex_inside(r"\p{Cn}", text)
    ours_cn = np.zeros(len(text), dtype=bool)
    for m in regex.finditer(r"\p{Cn}+", text):
        ours_cn[m.start():m.end()] = True
    unassigned: np.ndarray = cps[hf_cn & ~ours_cn].astype(np.int64)
    return unassigned


class RegexSplits:
    """The Split steps of one pipeline (module docstring); :meth:`spans` gives the pretokens."""

    def __init__(self, sources: list[str], where: str) -> None:
        for source in sources:
            check_pattern(source, where)
        self.patterns = [regex.compile(s) for s in sources]
        self._drift = unicode17_only()

    def pin(self, text: str) -> str:
        """``text`` with every 17.0-only code point replaced by U+0378 (same length)."""
        cps = np.frombuffer(str.encode(text, "utf-32-le"), dtype=np.uint32)  # a str subclass cannot lie
        hit = np.isin(cps, self._drift)
        if not hit.any():
            return text
        fixed = cps.copy()
        fixed[hit] = ord(STAND_IN)
        return fixed.tobytes().decode("utf-32-le")

    def spans(self, pinned: str, start: int, end: int) -> tuple[np.ndarray, np.ndarray]:
        """Pretoken spans of ``text[start:end]`` (absolute character positions, int64 arrays),
        given ``pinned = self.pin(text)``."""
        pieces = [(start, end)] if end > start else []
        for pattern in self.patterns:
            out: list[tuple[int, int]] = []
            for s, e in pieces:
                gap = s
                for m in pattern.finditer(pinned, s, e):
                    if m.end() == m.start():
                        continue  # HF skips empty matches
                    if m.start() > gap:
                        out.append((gap, m.start()))
                    out.append((m.start(), m.end()))
                    gap = m.end()
                if gap < e:
                    out.append((gap, e))
            pieces = out
        arr = np.array(pieces, dtype=np.int64).reshape(-1, 2)
        return arr[:, 0].copy(), arr[:, 1].copy()
