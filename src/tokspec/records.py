"""Counterexample records: the JSON file ``tokspec diff`` writes for a disagreement, and reading it back.

A record stores the text once and both engines' outputs compactly, so its size grows like the input
and not like a Python object per token (a 20 MB line once gave a 314 MB record). Layout, version 2
(``RECORD_VERSION``), one JSON object:

- ``"tokspec_counterexample": 2``; ``"text"``: the input, once, as a JSON string;
  ``"text_utf8_hex"``: its UTF-8 bytes in hex, only for texts of at most :data:`HEX_CHARS`
  characters (to read invisible characters; a long text is not stored twice);
  ``"text_size"``: ``{"chars": ..., "utf8_bytes": ...}``;
- ``"engines"``: both engines' :class:`~tokspec.EngineInfo`; ``"classification"``;
- ``"first_divergence"``: ``{"index": k, "char": c, "a": token, "b": token}`` (``c``: the first
  character where the two sides' token ``k`` differ in position, i.e. the smaller start);
- ``"context"``: ``{"start": s, "text": text[s:s + ...]}``, :data:`CONTEXT_CHARS` characters on
  each side of ``char``, readable without scrolling through a long text;
- ``"windows"``: tokens ``k - width .. k + width`` of each side (index, id, piece, offsets, text;
  a token text longer than :data:`WINDOW_TEXT_CHARS` is cut and marked ``"text_cut": true``);
- ``"outputs"``: per side, ``{"fault": message}``, or ``{"tokens": n, "ids": [...], "offsets":
  [[s, e], ...]}`` when ``n <= INLINE_TOKENS`` (readable, as in version 1), else ``{"tokens": n,
  "packed": PACKED, "ids": str, "starts": str, "lengths": str}``: each string is base64 of the
  zlib-compressed little-endian array named by ``PACKED["dtype"]``; ``starts`` holds each start
  minus the previous token's end (0 before the first token), ``lengths`` each end minus start
  (mostly zeros and small numbers: they compress well). ``ids`` is null for pretokenizers.
- ``"reproduce"``: a ``tokspec diff A B --inputs RECORD`` command (the reader takes ``"text"``).
- ``"decode"`` (class ``"decode differs"`` only): ``{"ids": [...], "origin": ..., "a": {"text": s}
  or {"error": message}, "b": ...}``, the minimized id sequence and both engines' decodes of it.

Version 1 records (no ``"tokens"``, lists always, ``text_utf8_hex`` always) stay readable:
:func:`record_output` decodes both versions. Records are written atomically under a content-hash
name (:func:`record_name`), so the same finding is stored once.

Memory: making and writing a record costs O(tokens) in numpy arrays and a few copies of the text
(JSON escaping, hashing); nothing per token in Python objects beyond the ``INLINE_TOKENS`` case and
the windows.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import shlex
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from tokspec._atomic import write_atomic
from tokspec._escape import dumps
from tokspec._types import Encoder, Encoding, EncodingArrays

__all__ = ["RECORD_VERSION", "HEX_CHARS", "INLINE_TOKENS", "CONTEXT_CHARS", "WINDOW_TEXT_CHARS",
           "PACKED", "as_arrays", "array_window", "make_record", "dumps_record", "write_record",
           "record_name", "reproduce_command", "save_counterexample", "read_record", "record_output"]

RECORD_VERSION = 2
HEX_CHARS = 4096
INLINE_TOKENS = 256
CONTEXT_CHARS = 200
WINDOW_TEXT_CHARS = 200
PACKED = {"codec": "zlib+base64", "dtype": "<i4",
          "starts": "start minus the previous token's end (0 before the first)", "lengths": "end minus start"}
_PACKED64 = {**PACKED, "dtype": "<i8"}
_CHUNK = 1 << 20  # characters per slice when hashing or escaping a long text


def as_arrays(encoding: Encoding | EncodingArrays) -> EncodingArrays:
    """``encoding`` as arrays (converted once if it is the tuple form)."""
    return encoding if isinstance(encoding, EncodingArrays) else EncodingArrays.from_encoding(encoding)


def _piece(engine: Encoder, encoding: Encoding | EncodingArrays, token_id: int | None, i: int) -> str:
    pieces = getattr(encoding, "pieces", None)
    if pieces is not None:
        return str(pieces[i])
    if token_id is None:
        return ""
    try:
        return str(engine.token_piece(token_id))
    except KeyboardInterrupt:
        raise
    except BaseException:  # noqa: BLE001 - display only (even a sys.exit in an engine's token_piece)
        return "?"


def array_window(engine: Encoder, text: str, encoding: Encoding | EncodingArrays, index: int,
                 width: int = 3) -> list[dict[str, Any]]:
    """Tokens ``index - width .. index + width`` as dicts (index, id, piece, offsets, text). O(width)."""
    arrays = as_arrays(encoding)
    lo, hi = max(0, index - width), min(len(arrays), index + width + 1)
    out = []
    for i in range(lo, hi):
        s, e = int(arrays.starts[i]), int(arrays.ends[i])
        tid = None if arrays.ids is None else int(arrays.ids[i])
        token: dict[str, Any] = {"index": i, "id": tid, "piece": _piece(engine, encoding, tid, i),
                                 "offsets": [s, e], "text": text[s:min(e, s + WINDOW_TEXT_CHARS)]}
        if e - s > WINDOW_TEXT_CHARS:
            token["text_cut"] = True
        out.append(token)
    return out


def _pack(values: np.ndarray, dtype: str) -> str:
    return base64.b64encode(zlib.compress(values.astype(dtype).tobytes(), 6)).decode("ascii")


def _unpack(data: str, dtype: str, n: int) -> np.ndarray:
    values = np.frombuffer(zlib.decompress(base64.b64decode(data)), dtype=dtype).astype(np.int64)
    if len(values) != n:
        raise ValueError(f"packed array has {len(values)} values, the record says tokens={n}")
    return values


def _shown(outcome: Any) -> Encoding | EncodingArrays | None:
    """An outcome's output for records: the engine's own Encoding if kept (pieces), else its arrays."""
    shown = getattr(outcome, "shown", None)
    got: Encoding | EncodingArrays | None = shown() if shown is not None else outcome.encoding
    return got


def _output(outcome: Any) -> dict[str, Any]:
    """One side of ``"outputs"`` (module docstring): the fault, inline lists, or packed arrays."""
    shown = _shown(outcome)
    if shown is None:
        return {"fault": outcome.fault}
    arrays = as_arrays(shown)
    n = len(arrays)
    if n <= INLINE_TOKENS:
        return {"tokens": n, "ids": None if arrays.ids is None else arrays.ids.tolist(),
                "offsets": np.stack([arrays.starts, arrays.ends], axis=1).tolist()}
    previous_end = np.concatenate([np.zeros(1, dtype=np.int64), arrays.ends[:-1]])
    starts, lengths = arrays.starts - previous_end, arrays.ends - arrays.starts
    columns = [starts, lengths] + ([] if arrays.ids is None else [arrays.ids])
    wide = any(len(c) and (int(c.min()) < -(2**31) or int(c.max()) >= 2**31) for c in columns)
    packed = _PACKED64 if wide else PACKED
    dtype = str(packed["dtype"])
    return {"tokens": n, "packed": packed, "ids": None if arrays.ids is None else _pack(arrays.ids, dtype),
            "starts": _pack(starts, dtype), "lengths": _pack(lengths, dtype)}


def record_output(record: dict[str, Any], side: str) -> EncodingArrays | None:
    """The stored output of ``side`` ("a" or "b") as arrays; None if that engine faulted.

    Reads version 1 (lists) and version 2 (lists or packed) records. Raises ValueError on a
    malformed output. O(tokens) in numpy.
    """
    stored = record["outputs"][side]
    if "fault" in stored:
        return None
    if "packed" not in stored:
        spans = np.array(stored["offsets"], dtype=np.int64).reshape(-1, 2)
        ids = None if stored["ids"] is None else np.array(stored["ids"], dtype=np.int64)
        return EncodingArrays(ids, np.ascontiguousarray(spans[:, 0]), np.ascontiguousarray(spans[:, 1]))
    n, dtype = int(stored["tokens"]), str(stored["packed"]["dtype"])
    deltas, lengths = _unpack(stored["starts"], dtype, n), _unpack(stored["lengths"], dtype, n)
    # start[i] = delta[i] + end[i-1] and end[i] = start[i] + length[i]: so end[i] = sum(delta + length)
    ends = np.cumsum(deltas + lengths)
    starts = ends - lengths
    ids = None if stored["ids"] is None else _unpack(stored["ids"], dtype, n)
    return EncodingArrays(ids, starts, ends)


def _divergence_char(text: str, windows: dict[str, list[dict[str, Any]]], index: int | None) -> int:
    """Where the first diverging tokens start (the smaller start); the text's end if neither has one."""
    starts = [t["offsets"][0] for side in windows.values() for t in side if t["index"] == index]
    return min(starts) if starts else len(text)


