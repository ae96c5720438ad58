"""Inputs files of ``tokspec diff`` and ``tokspec merge-check``: one reader, one set of rules.

Inputs file format, decided once per FILE (never per line):

- ``*.json``: one JSON object with a string field ``"text"`` (for instance a counterexample record,
  which is how a record's ``reproduce`` command works): one input.
- ``*.jsonl``, or any other name whose first non-empty line parses as a JSON object with a string
  ``"text"``: JSON Lines, one such object per non-empty line (the form ``tokspec corpus`` writes).
- anything else: plain UTF-8 text, one input per line; the ``\\n`` ending each line is not part of
  the input (a ``\\r`` before it is), and a final ``\\n`` does not start an empty input.

Invalid UTF-8, a malformed line or text outside the text domain (a lone surrogate written as a JSON
escape) is a setup error naming the file, byte offset or line.
"""

from __future__ import annotations

import json
from pathlib import Path

from tokspec._types import check_text
from tokspec.errors import TokspecError

__all__ = ["InputFileError", "read_inputs"]


class InputFileError(TokspecError):
    """An inputs file cannot be read, is not UTF-8, or has a malformed line."""


def _decode_utf8(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputFileError(f"inputs file {str(path)!r} is not valid UTF-8: byte offset {exc.start} "
                             f"(line {line}) has {data[exc.start:exc.start + 1]!r}") from None


def _text_of(path: Path, where: str, raw: str) -> str:
    """The ``"text"`` of one JSON object ``raw``, checked against the text domain."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{path}:{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        raise InputFileError(f"{path}:{where}: expected a JSON object with a string field \"text\"")
    try:
        return check_text(obj["text"])
    except TokspecError as exc:
        raise InputFileError(f"{path}:{where}: {exc}") from None


def _looks_jsonl(first_line: str) -> bool:
    try:
        obj = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(obj, dict) and isinstance(obj.get("text"), str)


def read_inputs(path: str | Path) -> list[tuple[str, str]]:
    """The inputs of ``path`` as (location, text) pairs, by the rules of the module docstring.

    Raises InputFileError naming the file (and byte offset or line). O(file size).
    """
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as exc:
        raise InputFileError(f"cannot read inputs file {str(p)!r}: {exc.strerror or exc}") from None
    content = _decode_utf8(p, data)
    if p.suffix == ".json":
        return [("record", _text_of(p, "record", content))]
    lines = content.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    first = next((ln for ln in lines if ln.strip()), "")
    if p.suffix == ".jsonl" or _looks_jsonl(first):
        return [(f"line {i}", _text_of(p, f"line {i}", ln)) for i, ln in enumerate(lines, 1) if ln.strip()]
    out = []
    for i, ln in enumerate(lines, 1):
        try:
            out.append((f"line {i}", check_text(ln)))
        except TokspecError as exc:  # pragma: no cover - decoded UTF-8 has no lone surrogates
            raise InputFileError(f"{p}:line {i}: {exc}") from None
    return out
