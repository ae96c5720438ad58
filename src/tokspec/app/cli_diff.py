"""``tokspec diff A B``: compare two engines on an inputs file or on fuzzed text.

File mode: ``tokspec diff A B --inputs FILE [--json] [--report DIR] [--minimize]``.
Fuzz mode: ``tokspec diff A B --fuzz --time SECONDS [--seed N] [--save-corpus DIR]``.

Inputs file format: see :mod:`tokspec.app.inputs`. Exit codes: 0 every input agrees; 1 at least
one disagreement or engine fault; 2 usage or setup error (one line on stderr), including "nothing
compared" (an empty inputs file: zero inputs compared is not agreement). Options are checked
before any engine loads: ``--time``/``--shrink-time`` finite > 0, ``--show``/``--window`` >= 0,
``--max-findings``/``--workers`` >= 1, ``--report``/``--save-corpus`` a writable folder or creatable as one.
Everything printed that an engine supplied is escaped (:mod:`tokspec._escape`). Every disagreement is saved as a counterexample record (see
:mod:`tokspec.diff`) in ``--report DIR`` (default ``tokspec-reports/``). ``--json`` prints exactly
one summary object on stdout whose ``"counterexamples"`` is the list of record *paths*.
Progress (rate, inputs done, findings) goes to stderr once a run has taken more than two seconds.

Fuzz mode alternates, in one-second slices, two seeded text sources: tokspec's own generators (the
corpus generators of :mod:`tokspec.corpus`, adversarial repetitions, corpus slices) and the public
hypothesis strategies of :mod:`tokspec.fuzz.strategies` (Unicode-category text, shaped text,
repetitions), both with vocabulary-aware text made of the token surfaces engine A produces on the
small corpus. Hypothesis serves as a generator only there. Both also draw long texts (1,000
characters to 2 MiB, :mod:`tokspec.longtext`) with up to ``LONG_SHARE`` of their cost. It shrinks each disagreement with
:func:`tokspec.minimize.minimize_text` keeping its classification, and reports each distinct
minimized text once. Shrinking may run past ``--time`` by at most ``--shrink-time`` per finding. Engine faults count as one
finding per distinct fault message (input text cut out); other findings per distinct minimized text.

Parallelism: ``--workers N`` (default: the usable cores) shards the inputs, streamed in batches, over
N spawned processes that each load the engines once (``cmd:`` engines: one subprocess per worker);
records, printed reports, ``--json`` and the exit status are those of ``--workers 1``, in input order
(only ``seconds`` differs). ``--scheduler local|tcp://HOST:8786`` does the same on Dask workers
(``tokspec[dask]``); inputs may then (as always) be a directory or glob of shards. Fuzz mode runs one
generator per worker with seeds ``seed + k * 1000003`` (worker 0 keeps ``--seed``; "input #" of a
finding counts within its worker) and de-duplicates findings across workers as within one.

Concurrency stage (after the comparisons, in this process): each engine is called from ``--threads N``
threads at once (default ``$TOKSPEC_THREADS``, else cores + 2; ``0`` skips) on a sample of the inputs and compared with its own
serial result; a fault is one more disagreement of class "not thread-safe" with a replayable thread
record (:mod:`tokspec.app.threads_stage`). ``cmd:`` engines are exempt, declared-unsafe ones skipped
(said on stderr); each engine's note is in the ``--json`` summary's ``"concurrency"``.

Out of scope: Ray (the executor interface of :mod:`tokspec.app.executors` leaves room), fuzzing on Dask.
"""

from __future__ import annotations

import argparse
import multiprocessing
import queue
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tokspec._escape import dumps, escape
from tokspec.app._capacity import cap_workers
from tokspec.app._pool_watch import fuzz_deadline, overdue_workers
from tokspec.app._checks import ArgumentError, at_least, check_output_dir, positive_seconds
from tokspec.app.diff_tasks import (DiffJob, Finding, FuzzParams, close_engines, diff_batch, engines_for,
                                    fuzz_loop, fuzz_process)
