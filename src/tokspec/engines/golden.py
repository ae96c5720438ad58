"""Golden files: an engine's outputs recorded once, and the engine ``golden:FILE`` answering from them.

A tokenizer written in any language is checked in its own CI against outputs recorded once
(``tokspec encode ENGINE --inputs F --out FILE``), with no production library at test time: run
``tokspec diff golden:FILE cmd:YOUR-PROGRAM --inputs F``. The file is JSON Lines: a header object
``{"format": "tokspec-golden/1", "engine", "kind", "library", "library_version", "vocab_sha256",
"tokspec_version"}`` (provenance: which engine, release and vocabulary produced it), then one
``{"text", "ids", "offsets"[, "decode"]}`` per input (``decode`` where the engine has a ``decode``).

``golden:FILE`` answers exactly what was recorded, and refuses a text that is not in the file with
:class:`GoldenMissError` (a named ValueError: no guess, no partial answer). Lookup is a dict: O(1)
per text after an O(file) load.

Out of scope: editing golden files, merging several files.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tokspec._escape import dumps
from tokspec._types import Encoder, Encoding, EngineInfo
from tokspec.errors import TokspecError, UnknownEngineError
from tokspec.formats.vocab import sha256_hex

__all__ = ["FORMAT", "GoldenMissError", "GoldenFileError", "GoldenEngine", "golden_lines", "load", "engines"]

FORMAT = "tokspec-golden/1"


class GoldenMissError(TokspecError, ValueError):
    """A text asked of ``golden:FILE`` that the file does not record."""


class GoldenFileError(TokspecError, ValueError):
    """A golden file that cannot be read (missing, not JSON Lines, wrong format, bad entry)."""


def golden_lines(engine: Encoder, texts: Iterable[str]) -> Iterable[str]:
    """The golden file of ``engine`` on ``texts``, line by line (module docstring). Each distinct
    text is encoded once; ``decode`` is recorded when the engine has one. O(total encode)."""
    from tokspec import __version__

    info = engine.info
    yield dumps({"format": FORMAT, "engine": info.name, "kind": info.kind, "library": info.library,
                 "library_version": info.library_version, "vocab_sha256": info.vocab_sha256,
                 "tokspec_version": __version__})
    decode = getattr(engine, "decode", None)
    seen: set[str] = set()
    for text in texts:
        if text in seen:
            continue
        seen.add(text)
        enc = engine.encode(text)
        entry: dict[str, Any] = {"text": text, "ids": None if enc.ids is None else list(enc.ids),
                                 "offsets": [list(span) for span in enc.offsets]}
        if callable(decode) and enc.ids is not None:
            entry["decode"] = decode(list(enc.ids))
        yield dumps(entry)


class GoldenEngine(Encoder):
    """Answers from a golden file (module docstring)."""

    def __init__(self, name: str, path: Path) -> None:
        try:
            raw = path.read_bytes()
            lines = [json.loads(line) for line in raw.decode("utf-8").splitlines() if line.strip()]
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise GoldenFileError(f"golden file path={str(path)!r} cannot be read: {exc}") from None
        if not lines or not isinstance(lines[0], dict) or lines[0].get("format") != FORMAT:
            raise GoldenFileError(f"golden file path={str(path)!r} does not start with a {FORMAT!r} header "
                                  "(write it with `tokspec encode ENGINE --inputs F --out FILE`)")
        self.header: dict[str, Any] = lines[0]
        self.entries: dict[str, Encoding] = {}
        self.decoded: dict[str, str] = {}
        for number, entry in enumerate(lines[1:], start=2):
            try:
                text = entry["text"]
                self.entries[text] = Encoding.of(entry["ids"], [tuple(s) for s in entry["offsets"]]).validate(
                    text, name)
            except (KeyError, TypeError, ValueError) as exc:
                raise GoldenFileError(f"golden file path={str(path)!r} line {number}: {exc}") from None
            if isinstance(entry.get("decode"), str):
                self.decoded[text] = entry["decode"]
        h = self.header
        self.info = EngineInfo(name, h.get("kind", "tokenizer"), f"golden file of {h.get('engine')}",
                               f"{h.get('library')} {h.get('library_version')}", h.get("vocab_sha256"),
                               f"{len(self.entries)} recorded outputs of {h.get('engine')} "
                               f"(file sha256 {sha256_hex(raw)[:12]})")

    def _encode(self, text: str) -> Encoding:
        try:
            return self.entries[text]
        except KeyError:
            raise GoldenMissError(f"{self.info.name}: text={text!r:.80} is not in the golden file "
                                  f"({len(self.entries)} texts); record it with `tokspec encode`") from None


def load(prefix: str, arg: str) -> Encoder:
    """``golden:FILE``."""
    path = Path(arg).expanduser()
    if prefix != "golden" or not path.is_file():
        raise UnknownEngineError(f"engine name={prefix + ':' + arg!r}: {arg!r} is not an existing golden file")
    return GoldenEngine(f"golden:{arg}", path)


def engines() -> list[tuple[str, str]]:
    return [("golden:FILE", "outputs recorded by `tokspec encode` (any engine, no library at test time)")]
