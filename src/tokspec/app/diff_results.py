"""What ``tokspec diff`` (:mod:`tokspec.app.cli_diff`) counts, writes and prints: progress lines,
the run's tallies (:class:`DiffResults`, one cause per tokspec.cluster key), writing each record once
(file mode: one record per cause), and the closing summary ("N findings in K causes", the ids-only
note, or ``--json``). Shared by its file and fuzz modes.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tokspec._escape import dumps, escape
from tokspec.diff import write_record

__all__ = ["DiffResults", "Progress", "compare_on", "ids_note", "print_summary", "report_record"]


class Progress:
    """Rate-limited progress lines on a stream: silent for the first 2 s, then once per second on a
    terminal, every 30 s into a log (:mod:`tokspec.app._progress`)."""

    def __init__(self, stream: TextIO | None, label: str):
        from tokspec.app._progress import progress_interval

        self.stream, self.label = stream, label
        self.every = progress_interval(stream)
        self.start = time.monotonic()
        self.next = self.start + max(2.0, self.every)

    def tick(self, message: Callable[[float], str]) -> None:
        now = time.monotonic()
        if self.stream is None or now < self.next:
            return
        self.next = now + self.every
        elapsed = now - self.start
        print(f"{self.label}: {elapsed:.1f}s, {message(elapsed)}", file=self.stream, flush=True)


@dataclass
class DiffResults:
    engines: list[dict[str, Any]]
    mode: str
    inputs: int = 0
    agreed: int = 0
    disagreed: int = 0
    faults: int = 0
    counterexamples: list[str] = field(default_factory=list)
    classifications: Counter[str] = field(default_factory=Counter)
    generators: list[str] = field(default_factory=list)
    seconds: float = 0.0
    concurrency: list[str] = field(default_factory=list)  # the concurrency stage's notes
    causes: dict[Any, dict[str, Any]] = field(default_factory=dict)

    def count_cause(self, key: Any, name: str, members: int, record: str | None = None) -> bool:
        """Count ``members`` findings of a cause (tokspec.cluster); True if the cause is new."""
        new = key not in self.causes
        entry = self.causes.setdefault(key, {"name": name, "findings": 0, "record": record})
        entry["findings"] += members
        if record and not entry["record"]:
            entry["record"] = record
        return new

    def add(self, classification: str | None, count: int = 1) -> None:
        self.inputs += count
        if classification is None:
            self.agreed += count
            return
        self.disagreed += count
        self.faults += count * (classification == "engine fault")
        self.classifications[classification] += count

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out["classifications"] = dict(self.classifications)
        out["seconds"] = round(self.seconds, 3)
        out["causes"] = [{**v, "findings": max(1, v["findings"])} for v in self.causes.values()]
        if self.mode == "file":
            del out["generators"]
        return out


def report_record(where: str, name: str, record: dict[str, Any], display: str, args: argparse.Namespace,
            results: DiffResults, out: TextIO) -> None:
    """Write the record (once per name), print it (unless --json or past --show), and count it."""
    path = Path(args.report) / name
    cause = record.get("cause")
    if results.mode == "file" and isinstance(cause, dict):  # one record per cause (tokspec.cluster)
        key = dumps(cause.get("key"))
        if not results.count_cause(key, str(cause.get("name")), 1, str(path)):
            return
    if str(path) not in results.counterexamples:
        write_record(record, path)
        results.counterexamples.append(str(path))
    if not args.json and len(results.counterexamples) <= args.show:
        print(f"--- {where}: {display}", file=out)
        print(f"  record: {escape(path)}", file=out)


def compare_on(args: argparse.Namespace) -> str:
    return str(getattr(args, "compare_on", "all") or "all")


def ids_note(results: DiffResults, args: argparse.Namespace) -> str | None:
    """Why this pair was compared on ids alone (None when offsets were compared too)."""
    if compare_on(args) == "ids":
        return "compared on ids only (--compare ids): offsets were not compared"
    silent = [e["name"] for e in results.engines if not e.get("offsets", True)]
    if silent:
        return f"compared on ids only: {escape(', '.join(silent))} declares no offsets"
    return None


def print_summary(results: DiffResults, args: argparse.Namespace, out: TextIO) -> None:
    note = ids_note(results, args)
    if args.json:
        summary = results.summary()
        summary["compared"] = "ids" if note else "ids and offsets"
        print(dumps(summary), file=out)
        return
    if note:
        print(f"note: {note}", file=out)
    hidden = len(results.counterexamples) - args.show
    if hidden > 0:
        print(f"... {hidden} more counterexample records not shown", file=out)
    names = escape(" vs ".join(e["name"] for e in results.engines))
    if results.causes:
        counts = [max(1, c["findings"]) for c in results.causes.values()]
        n, k = sum(counts), len(counts)
        print(f"{n} finding{'' if n == 1 else 's'} in {k} cause{'' if k == 1 else 's'}:", file=out)
        for c, count in zip(results.causes.values(), counts):
            print(f"  {count:>5} x {escape(c['name'])}  ({escape(c['record'] or '')})", file=out)
    verdict = "all agree" if results.disagreed == 0 else f"records in {escape(args.report)}/"
    print(f"{names}: {results.inputs} inputs, {results.agreed} agreed, {results.disagreed} disagreed "
          f"({results.faults} engine faults) in {results.seconds:.1f}s; {verdict}", file=out)
