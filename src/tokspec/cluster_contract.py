"""Causes of the two contract classes that are not about segmentation: ``"decode differs"`` and
``"special token from text"`` (:mod:`tokspec.cluster` hands them here).

The segmentation vocabulary of :mod:`tokspec.cluster` (pattern alternatives, the character where two
token lists part) says nothing about these: a decode difference lives in the two decoded strings of a
minimized id sequence, a promoted special in which special id one side produced from plain text.
Their causes, in the words of the bug reports of the field:

- **decode differs**, from the two decodes of the minimized id sequence (:class:`DecodeDifference`):
  one decoder raises where the other returns text; invalid or incomplete UTF-8 replaced differently
  (the count of U+FFFD differs: dropped bytes, one U+FFFD per byte or per maximal subpart); bytes shown
  as ``<0xNN>`` pieces (byte fallback not applied); ``##`` continuations joined differently
  (WordPiece); a special token's text kept by one decoder only; a leading space removed by one only
  (sentencepiece's dummy prefix, Metaspace's prepend); spaces between tokens (the joining rule);
  otherwise the kind of the first character where the decodes part (:func:`tokspec.cluster.char_kind`).
- **special token from text**: which side produced a special id from text, and whether the special's
  string occurs verbatim in the text (the engine treats untrusted text as control tokens) or not (it
  promotes a near miss: a case variant or a fragment). Always named a security finding.

The key holds the kind and the side, never the ids or texts, so one bug on many inputs is one cause.
Heuristic, like the rest of the clustering: the first rule that matches names the cause.
"""

from __future__ import annotations

from typing import Any

__all__ = ["decode_cause", "special_cause"]

def _side(a_has: bool) -> str:
    return "A" if a_has else "B"


def _first_difference(x: str, y: str) -> int:
    n = min(len(x), len(y))
    return next((i for i in range(n) if x[i] != y[i]), n)


def decode_cause(a: Any, b: Any, comparison: Any) -> tuple[tuple[Any, ...], str, str | None]:
    """(key, name, pivot character or None) of a ``"decode differs"`` comparison (module docstring).
    O(length of the two decodes)."""
    from tokspec.cluster import _describe, char_kind
    from tokspec.decoding import special_ids

    cls = "decode differs"
    diff = comparison.decode
    if diff is None:  # an old record without its decode difference
        return (cls,), cls, None
    names = {"A": a.info.name, "B": b.info.name}
    ids = list(diff.ids)[:8]
    if (diff.a.error is None) != (diff.b.error is None):
        side = _side(diff.a.error is not None)
        error = diff.a.error if side == "A" else diff.b.error
        kind = str(error).split(":", 1)[0]
        return ((cls, "raises", side, kind), f"{cls}: {side} ({names[side]}) raises {kind} where the other "
                f"decoder returns text (ids {ids})", None)
    ta, tb = diff.a.text or "", diff.b.text or ""
    fa, fb = ta.count("\ufffd"), tb.count("\ufffd")
    if fa != fb:
        side = _side(fa < fb)  # the side writing fewer replacement characters
        how = "drops the bytes" if min(fa, fb) == 0 else f"writes {min(fa, fb)} U+FFFD"
        return ((cls, "replacement", side, min(fa, fb) == 0),
                f"{cls}: invalid or incomplete UTF-8: {side} ({names[side]}) {how} where the other writes "
                f"{max(fa, fb)} U+FFFD (ids {ids})", "\ufffd")
    ba, bb = "<0x" in ta, "<0x" in tb
    if ba != bb:
        side = _side(ba)
        return ((cls, "byte pieces", side), f"{cls}: {side} ({names[side]}) shows byte-fallback pieces as "
                "<0xNN> instead of joining their bytes", None)
    ha, hb = ta.count("##"), tb.count("##")
    if ha != hb:
        side = _side(ha > hb)
        return ((cls, "wordpiece joining", side), f"{cls}: {side} ({names[side]}) keeps '##' where the other "
                "joins WordPiece continuations", None)
    specials = {**special_ids(a), **special_ids(b)}
    kept = [s for i, s in specials.items() if i in diff.ids and s and ((s in ta) != (s in tb))]
    if kept:
        side = _side(kept[0] in ta)
        return ((cls, "special kept", side), f"{cls}: {side} ({names[side]}) keeps the text of special tokens "
                f"(e.g. {kept[0]!r}) that the other decoder skips", None)
    if ta != tb and ta.replace("\u2581", " ") == tb.replace("\u2581", " "):
        side = _side(ta.count("\u2581") > tb.count("\u2581"))
        return ((cls, "metaspace", side), f"{cls}: {side} ({names[side]}) shows U+2581 (Metaspace) where the "
                "other decoder writes a space", "\u2581")
    if ta.replace("\u2581", " ").lstrip() == tb.replace("\u2581", " ").lstrip():
        side = _side(len(ta) > len(tb))
        return ((cls, "leading space", side), f"{cls}: {side} ({names[side]}) keeps a leading space that the "
                "other decoder removes (sentencepiece dummy prefix / Metaspace prepend)", " ")
    if "".join(ta.split()) == "".join(tb.split()):
        return ((cls, "joining spaces"), f"{cls}: spaces between tokens differ (the decoder's joining rule)", " ")
    i = _first_difference(ta, tb)
    longer = ta if i < len(ta) else tb
    if i >= len(longer):
        return (cls, "other"), f"{cls}: the decodes differ (ids {ids})", None
    kind, cat = char_kind(longer, i)
    ch = longer[i]
    return ((cls, "at", kind, cat), f"{cls}: the decodes part at {kind} {_describe(ch)}", ch)


def special_cause(a: Any, b: Any, comparison: Any) -> tuple[tuple[Any, ...], str, str | None]:
    """(key, name, first character of the special's string) of a ``"special token from text"``
    comparison (module docstring). O(tokens + text)."""
    from tokspec.decoding import special_ids

    cls = "special token from text"
    specials = {**special_ids(b), **special_ids(a)}
    ids_a = set() if comparison.a.arrays is None else {int(i) for i in comparison.a.arrays.ids}
    ids_b = set() if comparison.b.arrays is None else {int(i) for i in comparison.b.arrays.ids}
    only_a = sorted(i for i in ids_a - ids_b if i in specials)
    only_b = sorted(i for i in ids_b - ids_a if i in specials)
    side = "A" if only_a else "B"
    promoted = (only_a or only_b)[0] if only_a or only_b else None
    if promoted is None:
        return (cls,), f"{cls} (security finding: special-token injection)", None
    name = {"A": a.info.name, "B": b.info.name}[side]
    string = specials[promoted]
    verbatim = bool(string) and string in comparison.text
    how = (f"encodes the special token {string!r} found verbatim in the text as its id {promoted}" if verbatim
           else f"produces the special id {promoted} ({string!r}) from text that does not spell it (a near miss)")
    return ((cls, side, "verbatim" if verbatim else "near miss"),
            f"{cls}: {side} ({name}) {how} -- a security finding (special-token injection)",
            string[:1] or None)
