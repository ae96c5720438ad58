"""Timeouts in ``tokspec diff --fuzz`` (and ``check_against``) as "superlinear cost" findings.

An engine call that times out (a ``cmd:`` engine's per-request ``timeout``: its fault message says
``hung (no reply within Ns)``) on a long text is usually not a hang but cost that grows faster than
the text (issue 24: a quadratic ``cmd:`` engine showed up as thirteen 10-second "hangs" in one run).
:func:`shrink_by_time` halves such a text (keeping its first half) while the call still times out;
when the smallest text that still times out has at least :data:`COST_MIN_CHARS` characters, the
finding is reclassified ``"superlinear cost"`` and keyed by the text source (:func:`cost_key`), so
it is reported once per source family, not once per input; a shorter one is an ordinary fault
(a true hang: the usual minimization takes over).

Cost: at most :data:`MAX_HALVINGS` comparisons, of which usually two time out (the text, and the
half of a quadratic cost, a quarter, passes). Out of scope: in-process Python engines (no time
limit applies to them; ``tokspec complexity`` measures them).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from tokspec._types import Encoder
from tokspec.diff import Comparison, compare

__all__ = ["CLASSIFICATION", "COST_MIN_CHARS", "MAX_HALVINGS", "TIMEOUT_MARK", "is_timeout",
           "shrink_by_time", "cost_key"]

CLASSIFICATION = "superlinear cost"
COST_MIN_CHARS = 1024
MAX_HALVINGS = 16
TIMEOUT_MARK = "hung (no reply within"


def is_timeout(c: Comparison) -> bool:
    """Did a side of ``c`` fault by timing out?"""
    return c.classification == "engine fault" and any(
        o.fault is not None and TIMEOUT_MARK in o.fault for o in (c.a, c.b))


def shrink_by_time(a: Encoder, b: Encoder, c: Comparison) -> Comparison:
    """The smallest first-half prefix of ``c.text`` (halving) whose comparison still times out;
    reclassified :data:`CLASSIFICATION` when it has at least :data:`COST_MIN_CHARS` characters."""
    small = c
    for _ in range(MAX_HALVINGS):
        if len(small.text) < 2:
            break
        half = compare(a, b, small.text[:len(small.text) // 2])
        if not is_timeout(half):
            break
        small = half
    if len(small.text) < COST_MIN_CHARS:
        return small
    return dataclasses.replace(small, classification=CLASSIFICATION)


def cost_key(c: Comparison, source: str) -> tuple[Any, ...]:
    """One "superlinear cost" finding per text source and side that timed out."""
    return (CLASSIFICATION, source, c.a.fault is None, c.b.fault is None)
