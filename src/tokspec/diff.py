"""Compare two engines on one text: first divergence, token windows, classification, records.

Two engines *agree* on a text when both encode it without error and their encodings are equal token
by token: ids AND character offsets for tokenizers, spans for pretokenizers. Comparing a tokenizer
with a pretokenizer is a usage error (:func:`check_pair`).

Classification of a disagreement (first matching rule wins):

1. ``"engine fault"``: an engine raised (any exception) or returned an invalid Encoding. A
   *refusal* (:class:`~tokspec.errors.DisallowedSpecialError`: tiktoken's ``encode`` refusing text
   that spells a disallowed special token, :mod:`tokspec.special_mode`) is no fault: both engines
   refusing a text agree on it (whichever token each names), and one refusing while the other
   encodes is class ``"special refusal differs"``.
2. ``"decoded text differs"``: the two token sequences do not stand for the same text. When both
   engines have a ``decode(ids) -> str`` method (optional, not part of the Encoder contract), the
   decoded strings are compared; otherwise the sets of characters covered by the offsets are.
3. ``"same ids, different offsets"``: equal id sequences, different offsets (tokenizers only).
4. ``"same segmentation, different ids"``: equal offsets, different ids.
5. ``"different segmentation"``: everything else.
6. ``"different ids"``: only when the pair is compared on ids alone (an engine declares
   ``EngineInfo.offsets=False``, or ``tokspec diff --compare ids``): the ids differ and, if both
   engines decode, the decoded texts do not (else rule 2). Offsets are then never compared.

Rule 3 is checked before rule 2: equal ids stand for the same text, whatever the offsets cover.

Two more classes (:mod:`tokspec.decoding`):

- ``"special token from text"`` (checked right after rule 1): the encodings differ and one side's ids
  hold a special token id (by either engine's ``special_tokens()`` table) the other side's do not: an
  engine promoted a control token's string found in ordinary text (a security finding: special-token
  injection).
- ``"decode differs"``: the encodings agree (and the engines do not declare different vocabularies,
  ``EngineInfo.vocab_sha256``), but on their ids (or a prefix, slice, or random id
  sequence: :func:`tokspec.decoding.decode_difference`) the two ``decode`` methods disagree; the
  minimized id sequence and both decodes are :attr:`Comparison.decode`.

A counterexample *record* (layout and reader in :mod:`tokspec.records`, re-exported here) holds the
text once, both engines' :class:`~tokspec.EngineInfo`, the first divergence with a readable context,
both token windows, the classification, both full outputs (compact), and a command that reproduces
it. Records are written atomically (:func:`tokspec._atomic.write_atomic`) under a content-hash
name, so the same finding is stored once.

Memory: the comparison holds arrays (no Python object per token); an engine's own Encoding is kept
only up to ``_KEEP_PIECES`` tokens (for its display pieces), so a 20 MB line costs the engines' own
needs plus O(tokens) machine integers.

Engines are untrusted: anything an engine raises, including ``SystemExit`` and other
``BaseException``s (``KeyboardInterrupt`` excepted: that is the user), is a fault, and its message
is escaped (:func:`tokspec._escape.escape`). Records are JSON written with
:func:`tokspec._escape.dumps` (lone surrogates and control characters in pieces or names become
``\\uXXXX`` escapes: exact, always UTF-8-encodable); :func:`format_comparison` escapes what it
prints.

Out of scope: alignment of the two token sequences after the first divergence (windows show
context; the full outputs are in the record), and comparing engines on text outside the text
domain (:func:`tokspec.check_text` raises before either engine runs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tokspec._escape import escape
from tokspec._limits import DeadlineExceeded, ResourceLimitError, max_input_bytes
from tokspec._types import Encoder, Encoding, EncodingArrays, check_text
from tokspec.decoding import DecodeDifference, decode_difference, promoted_special
from tokspec.diff_report import format_comparison, token_window  # the readable report, importable here as before
from tokspec.errors import DisallowedSpecialError, TokspecError
from tokspec.records import (RECORD_VERSION, dumps_record, make_record, record_name,
                             reproduce_command, save_counterexample, write_record)

__all__ = [
    "Outcome",
    "Comparison",
    "CLASSES",
    "RECORD_VERSION",
    "check_pair",
    "offsets_compared",
    "run_engine",
    "fault_message",
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
           "same segmentation, different ids", "different segmentation", "different ids",
           "special token from text", "decode differs", "special refusal differs")


class Outcome:
    """What one engine did with one text: an encoding, or a fault message (never both).

    The encoding is held as :class:`EncodingArrays` (``arrays``), which is all the comparison
    needs; ``encoding`` gives the tuple form, built on first use (for reports, on disagreements)
    unless the engine gave one. Two outcomes are equal iff their faults and encodings are.
    """

    __slots__ = ("arrays", "fault", "_encoding", "refused")

    def __init__(self, encoding: Encoding | EncodingArrays | None, fault: str | None = None, *,
                 refused: str | None = None) -> None:
        self.fault = fault
        #: the special token's string when the fault is a refusal (DisallowedSpecialError)
        self.refused = refused
        self._encoding = encoding if isinstance(encoding, Encoding) else None
        if isinstance(encoding, Encoding):
            self.arrays: EncodingArrays | None = EncodingArrays.from_encoding(encoding)
        else:
            self.arrays = encoding

    @property
    def encoding(self) -> Encoding | None:
        """The tuple form (with the engine's pieces when it gave an Encoding)."""
        if self._encoding is None and self.arrays is not None:
            self._encoding = self.arrays.to_encoding()
        return self._encoding

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Outcome):
            return NotImplemented
        if self.fault != other.fault or (self.arrays is None) != (other.arrays is None):
            return False
        return self.arrays is None or other.arrays is None or self.arrays.same_as(other.arrays)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Outcome(encoding={self.encoding!r}, fault={self.fault!r})"

    def shown(self) -> Encoding | EncodingArrays | None:
        """What reports show: the engine's own Encoding if kept (its pieces), else the arrays (no
        tuples are built for display)."""
        return self._encoding if self._encoding is not None else self.arrays