def make_record(a: Encoder, b: Encoder, comparison: Any, *, width: int = 3,
                reproduce: str | None = None) -> dict[str, Any]:
    """The counterexample record of a disagreement (module docstring). O(text + tokens)."""
    assert not comparison.agree, "records are for disagreements"
    text, index = comparison.text, comparison.index
    first: dict[str, Any] = {"index": index}
    windows: dict[str, Any] = {"a": [], "b": []}
    for side, engine, outcome in (("a", a, comparison.a), ("b", b, comparison.b)):
        shown = _shown(outcome)
        if shown is not None:  # on a fault, the other side's window starts at token 0
            windows[side] = array_window(engine, text, shown, index or 0, width)
            first[side] = next((t for t in windows[side] if t["index"] == index), None)
    char = _divergence_char(text, windows, index)
    first["char"] = char
    lo = max(0, char - CONTEXT_CHARS)
    record: dict[str, Any] = {"tokspec_counterexample": RECORD_VERSION, "text": text}
    if len(text) <= HEX_CHARS:
        record["text_utf8_hex"] = text.encode("utf-8").hex()
    record.update({
        "text_size": {"chars": len(text), "utf8_bytes": _utf8_size(text)},
        "engines": [dataclasses.asdict(a.info), dataclasses.asdict(b.info)],
        "classification": comparison.classification,
        "first_divergence": first,
        "context": {"start": lo, "text": text[lo:char + CONTEXT_CHARS]},
        "windows": windows,
        "outputs": {"a": _output(comparison.a), "b": _output(comparison.b)},
        "reproduce": reproduce,
    })
    if getattr(comparison, "decode", None) is not None:  # class "decode differs" (tokspec.decoding)
        record["decode"] = comparison.decode.as_json()
    return record


