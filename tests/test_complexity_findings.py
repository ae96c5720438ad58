"""Replays the "superlinear cost" findings about production libraries in ``corpora/complexity/``.

Each file is a ``tokspec complexity`` record, named by library and version (``tiktoken-0.14.0.json``:
tiktoken's cost on one long piece, issue 24). The fast test checks the record and that the finding
is about cost only: the witness text, regenerated from (family, size, seed), encodes to the same
ids and offsets in the library and in bpe-openai (a linear encoder, theorem C1). The ``slow`` test
re-measures the family and goes through :func:`tokspec.versions.check_finding` (the recorded
version must still be flagged; another version's result is news).
"""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import pytest

from tokspec import load_engine
from tokspec.app import complexity as C
from tokspec.app.complexity_families import FAMILIES, family_text
from tokspec.spec.complexity import SUPERLINEAR
from tokspec.versions import check_finding, installed

FOLDER = Path(__file__).resolve().parents[1] / "corpora" / "complexity"
RECORDS = sorted(FOLDER.glob("*.json"))


def test_there_are_findings() -> None:
    assert RECORDS, f"no records in {FOLDER}"


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_record_is_a_flagged_finding_about_cost_only(path: Path) -> None:
    rec = json.loads(path.read_text(encoding="utf-8"))
    library, version = path.stem.rsplit("-", 1)
    assert rec["classification"] == "superlinear cost" and rec["engine"]["library"] == library
    assert rec["engine"]["library_version"] == version and rec["family"] in FAMILIES
    assert rec["exponent"] > SUPERLINEAR == rec["threshold"]
    sizes = [n for n, _ in rec["table"]]
    assert sizes == sorted(sizes) and rec["witness"]["chars"] in sizes
    # the recorded release: its witness; another release's cost may differ (tiktoken 0.9.0 is
    # quadratic on vocab-pieces: 0.33, 1.35, 5.55 s at 32K, 64K, 128K characters, minutes on this
    # 1M witness), so there "right, only slow" is checked at the table's smallest size
    chars = rec["witness"]["chars"] if installed(library) == version else sizes[0]
    text = family_text(rec["family"], chars, rec["seed"])
    engine, linear = load_engine(rec["engine"]["name"]), load_engine("bpe-openai:cl100k_base")
    assert engine.encode_arrays(text).same_as(linear.encode_arrays(text))  # right, only slow


@pytest.mark.slow
@pytest.mark.parametrize("path", RECORDS, ids=lambda p: p.stem)
def test_finding_still_measured(path: Path, tmp_path: Path) -> None:
    rec = json.loads(path.read_text(encoding="utf-8"))
    parser = argparse.ArgumentParser()
    C.add_arguments(parser)
    args = parser.parse_args([rec["engine"]["name"], "--family", rec["family"], "--time", "60", "--quiet",
                              "--report", str(tmp_path)])
    code = C.run(args, out=io.StringIO(), err=io.StringIO())
    check_finding(f"superlinear cost: {path.stem} {rec['family']}", rec["engine"]["library"], code == 1)
