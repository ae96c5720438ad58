"""Issue 26, friction 6: the fuzz runner's scheduler gives every target its minimum share before any
target gets more, and a target still under its minimum of inputs is reported starved (no all-clear).

The targets are toy harnesses (a few lines of Python speaking the harness protocol: ``TOKSPEC-READY``,
libFuzzer's ``#N`` status lines and final ``stat::`` lines), so the scheduler is tested without
loading an engine; one of them is slow to start and slow per input."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from tokspec.fuzz._coverage import not_covered, verdict_line
from tokspec.fuzz._schedule import Scheduler, TargetRun
from tokspec.fuzz.run import min_share

_TOY = r"""
import sys, time
startup, per_input = float(sys.argv[1]), float(sys.argv[2])
budget = float(next(a for a in sys.argv if a.startswith("-max_total_time=")).split("=")[1])
if "hog" in sys.argv:
    budget = float("inf")  # ignores its budget (like a harness whose start-up was underestimated)
time.sleep(startup)
print("TOKSPEC-READY toy", file=sys.stderr, flush=True)
t0, n = time.monotonic(), 0
while time.monotonic() - t0 < budget:
    time.sleep(per_input)
    n += 1
    if n % 10 == 0:
        print(f"#{n}\tNEW cov: 1", file=sys.stderr, flush=True)
print(f"stat::number_of_executed_units: {n}", file=sys.stderr, flush=True)
"""


def _toy(name: str, startup: float, per_input: float, *flags: str) -> TargetRun:
    return TargetRun(name, 0.0, [sys.executable, "-c", _TOY, str(startup), str(per_input), *flags,
                                 "-max_total_time=0"])


def test_share_keeps_the_pending_targets_minimum(tmp_path: Path) -> None:
    now = 1000.0
    sched = Scheduler([], 1, tmp_path, {}, now + 30, start=now, startup_s=1.0, min_share=6.0)
    assert sched._share(now, 3, []) == 10.0 - 1.0  # the fair share, when it leaves the others theirs
    # slow starters have overrun: 12 s are left for 3 targets; the equal rule (4 s) and the others'
    # minimum (12 - 2 * 6 = 0 s) would starve the next one: it is raised to its 6 s minimum
    assert sched._share(now + 18, 3, []) == 6.0 - 1.0
    # the first launched never takes more than what leaves the other two their minimum
    greedy = Scheduler([], 1, tmp_path, {}, now + 30, start=now, startup_s=1.0, min_share=6.0)
    assert greedy._share(now, 2, []) == 15.0 - 1.0
    unbounded = Scheduler([], 1, tmp_path, {}, now + 30, start=now, startup_s=1.0)
    assert unbounded._share(now + 29, 3, []) < 0 < sched._share(now + 29, 3, []) + 1.0  # bounded by the end
    assert min_share(480.0, 28, 2) == 480.0 * 2 / 28 / 2 and min_share(10.0, 1, 2) == 10.0


def test_every_toy_target_gets_inputs_and_a_slow_one_is_reported_starved(tmp_path: Path) -> None:
    runs = [_toy("fast-a", 0.0, 0.002), _toy("slow", 1.5, 0.2), _toy("fast-b", 0.0, 0.002),
            _toy("fast-c", 0.0, 0.002)]
    t0 = time.monotonic()
    floor = min_share(10.0, len(runs), 1)  # 1.25 s each on one worker
    left = Scheduler(runs, 1, tmp_path, {}, t0 + 10.0, start=t0, startup_s=0.5, min_share=floor,
                     say=lambda line: None).run(10.0)
    assert left == []  # nobody deferred
    for run in runs:
        assert run.proc is not None and run.seconds >= floor - 0.5 - 1e-9, (run.name, run.seconds)
        assert run.stats.get("number_of_executed_units", 0) > 0, (run.name, run.stats, run.note)
    execs = {r.name: int(r.stats["number_of_executed_units"]) for r in runs}
    assert execs["slow"] < min(execs[n] for n in ("fast-a", "fast-b", "fast-c"))
    missing = not_covered(runs, min_execs=100)
    assert [name for name, _ in missing] == ["slow"], (execs, missing)
    line = verdict_line(0, len(runs), missing)
    assert "NOT an all-clear" in line and "slow (starved:" in line


def test_a_target_running_past_its_plan_is_stopped_for_the_next_ones_minimum(tmp_path: Path) -> None:
    def go(floor: float) -> list[TargetRun]:
        runs = [_toy("hog", 0.0, 0.01, "hog"), _toy("next", 0.0, 0.002)]
        t0 = time.monotonic()
        Scheduler(runs, 1, tmp_path / str(floor), {}, t0 + 7.0, start=t0, startup_s=0.5, min_share=floor,
                  say=lambda line: None).run(7.0)
        return runs

    (tmp_path / "2.0").mkdir()
    hog, nxt = go(2.0)
    assert hog.note == "interrupted: over its budget (others' minimum share)", hog.note
    assert nxt.proc is not None and nxt.stats.get("number_of_executed_units", 0) > 0, (nxt.note, nxt.stats)
