"""Deterministic replay of stored fuzz findings (the regression half of every counterexample).

:func:`replay_report` re-runs a report's minimized input through its target's check and says whether
the failure still reproduces. :func:`iter_stored_findings` walks ``corpora/fuzz/*/findings``. The
test suite replays them all (``tests/property/test_hyp_regressions.py``).

Out of scope: fixing findings; a finding whose status is ``"fixed"`` must *not* reproduce.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from tokspec.fuzz import _findings
from tokspec.fuzz.targets import Target, make_checker, target_by_name

__all__ = ["replay_report", "iter_stored_findings", "target_of"]


def target_of(report: dict[str, Any]) -> Target:
    """The target a report belongs to (a registered target, or a mutant)."""
    name = str(report["target"])
    if name.startswith("mutant--"):
        from tokspec.fuzz.mutants import mutant_target
        return mutant_target(name[len("mutant--"):])
    return target_by_name(name)


def replay_report(target: Target, report: dict[str, Any], check: Callable[[str], Any] | None = None) -> bool:
    """True if the report's failure reproduces now. Loads the target's engines (may be slow) unless
    ``check`` (``make_checker(target)``, made once for many reports) is given."""
    if target.kind == "hypothesis":
        from tokspec.fuzz import hyp_targets
        return not hyp_targets.check_example(target.properties[0], report["example"]).holds
    check = check or make_checker(target)
    return not check(report["text"]).holds


def iter_stored_findings(root: Path | None = None) -> Iterator[tuple[Path, dict[str, Any]]]:
    """(path, report) for every stored finding under ``corpora/fuzz/*/findings``."""
    import json
    base = root if root is not None else _findings.corpora_root()
    for path in sorted(base.glob("*/findings/*.json")):
        yield path, json.loads(path.read_text(encoding="utf-8"))