#: An engine's own Encoding is kept (for its pieces) only up to this many tokens.
_KEEP_PIECES = 4096


@dataclass(frozen=True)
class Comparison:
    """Two engines' outcomes on ``text``. ``index`` is the first diverging token (None if agree)."""

    text: str
    a: Outcome
    b: Outcome
    index: int | None
    classification: str | None
    decode: DecodeDifference | None = None

    @property
    def agree(self) -> bool:
        return self.classification is None


def check_pair(a: Encoder, b: Encoder) -> None:
    """Raise TokspecError unless ``a`` and ``b`` are of the same kind (both tokenizers or both not)."""
    if a.info.kind != b.info.kind:
        raise TokspecError(
            f"cannot compare {a.info.name!r} (a {a.info.kind}) with {b.info.name!r} (a {b.info.kind}): "
            "compare tokenizers with tokenizers and pretokenizers with pretokenizers")


def _natively_arrays(engine: Encoder) -> bool:
    """Does the engine produce arrays itself (so asking for tuples would only add a conversion)?"""
    return type(engine)._encode_arrays is not Encoder._encode_arrays


def run_engine(engine: Encoder, text: str) -> Outcome:
    """Encode ``text``; any exception or invalid encoding becomes an (escaped) fault message.

    ``SystemExit`` and other ``BaseException``s count as faults too; only ``KeyboardInterrupt``
    (the user, or a signal the CLI turned into one) passes through. Engines that produce arrays
    natively are asked for arrays (no Python object per token); the others for their Encoding
    (which keeps their pieces for reports). O(encode)."""
    try:
        if _natively_arrays(engine):
            arrays = engine.encode_arrays(text)
            if not isinstance(arrays, EncodingArrays):
                return Outcome(None, f"returned {type(arrays).__name__}, not an EncodingArrays")
            has_ids = arrays.ids is not None
        else:
            encoding = engine.encode(text)
            if not isinstance(encoding, Encoding):
                return Outcome(None, f"returned {type(encoding).__name__}, not an Encoding")
            encoding.validate(text, engine.info.name)
            arrays = EncodingArrays.from_encoding(encoding)
            has_ids = encoding.ids is not None
        if has_ids != (engine.info.kind == "tokenizer"):
            got = "ids" if has_ids else "no ids"
            return Outcome(None, f"EngineFault: {engine.info.name} is a {engine.info.kind} but returned {got}")
        arrays.validate(text, engine.info.name)
    except (KeyboardInterrupt, DeadlineExceeded):
        raise
    except MemoryError:  # the machine failed, not the engine: a setup error (tokspec._limits)
        raise ResourceLimitError(f"out of memory while {engine.info.name} encoded an input of {len(text)} "
                                 f"characters (TOKSPEC_MAX_INPUT_BYTES={max_input_bytes()} bounds one input)"
                                 ) from None
    except DisallowedSpecialError as exc:  # a refusal, compared as an outcome (module docstring)
        return Outcome(None, fault_message(exc), refused=str(exc.token))
    except BaseException as exc:  # noqa: BLE001 - an engine under test may raise anything
        return Outcome(None, fault_message(exc))
    if _natively_arrays(engine) or len(encoding) > _KEEP_PIECES:
        return Outcome(arrays)  # a long Encoding is dropped at once: windows name tokens by token_piece
    return Outcome(encoding)


