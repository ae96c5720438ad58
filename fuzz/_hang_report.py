"""The fuzz runner's record of hangs: one report per hung target, its input minimized by time.

For every run that ended in a libFuzzer timeout (``TargetRun.hang``), :func:`record_hangs` shrinks
the hanging input with :func:`tokspec.fuzz._hangs.minimize_hang` within a bounded budget
(``$TOKSPEC_FUZZ_HANG_SECONDS``, else what is left before the property stage, at most
:data:`HANG_BUDGET_S`), writes ``<run>/hangs/<target>/hang-<id>.json`` atomically (first the raw
input, then the minimized one replaces it), and notes the size on the run ("hung: not run again").

Hang reports stay in the run's folder: they are not pending findings, since replaying a hang as a
regression test would hang the suite (promote one by hand, with the per-call timeout it needs).

Out of scope: hypothesis targets' hangs are recorded as libFuzzer wrote them (their bytes are not text).
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from tokspec.fuzz import _findings
from tokspec.fuzz._hangs import call_timeout, minimize_hang

__all__ = ["HANG_BUDGET_S", "record_hangs"]

HANG_BUDGET_S = 30.0


def _budget(until: float) -> float:
    raw = os.environ.get("TOKSPEC_FUZZ_HANG_SECONDS", "")
    return float(raw) if raw else min(HANG_BUDGET_S, max(0.0, until - time.monotonic()))


def record_hangs(runs: list[Any], run_dir: Path, harness: dict[str, str], until: float) -> dict[str, list[str]]:
    """``{target: [hang report id]}`` for every hung run (at most one per target)."""
    from tokspec.fuzz.targets import target_by_name, text_for
    out: dict[str, list[str]] = {}
    timeout = call_timeout()
    for run in runs:
        if run.hang is None:
            continue
        data = run.hang.read_bytes()
        name = harness.get(run.name, run.name)
        is_text = not run.name.startswith("hyp--")
        body: dict[str, Any] = {"target": run.name, "kind": "hang", "harness_target": name,
                                "call_timeout_s": timeout, "original_hex": data.hex(), "status": "open",
                                "explanation": f"hang: one call took longer than {timeout:g} s"}
        fid = "hang-" + _findings.finding_id(data.hex())
        path = run_dir / "hangs" / run.name.replace(":", "--") / f"{fid}.json"
        _findings.write_json_atomic(path, {"id": fid, **body, "minimized": False})  # the raw input first
        small, calls = data, 0
        budget = _budget(until)
        if is_text and budget > timeout:
            small, calls = minimize_hang(name, data, timeout=timeout, budget_s=budget)
        mid = "hang-" + _findings.finding_id(small.hex())
        report = {"id": mid, **body, "minimized": small != data, "minimized_by": "time",
                  "minimize_calls": calls, "data_hex": small.hex()}
        if is_text:
            report["text"] = text_for(target_by_name(name), small)  # under the target's caps, as it ran
        _findings.write_json_atomic(path.with_name(f"{mid}.json"), report)
        if mid != fid:
            path.unlink(missing_ok=True)
        run.note = (f"hung: not run again (input {len(data)} -> {len(small)} bytes; "
                    f"{path.with_name(mid + '.json').relative_to(run_dir)})")
        out[run.name] = [mid]
    return out
