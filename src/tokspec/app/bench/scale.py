"""Suite ``scale``: using every core. ``tokspec diff --workers 2`` against ``--workers 1``, and the fuzz
runner's executions with 2 jobs against 1 job in the same wall-clock budget.

- ``diff``: the slow pair ``reference:bert-base-uncased`` vs ``hf:bert-base-uncased`` on the large
  generated corpus (``tokspec corpus --size large``, quick: the small one), each run a fresh
  ``tokspec diff`` process (start-up and engine loading included: what a user waits for). Runs are
  interleaved (1, 2, 1, 2, ...) and the best of each is kept; the case says whether the two runs'
  ``--json`` summaries (minus ``seconds``) and record files were identical.
- ``fuzz``: ``python -m tokspec.fuzz.run`` on two light targets with ``--jobs 1`` and ``--jobs 2`` and
  the same ``--seconds``; the row's "seconds" are budget / total executions, so the ratio is the
  ratio of executions (above 1: more executions with 2 jobs). Interleaved, best of each.

Ratios are honest for this machine: with 2 cores the ceiling is 2x, and other load lowers it.
Out of scope: Dask clusters (measured where they run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tokspec.app.bench import BenchRow
from tokspec.corpus import build_corpus, write_inputs

__all__ = ["run"]

_PAIR = ("reference:bert-base-uncased", "hf:bert-base-uncased")
_FUZZ_TARGETS = ("hyp--bpe_reference_tiny", "hyp--peek2_table")


def _diff_once(inputs: Path, workers: int, report: Path) -> tuple[float, str, dict[str, bytes]]:
    t0 = time.perf_counter()
    shutil.rmtree(report, ignore_errors=True)  # one folder name: records hold their own path
    out = subprocess.run([sys.executable, "-m", "tokspec", "diff", *_PAIR, "--inputs", str(inputs),
                          "--json", "--quiet", "--workers", str(workers), "--report", str(report)],
                         capture_output=True, text=True, timeout=3600)
    seconds = time.perf_counter() - t0
    summary = re.sub(r'"seconds": [0-9.]+', '"seconds": 0', out.stdout)
    records = {p.name: p.read_bytes() for p in sorted(report.glob("*.json"))} if report.is_dir() else {}
    return seconds, summary, records


def _diff_row(quick: bool, tmp: Path) -> BenchRow:
    inputs = tmp / "inputs.jsonl"
    write_inputs(inputs, build_corpus(seed=7, size="small" if quick else "large"))
    best = {1: float("inf"), 2: float("inf")}
    outputs: dict[int, tuple[str, dict[str, bytes]]] = {}
    for _ in range(2 if quick else 3):
        for workers in (1, 2):
            seconds, summary, records = _diff_once(inputs, workers, tmp / "reports")
            best[workers] = min(best[workers], seconds)
            outputs[workers] = (summary, records)
    same = "identical" if outputs[1] == outputs[2] and outputs[1][0] else "DIFFERS"
    return BenchRow("scale", f"diff bert {inputs.stat().st_size // 1000}kB {same}",
                    "diff --workers 2", "diff --workers 1", inputs.stat().st_size, best[2], best[1])


def _fuzz_execs(jobs: int, seconds: int, tmp: Path) -> int:
    env = dict(os.environ, TOKSPEC_CACHE=str(tmp / f"cache-{jobs}"))
    out = subprocess.run([sys.executable, "-m", "tokspec.fuzz.run", "--seconds", str(seconds), "--property-seconds",
                          "0", "--jobs", str(jobs), "--targets", *_FUZZ_TARGETS], capture_output=True, text=True,
                         env=env, timeout=seconds * 3 + 60)
    total = 0
    for line in out.stdout.splitlines():
        fields = line.split()
        if fields and fields[0] in _FUZZ_TARGETS and len(fields) > 1 and fields[1].isdigit():
            total += int(fields[1])
    return total


def _fuzz_row(quick: bool, tmp: Path) -> BenchRow:
    seconds = 20 if quick else 60
    best = {1: 0, 2: 0}
    for _ in range(1 if quick else 2):
        for jobs in (1, 2):
            best[jobs] = max(best[jobs], _fuzz_execs(jobs, seconds, tmp))
    return BenchRow("scale", f"fuzz {seconds}s execs {best[1]}->{best[2]}",
                    "fuzz.run --jobs 2", "fuzz.run --jobs 1", 0,
                    seconds / max(1, best[2]), seconds / max(1, best[1]))


def run(*, quick: bool) -> list[BenchRow]:
    """The two rows of the module docstring."""
    with tempfile.TemporaryDirectory(prefix="tokspec-bench-scale-") as tmp:
        return [_diff_row(quick, Path(tmp)), _fuzz_row(quick, Path(tmp))]


if __name__ == "__main__":  # pragma: no cover - manual use
    for row in run(quick="--quick" in sys.argv):
        print(json.dumps(row.as_dict()))
