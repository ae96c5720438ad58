"""Verdicts and claims: the vocabulary every spec/ module uses.

A *property* is a plain function returning a :class:`Verdict`. A *claim* is a published statement
(seed file + section) paired with the property that checks it and its status:

- ``"proved"``: holds by an argument written in the property's docstring, and is checked anyway;
- ``"checked"``: believed true, checked by tests and fuzzing only;
- ``"falsified"``: a counterexample is known; the claim stays, with the witness, so the statement
  and its refutation live side by side (a test replays the witness and expects ``holds=False``).

Out of scope: proof objects; a Verdict is evidence about one input, never a proof for all inputs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["Verdict", "Claim", "Status", "holds", "fails", "all_of", "CLAIMS", "register"]

Status = Literal["proved", "checked", "falsified"]


@dataclass(frozen=True)
class Verdict:
    """Outcome of checking one property on one input.

    ``holds`` is the answer; ``explanation`` says why in one or two sentences (always non-empty);
    ``witness`` is a JSON-able dict describing the input and both sides when ``holds`` is False.
    ``bool(verdict)`` is ``holds``.
    """

    holds: bool
    explanation: str
    witness: dict[str, Any] | None = field(default=None, compare=False)

    def __bool__(self) -> bool:
        return self.holds


def holds(explanation: str) -> Verdict:
    """A passing verdict."""
    return Verdict(True, explanation)


def fails(explanation: str, **witness: Any) -> Verdict:
    """A failing verdict with the witness fields given as keywords."""
    return Verdict(False, explanation, dict(witness))


def all_of(verdicts: list[Verdict], what: str) -> Verdict:
    """The first failing verdict, else a passing one summarising ``len(verdicts)`` checks. O(n)."""
    for v in verdicts:
        if not v.holds:
            return v
    return holds(f"{what}: all {len(verdicts)} checks hold")


@dataclass(frozen=True)
class Claim:
    """A published statement, where it is published, and the property that checks it.

    ``counterexample`` (for falsified claims) holds the minimized witness as keyword arguments of
    ``check``, so ``check(**counterexample)`` replays it.
    """

    name: str
    source: str
    statement: str
    status: Status
    check: Callable[..., Verdict]
    counterexample: dict[str, Any] | None = None


#: name -> Claim, filled by the spec modules at import time (see :func:`register`).
CLAIMS: dict[str, Claim] = {}


def register(claim: Claim) -> Claim:
    """Add ``claim`` to :data:`CLAIMS`; a duplicate name is a programming error."""
    assert claim.name not in CLAIMS, f"duplicate claim {claim.name}"
    assert claim.status != "falsified" or claim.counterexample is not None, claim.name
    CLAIMS[claim.name] = claim
    return claim
