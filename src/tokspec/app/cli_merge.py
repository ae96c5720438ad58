"""``tokspec merge-check ENGINE --strategy NAME``: does a chunked merge equal serial encoding?

Inputs come from ``--inputs FILE`` (JSON Lines with a ``"text"`` field, plain UTF-8 lines, or one
merge report JSON), from ``--fuzz`` (generated for ``--time`` seconds: adversarial repetitions,
texts with interesting characters placed at chunk edges, multilingual corpus texts, texts built
from the engine's own vocabulary; chunk length and overlap drawn at random unless given), or by
default from ``tokspec.corpus`` (small). Each difference is minimized (ddmin, ``tokspec.minimize``)
and written as a JSON + HTML report (``tokspec.app.merge_report``) under ``--report DIR``.

Exit codes: 0 no difference found, 1 differences found (reports written), 2 usage error.
Out of scope: comparing two strategies with each other (compare each with serial).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tokspec import Encoder, Encoding, load_engine
from tokspec.errors import TokspecError

__all__ = ["add_arguments", "run", "read_inputs"]

_REPEAT_UNITS = ["a", "ab", " ", "  a", "1", "12 ", "\n", "\t", " the", "'s", "..", "é", "\u0301",
                 "中", "😀", "\u200d", "aaaa", "    ", "##", "▁", "A", "xyz"]


class MergeCheckError(TokspecError):
    """Bad merge-check input (file or option); the message names it."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``merge-check`` (see module docstring)."""
    from tokspec.fast.merge_engines import STRATEGIES
    from tokspec.fast.parallel import BACKENDS

    parser.add_argument("engine", help="engine name, e.g. tiktoken:cl100k_base")
    parser.add_argument("--strategy", default="lopt", choices=sorted(STRATEGIES))
    parser.add_argument("--inputs", help="JSON Lines ({\"text\": ...}), plain UTF-8 lines, or a report")
    parser.add_argument("--fuzz", action="store_true", help="generate inputs for --time seconds")
    parser.add_argument("--time", type=float, default=10.0, help="fuzzing seconds (default 10)")
    parser.add_argument("--chunk-len", type=int, help="chunk length in characters")
    parser.add_argument("--overlap", type=int, help="overlap in characters (overlap strategies)")
    parser.add_argument("--workers", type=int, help="parallel workers (default: serial checking)")
    parser.add_argument("--backend", choices=BACKENDS, help="parallel backend (default auto with --workers)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print a JSON summary")
    parser.add_argument("--report", default="tokspec-merge-reports", help="report folder")
    parser.add_argument("--max-reports", type=int, default=5, help="stop after this many differences")
    parser.add_argument("--minimize-seconds", type=float, default=10.0)


def read_inputs(path: str) -> list[str]:
    """Texts from ``path`` by ``tokspec diff``'s rules (a record ``.json``, JSON Lines with "text",
    or plain UTF-8 lines; see :func:`tokspec.app.cli_diff.read_inputs`)."""
    from tokspec.app.inputs import read_inputs as read_located_inputs

    return [text for _, text in read_located_inputs(path)]


def _vocab_words(engine: Encoder, rng: random.Random, k: int) -> list[str]:
    """Surfaces of random token ids (byte-level tokens decoded leniently; ## and ▁ undone)."""
    words = []
    token_bytes = getattr(engine, "token_bytes", None)
    for _ in range(k * 3):
        tid = rng.randrange(30000)
        try:
            w = token_bytes(tid).decode("utf-8", "ignore") if token_bytes else engine.token_piece(tid)
        except (TokspecError, KeyError, IndexError):
            continue
        w = w.removeprefix("##").replace("▁", " ")
        if w:
            words.append(w)
        if len(words) >= k:
            break
    return words or ["a"]


