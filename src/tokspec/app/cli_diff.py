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
import functools
import sys
import time
from collections.abc import Sequence
from dataclasses import asdict
from typing import TextIO

from tokspec._escape import escape
from tokspec.app._capacity import cap_workers
from tokspec.app._checks import ArgumentError, at_least, check_output_dir, positive_seconds
from tokspec.app.diff_fuzz import run_fuzz
from tokspec.app.diff_results import DiffResults, Progress, compare_on, print_summary, report_record
from tokspec.app.diff_tasks import DiffJob, close_engines, diff_batch, engines_for
from tokspec.app.executors import make_executor, usable_cores
from tokspec.app.inputs import InputFileError, batches, iter_inputs, read_inputs
from tokspec.app.threads_stage import diff_stage, stage_threads
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


# ----------------------------------------------------------------------------- file mode


def _run_file(args: argparse.Namespace, results: DiffResults, out: TextIO, err: TextIO | None) -> None:
    """Stream the inputs in batches through the executor; report in input order (identical output
    for any number of workers). A validation pass first: a bad inputs file is exit 2 before any
    record is written."""
    from tokspec.app.inputs import iter_raw_inputs
    from tokspec.fuzz.targets import long_text_cap, pretoken_cap

    pair = (args.a, args.b)
    read = (functools.partial(iter_raw_inputs, cap=long_text_cap(pair), pretokens=pretoken_cap(pair))
            if getattr(args, "raw", False) else iter_inputs)
    total = n_batches = 0
    for batch in batches(read(args.inputs)):
        total, n_batches = total + len(batch), n_batches + 1
    jobs = (DiffJob(args.a, args.b, args.report, args.window, args.minimize, args.shrink_time, batch,
                    compare_on(args))
            for batch in batches(read(args.inputs)))
    # One batch gains nothing from workers; keep the engines loaded here (and the start-up cost low).
    workers = args.workers if args.scheduler else min(args.workers, n_batches)
    if args.scheduler in (None, "local") and workers > 1:  # processes started here: memory allows?
        workers = cap_workers(args.workers, jobs=n_batches, err=err)
    if workers > 1 or args.scheduler:
        close_engines()  # the workers load their own; this process' copy was for setup checks
    executor = make_executor(workers, args.scheduler)
    progress = Progress(err, "diff")
    try:
        for _infos, items in executor.map(diff_batch, jobs):
            for item in items:
                results.add(item[0])
                if item[0] is not None:
                    where, name, record, display = item[1:]
                    report_record(where, name, record, display, args, results, out)
            progress.tick(lambda s: f"{results.inputs}/{total} inputs ({results.inputs / s:.0f}/s), "
                                    f"{results.disagreed} disagreed")
    finally:
        executor.close()


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
        a, b = engines_for(args.a, args.b, compare_on(args))  # setup errors first, whatever the executor
        results = DiffResults([asdict(a.info), asdict(b.info)], "fuzz" if args.fuzz else "file")
        start = time.monotonic()
        (run_fuzz if args.fuzz else _run_file)(args, results, out, None if args.quiet else err)
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
    print_summary(results, args, out)
    return 0 if results.disagreed == 0 else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tokspec.app.cli_diff A B ...``: the subcommand on its own (same exit codes)."""
    parser = argparse.ArgumentParser(prog="tokspec diff", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
