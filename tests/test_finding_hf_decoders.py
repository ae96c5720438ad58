"""Replay of corpora/production/hf_decoder_findings.json: HF decoder steps whose production behaviour
differs from their reading in tokspec.reference.decode (or panics), found while writing the fast
Unigram decoder (tokspec.fast.unigram_decode). Each finding stores a tiny tokenizer.json, the ids
and what tokenizers, the reference decoder and the fast decoder give; all three are replayed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tokenizers

from tokspec.fast.unigram_decode import decoder_or_none
from tokspec.reference.decode import HfDecoder

FINDINGS = Path(__file__).resolve().parent.parent / "corpora" / "production" / "hf_decoder_findings.json"
ALL = json.loads(FINDINGS.read_text(encoding="utf-8"))


def outcome(call: Any, ids: list[int]) -> dict[str, str]:
    try:
        return {"text": call(ids)}
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - pyo3's PanicException is a BaseException
        return {"error": type(exc).__name__}


@pytest.mark.parametrize("finding", ALL, ids=[f["id"] for f in ALL])
def test_hf_decoder_finding_replays(finding: dict[str, Any]) -> None:
    data, ids, stored = finding["tokenizer_json"], finding["ids"], finding["outputs"]
    assert finding["what"] and finding["libraries"]["tokenizers"]
    lib = tokenizers.Tokenizer.from_str(json.dumps(data))
    fast = decoder_or_none(data)
    assert fast is not None
    got = {"tokenizers": outcome(lambda i: lib.decode(i, skip_special_tokens=False), ids),
           "reference": outcome(HfDecoder(data), ids), "fast": outcome(fast.decode, ids)}
    assert got == stored
    assert got["reference"] != got["tokenizers"]  # still a disagreement (update the file when fixed)
    if "text" in got["tokenizers"]:
        assert got["fast"] == got["tokenizers"]  # the fast decoder follows production
