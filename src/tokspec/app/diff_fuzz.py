"""Fuzz mode of ``tokspec diff`` (:mod:`tokspec.app.cli_diff`): one loop in this process, or one
spawned worker per ``--workers`` (seeds ``seed + k * 1000003``) whose findings are merged here and
de-duplicated by cause; ``--max-findings`` counts causes. A worker that dies or overruns its deadline
is an error, not a silent end (:mod:`tokspec.app._pool_watch`).
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue
import time
from collections import Counter
from pathlib import Path
from typing import Any, TextIO

from tokspec.app._capacity import cap_workers
from tokspec.app._pool_watch import fuzz_deadline, overdue_workers
from tokspec.app.diff_results import DiffResults, Progress, compare_on, report_record
from tokspec.app.diff_tasks import Finding, FuzzParams, close_engines, fuzz_loop, fuzz_process
from tokspec.diff import write_record
from tokspec.errors import TokspecError

__all__ = ["FuzzFindings", "fuzz_parallel", "run_fuzz"]


class FuzzFindings:
    """Fuzz findings accepted so far, de-duplicated across workers by :func:`finding_key`."""

    def __init__(self, args: argparse.Namespace, results: DiffResults, out: TextIO):
        self.args, self.results, self.out = args, results, out
        self.seen: set[tuple[Any, ...]] = set()  # causes (tokspec.cluster): --max-findings counts them

    def done(self) -> bool:
        return bool(len(self.seen) >= self.args.max_findings)

    def accept(self, f: Finding) -> None:
        if f.members:
            self.results.count_cause(f.cause_key, f.cause_name, f.members)
            return
        key = f.cause_key or f.key
        if key in self.seen or self.done():
            return
        self.seen.add(key)
        self.results.count_cause(key, f.cause_name, 0, f"{Path(self.args.report) / f.name}")
        where = f"finding {len(self.seen)} (input #{f.input_number}, {f.found_chars} -> {f.chars} chars)"
        report_record(where, f.name, f.record, f.display, self.args, self.results, self.out)
        if self.args.save_corpus and f.corpus_record is not None:
            write_record(f.corpus_record, Path(self.args.save_corpus) / f.name)


def fuzz_parallel(params: FuzzParams, args: argparse.Namespace, found: FuzzFindings, progress: Progress
                   ) -> tuple[list[str], Counter[str | None]]:
    """One spawned fuzz worker per ``--workers``, seeds ``seed + k * 1000003``; findings merged here."""
    ctx = multiprocessing.get_context("spawn")
    channel, stop = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=fuzz_process, args=(params, args.seed + k * 1_000_003, channel, stop),
                         daemon=True) for k in range(args.workers)]
    for p in procs:
        p.start()
    counts: Counter[str | None] = Counter()
    names: list[str] = []
    ticks: dict[int, int] = {}
    running, error = len(procs), None
    deadline = fuzz_deadline(args.time, args.shrink_time)
    try:
        while running:
            try:
                msg = channel.get(timeout=0.5)
            except queue.Empty:
                if not any(p.is_alive() for p in procs) and channel.empty():
                    error = error or "a fuzz worker died without reporting"
                    break
                error = error or overdue_workers(procs, deadline, args.time)
                if error:
                    break
                continue
            if msg[0] == "finding":
                found.accept(msg[1])
                if found.done():
                    stop.set()
            elif msg[0] == "tick":
                ticks[msg[1]] = msg[2]
                progress.tick(lambda s: f"{sum(ticks.values())} inputs tried "
                                        f"({sum(ticks.values()) / s:.0f}/s), {len(found.seen)} causes")
            else:
                running -= 1
                if msg[0] == "error":
                    error = error or msg[1]
                    stop.set()
                else:
                    names, counts = msg[1], counts + msg[2]
    finally:
        stop.set()
        for p in procs:
            p.join(timeout=max(2.0, min(30.0, deadline - time.monotonic())))
            if p.is_alive():
                p.kill()
                p.join(timeout=5)
    if error:
        raise TokspecError(error)
    return names, counts


def run_fuzz(args: argparse.Namespace, results: DiffResults, out: TextIO, err: TextIO | None) -> None:
    if args.scheduler:
        raise TokspecError("--scheduler works with --inputs; fuzz mode uses --workers on this machine")
    params = FuzzParams(args.a, args.b, args.time, args.max_findings, args.shrink_time, args.report,
                        args.save_corpus, args.window, compare_on(args))
    found = FuzzFindings(args, results, out)
    progress = Progress(err, "fuzz")
    if args.workers > 1:
        args.workers = cap_workers(args.workers, err=err)  # one process each: memory allows?
    if args.workers > 1:
        close_engines()
        names, counts = fuzz_parallel(params, args, found, progress)
    else:
        names, counts = fuzz_loop(params, args.seed, found.accept, found.done, lambda n: progress.tick(
            lambda s: f"{n} inputs tried ({n / s:.0f}/s), {len(found.seen)} causes"))
    results.generators = names
    for classification, n in counts.items():
        results.add(classification, n)