from tokspec.app.executors import make_executor, usable_cores
from tokspec.app.inputs import InputFileError, batches, iter_inputs, read_inputs
from tokspec.app.threads_stage import diff_stage, stage_threads
from tokspec.diff import write_record
from tokspec.errors import TokspecError

__all__ = ["add_arguments", "run", "main", "read_inputs", "InputFileError"]


# ----------------------------------------------------------------------------- arguments

_EPILOG = """\
inputs FILE, decided per file: *.json = one JSON object with a string "text"
(e.g. a counterexample record); *.jsonl, or a first non-empty line that is a
JSON object with "text" = JSON Lines; otherwise plain UTF-8, one input per line.

exit status: 0 all inputs agree, 1 a disagreement or engine fault, 2 usage or
setup error. Records: --report DIR; --json prints one summary object whose
"counterexamples" are record paths. cmd: engines: see docs/protocol.md."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``diff``'s arguments to ``parser`` (the ``tokspec diff`` subcommand parser)."""
    parser.description = "Compare two engines' token ids and character offsets."
    parser.epilog = _EPILOG
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.add_argument("a", metavar="A", help="first engine name (see `tokspec engines`)")
    parser.add_argument("b", metavar="B", help="second engine name")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--inputs", metavar="FILE", help="inputs file (.jsonl, .json or plain text lines)")
    mode.add_argument("--fuzz", action="store_true", help="search for disagreements with generated text")
    parser.add_argument("--time", type=float, default=10.0, metavar="SECONDS",
                        help="fuzz: search time budget (default 10)")
    parser.add_argument("--seed", type=int, default=0, metavar="N",
                        help="fuzz: random seed; the same seed tries the same texts (default 0)")
    parser.add_argument("--max-findings", type=int, default=5, metavar="N",
                        help="fuzz: stop after N distinct minimized counterexamples (default 5)")
    parser.add_argument("--minimize-seconds", "--shrink-time", dest="shrink_time", type=float, default=20.0,
                        metavar="SECONDS", help="time budget for minimizing one counterexample (default 20; "
                        "--shrink-time is the old name)")
    parser.add_argument("--save-corpus", metavar="DIR",
                        help="fuzz: also write each minimized counterexample record into DIR")
    parser.add_argument("--minimize", action="store_true",
                        help="file mode: minimize each disagreement before recording it")
    parser.add_argument("--json", action="store_true", help="print one JSON summary object on stdout")
    parser.add_argument("--reports", "--report", dest="report", metavar="DIR", default="tokspec-reports",
                        help="where counterexample records go (default tokspec-reports/; --report is the old name)")
    parser.add_argument("--show", type=int, default=10, metavar="N",
                        help="print at most N disagreements in full (default 10)")
    parser.add_argument("--window", type=int, default=3, metavar="W",
                        help="tokens of context on each side of the first divergence (default 3)")
    parser.add_argument("--special", action="store_true",
                        help="compare special mode (special tokens in the text are matched): "
                             "the same as naming the engines special:A special:B (tokspec.special_mode)")
    parser.add_argument("--allowed-special", metavar="IDS", default=None,
                        help="special mode with tiktoken's refusal: only these special ids (comma-separated) are "
                             "matched, a text spelling any other special token is refused; 'none': tiktoken's "
                             "default encode(text), every special token refused (special-allow:IDS:A / "
                             "special-refuse:A); implies --special")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr (default: every "
                        "second on a terminal, every 30 s into a log, TOKSPEC_PROGRESS_SECONDS)")
    parser.add_argument("--raw", action="store_true",
                        help="--inputs: each file is one input, its raw bytes decoded as the fuzz harness "
                             "does (UTF-8, errors='replace'): replays libFuzzer crash-* files")
    parser.add_argument("--compare", choices=("all", "ids"), default="all", dest="compare_on",
                        help="what must agree: 'all' = ids and offsets (default), 'ids' = ids only (for "
                             "libraries that return ids; also chosen when an engine declares no offsets)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="worker processes (default: the usable cores; 1 = this process only)")
    parser.add_argument("--threads", type=int, default=None, metavar="N",
                        help="concurrency stage: call each engine from N threads at once on a sample "
                             "of the inputs (default: $TOKSPEC_THREADS, else cores + 2; 0 skips; see "
                             "tokspec.app.threads_stage)")
    parser.add_argument("--scheduler", metavar="ADDRESS",
                        help="file mode on Dask: 'local' (a LocalCluster of --workers processes) or "
                             "tcp://HOST:8786; needs tokspec[dask]")


# ----------------------------------------------------------------------------- progress and results


class _Progress:
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
class _Results:
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


def _report(where: str, name: str, record: dict[str, Any], display: str, args: argparse.Namespace,
            results: _Results, out: TextIO) -> None:
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


# ----------------------------------------------------------------------------- file mode


def _run_file(args: argparse.Namespace, results: _Results, out: TextIO, err: TextIO | None) -> None:
    """Stream the inputs in batches through the executor; report in input order (identical output
    for any number of workers). A validation pass first: a bad inputs file is exit 2 before any
    record is written."""
    from tokspec.app.inputs import iter_raw_inputs

    read = iter_raw_inputs if getattr(args, "raw", False) else iter_inputs
    total = n_batches = 0
    for batch in batches(read(args.inputs)):
        total, n_batches = total + len(batch), n_batches + 1
    jobs = (DiffJob(args.a, args.b, args.report, args.window, args.minimize, args.shrink_time, batch,
                    _compare_on(args))
            for batch in batches(read(args.inputs)))
    # One batch gains nothing from workers; keep the engines loaded here (and the start-up cost low).
    workers = args.workers if args.scheduler else min(args.workers, n_batches)
    if args.scheduler in (None, "local") and workers > 1:  # processes started here: memory allows?
        workers = cap_workers(args.workers, jobs=n_batches, err=err)
    if workers > 1 or args.scheduler:
        close_engines()  # the workers load their own; this process' copy was for setup checks
    executor = make_executor(workers, args.scheduler)
    progress = _Progress(err, "diff")
    try:
        for _infos, items in executor.map(diff_batch, jobs):
            for item in items:
                results.add(item[0])
                if item[0] is not None:
                    _report(*item[1:], args, results, out)
            progress.tick(lambda s: f"{results.inputs}/{total} inputs ({results.inputs / s:.0f}/s), "
                                    f"{results.disagreed} disagreed")
    finally:
        executor.close()


# ----------------------------------------------------------------------------- fuzz mode


class _Findings:
    """Fuzz findings accepted so far, de-duplicated across workers by :func:`finding_key`."""

    def __init__(self, args: argparse.Namespace, results: _Results, out: TextIO):
        self.args, self.results, self.out = args, results, out
        self.seen: set[tuple[Any, ...]] = set()  # causes (tokspec.cluster): --max-findings counts them

    def done(self) -> bool:
        return len(self.seen) >= self.args.max_findings

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
        _report(where, f.name, f.record, f.display, self.args, self.results, self.out)
        if self.args.save_corpus and f.corpus_record is not None:
            write_record(f.corpus_record, Path(self.args.save_corpus) / f.name)


def _fuzz_parallel(params: FuzzParams, args: argparse.Namespace, found: _Findings, progress: _Progress
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
                    error, _ = error or msg[1], stop.set()
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


def _run_fuzz(args: argparse.Namespace, results: _Results, out: TextIO, err: TextIO | None) -> None:
    if args.scheduler:
        raise TokspecError("--scheduler works with --inputs; fuzz mode uses --workers on this machine")
    params = FuzzParams(args.a, args.b, args.time, args.max_findings, args.shrink_time, args.report,
                        args.save_corpus, args.window, _compare_on(args))
    found = _Findings(args, results, out)
    progress = _Progress(err, "fuzz")
    if args.workers > 1:
        args.workers = cap_workers(args.workers, err=err)  # one process each: memory allows?
    if args.workers > 1:
        close_engines()
        names, counts = _fuzz_parallel(params, args, found, progress)
    else:
        names, counts = fuzz_loop(params, args.seed, found.accept, found.done, lambda n: progress.tick(
            lambda s: f"{n} inputs tried ({n / s:.0f}/s), {len(found.seen)} causes"))
    results.generators = names
    for classification, n in counts.items():
        results.add(classification, n)


# ----------------------------------------------------------------------------- entry points


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse option values that cannot work (module docstring), before any engine loads."""
    positive_seconds(args.time, "--time")
    positive_seconds(args.shrink_time, "--shrink-time")
    at_least(args.max_findings, 1, "--max-findings")
    at_least(args.show, 0, "--show")
    at_least(args.window, 0, "--window")
    at_least(args.workers, 1, "--workers")
    at_least(getattr(args, "threads", None), 0, "--threads")
    stage_threads(getattr(args, "threads", None))  # a bad $TOKSPEC_THREADS fails before any engine loads
    check_output_dir(args.report, "--report")
    if args.save_corpus:
        check_output_dir(args.save_corpus, "--save-corpus")


def _compare_on(args: argparse.Namespace) -> str:
    return str(getattr(args, "compare_on", "all") or "all")


def _ids_note(results: _Results, args: argparse.Namespace) -> str | None:
    """Why this pair was compared on ids alone (None when offsets were compared too)."""
    if _compare_on(args) == "ids":
        return "compared on ids only (--compare ids): offsets were not compared"
    silent = [e["name"] for e in results.engines if not e.get("offsets", True)]
    if silent:
        return f"compared on ids only: {escape(', '.join(silent))} declares no offsets"
    return None


def _print_summary(results: _Results, args: argparse.Namespace, out: TextIO) -> None:
    note = _ids_note(results, args)
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


def run(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``tokspec diff`` with parsed ``args``; return the exit code (0, 1 or 2; module docstring)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    if getattr(args, "workers", None) is None:
        args.workers = usable_cores()
    args.scheduler = getattr(args, "scheduler", None)
    if getattr(args, "special", False) or getattr(args, "allowed_special", None) is not None:
        from tokspec.special_mode import mode_name  # special mode is an engine of its own
        args.a, args.b = (mode_name(n, getattr(args, "allowed_special", None)) for n in (args.a, args.b))
    try:
        _check_arguments(args)
        a, b = engines_for(args.a, args.b, _compare_on(args))  # setup errors first, whatever the executor
        results = _Results([asdict(a.info), asdict(b.info)], "fuzz" if args.fuzz else "file")
        start = time.monotonic()
        (_run_fuzz if args.fuzz else _run_file)(args, results, out, None if args.quiet else err)
        diff_stage(args, (a, b), results, out, None if args.quiet else err)  # cmd: ones are not called
        results.seconds = time.monotonic() - start
        if results.inputs == 0:
            source = "no text was generated within --time" if args.fuzz else \
                f"the inputs file {args.inputs!r} holds no input"
            raise ArgumentError(f"nothing compared: {source} (zero inputs compared is not agreement)")
    except BrokenPipeError:
        raise  # stdout closed early: tokspec.app.cli.main ends quietly
    except (TokspecError, OSError) as exc:
        print(f"tokspec diff: error: {escape(exc)}", file=err)
        return 2
    finally:
        close_engines()
    _print_summary(results, args, out)
    return 0 if results.disagreed == 0 else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tokspec.app.cli_diff A B ...``: the subcommand on its own (same exit codes)."""
    parser = argparse.ArgumentParser(prog="tokspec diff", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
