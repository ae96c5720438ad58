"""Inputs files of ``tokspec diff`` and ``tokspec merge-check``: one reader, one set of rules, streamed.

Inputs file format, decided once per FILE (never per line):

- ``*.json``: one JSON object with a string field ``"text"`` (for instance a counterexample record,
  which is how a record's ``reproduce`` command works): one input.
- ``*.jsonl``, or any other name whose first non-empty line parses as a JSON object with a string
  ``"text"``: JSON Lines, one such object per non-empty line (the form ``tokspec corpus`` writes).
- anything else: plain UTF-8 text, one input per line; the ``\\n`` ending each line is not part of
  the input (a ``\\r`` before it is), and a final ``\\n`` does not start an empty input.

PATH may be ``-`` (standard input) or any pipe (``/dev/stdin``, a FIFO, ``<(cmd)``): it is read once,
through a private copy (``tokspec.app._input_source``). PATH may also be a directory (every regular, non-hidden file in it, in name order) or a glob
pattern (``shards/*.jsonl``, matches in name order): each file is read by the rules above and its
inputs are located as ``FILE:line N``. A single file's inputs are located as ``line N``.

Invalid UTF-8, a malformed line or text outside the text domain (a lone surrogate written as a JSON
escape) is a setup error naming the file, byte offset or line.

Memory: :func:`iter_inputs` reads one line at a time (a ``.json`` record is read whole: it is one
input), so a run holds the current input, never the file; an input longer than
``$TOKSPEC_MAX_INPUT_BYTES`` (default 64 MiB) is a setup error naming the limit
(``tokspec._limits``), found before it is held whole. A JSON line nested too deeply is refused. Out of scope: compressed shards.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import BinaryIO

from tokspec._types import check_text
from tokspec.app._input_source import bounded_lines, is_stream, open_input, read_bounded
from tokspec.errors import TokspecError

__all__ = ["InputFileError", "iter_inputs", "iter_raw_inputs", "read_inputs", "input_files", "batches"]


class InputFileError(TokspecError):
    """An inputs file cannot be read, is not UTF-8, or has a malformed line."""


def _decode_utf8(path: Path, data: bytes, offset: int = 0, line: int = 1) -> str:
    """``data`` (starting at byte ``offset``, on line ``line`` of ``path``) decoded as UTF-8."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line += data.count(b"\n", 0, exc.start)
        raise InputFileError(f"inputs file {str(path)!r} is not valid UTF-8: byte offset "
                             f"{offset + exc.start} (line {line}) has "
                             f"{data[exc.start:exc.start + 1]!r}") from None


def _text_of(path: Path, where: str, raw: str) -> str:
    """The ``"text"`` of one JSON object ``raw``, checked against the text domain."""
    try:
        obj = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{path}:{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise InputFileError(f"{path}:{where}: JSON nested too deeply to read (expected a flat object "
                             "with a string field \"text\")") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("text"), str):
        raise InputFileError(f"{path}:{where}: expected a JSON object with a string field \"text\"")
    try:
        return check_text(obj["text"])
    except TokspecError as exc:
        raise InputFileError(f"{path}:{where}: {exc}") from None


def _looks_jsonl(first_line: str) -> bool:
    try:
        obj = json.loads(first_line)
    except (json.JSONDecodeError, RecursionError):
        return False
    return isinstance(obj, dict) and isinstance(obj.get("text"), str)


def _open(p: Path) -> BinaryIO:
    try:
        if p.is_dir():
            raise IsADirectoryError(21, "Is a directory")
        return open_input(p)  # a pipe is read once, through a private copy
    except OSError as exc:
        raise InputFileError(f"cannot read inputs file {str(p)!r}: {exc.strerror or exc}") from None


def _lines(p: Path) -> Iterator[tuple[int, str]]:
    """(line number, decoded line without its ``\\n``) of ``p``, one line in memory at a time."""
    offset = 0
    with _open(p) as fh:
        for number, raw in enumerate(bounded_lines(fh, str(p)), 1):
            yield number, _decode_utf8(p, raw.removesuffix(b"\n"), offset, number)
            offset += len(raw)


