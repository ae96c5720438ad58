"""Compare two engines on one text: first divergence, token windows, classification, records.

Two engines *agree* on a text when both encode it without error and their encodings are equal token
by token: ids AND character offsets for tokenizers, spans for pretokenizers. Comparing a tokenizer
with a pretokenizer is a usage error (:func:`check_pair`).

Classification of a disagreement (first matching rule wins):

1. ``"engine fault"``: an engine raised (any exception) or returned an invalid Encoding.
2. ``"decoded text differs"``: the two token sequences do not stand for the same text. When both
   engines have a ``decode(ids) -> str`` method (optional, not part of the Encoder contract), the
   decoded strings are compared; otherwise the sets of characters covered by the offsets are.
3. ``"same ids, different offsets"``: equal id sequences, different offsets (tokenizers only).
4. ``"same segmentation, different ids"``: equal offsets, different ids.
5. ``"different segmentation"``: everything else.

A counterexample *record* (layout and reader in :mod:`tokspec.records`, re-exported here) holds the
text once, both engines' :class:`~tokspec.EngineInfo`, the first divergence with a readable context,
both token windows, the classification, both full outputs (compact), and a command that reproduces it.

Out of scope: alignment of the two token sequences after the first divergence (windows show
context; the full outputs are in the record), and comparing engines on text outside the text
domain (:func:`tokspec.check_text` raises before either engine runs).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tokspec._types import Encoder, Encoding, check_text
from tokspec.errors import TokspecError
from tokspec.records import (RECORD_VERSION, dumps_record, make_record, record_name, reproduce_command,
                             save_counterexample, write_record)

__all__ = [
    "Outcome",
    "Comparison",
    "CLASSES",
    "RECORD_VERSION",
    "check_pair",
    "run_engine",
    "compare",
    "token_window",
    "make_record",
    "dumps_record",
    "record_name",
    "reproduce_command",
    "save_counterexample",
    "write_record",
    "format_comparison",
]

CLASSES = ("engine fault", "decoded text differs", "same ids, different offsets",
           "same segmentation, different ids", "different segmentation")


@dataclass(frozen=True)
class Outcome:
    """What one engine did with one text: an Encoding, or a fault message (never both)."""

    encoding: Encoding | None
    fault: str | None = None


@dataclass(frozen=True)
class Comparison:
    """Two engines' outcomes on ``text``. ``index`` is the first diverging token (None if agree)."""

    text: str
    a: Outcome
    b: Outcome
    index: int | None
    classification: str | None

    @property
    def agree(self) -> bool:
        return self.classification is None


def check_pair(a: Encoder, b: Encoder) -> None:
    """Raise TokspecError unless ``a`` and ``b`` are of the same kind (both tokenizers or both not)."""
    if a.info.kind != b.info.kind:
        raise TokspecError(
            f"cannot compare {a.info.name!r} (a {a.info.kind}) with {b.info.name!r} (a {b.info.kind}): "
            "compare tokenizers with tokenizers and pretokenizers with pretokenizers")


def run_engine(engine: Encoder, text: str) -> Outcome:
    """Encode ``text``; any exception or invalid Encoding becomes a fault message. O(encode)."""
    try:
        encoding = engine.encode(text)
        if not isinstance(encoding, Encoding):
            return Outcome(None, f"returned {type(encoding).__name__}, not an Encoding")
        if (encoding.ids is None) != (engine.info.kind == "pretokenizer"):
            got = "no ids" if encoding.ids is None else "ids"
            return Outcome(None, f"EngineFault: {engine.info.name} is a {engine.info.kind} but returned {got}")
        encoding.validate(text, engine.info.name)
    except Exception as exc:  # noqa: BLE001 - an engine under test may raise anything
        message = str(exc).replace("\n", " ")
        return Outcome(None, f"{type(exc).__name__}: {message}")
    return Outcome(encoding)


def _tokens(enc: Encoding) -> list[tuple[Any, ...]]:
    """The compared units: (id, start, end) per token, or (start, end) for pretokenizers."""
    if enc.ids is None:
        return [tuple(span) for span in enc.offsets]
    return [(i, s, e) for i, (s, e) in zip(enc.ids, enc.offsets, strict=True)]


def _first_divergence(ea: Encoding, eb: Encoding) -> int | None:
    """Index of the first differing token, or min(len) if one is a prefix; None if equal. O(n)."""
    ta, tb = _tokens(ea), _tokens(eb)
    for i, (x, y) in enumerate(zip(ta, tb)):
        if x != y:
            return i
    return None if len(ta) == len(tb) else min(len(ta), len(tb))


