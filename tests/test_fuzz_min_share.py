"""Issue 26, friction 6: the fuzz runner's scheduler gives every target its minimum share before any
target gets more, and a target still under its minimum of inputs is reported starved (no all-clear).

The targets are toy harnesses (a few lines of Python speaking the harness protocol: ``TOKSPEC-READY``,
libFuzzer's ``#N`` status lines and final ``stat::`` lines), so the scheduler is tested without
loading an engine; one of them is slow to start and slow per input. Issue 26's CI run (480 s, 2
workers) ended 88 s early, deferred 5 targets and interrupted 22 of 25 for running a second past
their plan: the last tests here replay that situation in miniature."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from types import SimpleNamespace

from tokspec.fuzz._coverage import not_covered, verdict_line
from tokspec.fuzz._schedule import EXIT_S, MAX_TOP_UPS, Scheduler, TargetRun, exit_note, late_rate, rotation
from tokspec.fuzz.run import _STARTUP_S, MIN_TARGET_S, min_share, plan_phases

_TOY = r"""
import sys, time
startup, per_input = float(sys.argv[1]), float(sys.argv[2])
budget = float(next(a for a in sys.argv if a.startswith("-max_total_time=")).split("=")[1])
if "hog" in sys.argv:
    budget = float("inf")  # ignores its budget (like a harness whose start-up was underestimated)
late = float(next((a.split("=")[1] for a in sys.argv if a.startswith("late=")), "0"))
fast_start = float(next((a.split("=")[1] for a in sys.argv if a.startswith("fast_start=")), "0"))
once = next((a.split("=", 1)[1] for a in sys.argv if a.startswith("fast_once=")), "")  # a first run's small corpus
if once:
    try:
        open(once, "x").close()
    except FileExistsError:
        fast_start = 0.0
begun = time.monotonic()
time.sleep(startup)
print("TOKSPEC-READY toy", file=sys.stderr, flush=True)
t0, n = time.monotonic(), 0
while time.monotonic() - t0 < budget:
    time.sleep(per_input / 20 if time.monotonic() - t0 < fast_start else per_input)
    n += 1
    if n % 10 == 0:  # libFuzzer's exec/s: inputs over the whole seconds since the process began
        print(f"#{n}\tNEW cov: 1 exec/s: {n // max(1, int(time.monotonic() - begun))}", file=sys.stderr, flush=True)
    if "find" in sys.argv and n == 5:
        print(f"TOKSPEC-FINDING toyfinding {time.monotonic() - t0:.3f} /dev/null", file=sys.stderr, flush=True)
