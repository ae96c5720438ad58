"""The fuzz runner's clock: run harness processes on every core and keep a wall-clock promise.

A :class:`Scheduler` runs one harness subprocess per target, ``jobs`` at a time, until the monotonic
time ``end``. Budget rule: when a slot frees at time ``t`` with ``P`` targets pending, the slot-seconds
left, ``(end - t) * jobs`` minus what the running targets still have, are shared equally by the ``P``
pending targets; each gets ``-max_total_time`` = its share minus the engine start-up time (measured:
the ``TOKSPEC-READY`` line of the harness, averaged per kind of target, ``hyp``/``diff``/``prop``:
hypothesis targets load no engine; 5 s until a first measurement). So the per-target
budget grows with the number of workers, and the phase ends by ``end`` whatever start-up costs.
A run's plan is start-up + ``-max_total_time`` + exit: libFuzzer stops up to a second past its
time and the process then tears down; that overshoot is measured on the runs that end on their own
(``EXIT_S`` until a first measurement) and planned for, like the start-up.
Minimum share: with ``min_share`` set (the runner passes ``min(T*W/N/2, ...)``), no target is
launched with more than the slot-seconds left minus ``min_share`` for each target still pending,
and none with less than ``min_share`` (bounded by the phase end). A run going past its plan keeps
running while the slot-seconds left after stopping it (its own slot included, less the time it
needs to stop) still cover the pending targets' minimum; it is interrupted once they would not. So
every target gets its minimum before any gets more, whatever the others' start-up costs, and a run
that merely tears down a little late is not cut.
Top-up: a run that ends (no finding, no hang; on its own, or interrupted for running past its plan:
one slow input) with fewer than :data:`tokspec.fuzz._coverage.MIN_EXECS` inputs (a slow target:
kernels run interpreted, long inputs) is started again, at once, for the time its rate needs to reach
that minimum (+25%; at least a second, at most its first share, and no more than the slot-seconds
left then allow beyond every pending target's minimum share); its inputs, known hits and findings
are added to the earlier runs' (table note ``topped up``, after the last run's own note if it has
one). The rate planned from is the slower of the run's average and its late rate
(:func:`late_rate`, from libFuzzer's status lines over the run's second half): a run is fast while
its corpus is small, and a top-up starts by replaying the corpus. A top-up that still ends short is
topped up again, at most :data:`MAX_TOP_UPS` times. So one slow target is not reported starved
while fast ones had time to spare (CI, stop 51: the interpreted cl100k target ran 721 inputs in its
29 s, 25 per second; stop 53: the interpreted Unigram target ran 170 inputs/s up to its 512th input
and 697 in all, 27/s on average; topped up once for 14 s planned at 27/s, it ran 15/s and ended at
927).
A run still going ``GRACE_S`` after its planned end, or one second after ``end``, is interrupted
(SIGINT to its process group: libFuzzer prints its final statistics), then killed.
Reserve: ``reserve`` seconds after ``end`` (the runner's replay reserve) are lent to the targets
until a run reports a finding or a hang (they are then needed to confirm it), so a run without
findings does not end the reserve early.

Children run under :mod:`tokspec._procs` (own process group, parent-death signal), so a killed
runner leaves no orphan fuzzers; :func:`kill_group` interrupts a harness, then ends its group.
Progress: one line every ``PROGRESS_S`` seconds at most (elapsed/budget, running targets, done,
executions so far, findings so far).

Out of scope: libFuzzer's ``-fork``/``-jobs`` modes (one process per target is simpler to account).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tokspec import _procs
from tokspec.fuzz import _findings
from tokspec.fuzz._coverage import MIN_EXECS
from tokspec.fuzz._libfuzzer_output import LIBFUZZER_EXITS, exit_note, late_rate, parse_stats

__all__ = ["TargetRun", "Scheduler", "spawn", "kill_group", "parse_stats", "live_execs", "GRACE_S", "PROGRESS_S",
           "EXIT_S", "LIBFUZZER_EXITS", "MAX_TOP_UPS", "late_rate", "exit_note", "rotation", "remember"]

GRACE_S = 10.0
PROGRESS_S = 4.0
MIN_FUZZ_S = 3.0
PROGRESS_TICK_S = 0.25  # the scheduler's polling interval
EXIT_S = 2.0  # planned end-of-run overshoot (final stats, teardown) until measured
MAX_TOP_UPS = 3  # a starved run is started again at most this many times (module docstring, "Top-up")
_OVER_PLAN = "interrupted: over its budget"  # the note of a run cut GRACE_S past its plan or at the phase end


def spawn(argv: list[str], *, log: Path | None = None, env: dict[str, str] | None = None,
          pipe_stdout: bool = False) -> subprocess.Popen[str]:
    """Start ``argv`` under :func:`tokspec._procs.spawn` (own process group, dies with tokspec).
    Output goes to the file ``log`` (stdout and stderr; only stderr with ``pipe_stdout``), else nowhere."""
    fh = log.open("w", encoding="utf-8") if log is not None else None
    sink = fh if fh is not None else subprocess.DEVNULL
    try:
        return _procs.spawn(argv, stdout=subprocess.PIPE if pipe_stdout else sink, stderr=sink, text=True, env=env)
    finally:
        if fh is not None:
            fh.close()


def _program_pid(proc: subprocess.Popen[str]) -> int | None:
    """The pid (= process group) of the program under ``proc``'s supervisor, from /proc."""
    try:
        children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


