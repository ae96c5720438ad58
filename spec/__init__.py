"""tokspec.spec: executable statements of what is true about tokenizers.

Each property is a predicate returning a :class:`Verdict` (holds or not, with an explanation and a
witness), with a docstring citing its source. Published statements are registered as
:class:`Claim` objects in :data:`CLAIMS` with a status (proved / checked / falsified); a published
statement found false stays, marked falsified, with its minimized counterexample.

Modules: ``bpe`` (definition, validity, the backtracking seed's corollaries, byte round trip),
``offsets`` (per-family offset invariants), ``pretok`` (regex definition, Peek2's Table 1),
``wordpiece`` (greedy longest match), ``unigram`` (Viterbi optimality by brute force), ``merge``
(engineer E: LoPT and merge losslessness). :func:`load_claims` imports them all.

Out of scope: proofs; verdicts are evidence about single inputs.
"""

from __future__ import annotations

import importlib

from tokspec.spec._verdict import CLAIMS as CLAIMS
from tokspec.spec._verdict import Claim as Claim
from tokspec.spec._verdict import Verdict as Verdict

__all__ = ["CLAIMS", "Claim", "Verdict", "SPEC_MODULES", "load_claims"]

SPEC_MODULES: tuple[str, ...] = ("bpe", "offsets", "pretok", "wordpiece", "unigram", "merge", "counting")


def load_claims() -> dict[str, Claim]:
    """Import every spec module (registering its claims) and return :data:`CLAIMS`.

    A module that is not written yet (ImportError of that module itself) is skipped; any other
    import error propagates.
    """
    for name in SPEC_MODULES:
        full = f"tokspec.spec.{name}"
        try:
            importlib.import_module(full)
        except ModuleNotFoundError as exc:
            if exc.name != full:
                raise
    return CLAIMS
