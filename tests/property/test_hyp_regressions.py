"""Replay every stored fuzz finding (``corpora/fuzz/*/findings/*.json``) deterministically.

A finding with status ``"open"`` must still reproduce, and for two-engine findings both engines
must still give exactly the stored outputs (so the record stays true); a ``"fixed"`` one must not
reproduce. When an engine's owner fixes a bug, this test fails until the record says "fixed".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tokspec.fuzz import _findings
from tokspec.fuzz.replay import iter_stored_findings, replay_report, target_of
from tokspec.fuzz.targets import _engine, run_engine

ROOT = Path(__file__).resolve().parents[2] / "corpora" / "fuzz"
FINDINGS = list(iter_stored_findings(ROOT))


def test_findings_are_well_formed() -> None:
    for path, report in FINDINGS:
        assert report["id"] == path.stem and report["status"] in ("open", "fixed"), path
        payload = report.get("text", report.get("example"))
        assert payload is not None and _findings.finding_id(payload) == report["id"], path


@pytest.mark.parametrize("path,report", FINDINGS, ids=[p.parent.parent.name + "/" + p.stem for p, _ in FINDINGS])
def test_replay_finding(path: Path, report: dict[str, Any]) -> None:
    target = target_of(report)
    reproduces = replay_report(target, report)
    assert reproduces == (report["status"] == "open"), f"{path}: reproduces={reproduces}"
    outputs = (report.get("witness") or {}).get("outputs")
    if report["status"] == "open" and outputs:
        for name, stored in outputs.items():
            assert run_engine(_engine(name), report["text"]) == stored, f"{path}: {name} output changed"


def test_falsified_claim_records_replay() -> None:
    """``corpora/fuzz/claims/*.json``: counterexamples to published/stated claims, with the outputs
    of the engines involved, recomputed here."""
    import json

    import tiktoken

    from tokspec.fuzz.targets import _engine, run_engine
    from tokspec.spec import bpe
    mono = json.loads((ROOT / "claims" / "offsets.normalizing_monotone.json").read_text())
    for name, stored in mono["outputs"].items():
        assert run_engine(_engine(name), mono["text"]) == stored, name
    short = json.loads((ROOT / "claims" / "bpe.whole_piece_shortcut.json").read_text())
    ranks = {bytes.fromhex(k): r for k, r in short["ranks"].items()}
    inv = {r: t for t, r in ranks.items()}
    enc = tiktoken.Encoding("tiny", pat_str=r"(?s).+", mergeable_ranks=ranks, special_tokens={})
    data = bytes.fromhex(short["data_hex"])
    assert [inv[i].hex() for i in enc.encode_ordinary(data.decode())] == short["outputs"]["tiktoken"]
    assert [t.hex() for t in bpe.bpe_encode(ranks, data)] == \
        short["outputs"]["bpe definition (tokspec.spec.bpe.bpe_encode)"]