def _iter_file(p: Path, prefix: str) -> Iterator[tuple[str, str]]:
    if p.suffix == ".json":
        with _open(p) as fh:
            yield f"{prefix}record", _text_of(p, "record", _decode_utf8(p, read_bounded(fh, str(p))))
        return
    first = next((ln for _, ln in _lines(p) if ln.strip()), "")  # sniff: stops at the first one
    if p.suffix == ".jsonl" or _looks_jsonl(first):
        for i, ln in _lines(p):
            if ln.strip():
                yield f"{prefix}line {i}", _text_of(p, f"line {i}", ln)
        return
    for i, ln in _lines(p):
        try:
            yield f"{prefix}line {i}", check_text(ln)
        except TokspecError as exc:  # pragma: no cover - decoded UTF-8 has no lone surrogates
            raise InputFileError(f"{p}:line {i}: {exc}") from None


def input_files(path: str | Path) -> list[Path]:
    """The files PATH names (module docstring): itself, a directory's files, or a glob's matches."""
    p = Path(path)
    if is_stream(p):  # "-" (stdin), a FIFO, /dev/stdin, <(cmd): one input file, read once
        return [p]
    if p.is_dir():
        files = sorted(f for f in p.iterdir() if f.is_file() and not f.name.startswith("."))
        if not files:
            raise InputFileError(f"inputs directory {str(p)!r} has no files")
        return files
    if not p.exists() and glob.has_magic(str(path)):
        files = sorted(Path(f) for f in glob.glob(str(path)) if Path(f).is_file())
        if not files:
            raise InputFileError(f"inputs pattern {str(path)!r} matches no file")
        return files
    return [p]


def iter_inputs(path: str | Path) -> Iterator[tuple[str, str]]:
    """Stream the inputs of ``path`` as (location, text) pairs, by the rules of the module docstring.

    Raises InputFileError naming the file (and byte offset or line) when it reaches the bad place.
    O(file size) time, O(longest line) memory.
    """
    files = input_files(path)
    for f in files:
        yield from _iter_file(f, "" if len(files) == 1 and f == Path(path) else f"{f}:")


def iter_raw_inputs(path: str | Path, cap: int | None = None,
                    pretokens: tuple[str, int] | None = None) -> Iterator[tuple[str, str]]:
    """``--raw``: each file of ``path`` (a file, directory or glob, as above) is ONE input, its bytes
    decoded exactly as tokspec's fuzz harness decodes fuzzer bytes
    (:func:`tokspec.fuzz.targets.text_from_bytes`: UTF-8, invalid bytes as U+FFFD by
    ``errors="replace"``, the long-text marker expanded), so a libFuzzer ``crash-*`` file replays.
    Bytes that decode to a lone surrogate (the harness's text-domain probe) are an InputFileError:
    both engines reject such text, there is nothing to compare. ``cap``: the target's cap on long
    texts (:func:`tokspec.fuzz.targets.long_text_cap`); ``pretokens``: its cut of long texts at a
    long pretoken (:func:`tokspec.fuzz.targets.pretoken_cap`). O(file size) per file."""
    from tokspec.fuzz.targets import text_from_bytes

    files = input_files(path)
    for f in files:
        with _open(f) as fh:
            text = text_from_bytes(fh.read(), cap=cap, pretokens=pretokens)
        try:
            check_text(text)
        except TokspecError as exc:
            raise InputFileError(f"{f}: decoded as the fuzz harness does, {exc}") from None
        yield ("raw" if len(files) == 1 and f == Path(path) else f"{f}:raw"), text


def read_inputs(path: str | Path) -> list[tuple[str, str]]:
    """All inputs of ``path`` as a list (:func:`iter_inputs`); O(file size) memory: small files only."""
    return list(iter_inputs(path))


def batches(items: Iterable[tuple[str, str]], *, max_items: int = 64, max_chars: int = 1 << 18
            ) -> Iterator[list[tuple[str, str]]]:
    """Consecutive runs of ``items``: at most ``max_items`` inputs or about ``max_chars`` characters
    each (a longer input is a batch of its own). Order is kept; memory is one batch."""
    batch: list[tuple[str, str]] = []
    chars = 0
    for item in items:
        if batch and (len(batch) >= max_items or chars + len(item[1]) > max_chars):
            yield batch
            batch, chars = [], 0
        batch.append(item)
        chars += len(item[1])
    if batch:
        yield batch
