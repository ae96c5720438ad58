"""``tokspec diff A B``: compare two engines on an inputs file or on fuzzed text.

File mode: ``tokspec diff A B --inputs FILE [--json] [--report DIR] [--minimize]``.
Fuzz mode: ``tokspec diff A B --fuzz --time SECONDS [--seed N] [--save-corpus DIR]``.

Inputs file format: see :mod:`tokspec.app.inputs`. Exit codes: 0 every input agrees; 1 at least
one disagreement or engine fault; 2 usage or setup error (one line on stderr), including "nothing
compared" (an empty inputs file: zero inputs compared is not agreement). Options are checked
before any engine loads: ``--time``/``--shrink-time`` finite > 0, ``--show``/``--window`` >= 0,
``--max-findings`` >= 1, ``--report``/``--save-corpus`` a writable folder or creatable as one.
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

Out of scope: running engines in parallel (engines are called one input at a time, in order).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tokspec._escape import dumps, escape
from tokspec._types import Encoder
from tokspec.diff import Comparison, check_pair, compare, format_comparison, save_counterexample
from tokspec.errors import TokspecError
from tokspec.app._checks import (ArgumentError, at_least, check_output_dir, load_engine_checked,
                                 positive_seconds)
from tokspec.app.finder import Finder, Finding, minimized, run_search
from tokspec.app.inputs import InputFileError, read_inputs
from tokspec.app.search import LONG_SHARE, text_sources

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
    parser.add_argument("--seed", type=int, default=0, help="fuzz: random seed (default 0)")
    parser.add_argument("--max-findings", type=int, default=5, metavar="N",
                        help="fuzz: stop after N distinct minimized counterexamples (default 5)")
    parser.add_argument("--shrink-time", type=float, default=20.0, metavar="SECONDS",
                        help="time budget for minimizing one counterexample (default 20)")
    parser.add_argument("--save-corpus", metavar="DIR",
                        help="fuzz: also write each minimized counterexample record into DIR")
    parser.add_argument("--minimize", action="store_true",
                        help="file mode: minimize each disagreement before recording it")
    parser.add_argument("--json", action="store_true", help="print one JSON summary object on stdout")
    parser.add_argument("--report", metavar="DIR", default="tokspec-reports",
                        help="where counterexample records go (default tokspec-reports/)")
    parser.add_argument("--show", type=int, default=10, metavar="N",
                        help="print at most N disagreements in full (default 10)")
    parser.add_argument("--window", type=int, default=3, metavar="W",
                        help="tokens of context on each side of the first divergence (default 3)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


# ----------------------------------------------------------------------------- progress and results


class _Progress:
    """Rate-limited progress lines on a stream: silent for the first 2 s, then once per second."""

    def __init__(self, stream: TextIO | None, label: str):
        self.stream, self.label = stream, label
        self.start = time.monotonic()
        self.next = self.start + 2.0

    def tick(self, message: Callable[[float], str]) -> None:
        now = time.monotonic()
        if self.stream is None or now < self.next:
            return
        self.next = now + 1.0
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

    def add(self, comparison: Comparison) -> None:
        self.inputs += 1
        if comparison.agree:
            self.agreed += 1
            return
        self.disagreed += 1
        self.faults += comparison.classification == "engine fault"
        self.classifications[str(comparison.classification)] += 1

    def summary(self) -> dict[str, Any]:
        out = asdict(self)
        out["classifications"] = dict(self.classifications)
        out["seconds"] = round(self.seconds, 3)
        if self.mode == "file":
            del out["generators"]
        return out


def _report(a: Encoder, b: Encoder, c: Comparison, where: str, args: argparse.Namespace,
            results: _Results, out: TextIO) -> Path:
    """Save the record of ``c``, print it (unless --json or past --show), and count it."""
    path = save_counterexample(a, b, c, args.report, width=args.window)
    if str(path) not in results.counterexamples:
        results.counterexamples.append(str(path))
    shown = len(results.counterexamples)
    if not args.json and shown <= args.show:
        print(f"--- {where}: {format_comparison(a, b, c, width=args.window)}", file=out)
        print(f"  record: {escape(path)}", file=out)
    return path


# ----------------------------------------------------------------------------- file mode


def _run_file(a: Encoder, b: Encoder, args: argparse.Namespace, out: TextIO, err: TextIO | None
              ) -> _Results:
    inputs = read_inputs(args.inputs)
    results = _Results([asdict(a.info), asdict(b.info)], "file")
    progress = _Progress(err, "diff")
    total = len(inputs)
    for where, text in inputs:
        c = compare(a, b, text)
        results.add(c)
        if not c.agree:
            if args.minimize:
                c = minimized(a, b, c, args.shrink_time)
                where += f" (minimized from {len(text)} to {len(c.text)} chars)"
            _report(a, b, c, where, args, results, out)
        progress.tick(lambda s: f"{results.inputs}/{total} inputs ({results.inputs / s:.0f}/s), "
                                f"{results.disagreed} disagreed")
    return results


# ----------------------------------------------------------------------------- fuzz mode


class _Fuzzer:
    """Fuzz mode's bookkeeping around the shared :class:`~tokspec.app.finder.Finder`."""

    def __init__(self, a: Encoder, b: Encoder, args: argparse.Namespace, out: TextIO):
        self.a, self.b, self.args, self.out = a, b, args, out
        self.results = _Results([asdict(a.info), asdict(b.info)], "fuzz")
        self.finder = Finder(a, b, max_findings=args.max_findings, shrink_seconds=args.shrink_time,
                             on_compare=self.results.add, on_finding=self.on_finding)

    def on_finding(self, finding: Finding) -> None:
        small, text = finding.comparison, finding.original.text
        where = (f"finding {len(self.finder.findings)} (input #{finding.input_number}, "
                 f"{len(text)} -> {len(small.text)} chars)")
        _report(self.a, self.b, small, where, self.args, self.results, self.out)
        if self.args.save_corpus:
            save_counterexample(self.a, self.b, small, self.args.save_corpus, width=self.args.window)


