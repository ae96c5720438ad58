"""The property stage of ``python -m tokspec.fuzz.run``: the deep-profile property tests, run before
fuzzing within a share of the run's budget (see :mod:`tokspec.fuzz.run`'s docstring).

:func:`property_stage` runs :data:`DEEP_PROPERTY_TESTS` under pytest (``-n jobs``), with
``$TOKSPEC_HYPOTHESIS_PROFILE`` (default ``deep``) and the example database
``$TOKSPEC_HYPOTHESIS_DB`` (default ``<cache>/hypothesis``), its output in
``<cache>/property-stage.log``, and stops it at its time. Out of scope: how many seconds the stage
gets (``tokspec.fuzz.run.plan_phases``).
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

from tokspec import _procs
from tokspec.fuzz import _findings
from tokspec.fuzz._schedule import PROGRESS_S, kill_group, spawn

__all__ = ["DEEP_PROPERTY_TESTS", "property_stage"]


#: The property tests run by the fuzz job with the deep hypothesis profile (tiny-vocabulary theorems
#: and the replay of stored findings; engine-level properties, and the merge cut theorems that load
#: real engines, are fuzzed by the harnesses above).
DEEP_PROPERTY_TESTS = ("tests/property/test_hyp_spec_tiny.py", "tests/property/test_hyp_regressions.py")


def property_stage(jobs: int, seconds: float) -> bool:
    """Run :data:`DEEP_PROPERTY_TESTS` under the deep profile for at most ``seconds``; True if a test
    FAILED. Skipped (with a message) when the tests are not under the current directory or no time
    is left; a stage stopped at its time is reported and does not count as a failure."""
    files = [f for f in DEEP_PROPERTY_TESTS if Path(f).is_file()]
    if not files:
        print("property stage skipped: run from the repository root to include tests/property")
        return False
    if seconds < 5:
        print(f"property stage skipped: {seconds:.0f} s left of the budget")
        return False
    env = dict(os.environ)
    env.setdefault("TOKSPEC_HYPOTHESIS_PROFILE", "deep")
    env.setdefault("TOKSPEC_HYPOTHESIS_DB", str(_findings.hypothesis_db_dir()))
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--import-mode=importlib",
           "-n", str(jobs), "-k", "not merge_claims", *files]
    print(f"property stage ({env['TOKSPEC_HYPOTHESIS_PROFILE']} profile, up to {seconds:.0f} s): "
          + " ".join(files), flush=True)
    t0 = time.monotonic()
    log = _findings.cache_root() / "property-stage.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    proc = spawn(cmd, log=log, env=env)
    while proc.poll() is None and time.monotonic() - t0 < seconds:
        time.sleep(min(PROGRESS_S, max(0.1, seconds - (time.monotonic() - t0))))
        if proc.poll() is None:
            print(f"property stage: {time.monotonic() - t0:.0f}/{seconds:.0f} s", flush=True)
    if proc.poll() is None:
        kill_group(proc, first=15, wait_s=3)
        print(f"property stage: out of time after {seconds:.0f} s (no failure seen); log {log}")
        return False
    _procs.stop(proc)
    text = log.read_text(encoding="utf-8", errors="replace").strip()
    print(text.splitlines()[-1] if text else "(no output)", f"({time.monotonic() - t0:.0f} s)")
    if proc.returncode not in (0, 5):
        print(text[-4000:])
    return proc.returncode not in (0, 5)