def _gen_text(engine: Encoder, rng: random.Random, corpus: list[str], chunk_len: int) -> str:
    """One fuzz input: a repetition, edge-targeted, corpus or vocabulary text (chosen at random)."""
    kind = rng.randrange(5)
    if kind == 4:  # long runs: one huge pretoken / word / whitespace run, with a little around it
        run = rng.choice(["x", "a", "ab", " ", "1", "\n", "é", "中"]) * rng.randint(100, 1500)
        return rng.choice(["", "word ", "a "]) + run + rng.choice(["", " end", "b"])
    if kind == 0:
        unit = "".join(rng.choice(_REPEAT_UNITS) for _ in range(rng.randint(1, 3)))
        return unit * rng.randint(1, 200 // max(1, len(unit)) + 1)
    if kind == 1:
        out = []
        for _ in range(rng.randint(2, 6)):
            filler = rng.choice(["a", "b ", "x", " ", "ab"]) * max(0, chunk_len - rng.randint(0, 3))
            out.append(filler + rng.choice(_REPEAT_UNITS) * rng.randint(1, 30))
        return "".join(out)
    if kind == 2:
        return rng.choice(corpus)
    words = _vocab_words(engine, rng, rng.randint(5, 60))
    return "".join(w + rng.choice(["", "", " ", "\n", ","]) for w in words)


def _merge_differs(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
                   runner: Any) -> tuple[bool, Any, Encoding]:
    from tokspec.fast.merge_engines import merge_text

    result = merge_text(engine, text, strategy=strategy, chunk_len=chunk_len, overlap=overlap,
                        runner=runner)
    serial = engine.encode(text)
    return result.encoding != serial, result, serial


def _write(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
           runner: Any, args: argparse.Namespace, original_chars: int) -> dict[str, Any]:
    """Write the report of ``text`` (JSON then HTML, atomically); return its summary entry."""
    from tokspec.app.merge_report import build_report, report_name, write_report

    _, result, serial = _merge_differs(engine, strategy, text, chunk_len, overlap, runner)
    params = {"chunk_len": chunk_len, "overlap": overlap}
    path = str(Path(args.report) / f"{report_name(engine, strategy, params, text)}.json")
    rep = build_report(engine, text, result, serial, params=params, reproduce_path=path,
                       original_chars=original_chars)
    j, h = write_report(rep, args.report)
    return {"id": rep["id"], "json": str(j), "html": str(h), "classification": rep["classification"],
            "chars": len(text), "text": text, "chunk_len": chunk_len, "overlap": overlap}


def _report(engine: Encoder, strategy: str, text: str, chunk_len: int, overlap: int | None,
            runner: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Report the failing text as found first (so nothing is lost if shrinking fails), then
    minimize it (ddmin) and replace that report by the minimized one."""
    from tokspec.minimize import minimize_text

    found = _write(engine, strategy, text, chunk_len, overlap, runner, args, len(text))

    def still_fails(t: str) -> bool:
        return _merge_differs(engine, strategy, t, chunk_len, overlap, runner)[0]

    small = minimize_text(text, still_fails, seconds=args.minimize_seconds)
    if small == text:
        return found
    smaller = _write(engine, strategy, small, chunk_len, overlap, runner, args, len(text))
    for key in ("json", "html"):
        Path(found[key]).unlink(missing_ok=True)
    return smaller


def _check_params(args: argparse.Namespace) -> None:
    for name in ("chunk_len", "workers", "max_reports"):
        v = getattr(args, name)
        if v is not None and v < 1:
            raise MergeCheckError(f"--{name.replace('_', '-')} must be >= 1, got {v}")
    if args.overlap is not None and args.overlap < 0:
        raise MergeCheckError(f"--overlap must be >= 0, got {args.overlap}")
    if args.time <= 0:
        raise MergeCheckError(f"--time must be > 0 seconds, got {args.time}")


def _cases(engine: Encoder, args: argparse.Namespace, rng: random.Random
           ) -> Iterator[tuple[str, int, int | None]]:
    """Yield (text, chunk_len, overlap): from the inputs file/corpus, or fuzzed until the deadline."""
    from tokspec.corpus import build_corpus

    if not args.fuzz:
        texts = read_inputs(args.inputs) if args.inputs else build_corpus(seed=args.seed, size="small")
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
        yield _gen_text(engine, rng, corpus, chunk_len), chunk_len, overlap


def run(args: argparse.Namespace) -> int:
    """Run merge-check; return the exit code (module docstring)."""
    from tokspec.fast.merge_engines import STRATEGIES
    from tokspec.fast.parallel import Runner

    _check_params(args)
    engine = load_engine(args.engine)
    backend = args.backend or ("auto" if args.workers else "serial")
    runner = Runner(backend, args.workers or 1)
    rng = random.Random(args.seed)
    n = agreed = 0
    found: list[dict[str, Any]] = []
    for text, chunk_len, overlap in _cases(engine, args, rng):
        n += 1
        if not _merge_differs(engine, args.strategy, text, chunk_len, overlap, runner)[0]:
            agreed += 1
            continue
        found.append(_report(engine, args.strategy, text, chunk_len, overlap, runner, args))
        if len(found) >= args.max_reports:
            break
    summary = {"engines": [engine.info.name], "strategy": args.strategy,
               "lossless_claimed": STRATEGIES[args.strategy].lossless, "backend": runner.resolve(engine),
               "workers": runner.workers, "chunk_len": args.chunk_len, "overlap": args.overlap,
               "fuzz": args.fuzz, "inputs": n, "agreed": agreed, "disagreed": n - agreed,
               "counterexamples": found}
    if args.strategy == "lopt":  # the rule decided from the engine's structure (or serial, and why)
        from tokspec.fast.merge_structure import decision_for

        decision, source = decision_for(engine)
        summary["lopt_rule"] = {"family": decision.family, "structure": source,
                                "rule": None if decision.rule is None else decision.rule.name,
                                "theorem_or_reason": decision.why}
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(f"merge-check {engine.info.name} --strategy {args.strategy}: {n} inputs, {agreed} agreed, "
              f"{n - agreed} disagreed")
        if "lopt_rule" in summary:
            print(f"  lopt rule ({summary['lopt_rule']['structure']}): {decision.describe()}")
        for f in found:
            print(f"  {f['classification']}: {f['chars']} chars -> {f['json']}", file=sys.stdout)
    return 1 if found else 0