def _run_fuzz(a: Encoder, b: Encoder, args: argparse.Namespace, out: TextIO, err: TextIO | None
              ) -> _Results:
    sources = text_sources(a, args.seed, long_share=LONG_SHARE)
    fuzzer = _Fuzzer(a, b, args, out)
    fuzzer.results.generators = [s.name for s in sources]
    progress = _Progress(err, "fuzz")
    run_search(fuzzer.finder, sources, seconds=args.time,
               tick=lambda: progress.tick(lambda s: f"{fuzzer.results.inputs} inputs tried "
                                                    f"({fuzzer.results.inputs / s:.0f}/s), "
                                                    f"{len(fuzzer.finder.findings)} findings"))
    return fuzzer.results


# ----------------------------------------------------------------------------- entry points


def _check_arguments(args: argparse.Namespace) -> None:
    """Refuse option values that cannot work (module docstring), before any engine loads."""
    positive_seconds(args.time, "--time")
    positive_seconds(args.shrink_time, "--shrink-time")
    at_least(args.max_findings, 1, "--max-findings")
    at_least(args.show, 0, "--show")
    at_least(args.window, 0, "--window")
    check_output_dir(args.report, "--report")
    if args.save_corpus:
        check_output_dir(args.save_corpus, "--save-corpus")


def _load(name: str) -> Encoder:
    return load_engine_checked(name)


def _print_summary(results: _Results, args: argparse.Namespace, out: TextIO) -> None:
    if args.json:
        print(dumps(results.summary()), file=out)
        return
    hidden = len(results.counterexamples) - args.show
    if hidden > 0:
        print(f"... {hidden} more counterexample records not shown", file=out)
    names = escape(" vs ".join(e["name"] for e in results.engines))
    verdict = "all agree" if results.disagreed == 0 else f"records in {escape(args.report)}/"
    print(f"{names}: {results.inputs} inputs, {results.agreed} agreed, {results.disagreed} disagreed "
          f"({results.faults} engine faults) in {results.seconds:.1f}s; {verdict}", file=out)


def run(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``tokspec diff`` with parsed ``args``; return the exit code (0, 1 or 2; module docstring)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    engines: list[Encoder] = []
    try:
        _check_arguments(args)
        engines = [_load(args.a), _load(args.b)]
        a, b = engines
        check_pair(a, b)
        start = time.monotonic()
        mode = _run_fuzz if args.fuzz else _run_file
        results = mode(a, b, args, out, None if args.quiet else err)
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
        for engine in engines:
            engine.close()
    _print_summary(results, args, out)
    return 0 if results.disagreed == 0 else 1


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m tokspec.app.cli_diff A B ...``: the subcommand on its own (same exit codes)."""
    parser = argparse.ArgumentParser(prog="tokspec diff", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
