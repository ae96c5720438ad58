"""The class of finding hf-decode-stream-withholds-complete-text (corpora/production/
hf_decode_stream_findings.json), shared by its replay and by the streaming property test."""

from __future__ import annotations

from tokspec.streaming import StreamViolation


def withheld_before_incomplete(violation: StreamViolation | None) -> bool:
    """The finding's class: an S2 violation whose unemitted tail ends in U+FFFD (an incomplete
    character at the end of the sequence) and holds complete text before it (which the library
    should have emitted), while everything emitted is a prefix of the whole decode."""
    if violation is None or violation.rule != "S2" or not violation.full.startswith(violation.emitted):
        return False
    tail = violation.full[len(violation.emitted):]
    return tail.endswith("\ufffd") and bool(tail.strip("\ufffd"))
