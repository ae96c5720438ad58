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

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tokspec._types import Encoder, Encoding, EncodingArrays, check_text
from tokspec.errors import EngineFault, TokspecError
from tokspec.records import (RECORD_VERSION, array_window, dumps_record, make_record, record_name,
                             reproduce_command, save_counterexample, write_record)

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


_KEEP_PIECES = 4096


@dataclass(frozen=True)
class Outcome:
    """What one engine did with one text: arrays, or a fault message (never both).

    ``arrays`` is the output as :class:`~tokspec.EncodingArrays` (what is compared: no Python object
    per token). :attr:`encoding` gives the tuple form on demand (built once, on first use; engines
    that return tuples with ``pieces`` keep theirs, for display).
    """

    arrays: EncodingArrays | None
    fault: str | None = None
    tuples: Encoding | None = field(default=None, repr=False, compare=False)

    @property
    def encoding(self) -> Encoding | None:
        """The output as an :class:`~tokspec.Encoding` (None on a fault). O(tokens) on first use."""
        if self.arrays is None:
            return None
        if self.tuples is None:
            object.__setattr__(self, "tuples", self.arrays.to_encoding())
        return self.tuples


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


def _validate_arrays(arrays: EncodingArrays, text: str, engine: str) -> None:
    """:meth:`Encoding.validate` on arrays, vectorized: raise EngineFault unless well formed."""
    n_tok = len(arrays.starts)
    if len(arrays.ends) != n_tok or (arrays.ids is not None and len(arrays.ids) != n_tok):
        got = "no" if arrays.ids is None else len(arrays.ids)
        raise EngineFault(f"{engine} returned {got} ids, {n_tok} starts and {len(arrays.ends)} ends")
    bad = (arrays.starts < 0) | (arrays.starts > arrays.ends) | (arrays.ends > len(text))
    if n_tok and bool(bad.any()):
        i = int(np.argmax(bad))
        span = (int(arrays.starts[i]), int(arrays.ends[i]))
        raise EngineFault(f"{engine} returned offset {i}={span} outside text of length {len(text)}")


def _native_arrays(engine: Encoder) -> bool:
    """True if ``engine`` produces arrays itself (then no tuple per token is ever built)."""
    return getattr(type(engine), "_encode_arrays", None) is not Encoder._encode_arrays


def run_engine(engine: Encoder, text: str) -> Outcome:
    """Encode ``text``; any exception or invalid output becomes a fault message. O(encode).

    Engines implementing ``_encode_arrays`` are called through :meth:`Encoder.encode_arrays`;
    others through :meth:`Encoder.encode`, converted to arrays once (their tuples are kept only
    when they carry ``pieces`` and have at most ``_KEEP_PIECES`` tokens; longer ones are dropped
    at once, so a long text holds arrays only, and windows name tokens by ``token_piece``).
    """
    try:
        tuples: Encoding | None = None
        if _native_arrays(engine):
            arrays = engine.encode_arrays(text)
            if not isinstance(arrays, EncodingArrays):
                return Outcome(None, f"returned {type(arrays).__name__}, not EncodingArrays")
        else:
            encoding = engine.encode(text)
            if not isinstance(encoding, Encoding):
                return Outcome(None, f"returned {type(encoding).__name__}, not an Encoding")
            if encoding.ids is not None and len(encoding.ids) != len(encoding.offsets):
                encoding.validate(text, engine.info.name)  # raises the EngineFault naming both counts
            arrays = EncodingArrays.from_encoding(encoding)
            # keep the tuples only for their display pieces, and only while they are small
            tuples = encoding if encoding.pieces is not None and len(encoding) <= _KEEP_PIECES else None
        if (arrays.ids is None) != (engine.info.kind == "pretokenizer"):
            got = "no ids" if arrays.ids is None else "ids"
            return Outcome(None, f"EngineFault: {engine.info.name} is a {engine.info.kind} but returned {got}")
        _validate_arrays(arrays, text, engine.info.name)
    except Exception as exc:  # noqa: BLE001 - an engine under test may raise anything
        message = str(exc).replace("\n", " ")
        return Outcome(None, f"{type(exc).__name__}: {message}")
    return Outcome(arrays, None, tuples)


