"""What a harness process prints, read: libFuzzer's final statistics (``stat::``), its status lines
(``#N ... cov: C ... exec/s: R``), its exit codes, and the harness protocol's own lines
(``TOKSPEC-FINDING``, ``TOKSPEC-EXECS``, ``TOKSPEC-KNOWN``, ``TOKSPEC-UNAVAILABLE``).

Used by the scheduler (``tokspec.fuzz._schedule``, which re-exports these names) and the runner.
The text is a child's output: hostile data like any input, so every reader here takes what matches
and ignores the rest (no eval, no trusted structure).
"""

from __future__ import annotations

import re

__all__ = ["parse_stats", "late_rate", "exit_note", "LIBFUZZER_EXITS"]


def parse_stats(stderr: str) -> tuple[dict[str, float], list[tuple[str, float, str]], str]:
    """libFuzzer final stats, the last ``cov:`` value, finding lines, and an unavailability note."""
    stats: dict[str, float] = {}
    for key, value in re.findall(r"^stat::(\w+):\s+(\d+)", stderr, flags=re.M):
        stats[key] = float(value)
    cov = re.findall(r"\bcov: (\d+)", stderr)
    if cov:
        stats["cov"] = float(cov[-1])
    found = [(m[0], float(m[1]), m[2]) for m in re.findall(r"^TOKSPEC-FINDING (\S+) (\S+) (.+)$", stderr, re.M)]
    if "number_of_executed_units" not in stats:  # exited at a finding or was killed: no final stats
        execs = re.findall(r"^TOKSPEC-EXECS (\d+)$", stderr, re.M) or re.findall(r"^#(\d+)\s", stderr, re.M)
        if execs:
            stats["number_of_executed_units"] = float(max(int(x) for x in execs))
    known = re.findall(r"^TOKSPEC-KNOWN (\d+) ", stderr, re.M)
    if known:
        stats["known_hits"] = float(known[-1])
    note = ""
    m = re.search(r"^TOKSPEC-UNAVAILABLE (.*)$", stderr, re.M)
    if m:
        note = "unavailable: " + m.group(1)
    return stats, found, note


#: libFuzzer's own exit codes (its FuzzingOptions defaults), named in the table's note column
LIBFUZZER_EXITS = {70: "timeout", 71: "out of memory", 72: "interrupted"}


def late_rate(stderr: str) -> float | None:
    """Inputs per second over (at least) the second half of a libFuzzer run, from its status lines
    (``#N ... exec/s: R``: ``R`` is ``N`` over the whole seconds since start, so ``N / R`` dates a
    line): from the last line dated at or before half the last line's time (else the first line) to
    the last line (``DONE``). None without two dated lines at least a second apart."""
    dated = [(int(n), int(n) / int(r)) for n, r in re.findall(r"^#(\d+)\s.*?\bexec/s: (\d+)", stderr, re.M)
             if int(r) > 0]
    if len(dated) < 2:
        return None
    n1, t1 = dated[-1]
    n0, t0 = ([(n, t) for n, t in dated if t <= t1 / 2] or dated[:1])[-1]
    if t1 - t0 < 1.0 or n1 <= n0:
        return None
    return (n1 - n0) / (t1 - t0)


def exit_note(returncode: int | None, stderr_tail: str = "") -> str:
    """The table note for a harness exit code that is neither success nor a finding."""
    what = LIBFUZZER_EXITS.get(returncode or 0)
    if what == "out of memory":  # its RSS passed -rss_limit_mb; libFuzzer wrote the input as oom-<sha1>
        m = re.search(r"out-of-memory \((.*?)\)", stderr_tail)
        unit = re.search(r"Test unit written to (\S*oom-[0-9a-f]+)", stderr_tail)
        return (f"exit 71: libFuzzer out of memory ({m.group(1) if m else '-rss_limit_mb exceeded'})"
                + (f"; input {unit.group(1)}" if unit else ""))
    return f"exit {returncode}: libFuzzer {what}" if what else f"exit {returncode}"
