"""Replay of corpora/production/hf-unigram-matched-unk-pieces-fused.json: HF's Unigram fuses two
matched ``<unk>`` pieces into one unknown run and byte-falls back; tokspec's reference and fast
Unigram engines keep them as two ids 0 (explanation in the record)."""

from __future__ import annotations

import json
from pathlib import Path

from tokspec import load_engine

RECORD = Path(__file__).resolve().parent.parent / "corpora" / "production" / "hf-unigram-matched-unk-pieces-fused.json"


def test_matched_unk_pieces_replay() -> None:
    record = json.loads(RECORD.read_text(encoding="utf-8"))
    assert record["explanation"] and record["finding"]
    text, (a, b) = record["text"], record["provenance"]["engines_typed"]
    assert (a, b) == ("fast:mon-unigram", "hf:mon-unigram")
    fast, hf, ref = load_engine(a), load_engine(b), load_engine("reference:mon-unigram")
    assert list(fast.encode(text).ids) == record["outputs"]["a"]["ids"] == list(ref.encode(text).ids) == [4, 0, 0]
    assert list(hf.encode(text).ids) == record["outputs"]["b"]["ids"]
    assert list(hf.encode("<unk>").ids) == list(fast.encode("<unk>").ids) == [4, 0]  # one match: no fusion