def fault_message(exc: BaseException) -> str:
    """``Type: message`` on one line, escaped; even a ``__str__`` that raises gives a message."""
    try:
        message = str(exc)
    except Exception:  # noqa: BLE001 - hostile __str__
        message = "(message unavailable: its __str__ raised)"
    return escape(f"{type(exc).__name__}: {message}".replace("\n", " "))


def _covered(arrays: EncodingArrays, n: int) -> np.ndarray:
    """Which of the ``n`` characters some token covers (boolean array). O(n + tokens) in numpy."""
    depth = np.zeros(n + 1, dtype=np.int64)
    np.add.at(depth, arrays.starts, 1)
    np.add.at(depth, arrays.ends, -1)
    return np.cumsum(depth[:n]) > 0


def _decoded(engine: Encoder, arrays: EncodingArrays) -> str | None:
    decode = getattr(engine, "decode", None)
    if decode is None or arrays.ids is None:
        return None
    try:
        out = decode(arrays.ids.tolist())
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - decoding is optional (even a sys.exit in it); fall back to coverage
        return None
    return out if isinstance(out, str) else None


def _classify(a: Encoder, b: Encoder, ea: EncodingArrays, eb: EncodingArrays, n: int) -> str:
    """Rules 2-5 of the module docstring (both engines produced an encoding of a text of ``n``
    characters). O(n + tokens) in numpy."""
    if ea.ids is not None and eb.ids is not None and np.array_equal(ea.ids, eb.ids):
        return "same ids, different offsets"  # the same ids stand for the same text
    if promoted_special(a, b, ea.ids, eb.ids):
        return "special token from text"
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


def _fault_class(oa: Outcome, ob: Outcome) -> str | None:
    """Rule 1 with refusals (module docstring): None when both engines refused the text."""
    if oa.refused is not None and ob.refused is not None:
        return None
    if (oa.refused is not None and ob.arrays is not None) or (ob.refused is not None and oa.arrays is not None):
        return "special refusal differs"
    return "engine fault"


def offsets_compared(a: Encoder, b: Encoder) -> bool:
    """False when either engine declares it has no offsets (``EngineInfo.offsets``): the pair is
    then compared on ids alone (rule 6 of the module docstring)."""
    return bool(getattr(a.info, "offsets", True) and getattr(b.info, "offsets", True))


def _ids_difference(ea: EncodingArrays, eb: EncodingArrays) -> int | None:
    """First index where the id sequences differ (``min(len)`` for a proper prefix), None if equal."""
    ia = ea.ids if ea.ids is not None else np.zeros(0, dtype=np.int64)
    ib = eb.ids if eb.ids is not None else np.zeros(0, dtype=np.int64)
    n = min(len(ia), len(ib))
    hit = np.flatnonzero(ia[:n] != ib[:n])
    if len(hit):
        return int(hit[0])
    return None if len(ia) == len(ib) else n


def compare(a: Encoder, b: Encoder, text: str) -> Comparison:
    """Run both engines on ``text`` and compare (see module docstring). O(encode + n)."""
    check_text(text)
    oa, ob = run_engine(a, text), run_engine(b, text)
    if oa.arrays is None or ob.arrays is None:
        return Comparison(text, oa, ob, None, _fault_class(oa, ob))
    if not offsets_compared(a, b) and oa.arrays.ids is not None:
        index = _ids_difference(oa.arrays, ob.arrays)
        if index is None:
            return Comparison(text, oa, ob, None, None)
        da, db = _decoded(a, oa.arrays), _decoded(b, ob.arrays)
        label = "decoded text differs" if da is not None and db is not None and da != db else "different ids"
        return Comparison(text, oa, ob, index, label)
    index = oa.arrays.first_difference(ob.arrays)
    if index is None:
        ids = oa.arrays.ids
        # decode is compared on id sequences, meaningful only over one vocabulary: two engines
        # with known, different vocabularies (cl100k vs o200k) agree on ids only by accident
        va, vb = a.info.vocab_sha256, b.info.vocab_sha256
        same_vocab = va is None or vb is None or va == vb
        found = None if ids is None or not same_vocab else decode_difference(a, b, text, ids.tolist())
        if found is not None:
            return Comparison(text, oa, ob, None, "decode differs", found)
        return Comparison(text, oa, ob, None, None)
    return Comparison(text, oa, ob, index, _classify(a, b, oa.arrays, ob.arrays, len(text)))
