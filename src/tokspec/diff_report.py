"""The readable report of one disagreement (:func:`format_comparison`), and token windows.

:func:`tokspec.diff.compare` finds and classifies a disagreement; this module shows it: the text,
where the encodings first diverge, and each engine's tokens around that point (ids, pieces,
offsets, the text they cover). Everything an engine supplied is escaped before it is printed
(:func:`tokspec._escape.escape`): pieces and names are hostile data. Both functions are importable
from :mod:`tokspec.diff` as before.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tokspec._escape import escape
from tokspec._types import Encoder, Encoding, EncodingArrays
from tokspec.decoding import format_decode
from tokspec.records import array_window

if TYPE_CHECKING:
    from tokspec.diff import Comparison

__all__ = ["token_window", "format_comparison"]


def token_window(engine: Encoder, text: str, enc: Encoding | EncodingArrays, index: int, width: int = 3
                 ) -> list[dict[str, Any]]:
    """Tokens ``index - width .. index + width`` of ``enc`` as dicts (index, id, piece, offsets, text)."""
    return array_window(engine, text, enc, index, width)


def _format_window(label: str, tokens: list[dict[str, Any]], index: int | None) -> list[str]:
    lines = [f"  {label}"]
    for t in tokens:
        mark = ">" if t["index"] == index else " "
        tid = "" if t["id"] is None else f"id={t['id']:<7} "
        lines.append(f"   {mark} #{t['index']:<4} {tid}piece={escape(repr(t['piece'])):<14} "
                     f"offsets=({t['offsets'][0]}, {t['offsets'][1]})  text={t['text']!r}")
    if index is not None and all(t["index"] != index for t in tokens):
        lines.append(f"   > #{index:<4} (no token: this side ends here)")
    return lines


def format_comparison(a: Encoder, b: Encoder, comparison: Comparison, *, width: int = 3,
                      max_text: int = 200) -> str:
    """A readable multi-line report of one disagreement: the text and both token windows (escaped)."""
    text = comparison.text
    text_shown = repr(text) if len(text) <= max_text else repr(text[:max_text]) + f"... ({len(text)} chars)"
    lines = [f"{comparison.classification}: text={text_shown}"]
    for label, engine, outcome in (("A", a, comparison.a), ("B", b, comparison.b)):
        name = f"{label} {escape(engine.info.name)}"
        shown = outcome.shown()
        if shown is None:
            lines.append(f"  {name}: {'FAULT' if outcome.refused is None else 'REFUSED'} {escape(outcome.fault)}")
            continue
        index = comparison.index
        window = token_window(engine, text, shown, index or 0, width)
        count = len(shown)
        lines += _format_window(f"{name} ({count} token{'' if count == 1 else 's'})", window, index)
    if comparison.index is not None:
        lines.insert(1, f"  first divergence at token #{comparison.index}")
    if comparison.decode is not None:
        lines += format_decode(a, b, comparison.decode)
    return "\n".join(lines)