print(f"stat::number_of_executed_units: {n}", file=sys.stderr, flush=True)
time.sleep(late)  # libFuzzer ends up to a second past -max_total_time, then the process tears down
"""


def _toy(name: str, startup: float, per_input: float, *flags: str) -> TargetRun:
    return TargetRun(name, 0.0, [sys.executable, "-c", _TOY, str(startup), str(per_input), *flags,
                                 "-max_total_time=0"])


def test_share_keeps_the_pending_targets_minimum(tmp_path: Path) -> None:
    now = 1000.0
    sched = Scheduler([], 1, tmp_path, {}, now + 30, start=now, startup_s=1.0, min_share=6.0)
    # -max_total_time is a share less start-up and the planned exit (final stats, teardown)
    assert sched._share(now, 3, []) == 10.0 - 1.0 - EXIT_S  # the fair share, when it leaves the others theirs
    # slow starters have overrun: 12 s are left for 3 targets; the equal rule (4 s) and the others'
    # minimum (12 - 2 * 6 = 0 s) would starve the next one: it is raised to its 6 s minimum
    assert sched._share(now + 18, 3, []) == 6.0 - 1.0 - EXIT_S
    # the first launched never takes more than what leaves the other two their minimum
    greedy = Scheduler([], 1, tmp_path, {}, now + 30, start=now, startup_s=1.0, min_share=6.0)
    assert greedy._share(now, 2, []) == 15.0 - 1.0 - EXIT_S
    unbounded = Scheduler([], 1, tmp_path, {}, now + 30, start=now, startup_s=1.0)
    assert unbounded._share(now + 29, 3, []) < 0 < sched._share(now + 26, 3, []) + 1.0  # bounded by the end
    # a lent reserve counts as phase time until a run reports a finding
    lent = Scheduler([TargetRun("x", 0.0, [])], 1, tmp_path, {}, now + 30, start=now, startup_s=1.0, reserve=6.0)
    assert lent.end == now + 36 and lent._share(now, 3, []) == 12.0 - 1.0 - EXIT_S
    lent.runs[0].returncode, lent.runs[0].findings = 1, [("f", 1.0, "p")]
    assert lent.end == now + 30
    assert min_share(480.0, 28, 2) == 480.0 * 2 / 28 / 2 and min_share(10.0, 1, 2) == 10.0


def test_every_toy_target_gets_inputs_and_a_slow_one_is_reported_starved(tmp_path: Path) -> None:
    runs = [_toy("fast-a", 0.0, 0.002), _toy("slow", 1.5, 0.2), _toy("fast-b", 0.0, 0.002),
            _toy("fast-c", 0.0, 0.002)]
    t0 = time.monotonic()
    floor = min_share(10.0, len(runs), 1)  # 1.25 s each on one worker
    left = Scheduler(runs, 1, tmp_path, {}, t0 + 10.0, start=t0, startup_s=0.5, min_share=floor,
                     min_execs=100, say=lambda line: None).run(10.0)
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
        Scheduler(runs, 1, tmp_path / str(floor), {}, t0 + 12.0, start=t0, startup_s=0.5, min_share=floor,
                  say=lambda line: None).run(12.0)
        return runs

    (tmp_path / "4.0").mkdir()
    hog, nxt = go(4.0)
    assert hog.note == "interrupted: over its budget (others' minimum share)", hog.note
    assert nxt.proc is not None and nxt.stats.get("number_of_executed_units", 0) > 0, (nxt.note, nxt.stats)


def test_a_run_that_ends_a_little_late_is_not_interrupted(tmp_path: Path) -> None:
    # each toy tears down 1.5 s after its time (CI: 22 of 25 were cut for such a second); the
    # pending targets' minimum is never at risk here, so none is interrupted and all run
    runs = [_toy(f"late-{i}", 0.1, 0.002, "late=1.5") for i in range(3)]
    t0 = time.monotonic()
    Scheduler(runs, 1, tmp_path, {}, t0 + 15.0, start=t0, startup_s=0.5, min_share=min_share(15.0, 3, 1),
              min_execs=100, say=lambda line: None).run(15.0)
    assert [r.note for r in runs] == ["", "", ""], [(r.name, r.note) for r in runs]
    assert all(r.stats.get("number_of_executed_units", 0) > 0 for r in runs)


def test_a_ci_like_run_uses_its_budget_and_runs_every_target(tmp_path: Path) -> None:
    """CI's run in miniature: many targets on 2 workers, a real start-up and a late exit. Every
    target runs (none deferred), none is interrupted, and the phase ends near its end, not early."""
    runs = [_toy(f"t{i:02}", 0.3, 0.002, "late=0.3") for i in range(10)]
    budget = 16.0
    t0 = time.monotonic()
    left = Scheduler(runs, 2, tmp_path, {}, t0 + budget, start=t0, startup_s=0.5,
                     min_share=min_share(budget, len(runs), 2), min_execs=100, say=lambda line: None).run(budget)
    elapsed = time.monotonic() - t0
    assert left == [] and all(r.proc is not None for r in runs)
    assert [r.note for r in runs] == [""] * len(runs), [(r.name, r.note) for r in runs]
    assert budget * 0.8 <= elapsed <= budget + 1.5, elapsed  # used, and kept
    assert not not_covered(runs, min_execs=100), [(r.name, r.stats) for r in runs]


def test_a_finding_takes_the_lent_reserve_back(tmp_path: Path) -> None:
    runs = [_toy("finds", 0.0, 0.002, "find"), _toy("after", 0.0, 0.002)]
    t0 = time.monotonic()
    sched = Scheduler(runs, 1, tmp_path, {}, t0 + 8.0, start=t0, startup_s=0.3, reserve=4.0,
                      min_share=min_share(8.0, 2, 1), say=lambda line: None)
    assert sched.end == t0 + 12.0  # lent while nothing is found
    sched.run(12.0)
    assert runs[0].findings and sched.end == t0 + 8.0
    assert time.monotonic() - t0 <= 8.0 + 1.5  # the reserve is left for confirming the finding
    assert runs[1].stats.get("number_of_executed_units", 0) > 0


def test_ci_budget_plans_every_target() -> None:
    # tox -e fuzz in CI (.ci/run's default budget) on 2 workers, every target; the property stage
    # gives way (not below an eighth of the budget) so that every target gets start-up plus
    # MIN_TARGET_S: none deferred
    import re
    from pathlib import Path

    from tokspec.fuzz.targets import TARGETS

    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text()
    budget = float(re.search(r"TOKSPEC_FUZZ_SECONDS:-(\d+)", ci).group(1))  # type: ignore[union-attr]
    n = len(TARGETS)
    assert n >= 32
    fuzz, replay, stage = plan_phases(budget, 180.0, n, 2)
    assert fuzz + replay + stage == budget and budget / 8 <= stage < budget / 4
    targets = [SimpleNamespace(name=f"t{i}") for i in range(n)]
    chosen, deferred = rotation(targets, fuzz * 2, _STARTUP_S + MIN_TARGET_S)
    assert deferred == [] and len(chosen) == n
    # a budget too small for all still rotates, and the stage keeps its eighth
    fuzz, replay, stage = plan_phases(120.0, 180.0, n, 2)
    assert stage == 120.0 / 8 and rotation(targets, fuzz * 2, _STARTUP_S + MIN_TARGET_S)[1]
    assert plan_phases(480.0, 180.0) == (480.0 - 120.0 - 24.0, 24.0, 120.0)  # no targets: as before


def test_an_out_of_memory_exit_is_named_and_not_covered() -> None:
    tail = ("==7== ERROR: libFuzzer: out-of-memory (used: 3105Mb; exceeds: 3072Mb)\n"
            "MS: 1 ChangeByte-; base unit: 0\nartifact_prefix='a/'; Test unit written to a/oom-0a1b\n")
    note = exit_note(71, tail)
    assert note == "exit 71: libFuzzer out of memory (used: 3105Mb; exceeds: 3072Mb); input a/oom-0a1b"
    assert exit_note(70) == "exit 70: libFuzzer timeout" and exit_note(1) == "exit 1"
    run = SimpleNamespace(name="t", note=note, stats={"number_of_executed_units": 5000.0}, findings=[])
    assert not_covered([run]) == [("t", note + " after 5000 inputs")]


def test_start_up_is_estimated_per_kind_of_target(tmp_path: Path) -> None:
    # the 120 s check of the real runner ended 17 s early: hypothesis targets (no engine to load,
    # ~1 s) were planned with the engine targets' mean start-up, so they finished before the end
    now = 1000.0
    sched = Scheduler([], 2, tmp_path, {}, now + 40, start=now, startup_s=5.0)
    hyp, diff = TargetRun("hyp--a", 0.0, []), TargetRun("diff--b--c", 0.0, [])
    assert sched.startup_of(hyp) == sched.startup_of(diff) == 5.0  # nothing measured yet
    sched.startup, sched._kind_startups = 12.0, {"diff": [12.0]}
    assert sched.startup_of(diff) == 12.0 and sched.startup_of(hyp) == 12.0  # no hypothesis target measured
    sched._kind_startups["hyp"] = [1.5, 2.5]
    assert sched.startup_of(hyp) == 2.0 and sched.startup_of(diff) == 12.0
    assert sched._share(now, 1, [], hyp) - sched._share(now, 1, [], diff) == 10.0  # 10 s more fuzzing


def _run_with_a_slow_first_target(runs: list[TargetRun], tmp_path: Path, budget: float, min_execs: int) -> None:
    """One worker runs ``runs`` within ``budget``; every target is covered (``min_execs``), and the
    ones after the first ran after it, each at least its minimum share less start-up and exit."""
    floor = min_share(budget, len(runs), 1)
    t0 = time.monotonic()
    left = Scheduler(runs, 1, tmp_path, {}, t0 + budget, start=t0, startup_s=0.3, min_share=floor,
                     min_execs=min_execs, say=lambda line: None).run(budget)
    assert left == []
    assert not not_covered(runs, min_execs=min_execs), [(r.name, r.stats, r.note) for r in runs]
    for run in runs[1:]:
        assert run.seconds >= floor - 0.3 - EXIT_S - 0.5 and run.note == "", (run.name, run.seconds, run.note)
    assert time.monotonic() - t0 <= budget + 1.5


def test_a_starved_run_is_topped_up_while_the_others_keep_their_minimum(tmp_path: Path) -> None:
    """CI, stop 51: the interpreted cl100k target ran 721 inputs (< 1000) in its share, 25 per
    second, and the run was no all-clear. A run that ends on its own under ``min_execs`` inputs is
    started once more, for what its rate needs (+25%), and its inputs count together; the targets
    after it still run and keep their minimum."""
    runs = [_toy("slowish", 0.1, 0.015), _toy("fast-a", 0.0, 0.002), _toy("fast-b", 0.0, 0.002),
            _toy("fast-c", 0.0, 0.002)]
    _run_with_a_slow_first_target(runs, tmp_path, 12.0, 100)
    slow = runs[0]
    assert slow.first_run is not None and slow.note.startswith("topped up: +"), (slow.note, slow.stats)
    first = int(slow.first_run["number_of_executed_units"])
    assert 0 < first < 100 and f"after {first} inputs" in slow.note
    assert slow.stats["number_of_executed_units"] >= 100, slow.stats  # both runs' inputs
    assert (tmp_path / "slowish.stderr").is_file() and (tmp_path / "slowish.top-up.stderr").is_file()


def test_no_top_up_for_a_run_that_found_something_or_when_the_minimum_would_suffer(tmp_path: Path) -> None:
    now = time.monotonic()
    sched = Scheduler([], 1, tmp_path, {}, now + 10.0, start=now, startup_s=0.3, min_share=3.0, min_execs=100)

    def ended(**kw: object) -> TargetRun:
        run = TargetRun("slow", 2.0, [sys.executable, "-c", "pass", "-max_total_time=0"], returncode=0, ready=0.2,
                        stats={"number_of_executed_units": 40.0, "average_exec_per_sec": 20.0})
        for key, value in kw.items():
            setattr(run, key, value)
        return run

    assert not sched._top_up(ended(findings=[("f", 1.0, "p")]), now, 0, [])
    assert not sched._top_up(ended(returncode=72, note="exit 72: libFuzzer interrupted"), now, 0, [])
    cut = ended(returncode=-2, note="interrupted: over its budget (others' minimum share)")
    assert not sched._top_up(cut, now, 0, [])  # cut for the others: they come first
    assert not sched._top_up(ended(stats={"number_of_executed_units": 100.0}), now, 0, [])
    assert not sched._top_up(ended(), now, 3, [])  # 10 slot-seconds left, 3 pending x 3 s minimum: no room
    again = ended(first_run={"number_of_executed_units": 10.0}, top_ups=MAX_TOP_UPS)
    assert not sched._top_up(again, now, 0, [])  # at most MAX_TOP_UPS times per target
    run = ended()
    assert sched._top_up(run, now, 1, [])  # room: 10 - 3 > 0.2 + 2 + exit
    try:
        assert run.first_run == {"number_of_executed_units": 40.0, "average_exec_per_sec": 20.0}
        assert run.seconds == 2.0 and run.returncode is None and run.stats == {}  # min(its share, 1.25 * 60 / 20)
    finally:
        assert run.proc is not None
        run.proc.wait()


def test_a_run_cut_past_its_plan_under_the_minimum_is_topped_up_and_says_so(tmp_path: Path) -> None:
    """CI, stop 52: ``lopt_small_mon`` was cut 10 s past its plan (one slow input) at 790 inputs and
    so reported starved. Such a run is topped up like one that ended on its own; the table note
    keeps both runs' stories, the second run's own note first."""
    now = time.monotonic()
    sched = Scheduler([], 1, tmp_path, {}, now + 30.0, start=now, startup_s=0.3, min_share=3.0, min_execs=100)
    run = TargetRun("slow", 2.0, [sys.executable, "-c", "pass", "-max_total_time=0"], returncode=-2, ready=0.2,
                    note="interrupted: over its budget", stats={"number_of_executed_units": 40.0})
    assert sched._top_up(run, now, 1, [])
    assert run.proc is not None
    run.proc.wait()
    assert run.first_note == "interrupted: over its budget" and run.note == ""
    run.returncode = 0
    sched._finish(run)
    assert run.stats["number_of_executed_units"] == 40.0  # "pass" printed no stats: the first run's 40
    assert run.note == "topped up: +2 s after 40 inputs (interrupted: over its budget)", run.note
    again = TargetRun("again", 2.0, [], returncode=0, ready=0.2, stats={"number_of_executed_units": 40.0},
                      first_run={"number_of_executed_units": 10.0}, note="exit 71: libFuzzer out of memory")
    again.stderr_path = tmp_path / "again.top-up.stderr"
    again.stderr_path.write_text("stat::number_of_executed_units: 5\n")
    again.proc = run.proc
    sched._finish(again)  # a second run's abnormal end stays first in the note: still NOT covered
    assert again.note.startswith("exit 71") and "topped up" in again.note
    assert again.stats["number_of_executed_units"] == 15.0


def test_late_rate_reads_the_second_half_of_a_run() -> None:
    """libFuzzer dates nothing, but ``N / exec/s`` dates a status line (whole seconds since start).
    The shape of stop 53's starved target: 170/s up to input 512, 697 inputs at 27/s on average."""
    text = ("#2\tINITED cov: 9 ft: 9 corp: 1/1b exec/s: 0 rss: 300Mb\n"
            "#512\tpulse  cov: 40 ft: 80 corp: 20/1Kb lim: 8 exec/s: 170 rss: 400Mb\n"
            "#600\tNEW    cov: 41 ft: 81 corp: 21/1Kb lim: 9 exec/s: 40 rss: 400Mb L: 3/9 MS: 1 ChangeBit-\n"
            "#697\tDONE   cov: 41 ft: 81 corp: 21/1Kb lim: 9 exec/s: 27 rss: 400Mb\n")
    rate = late_rate(text)  # from #512 (3.0 s, the last line at or before 12.9 s) to #697 (25.8 s)
    assert rate is not None and abs(rate - (697 - 512) / (697 / 27 - 512 / 170)) < 1e-9, rate
    assert rate < 27 / 3  # a third of the run's average: a plan from the average would fall short
    assert late_rate("#512\tpulse exec/s: 170\n") is None  # one dated line
    assert late_rate("#1\tINITED exec/s: 0\n#5\tDONE exec/s: 0\n") is None  # under a second: undated
    assert late_rate("") is None


