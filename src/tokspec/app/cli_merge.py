"""``tokspec merge-check ENGINE --strategy NAME``: does a chunked merge equal serial encoding?

Inputs come from ``--inputs FILE`` (JSON Lines with a ``"text"`` field, plain UTF-8 lines, or one
merge report JSON), from ``--fuzz`` (generated for ``--time`` seconds: adversarial repetitions,
texts with interesting characters placed at chunk edges, multilingual corpus texts, texts built
from the engine's own vocabulary; chunk length and overlap drawn at random unless given), or by
default from ``tokspec.corpus`` (small). Each difference is minimized (ddmin, ``tokspec.minimize``)
and written as a JSON + HTML report (``tokspec.app.merge_report``) under ``--report DIR``.

Fault model (the same as ``tokspec diff``): an engine that raises -- anything, ``sys.exit``
included; Ctrl-C excepted -- during the merge or the serial encoding is a finding of class
``"engine fault"`` with its own report (:func:`tokspec.app.merge_report.build_fault_report`),
minimized like the others (keeping the exception type), and the run goes on. A bad parameter the
strategy rejects (``MergeError``) stays a usage error. Each report's JSON and HTML paths are
printed as it is written; progress goes to stderr once a run takes over two seconds (``--quiet``).

Exit codes: 0 no difference found, 1 differences or engine faults found (reports written), 2 usage
or setup error -- also when nothing was compared (an empty inputs file). Options are checked
before the engine loads (``--time``/``--minimize-seconds`` finite > 0, ``--report`` a writable
folder or creatable as one). Out of scope: comparing two strategies with each other (compare each
with serial).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Iterator
from typing import Any

from tokspec import Encoder
from tokspec._escape import dumps, escape
from tokspec.app._checks import check_output_dir, load_engine_checked, positive_seconds
from tokspec.app.merge_findings import merge_outcome, report_finding
from tokspec.app.merge_fuzz_inputs import gen_text
from tokspec.errors import TokspecError

__all__ = ["add_arguments", "run", "read_inputs"]

class MergeCheckError(TokspecError):
    """Bad merge-check input (file or option); the message names it."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``merge-check`` (see module docstring)."""
    from tokspec.fast.merge_engines import STRATEGIES
    from tokspec.fast.parallel import BACKENDS

    parser.add_argument("engine", help="engine name, e.g. tiktoken:cl100k_base")
    parser.add_argument("--strategy", default="lopt", choices=sorted(STRATEGIES),
                        help="how chunks are cut and joined: " + "; ".join(
                            f"{n}: {STRATEGIES[n].description}" for n in sorted(STRATEGIES)) + " (default lopt)")
    parser.add_argument("--inputs", metavar="FILE", help="JSON Lines ({\"text\": ...}), plain UTF-8 lines, or a report")
    parser.add_argument("--fuzz", action="store_true", help="generate inputs for --time seconds")
    parser.add_argument("--time", type=float, default=10.0, metavar="SECONDS", help="fuzzing seconds (default 10)")
    parser.add_argument("--chunk-len", type=int, metavar="CHARS",
                        help="chunk length in characters (default: a quarter of each input; fuzz: random 1-64)")
    parser.add_argument("--overlap", type=int, metavar="CHARS", help="overlap in characters (overlap strategies; "
                        "default: the strategy's own)")
    parser.add_argument("--workers", type=int, metavar="N",
                        help="processes checking the inputs, each loading the engine once (default: the "
                             "usable cores; 1 = this process); same output as 1. --fuzz runs in this process")
    parser.add_argument("--chunk-workers", type=int, metavar="N",
                        help="workers encoding one text's chunks in parallel (default: serial)")
    parser.add_argument("--backend", choices=BACKENDS,
                        help="chunk parallelism backend (default auto with --chunk-workers)")
    parser.add_argument("--seed", type=int, default=0, metavar="N",
                        help="fuzz: random seed; the same seed checks the same texts (default 0)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--reports", "--report", dest="report", default="tokspec-merge-reports", metavar="DIR",
                        help="report folder (default tokspec-merge-reports/; --report is the old name)")
    parser.add_argument("--max-findings", "--max-reports", dest="max_reports", type=int, default=5, metavar="N",
                        help="stop after N differences (default 5; --max-reports is the old name)")
    parser.add_argument("--minimize-seconds", type=float, default=10.0, metavar="SECONDS",
                        help="time budget for minimizing one difference (default 10)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr (default: every "
                        "second on a terminal, every 30 s into a log, TOKSPEC_PROGRESS_SECONDS)")


