"""The fuzz runner's confirmation of new findings: a target's new reports are replayed together in
ONE fresh process (the engines load once there, never in the runner), and those that reproduce are
copied to the pending findings in the cache. O(reports) checks after one engine load.

Out of scope: hang reports (``tokspec.fuzz._hang_report``: replaying a hang would hang).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tokspec import _procs
from tokspec.fuzz import _findings
from tokspec.fuzz._schedule import TargetRun, kill_group, spawn

__all__ = ["replay_all", "store_new"]


def replay_all(paths: list[Path], target: str, timeout: float) -> dict[str, bool]:
    """Replay ``paths`` (reports of one target) in ONE fresh process, so the engines load once for all
    of them; returns ``{report id: reproduces}`` (a report not answered in time does not reproduce)."""
    if not paths:
        return {}
    folder = paths[0].parent
    proc = spawn([sys.executable, "-m", "tokspec.fuzz.harness", "--replay", str(folder), target], pipe_stdout=True)
    try:
        out, _ = proc.communicate(timeout=max(5.0, timeout))
    except subprocess.TimeoutExpired:
        kill_group(proc, first=15)
        return {}
    finally:
        _procs.stop(proc)
    lines = [json.loads(x) for x in out.splitlines() if x.startswith("{")]
    return {str(line["id"]): bool(line["reproduces"]) for line in lines}


def store_new(run: TargetRun, run_dir: Path, until: float, harness_name: str = "") -> list[str]:
    """Replay the target's new reports in one fresh process (until the monotonic time ``until``); keep
    those that reproduce as pending findings in the cache. Returns their ids."""
    safe = run.name.replace(":", "--")
    report_dir = run_dir / "reports" / safe
    reports = sorted(report_dir.glob("*.json")) if report_dir.is_dir() else []
    answers = replay_all(reports, harness_name or run.name, until - time.monotonic())
    confirmed = []
    for path in reports:
        report = json.loads(path.read_text(encoding="utf-8"))
        reproduces = answers.get(str(report.get("id", path.stem)), False)
        report["replayed"] = reproduces
        _findings.write_json_atomic(path, report)
        if reproduces:
            confirmed.append(path.stem)
            dest = _findings.pending_dir(safe) / path.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, dest)
    return confirmed
