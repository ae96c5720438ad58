"""A pytest plugin for mutmut's workers: a mutant that makes one test loop is stopped after a few
times that test's own recorded time, not after a budget for all the mutant's tests.

Why: mutmut limits a mutant's CPU time to ``(sum of its tests' recorded times + c) * multiplier * 2``.
A mutant of a function that many tests call (the sentencepiece normalizer loop: 58 s of tests)
that stops a loop from advancing then runs for minutes inside the first test it reaches: one such
mutant cost 178 s, and timeouts were a quarter of a full run's time.

What: in a worker judging a mutant (``MUTANT_UNDER_TEST`` names one), each test's call phase gets a
CPU-time alarm (``ITIMER_PROF``: process CPU, so a busy machine does not trip it) of
``FACTOR * recorded + CONSTANT`` seconds, the recorded time being mutmut's own measurement of that
test's call phase (``mutmut-stats.json``). When it fires the worker exits with 36, which mutmut
reads as a timeout, after appending one JSON line (mutant, test, recorded and allowed seconds) to
``hang-guard.jsonl`` beside the stats so every such verdict can be audited. Tests without a
recorded time, setup and teardown run under mutmut's own limit only, which stays in place.
"""

from __future__ import annotations

import json
import os
import signal
from pathlib import Path

import pytest

#: allowed CPU seconds of a test's call phase = FACTOR * its recorded wall seconds + CONSTANT
FACTOR = 5.0
CONSTANT = 5.0
TIMEOUT_EXIT = 36  # mutmut: status_by_exit_code[36] == "timeout"
STATS = Path("mutmut-stats.json")  # mutmut runs the tests from the stage's mutants/ folder
LOG = Path("hang-guard.jsonl")

_recorded: dict[str, float] | None = None


def allowed_seconds(recorded: float) -> float:
    return FACTOR * recorded + CONSTANT


def _durations() -> dict[str, float]:
    global _recorded
    if _recorded is None:
        try:
            _recorded = json.loads(STATS.read_text()).get("duration_by_test", {})
        except (OSError, ValueError):
            _recorded = {}
    return _recorded


def _judging_a_mutant() -> bool:
    return "__mutmut_" in os.environ.get("MUTANT_UNDER_TEST", "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    recorded = _durations().get(item.nodeid) if _judging_a_mutant() else None
    if recorded is None:
        yield
        return
    limit = allowed_seconds(recorded)

    def stop(signum, frame):
        record = {"mutant": os.environ.get("MUTANT_UNDER_TEST"), "test": item.nodeid,
                  "recorded": recorded, "allowed": limit}
        fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(record) + "\n").encode())  # one write: whole lines even from 2 workers
        finally:
            os.close(fd)
        os._exit(TIMEOUT_EXIT)

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