def _slices(text: str) -> Iterator[str]:
    """``text`` in slices of ``_CHUNK`` characters (so no whole-text copy is made at once)."""
    return (text[i:i + _CHUNK] for i in range(0, len(text), _CHUNK))


def _utf8_size(text: str) -> int:
    return sum(len(piece.encode("utf-8")) for piece in _slices(text))


def record_name(a: Encoder, b: Encoder, text: str) -> str:
    """The content-hash file name of the record for (a, b, text).

    The sha256 of ``json.dumps([a.name, b.name, text], ensure_ascii=True)``, computed slice by
    slice (escaping is per character, so slices escape exactly as the whole text does).
    """
    digest = hashlib.sha256(json.dumps([a.info.name, b.info.name], ensure_ascii=True)[:-1].encode("ascii"))
    digest.update(b', "')
    for piece in _slices(text):
        digest.update(json.dumps(piece, ensure_ascii=True)[1:-1].encode("ascii"))
    digest.update(b'"]')
    return digest.hexdigest()[:20] + ".json"


def reproduce_command(a: Encoder, b: Encoder, path: str | Path) -> str:
    """The shell command that re-runs the comparison stored in the record at ``path``."""
    return " ".join(["tokspec", "diff", shlex.quote(a.info.name), shlex.quote(b.info.name),
                     "--inputs", shlex.quote(str(path))])


def _compact(value: Any) -> str:
    return dumps(value)  # lone surrogates and control characters from engines become \uXXXX escapes


def dumps_record(record: dict[str, Any]) -> str:
    """``record`` as JSON, one line per top-level key, per engine and per side (a, b) of a dict value.

    Plain ``indent=`` JSON puts every number on its own line; this layout stays small and
    diff-friendly. ``json.loads`` gives back ``record``. O(size of record).
    """
    parts = []
    for key, value in record.items():
        if isinstance(value, dict) and value:
            body = ",\n".join(f"  {_compact(k)}: {_compact(v)}" for k, v in value.items())
            parts.append(f" {_compact(key)}: {{\n{body}\n }}")
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            body = ",\n".join(f"  {_compact(v)}" for v in value)
            parts.append(f" {_compact(key)}: [\n{body}\n ]")
        else:
            parts.append(f" {_compact(key)}: {_compact(value)}")
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_record(record: dict[str, Any], path: str | Path) -> Path:
    """Write ``record`` (:func:`dumps_record`) to ``path`` atomically (:mod:`tokspec._atomic`)."""
    return write_atomic(path, dumps_record(record))


def save_counterexample(a: Encoder, b: Encoder, comparison: Any, directory: str | Path,
                        *, width: int = 3) -> Path:
    """Make and write the record of ``comparison`` into ``directory``; return its path."""
    path = Path(directory) / record_name(a, b, comparison.text)
    record = make_record(a, b, comparison, width=width, reproduce=reproduce_command(a, b, path))
    return write_record(record, path)


def read_record(path: str | Path) -> dict[str, Any]:
    """A record file (either version) as a dict."""
    record: dict[str, Any] = json.loads(Path(path).read_text(encoding="utf-8"))
    return record