def kill_group(proc: subprocess.Popen[str], first: int = signal.SIGINT, wait_s: float = 5.0) -> None:
    """Send ``first`` to the program's process group (SIGINT: libFuzzer prints its final stats and
    exits); after ``wait_s`` (or at once if the program is not found) stop it for good."""
    program = _program_pid(proc)
    if program is not None:
        try:
            os.killpg(program, first)
            proc.wait(timeout=wait_s)
        except (ProcessLookupError, PermissionError, subprocess.TimeoutExpired):
            pass
    _procs.stop(proc)


@dataclass
class TargetRun:
    """One harness subprocess and what it reported."""

    name: str
    seconds: float
    argv: list[str]
    proc: subprocess.Popen[str] | None = None
    stderr_path: Path | None = None
    started: float = 0.0
    ready: float | None = None
    returncode: int | None = None
    stats: dict[str, float] = field(default_factory=dict)
    findings: list[tuple[str, float, str]] = field(default_factory=list)
    note: str = ""
    hang: Path | None = None  # libFuzzer's timeout- artifact if one call exceeded the per-call timeout
    first_run: dict[str, float] | None = None  # a topped-up run: the earlier runs' stats (module docstring)
    first_note: str = ""  # ... and the last one's note
    top_ups: int = 0  # how many times it was started again
    own_note: str = ""  # a topped-up run: the last process's own note (``note`` tells the whole story)


def _kind(name: str) -> str:
    return name.split("--", 1)[0].split(":", 1)[0]


def _tail(path: Path | None, limit: int = 8192) -> str:
    if path is None or not path.exists():
        return ""
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - limit))
        return fh.read().decode("utf-8", "replace")


def live_execs(run: TargetRun) -> int:
    """Executions so far: final stats when done, else libFuzzer's latest ``#N`` status line."""
    if run.returncode is not None:
        return int(run.stats.get("number_of_executed_units", 0))
    found = re.findall(r"^#(\d+)\s", _tail(run.stderr_path), re.M)
    return int(found[-1]) if found else 0


