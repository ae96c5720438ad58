"""Mistral's tekken tokenizer files (``tekken_*.json`` of ``mistral-common``), read and checked.

A tekken file is byte-level BPE in tiktoken's form: ``vocab`` lists ``{"rank", "token_bytes"
(base64), "token_str"}`` with ``rank == position``; ``config`` gives the split ``pattern``,
``default_vocab_size`` and ``default_num_special_tokens``. mistral-common keeps the first
``default_vocab_size - default_num_special_tokens`` ranks as mergeable tokens and reports every
ordinary token as ``rank + default_num_special_tokens`` (the special tokens take ids below that).

:func:`load_tekken` returns those ranks already shifted, so a token's rank IS its id, and min-rank
BPE on them is mistral-common's (a constant shift keeps the merge order). Invariants (checked):
ranks are consecutive from 0; every single byte is a token; the kept vocabulary is not larger
than the file's. Out of scope: special tokens (never matched in text; tokspec treats all text as
ordinary), image and audio sections.
"""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokspec.errors import VocabularyError
from tokspec.formats.vocab import read_verified

__all__ = ["TekkenFile", "is_tekken_data", "load_tekken"]


@dataclass(frozen=True)
class TekkenFile:
    """A loaded tekken file: ``ranks[token_bytes] == id`` (already shifted), the pattern and the
    number of special ids below the ordinary ones."""

    path: str
    sha256: str
    ranks: dict[bytes, int]
    pattern: str
    num_special: int
    version: str


def is_tekken_data(data: Any) -> bool:
    """Is this parsed JSON a tekken file (``config`` with a ``pattern`` and a ``vocab`` list)?"""
    return (isinstance(data, dict) and isinstance(data.get("config"), dict)
            and "pattern" in data["config"] and isinstance(data.get("vocab"), list))


def load_tekken(path: str | Path, expected_sha256: str | None = None) -> TekkenFile:
    """Load and check a tekken file. O(vocab). Raises VocabularyError naming the file."""
    raw, digest = read_verified(path, expected_sha256)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabularyError(f"{str(path)!r} is not a JSON file: {exc}") from exc
    if not is_tekken_data(data):
        raise VocabularyError(f"{str(path)!r} is not a tekken file (needs config.pattern and a vocab list)")
    config = data["config"]
    try:
        num_special = int(config["default_num_special_tokens"])
        kept = int(config["default_vocab_size"]) - num_special
    except (KeyError, TypeError, ValueError) as exc:
        raise VocabularyError(f"{str(path)!r}: config needs integer default_vocab_size and "
                              f"default_num_special_tokens: {exc}") from exc
    if not 256 <= kept <= len(data["vocab"]):
        raise VocabularyError(f"{str(path)!r}: keeps {kept} tokens, the vocab lists {len(data['vocab'])}")
    ranks: dict[bytes, int] = {}
    for i, entry in enumerate(data["vocab"][:kept]):
        try:
            token = base64.b64decode(entry["token_bytes"], validate=True)
        except (KeyError, TypeError, binascii.Error) as exc:
            raise VocabularyError(f"{str(path)!r}: vocab[{i}] has no valid token_bytes: {exc}") from exc
        if entry.get("rank") != i or token in ranks:
            raise VocabularyError(f"{str(path)!r}: vocab[{i}] has rank {entry.get('rank')!r} or repeats a token")
        ranks[token] = i + num_special
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise VocabularyError(f"{str(path)!r}: single bytes {missing[:5]} are not tokens")
    return TekkenFile(str(path), digest, ranks, str(config["pattern"]), num_special, str(config.get("version")))