def _covered(enc: Encoding) -> set[int]:
    return {i for s, e in enc.offsets for i in range(s, e)}


def _decoded(engine: Encoder, enc: Encoding) -> str | None:
    decode = getattr(engine, "decode", None)
    if decode is None or enc.ids is None:
        return None
    try:
        out = decode(list(enc.ids))
    except Exception:  # noqa: BLE001 - decoding is optional; fall back to coverage
        return None
    return out if isinstance(out, str) else None


def _classify(a: Encoder, b: Encoder, ea: Encoding, eb: Encoding) -> str:
    """Rules 2-5 of the module docstring (both engines produced an Encoding)."""
    da, db = _decoded(a, ea), _decoded(b, eb)
    if da is not None and db is not None:
        text_differs = da != db
    else:
        text_differs = _covered(ea) != _covered(eb)
    if text_differs:
        return "decoded text differs"
    if ea.ids is not None and ea.ids == eb.ids:
        return "same ids, different offsets"
    if ea.offsets == eb.offsets:
        return "same segmentation, different ids"
    return "different segmentation"


def compare(a: Encoder, b: Encoder, text: str) -> Comparison:
    """Run both engines on ``text`` and compare (see module docstring). O(encode + n)."""
    check_text(text)
    oa, ob = run_engine(a, text), run_engine(b, text)
    if oa.encoding is None or ob.encoding is None:
        return Comparison(text, oa, ob, None, "engine fault")
    index = _first_divergence(oa.encoding, ob.encoding)
    if index is None:
        return Comparison(text, oa, ob, None, None)
    return Comparison(text, oa, ob, index, _classify(a, b, oa.encoding, ob.encoding))


def _piece(engine: Encoder, enc: Encoding, i: int) -> str:
    if enc.pieces is not None:
        return enc.pieces[i]
    if enc.ids is None:
        return ""
    try:
        return str(engine.token_piece(enc.ids[i]))
    except Exception:  # noqa: BLE001 - display only
        return "?"


def token_window(engine: Encoder, text: str, enc: Encoding, index: int, width: int = 3
                 ) -> list[dict[str, Any]]:
    """Tokens ``index - width .. index + width`` of ``enc`` as dicts (index, id, piece, offsets, text)."""
    lo, hi = max(0, index - width), min(len(enc), index + width + 1)
    return [{"index": i, "id": None if enc.ids is None else enc.ids[i],
             "piece": _piece(engine, enc, i), "offsets": list(enc.offsets[i]),
             "text": text[enc.offsets[i][0]:enc.offsets[i][1]]} for i in range(lo, hi)]


def _format_window(label: str, tokens: list[dict[str, Any]], index: int | None) -> list[str]:
    lines = [f"  {label}"]
    for t in tokens:
        mark = ">" if t["index"] == index else " "
        tid = "" if t["id"] is None else f"id={t['id']:<7} "
        lines.append(f"   {mark} #{t['index']:<4} {tid}piece={t['piece']!r:<14} "
                     f"offsets=({t['offsets'][0]}, {t['offsets'][1]})  text={t['text']!r}")
    if index is not None and all(t["index"] != index for t in tokens):
        lines.append(f"   > #{index:<4} (no token: this side ends here)")
    return lines


def format_comparison(a: Encoder, b: Encoder, comparison: Comparison, *, width: int = 3,
                      max_text: int = 200) -> str:
    """A readable multi-line report of one disagreement: the text and both token windows."""
    text = comparison.text
    shown = repr(text) if len(text) <= max_text else repr(text[:max_text]) + f"... ({len(text)} chars)"
    lines = [f"{comparison.classification}: text={shown}"]
    for label, engine, outcome in (("A", a, comparison.a), ("B", b, comparison.b)):
        name = f"{label} {engine.info.name}"
        if outcome.encoding is None:
            lines.append(f"  {name}: FAULT {outcome.fault}")
            continue
        index = comparison.index
        window = token_window(engine, text, outcome.encoding, index or 0, width)
        count = len(outcome.encoding)
        lines += _format_window(f"{name} ({count} token{'' if count == 1 else 's'})", window, index)
    if comparison.index is not None:
        lines.insert(1, f"  first divergence at token #{comparison.index}")
    return "\n".join(lines)