class Scheduler:
    """Runs ``runs`` (their ``argv`` end with ``-max_total_time=`` set at launch) by the module's rule;
    ``min_execs``: the inputs under which a run is starved (and topped up)."""

    def __init__(self, runs: list[TargetRun], jobs: int, run_dir: Path, env: dict[str, str], end: float,
                 *, start: float | None = None, say: Callable[[str], None] = print, startup_s: float = 5.0,
                 min_share: float = 0.0, reserve: float = 0.0, min_execs: int = MIN_EXECS):
        self.runs, self.jobs, self.run_dir, self.env, self.base_end = runs, jobs, run_dir, env, end
        self.min_share, self.reserve, self.min_execs = min_share, reserve, min_execs
        self._pending = 0
        self.start = time.monotonic() if start is None else start
        self.say, self.startup, self.exit = say, startup_s, EXIT_S
        self._startups: list[float] = []
        self._kind_startups: dict[str, list[float]] = {}
        self._exits: list[float] = []

    @property
    def end(self) -> float:
        """The phase end: ``end``, plus the lent ``reserve`` while no run has reported a finding or a hang."""
        found = any(r.findings or r.hang is not None for r in self.runs if r.returncode is not None)
        return self.base_end + (0.0 if found else self.reserve)

    def _planned_end(self, run: TargetRun) -> float:
        """When ``run`` should be gone: start + start-up (measured, else estimated) + its time + exit."""
        return run.started + (self.startup_of(run) if run.ready is None else run.ready) + run.seconds + self.exit

    def _committed(self, now: float, runs: list[TargetRun]) -> float:
        """Slot-seconds the running ``runs`` still plan to use from ``now``."""
        return sum(max(0.0, self._planned_end(r) - now) for r in runs)

    def startup_of(self, run: TargetRun | None) -> float:
        """Estimated start-up of ``run``: the mean measured for targets of its kind (name prefix
        ``hyp``/``diff``/``prop``: hypothesis targets load no engine), else of all, else ``startup_s``."""
        seen = self._kind_startups.get(_kind(run.name), []) if run is not None else []
        return max(1.0, sum(seen) / len(seen)) if seen else self.startup

    def _share(self, now: float, pending: int, active: list[TargetRun], run: TargetRun | None = None) -> float:
        end = self.end
        committed = self._committed(now, active)
        left = (end - now) * self.jobs - committed
        share = min(left / max(1, pending), left - self.min_share * (pending - 1))  # keep the others' minimum
        share = max(share, self.min_share)  # and this one's
        startup = self.startup_of(run)
        fuzz = min(share, end - now) - startup - self.exit  # one process cannot use two slots
        if self.min_share and end - now >= startup + 1.0:  # its exit may then pass the end (< 1 s rule)
            fuzz = max(fuzz, 1.0)  # a guaranteed target gets at least a whole second of fuzzing
        return fuzz

    def _eats_minimum(self, run: TargetRun, now: float, active: list[TargetRun]) -> bool:
        """True if ``run``, past its plan, now takes slot-seconds owed to the pending targets' minimum:
        stopped now, it would free its slot after ``exit`` seconds; the slot-seconds left then, less
        what the other running targets still plan to use, must cover ``min_share`` per pending target."""
        if not self.min_share or not self._pending:
            return False
        others = [r for r in active if r is not run]
        committed = self._committed(now, others)
        free_slots = self.jobs - len(others) - 1  # slots free now (this run holds one)
        left = (self.end - now) * self.jobs - committed - self.exit - PROGRESS_TICK_S * self.jobs
        return left < self.min_share * self._pending and free_slots < self._pending

    def _launch(self, run: TargetRun, seconds: float) -> None:
        safe = run.name.replace(":", "--")
        run.seconds = seconds
        run.argv = [a if not a.startswith("-max_total_time=") else f"-max_total_time={max(1, int(seconds))}"
                    for a in run.argv]
        env = dict(os.environ, TOKSPEC_FUZZ_REPORT_DIR=str(self.run_dir / "reports" / safe), **self.env)
        again = "" if not run.top_ups else ".top-up" if run.top_ups == 1 else f".top-up{run.top_ups}"
        run.stderr_path = self.run_dir / f"{safe}{again}.stderr"
        run.started = time.monotonic()
        run.proc = spawn(run.argv, log=run.stderr_path, env=env)

    def _finish(self, run: TargetRun) -> None:
        assert run.proc is not None
        run.returncode = run.proc.returncode
        text = run.stderr_path.read_text(encoding="utf-8", errors="replace") if run.stderr_path else ""
        run.stats, run.findings, note = parse_stats(text)
        fuzzing = time.monotonic() - run.started - (run.ready or self.startup)
        if "average_exec_per_sec" not in run.stats and fuzzing > 0:  # interrupted: no final stats
            run.stats["average_exec_per_sec"] = run.stats.get("number_of_executed_units", 0) / fuzzing
        late = late_rate(text)
        if late is not None:
            run.stats["late_exec_per_sec"] = late
        run.note = run.note or note or ("" if run.returncode in (0, 77, -2, 130) or run.note else
                                        exit_note(run.returncode, text[-8192:]))
        if run.ready is not None and not run.note and run.returncode == 0:  # ended on its own: its exit
            self._exits.append(max(0.0, time.monotonic() - (run.started + run.ready + run.seconds)))
            self.exit = min(GRACE_S / 2, max(0.5, sum(self._exits) / len(self._exits)))
        from tokspec.fuzz._hangs import hang_artifact
        run.hang = hang_artifact(text)
        if run.hang is not None:  # one hang per target and run: it is never launched again
            run.note = "hung: not run again"
        if run.first_run is not None:  # a top-up: the runs' counts together
            run.own_note = run.note
            first = run.first_run
            for key in ("number_of_executed_units", "known_hits"):
                if key in first or key in run.stats:
                    run.stats[key] = run.stats.get(key, 0.0) + first.get(key, 0.0)
            run.stats["cov"] = max(run.stats.get("cov", 0.0), first.get("cov", 0.0))
            topped = f"topped up: +{run.seconds:.0f} s after {int(first.get('number_of_executed_units', 0))} inputs"
            topped += f" ({run.first_note})" if run.first_note else ""
            run.note = f"{run.note} ({topped})" if run.note else topped  # the second run's own note first

    def _top_up(self, run: TargetRun, now: float, pending: int, active: list[TargetRun]) -> bool:
        """Start ``run`` again if it just ended starved (module docstring, "Top-up"); True if started."""
        execs = run.stats.get("number_of_executed_units", 0.0)
        note = run.own_note if run.top_ups else run.note
        ended = (not note and run.returncode == 0) or note == _OVER_PLAN  # not cut for the others' minimum
        if (not self.min_share or not ended or run.top_ups >= MAX_TOP_UPS or run.findings or run.hang is not None
                or run.ready is None or execs >= self.min_execs):
            return False
        rates = [r for r in (run.stats.get("average_exec_per_sec", 0.0), run.stats.get("late_exec_per_sec"))
                 if r]
        rate = min(rates) if rates else execs / max(1.0, run.seconds)
        if rate <= 0:
            return False
        committed = self._committed(now, active)
        left = (self.end - now) * self.jobs - committed - self.min_share * pending
        room = min(left, self.end - now) - run.ready - self.exit  # fuzzing time the others' minimum allows
        fuzz = min(max(1.0, min(run.seconds, 1.25 * (self.min_execs - execs) / rate)), room)
        if fuzz < 1.0:
            return False
        run.first_run, run.first_note = dict(run.stats), run.note
        run.proc, run.returncode, run.ready, run.stats, run.note = None, None, None, {}, ""
        run.top_ups += 1
        self._launch(run, fuzz)
        return True

    def _watch(self, run: TargetRun, now: float, active: list[TargetRun] | None = None) -> None:
        """Record start-up time; interrupt a run past its planned end (or the phase end) + grace."""
        assert run.proc is not None
        if run.ready is None and "TOKSPEC-READY" in _tail(run.stderr_path, 65536):
            run.ready = now - run.started
            self._startups.append(run.ready)
            self._kind_startups.setdefault(_kind(run.name), []).append(run.ready)
            self.startup = max(2.0, sum(self._startups) / len(self._startups))
        # a slow starter may run past its plan (libFuzzer's clock starts when it is ready); the phase may not
        planned_end = self._planned_end(run) if run.ready is not None else float("inf")
        if run.proc.poll() is None and now > min(planned_end + GRACE_S, self.end + 1.0):
            kill_group(run.proc)
            run.note = _OVER_PLAN
        elif run.proc.poll() is None and now > planned_end and self._eats_minimum(run, now, active or []):
            kill_group(run.proc)
            run.note = "interrupted: over its budget (others' minimum share)"

    def _progress(self, now: float, active: list[TargetRun], pending: int, total_s: float) -> None:
        done = [r for r in self.runs if r.returncode is not None]
        running = ", ".join(f"{r.name} ({now - r.started:.0f}s)" for r in active) or "-"
        execs = sum(live_execs(r) for r in self.runs if r.proc is not None)
        new = sum(len(r.findings) for r in done)
        self.say(f"fuzz {now - self.start:5.0f}/{total_s:.0f} s | running: {running} | done {len(done)}/"
                 f"{len(self.runs)}, pending {pending} | execs {execs:,} | findings {new}")

    def run(self, total_s: float) -> list[TargetRun]:
        """Run until every target ran or the time is out; returns the targets left unrun (deferred)."""
        pending, active = list(self.runs), list[TargetRun]()
        next_progress = self.start + PROGRESS_S
        while pending or active:
            now = time.monotonic()
            while pending and len(active) < self.jobs:
                share = self._share(now, len(pending), active, pending[0])
                if share < (1.0 if self.min_share else MIN_FUZZ_S):  # a guaranteed share: any whole second
                    break
                run = pending.pop(0)
                self._launch(run, share)
                active.append(run)
            if not active:
                break  # time is out for the pending targets
            self._pending = len(pending)
            for run in list(active):
                self._watch(run, now, active)
                if run.proc is not None and run.proc.poll() is not None:
                    _procs.stop(run.proc)  # forget it (its group is gone with it)
                    self._finish(run)
                    active.remove(run)
                    if self._top_up(run, now, len(pending), active):
                        active.append(run)
            if now >= next_progress:
                self._progress(now, active, len(pending), total_s)
                next_progress = now + PROGRESS_S
            time.sleep(PROGRESS_TICK_S)
        return pending


def rotation(targets: list[Any], slot_seconds: float, per_target_s: float) -> tuple[list[Any], list[Any]]:
    """(run now, deferred): as many targets (``.name``) as ``slot_seconds`` fit at ``per_target_s``
    each, least recently fuzzed first (``<cache>/fuzz/last-fuzzed.json``, updated by :func:`remember`)."""
    fit = max(1, int(slot_seconds // per_target_s))
    if fit >= len(targets):
        return targets, []
    path = _findings.cache_root() / "last-fuzzed.json"
    last = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    order = sorted(targets, key=lambda t: last.get(t.name, 0.0))  # stable: list order among equals
    return order[:fit], order[fit:]


def remember(runs: list[TargetRun]) -> None:
    path = _findings.cache_root() / "last-fuzzed.json"
    last = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    last.update({r.name: time.time() for r in runs if r.proc is not None})
    _findings.write_json_atomic(path, last)