def _first_divergence(ea: EncodingArrays, eb: EncodingArrays) -> int | None:
    """Index of the first differing token, or min(len) if one is a prefix; None if equal. O(n) numpy."""
    m = min(len(ea), len(eb))
    differs = (ea.starts[:m] != eb.starts[:m]) | (ea.ends[:m] != eb.ends[:m])
    if ea.ids is not None and eb.ids is not None:
        differs |= ea.ids[:m] != eb.ids[:m]
    if m and bool(differs.any()):
        return int(np.argmax(differs))
    return None if len(ea) == len(eb) else m


def _covered(enc: EncodingArrays, n: int) -> np.ndarray:
    """Boolean mask of the characters of a text of length ``n`` that some token covers. O(n + tokens)."""
    depth = np.bincount(enc.starts, minlength=n + 1) - np.bincount(enc.ends, minlength=n + 1)
    return np.cumsum(depth[:n]) > 0


def _decoded(engine: Encoder, enc: EncodingArrays) -> str | None:
    decode = getattr(engine, "decode", None)
    if decode is None or enc.ids is None:
        return None
    try:
        out = decode(enc.ids.tolist())
    except Exception:  # noqa: BLE001 - decoding is optional; fall back to coverage
        return None
    return out if isinstance(out, str) else None


def _classify(a: Encoder, b: Encoder, ea: EncodingArrays, eb: EncodingArrays, n: int) -> str:
    """Rules 2-5 of the module docstring (both engines produced an encoding of a text of length n)."""
    da, db = _decoded(a, ea), _decoded(b, eb)
    if da is not None and db is not None:
        text_differs = da != db
    else:
        text_differs = not np.array_equal(_covered(ea, n), _covered(eb, n))
    if text_differs:
        return "decoded text differs"
    if ea.ids is not None and eb.ids is not None and np.array_equal(ea.ids, eb.ids):
        return "same ids, different offsets"
    if np.array_equal(ea.starts, eb.starts) and np.array_equal(ea.ends, eb.ends):
        return "same segmentation, different ids"
    return "different segmentation"


def compare(a: Encoder, b: Encoder, text: str) -> Comparison:
    """Run both engines on ``text`` and compare (see module docstring). O(encode + n), numpy only:
    peak memory is the engines' own plus O(tokens) machine integers, never a Python object per token."""
    check_text(text)
    oa, ob = run_engine(a, text), run_engine(b, text)
    if oa.arrays is None or ob.arrays is None:
        return Comparison(text, oa, ob, None, "engine fault")
    index = _first_divergence(oa.arrays, ob.arrays)
    if index is None:
        return Comparison(text, oa, ob, None, None)
    return Comparison(text, oa, ob, index, _classify(a, b, oa.arrays, ob.arrays, len(text)))


def token_window(engine: Encoder, text: str, enc: Encoding | EncodingArrays, index: int, width: int = 3
                 ) -> list[dict[str, Any]]:
    """Tokens ``index - width .. index + width`` of ``enc`` as dicts (index, id, piece, offsets, text)."""
    return array_window(engine, text, enc, index, width)


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
        if outcome.arrays is None:
            lines.append(f"  {name}: FAULT {outcome.fault}")
            continue
        index = comparison.index
        shown_enc = outcome.tuples if outcome.tuples is not None else outcome.arrays
        assert shown_enc is not None
        window = token_window(engine, text, shown_enc, index or 0, width)
        count = len(shown_enc)
        lines += _format_window(f"{name} ({count} token{'' if count == 1 else 's'})", window, index)
    if comparison.index is not None:
        lines.insert(1, f"  first divergence at token #{comparison.index}")
    return "\n".join(lines)
