"""Which fuzz targets a run actually covered, and the run's last line.

A target counts as covered only if its harness executed at least :data:`MIN_EXECS` inputs. A target
skipped (unavailable), deferred (no budget left) or starved (fewer executions: e.g. one target on 2
inputs while others ran hundreds) or ended abnormally (a harness exit code that is neither success
nor a finding, e.g. libFuzzer's out-of-memory exit 71) is listed as NOT covered, and the last line then never reads as an
all-clear: "0 new finding(s)" is followed by the targets it does not speak for. O(targets).

Out of scope: judging coverage depth (libFuzzer's ``cov`` counts are in the table above it).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

__all__ = ["MIN_EXECS", "not_covered", "verdict_line"]

#: Fewer executed inputs than this and a target's silence means nothing.
MIN_EXECS = 1000


def not_covered(runs: Iterable[Any], skipped: Iterable[tuple[str, str]] = (),
                deferred: Iterable[str] = (), *, min_execs: int = MIN_EXECS) -> list[tuple[str, str]]:
    """``(target, reason)`` for every target the run does not speak for, in the order given."""
    out = [(name, reason) for name, reason in skipped]
    out += [(name, "deferred: no budget left") for name in deferred]
    for run in runs:
        execs = int(run.stats.get("number_of_executed_units", 0))
        if run.note.startswith(("deferred", "hung")):
            out.append((run.name, run.note))
        elif run.note.startswith("exit"):  # ended abnormally (e.g. libFuzzer's out-of-memory exit 71)
            out.append((run.name, f"{run.note} after {execs} inputs"))
        elif execs < min_execs and not run.findings:
            out.append((run.name, f"starved: {execs} inputs executed (< {min_execs})"))
    return out


def verdict_line(total_new: int, total_targets: int, missing: list[tuple[str, str]]) -> str:
    """The run's summary: new findings, and either "all N targets covered" or the uncovered ones."""
    head = f"{total_new} new finding(s)"
    if not missing:
        return f"{head}; all {total_targets} targets covered (>= {MIN_EXECS} inputs each)"
    listed = "; ".join(f"{name} ({reason})" for name, reason in missing)
    return (f"{head} -- NOT an all-clear: {len(missing)} of {total_targets} targets NOT covered: {listed}")
