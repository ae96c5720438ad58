"""Replay of the disagreements ``tokspec diff`` found between real engines (``corpora/diff/*.json``).

Each file is a counterexample record (see ``tokspec.diff``) written by ``--save-corpus``, plus:

- ``"status"``: ``"open"`` (a bug not fixed yet: the engines must still disagree exactly as stored,
  so a fix shows up here and the status is flipped by hand), ``"fixed"`` (the engines must now
  agree), or ``"expected"`` (a documented, intended difference, e.g. two different vocabularies);
- ``"note"``: what the finding is and who owns it.

An engine that is not installed here is a test error, not a skip: the corpus names only engines
tokspec itself provides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tokspec import load_engine
from tokspec.diff import compare
from tokspec.records import record_output

CORPUS = Path(__file__).resolve().parent.parent / "corpora" / "diff"
RECORDS = sorted(CORPUS.glob("*.json"))


def _load(path: Path) -> dict[str, Any]:
    record: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return record


def test_corpus_is_not_empty_and_well_formed() -> None:
    assert RECORDS, f"no records in {CORPUS}"
    for path in RECORDS:
        record = _load(path)
        assert record["status"] in ("open", "fixed", "expected"), path
        assert record["note"], path
        if "text_utf8_hex" in record:  # version 2 records of long texts store the text once
            assert bytes.fromhex(record["text_utf8_hex"]).decode("utf-8") == record["text"], path



@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_replay(path: Path) -> None:
    record = _load(path)
    a, b = (load_engine(e["name"]) for e in record["engines"])
    c = compare(a, b, record["text"])
    if record["status"] == "fixed":
        assert c.agree, f"{path.name}: fixed finding is back: {c.classification}"
        return
    assert c.classification == record["classification"], (
        f"{path.name}: engines now give {c.classification!r}; if the bug was fixed, set status 'fixed'")
    for side, outcome in (("a", c.a), ("b", c.b)):
        stored = record_output(record, side)  # either record version (tokspec.records)
        if outcome.arrays is None:
            assert stored is None
        else:
            assert stored is not None and stored.same_as(outcome.arrays), f"{path.name}: engine {side} output changed"