def read_inputs(path: str) -> list[str]:
    """Texts from ``path`` by ``tokspec diff``'s rules (a record ``.json``, JSON Lines with "text",
    or plain UTF-8 lines; see :func:`tokspec.app.cli_diff.read_inputs`)."""
    from tokspec.app.inputs import read_inputs as read_located_inputs

    return [text for _, text in read_located_inputs(path)]


def _check_params(args: argparse.Namespace) -> None:
    for name in ("chunk_len", "workers", "chunk_workers", "max_reports"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise MergeCheckError(f"--{name.replace('_', '-')} must be >= 1, got {v}")
    if args.overlap is not None and args.overlap < 0:
        raise MergeCheckError(f"--overlap must be >= 0, got {args.overlap}")
    positive_seconds(args.time, "--time")
    positive_seconds(args.minimize_seconds, "--minimize-seconds")
    check_output_dir(args.report, "--report")


def _cases(engine: Encoder, args: argparse.Namespace, rng: random.Random
           ) -> Iterator[tuple[str, int, int | None]]:
    """Yield (text, chunk_len, overlap): from the inputs file/corpus, or fuzzed until the deadline."""
    from tokspec.app.inputs import iter_inputs
    from tokspec.corpus import build_corpus

    if not args.fuzz:
        texts = ((t for _, t in iter_inputs(args.inputs)) if args.inputs
                 else build_corpus(seed=args.seed, size="small"))
        for t in texts:
            yield t, args.chunk_len or max(1, -(-len(t) // 4)), args.overlap
        return
    corpus = read_inputs(args.inputs) if args.inputs else build_corpus(seed=args.seed, size="small")
    deadline = time.monotonic() + args.time
    while time.monotonic() < deadline:
        chunk_len = args.chunk_len or rng.randint(1, 64)
        overlap = args.overlap
        if overlap is None and args.strategy != "overlap-filter":  # overlap-filter: the blog's rule
            overlap = rng.choice([None, rng.randint(0, 64)])
        yield gen_text(engine, rng, corpus, chunk_len), chunk_len, overlap


class _Progress:
    """Progress lines on stderr: silent for the first 2 s, then at most once per second."""

    def __init__(self, quiet: bool):
        from tokspec.app._progress import progress_interval

        self.every = progress_interval(sys.stderr)
        self.start = time.monotonic()
        self.next = self.start + max(2.0, self.every)
        self.quiet = quiet

    def tick(self, n: int, found: int) -> None:
        now = time.monotonic()
        if self.quiet or now < self.next:
            return
        self.next = now + self.every
        elapsed = now - self.start
        print(f"merge-check: {elapsed:.1f}s, {n} inputs ({n / elapsed:.0f}/s), {found} reports",
              file=sys.stderr, flush=True)


def run(args: argparse.Namespace) -> int:
    """Run merge-check; return the exit code (module docstring)."""
    from tokspec.fast.merge_engines import STRATEGIES
    from tokspec.fast.parallel import Runner

    _check_params(args)
    engine = load_engine_checked(args.engine)
    try:
        return _run(engine, args, STRATEGIES, Runner)
    finally:
        engine.close()


_SHARD_ENGINES: dict[str, Encoder] = {}


def _check_shard(job: tuple[str, str, str, int, list[tuple[str, int, int | None]]]) -> list[bool]:
    """Worker side of ``--workers``: does the merge differ from serial (or fault), per case; the
    engine is loaded once per worker process."""
    from tokspec.fast.parallel import Runner

    name, strategy, backend, chunk_workers, cases = job
    if name not in _SHARD_ENGINES:
        _SHARD_ENGINES[name] = load_engine_checked(name)
    engine, runner = _SHARD_ENGINES[name], Runner(backend, chunk_workers)
    return [merge_outcome(engine, strategy, t, c, o, runner)[0] for t, c, o in cases]


def _verdicts(engine: Encoder, args: argparse.Namespace, runner: Any, backend: str, rng: random.Random
              ) -> Iterator[tuple[str, int, int | None, bool, BaseException | None]]:
    """(text, chunk_len, overlap, differs, fault) in input order. An inputs file of more than 32
    inputs is sharded over ``--workers`` processes (streamed, 32 cases a batch); a case they flag
    is checked again here for its fault object and report. Fuzz mode and the corpus run here."""
    from tokspec.app.executors import make_executor, usable_cores
    from tokspec.app.inputs import iter_inputs

    workers = args.workers or usable_cores()
    if args.fuzz or not args.inputs or workers == 1 or sum(1 for _ in iter_inputs(args.inputs)) <= 32:
        for text, chunk_len, overlap in _cases(engine, args, rng):
            yield (text, chunk_len, overlap, *merge_outcome(engine, args.strategy, text, chunk_len, overlap, runner))
        return

    def shards() -> Iterator[list[tuple[str, int, int | None]]]:
        batch: list[tuple[str, int, int | None]] = []
        for case in _cases(engine, args, rng):
            batch.append(case)
            if len(batch) == 32:
                yield batch
                batch = []
        if batch:
            yield batch

    executor = make_executor(workers)
    try:
        jobs = ((args.engine, args.strategy, backend, args.chunk_workers or 1, b) for b in shards())
        for batch, flags in zip(shards(), executor.map(_check_shard, jobs)):
            for (text, chunk_len, overlap), flagged in zip(batch, flags, strict=True):
                if flagged:
                    yield (text, chunk_len, overlap, *merge_outcome(engine, args.strategy, text, chunk_len, overlap, runner))
                else:
                    yield text, chunk_len, overlap, False, None
    finally:
        executor.close()


def _run(engine: Encoder, args: argparse.Namespace, strategies: Any, runner_class: Any) -> int:
    backend = args.backend or ("auto" if args.chunk_workers else "serial")
    runner = runner_class(backend, args.chunk_workers or 1)
    rng = random.Random(args.seed)
    n = agreed = 0
    found: list[dict[str, Any]] = []
    progress = _Progress(args.quiet)
    name = escape(engine.info.name)
    for text, chunk_len, overlap, differs, fault in _verdicts(engine, args, runner, backend, rng):
        n += 1
        progress.tick(n, len(found))
        if not differs:
            agreed += 1
            continue
        entry = report_finding(engine, args.strategy, text, chunk_len, overlap, runner, args, fault)
        found.append(entry)
        if not args.json:
            what = entry["classification"] + (f" ({entry['fault']})" if "fault" in entry else "")
            print(f"  {escape(what)}: {entry['chars']} chars -> {escape(entry['json'])} "
                  f"(HTML: {escape(entry['html'])})", flush=True)
        if len(found) >= args.max_reports:
            break
    if n == 0:
        source = "no text was generated within --time" if args.fuzz else \
            f"the inputs file {args.inputs!r} holds no input"
        raise MergeCheckError(f"nothing compared: {source} (zero inputs compared is not agreement)")
    faults = sum(f["classification"] == "engine fault" for f in found)
    summary = {"engines": [engine.info.name], "strategy": args.strategy,
               "lossless_claimed": strategies[args.strategy].lossless, "backend": runner.resolve(engine),
               "workers": runner.workers, "chunk_len": args.chunk_len, "overlap": args.overlap,
               "fuzz": args.fuzz, "inputs": n, "agreed": agreed, "disagreed": n - agreed,
               "faults": faults, "counterexamples": found}
    if args.strategy == "lopt":  # the rule decided from the engine's structure (or serial, and why)
        from tokspec.fast.merge_structure import decision_for

        decision, source = decision_for(engine)
        summary["lopt_rule"] = {"family": decision.family, "structure": source,
                                "rule": None if decision.rule is None else decision.rule.name,
                                "theorem_or_reason": decision.why}
    if args.json:
        print(dumps(summary))
    else:
        print(f"merge-check {name} --strategy {args.strategy}: {n} inputs, {agreed} agreed, "
              f"{n - agreed} disagreed ({faults} engine faults); "
              + (f"{len(found)} reports (JSON + HTML) in {escape(args.report)}/" if found else "no reports"))
        if "lopt_rule" in summary:
            print(f"  lopt rule ({summary['lopt_rule']['structure']}): {escape(decision.describe())}")
    return 1 if found else 0