def test_a_top_up_that_ends_short_is_topped_up_again(tmp_path: Path) -> None:
    """CI, stop 53: a top-up planned from the first run's average rate (fast while its corpus was
    small) ran at the slow rate and ended at 927 of 1000 inputs. A top-up that ends short is topped
    up again (at most MAX_TOP_UPS times); its note tells every run."""
    now = time.monotonic()
    sched = Scheduler([], 1, tmp_path, {}, now + 60.0, start=now, startup_s=0.3, min_share=3.0, min_execs=100)
    run = TargetRun("slow", 4.0, [sys.executable, "-c", "pass", "-max_total_time=0"], returncode=0, ready=0.2,
                    stats={"number_of_executed_units": 60.0, "average_exec_per_sec": 15.0,
                           "late_exec_per_sec": 5.0})
    assert sched._top_up(run, now, 0, [])
    assert run.proc is not None and run.top_ups == 1
    assert run.seconds == 4.0  # the late rate: 1.25 * 40 / 5 = 10 s, capped at its first share
    run.proc.wait()
    run.ready = 0.2  # (the scheduler's watch reads it from the harness's TOKSPEC-READY line)
    run.stderr_path.write_text("stat::number_of_executed_units: 20\nstat::average_exec_per_sec: 5\n")
    sched._finish(run)
    assert run.stats["number_of_executed_units"] == 80.0 and run.note == "topped up: +4 s after 60 inputs"
    assert sched._top_up(run, now, 0, [])  # still short: again
    assert run.top_ups == 2 and run.stderr_path.name == "slow.top-up2.stderr"
    assert run.proc is not None
    run.proc.wait()
    run.ready = 0.2
    run.stderr_path.write_text("stat::number_of_executed_units: 30\nstat::average_exec_per_sec: 5\n")
    sched._finish(run)
    assert run.stats["number_of_executed_units"] == 110.0
    assert run.note == "topped up: +4 s after 80 inputs (topped up: +4 s after 60 inputs)", run.note
    assert not sched._top_up(run, now, 0, [])  # covered now
    short = TargetRun("short", 4.0, [sys.executable, "-c", "pass", "-max_total_time=0"], returncode=0, ready=0.2,
                      top_ups=1, note="exit 71: libFuzzer out of memory (topped up: +4 s after 60 inputs)",
                      own_note="exit 71: libFuzzer out of memory", stats={"number_of_executed_units": 80.0})
    assert not sched._top_up(short, now, 0, [])  # a top-up that ended badly is not run again


def test_a_slow_target_reaches_its_minimum_through_top_ups(tmp_path: Path) -> None:
    """End to end: a target fast for its first half second (a small corpus), then slow, ends under
    its minimum; topped up (again if need be), it is covered, and the others keep their minimum."""
    runs = [_toy("slowing", 0.1, 0.03, "fast_start=0.5", f"fast_once={tmp_path / 'corpus-grown'}"),
            _toy("fast-a", 0.0, 0.002), _toy("fast-b", 0.0, 0.002)]
    _run_with_a_slow_first_target(runs, tmp_path, 18.0, 500)
    slow = runs[0]
    assert slow.top_ups >= 1 and "topped up: +" in slow.note, (slow.note, slow.stats)
    assert slow.stats["number_of_executed_units"] >= 500, (slow.note, slow.stats)
