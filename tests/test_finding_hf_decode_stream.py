"""Replay of corpora/production/hf_decode_stream_findings.json: HF ``DecodeStream`` withholds the
complete characters decoded in the same step as an incomplete one, so a sequence that ends there
loses them (property S2 of :mod:`tokspec.streaming`). The reference byte-level stream emits them.

:func:`_stream_findings.withheld_before_incomplete` names the finding's class; ``tests/test_streaming.py`` accepts
a violation of exactly that class (and no other) from the library, as a known finding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import tokenizers

from tokspec.reference.bpe_hf import bytes_to_unicode
from tokspec.streaming import ByteLevelStream, StreamViolation, check_stream, hf_stream_factory

from _stream_findings import withheld_before_incomplete

FINDINGS = Path(__file__).resolve().parent.parent / "corpora" / "production" / "hf_decode_stream_findings.json"
ALL = json.loads(FINDINGS.read_text(encoding="utf-8"))


def _cases() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(f, c) for f in ALL for c in f["cases"]]


@pytest.mark.parametrize(("finding", "case"), _cases(), ids=lambda x: str(x.get("ids", x.get("id"))))
def test_decode_stream_finding_replays(finding: dict[str, Any], case: dict[str, Any]) -> None:
    data, ids = finding["tokenizer_json"], case["ids"]
    tok = tokenizers.Tokenizer.from_str(json.dumps(data))
    decode = lambda x: tok.decode(x, skip_special_tokens=False)  # noqa: E731
    assert decode(ids) == case["full_decode"]
    u2b = {u: b for b, u in bytes_to_unicode().items()}
    token_bytes = {i: bytes(u2b[c] for c in t) for t, i in data["model"]["vocab"].items()}
    reference = ByteLevelStream(token_bytes.__getitem__)
    assert [reference.step(i) for i in ids] == case["reference_chunks"]
    assert check_stream(lambda: ByteLevelStream(token_bytes.__getitem__), decode, ids)[0] is None
    make = hf_stream_factory(tok)
    assert make is not None
    stream = make()
    assert [stream.step(i) for i in ids] == case["library_chunks"], \
        f"tokenizers {tokenizers.__version__} streams this differently now: update the finding's status"
    violation = check_stream(make, decode, ids)[0]
    assert violation is not None and violation.rule == case["library_violation"]
    assert withheld_before_incomplete(violation)


def test_the_class_is_narrow() -> None:
    """Only an S2 tail with complete text before a final U+FFFD is the finding's class."""
    full = "A\u200d\ufffd"
    assert withheld_before_incomplete(StreamViolation("S2", (1,), 0, "A", full))
    assert not withheld_before_incomplete(StreamViolation("S1", (1,), 0, "A", full))
    assert not withheld_before_incomplete(StreamViolation("S2", (1,), 0, "B", full))        # not a prefix
    assert not withheld_before_incomplete(StreamViolation("S2", (1,), 0, "A", "A\u200d"))   # no U+FFFD end
    assert not withheld_before_incomplete(StreamViolation("S2", (1,), 0, "A", "A\ufffd\ufffd"))
    assert not withheld_before_incomplete(None)
