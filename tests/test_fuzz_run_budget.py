"""The fuzz runner keeps its wall-clock budget (property stage included), shows progress every few
seconds, explains its table, and leaves ``corpora/`` untouched until ``--promote``."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

from tokspec.fuzz import _findings
from tokspec.fuzz.run import LEGEND, plan_phases

REPO = Path(__file__).resolve().parents[1]
TARGET = "hyp--bpe_reference_tiny"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_plan_phases_fit_the_budget() -> None:
    for total, prop in [(60, 180), (480, 180), (30, 0), (2000, 180)]:
        fuzz, replay, stage = plan_phases(total, prop)
        assert fuzz + replay + stage == total and fuzz >= total / 2 and stage <= min(prop, total / 4)


def test_budget_progress_legend_clean_tree_and_promote(tmp_path: Path) -> None:
    corpora = tmp_path / "corpora" / "fuzz"
    seeds = corpora / TARGET / "corpus"
    seeds.mkdir(parents=True)
    for p in sorted((REPO / "corpora" / "fuzz" / TARGET / "corpus").iterdir())[:3]:  # few: coverage grows
        shutil.copyfile(p, seeds / p.name)
    before = _tree(corpora)
    env = dict(os.environ, TOKSPEC_FUZZ_CORPORA=str(corpora), TOKSPEC_CACHE=str(tmp_path / "cache"),
               TOKSPEC_FUZZ_SECONDS="24")
    git_before = subprocess.run(["git", "status", "--porcelain", "corpora"], cwd=REPO, capture_output=True,
                                text=True).stdout if (REPO / ".git").exists() else ""
    t0 = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "tokspec.fuzz.run", "--targets", TARGET, "--jobs", "2"],
                            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    stamps, lines = [t0], []
    for line in proc.stdout:
        stamps.append(time.monotonic())
        lines.append(line.rstrip("\n"))
    proc.wait()
    out = "\n".join(lines)
    assert proc.returncode in (0, 1), out
    # The budget runs from the runner's start, which its first line follows at once: the time
    # before it is the interpreter starting and importing, which a loaded machine stretches (21 s of
    # a 40 s wall time in tox -e lowest next to two other suites, the runner itself 19 s), so it is
    # measured from there to the last line (the "fuzz run: N s of a 24 s budget" line).
    startup, elapsed = stamps[1] - t0, stamps[-1] - stamps[1]
    assert elapsed <= 24 * 1.1, (elapsed, startup, out)  # the promise: within 10%, property stage included
    # and the budget is used: the stage's rest goes to fuzzing. The old scheduler ended at 13.3 s
    # (start-up included); the new one 19-22 s (19.2 s with four other jobs on 2 cores, when a
    # target's start-up ran past its estimate and nothing fit in the rest): 0.75 keeps the test
    # about the scheduler, not the load
    assert elapsed >= 24 * 0.75, (elapsed, startup, out)
    assert "property stage" in out and LEGEND in out
    assert max(b - a for a, b in zip(stamps[1:], stamps[2:])) <= 7.0, out  # progress every ~5 s
    assert _tree(corpora) == before  # nothing written into corpora/ by a fuzz run
    if git_before or (REPO / ".git").exists():
        assert subprocess.run(["git", "status", "--porcelain", "corpora"], cwd=REPO, capture_output=True,
                              text=True).stdout == git_before
    grown = tmp_path / "cache" / "fuzz" / "corpus" / TARGET
    assert any(grown.iterdir()), "libFuzzer wrote its new inputs into the cache corpus"
    promoted = subprocess.run([sys.executable, "-m", "tokspec.fuzz.run", "--promote", "--targets", TARGET],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert promoted.returncode == 0 and "promoted" in promoted.stdout, promoted.stderr[-2000:]
    after = _tree(corpora)
    assert set(before) < set(after)  # the explicit step grows corpora/ (coverage-adding inputs only)
    assert all(k.startswith(f"{TARGET}/corpus/") for k in set(after) - set(before))
