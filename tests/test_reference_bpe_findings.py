"""Replay every finding in corpora/reference-bpe/findings (made by make_findings.py there).

For each record: the two engines still disagree on the stored text, in the same class; each side
still produces the stored output (so a library upgrade that changes behaviour fails here and the
finding gets re-examined); and each ``reproduced_by`` reference engine reproduces its side exactly,
which is how the references are configurable to follow either library.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import tokspec
from tokspec.diff import compare
from tokspec.records import record_output

HERE = Path(__file__).resolve().parent.parent / "corpora" / "reference-bpe"
RECORDS = sorted((HERE / "findings").glob("*.json"))


def _name(name: str) -> str:
    return name.replace("{dir}", str(HERE))


def _output(engine: tokspec.Encoder, text: str) -> dict[str, Any]:
    try:
        enc = engine.encode(text)
    except Exception as exc:  # noqa: BLE001 - a fault is part of what the record stores
        return {"fault": f"{type(exc).__name__}: {exc}"}
    return {"ids": None if enc.ids is None else list(enc.ids), "offsets": [list(s) for s in enc.offsets]}


def _stored(record: dict[str, Any], side: str) -> dict[str, Any]:
    """The stored output of ``side`` in :func:`_output`'s form (records of either version)."""
    arrays = record_output(record, side)
    if arrays is None:
        return {"fault": record["outputs"][side]["fault"]}
    encoding = arrays.to_encoding()
    return {"ids": None if encoding.ids is None else list(encoding.ids),
            "offsets": [list(s) for s in encoding.offsets]}


def test_there_are_findings() -> None:
    assert len(RECORDS) >= 8


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_finding_still_reproduces(path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    text = record["text"]
    assert text.encode("utf-8").hex() == record["text_utf8_hex"]
    a, b = (tokspec.load_engine(_name(n)) for n in record["engine_names"])
    comparison = compare(a, b, text)
    assert not comparison.agree
    assert comparison.classification == record["classification"]
    for side, engine in (("a", a), ("b", b)):
        stored = _stored(record, side)
        got = _output(engine, text)
        assert ("fault" in got) == ("fault" in stored), (side, got)
        if "fault" not in stored:
            assert got == stored, side


@pytest.mark.parametrize("path", RECORDS, ids=[p.stem for p in RECORDS])
def test_reference_reproduces_each_side(path: Path) -> None:
    record = json.loads(path.read_text(encoding="utf-8"))
    reproducers = {side: n for side, n in record["reproduced_by"].items() if n is not None}
    assert reproducers, "every finding names at least one reference that reproduces a side"
    for side, name in reproducers.items():
        assert _output(tokspec.load_engine(_name(name)), record["text"]) == _stored(record, side), side
