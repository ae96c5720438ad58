"""``tokspec chunk-check CHUNKER --tokenizer ENGINE --limit N``: fuzz a chunker against its claims.

CHUNKER: ``langchain-token``, ``semantic-text-splitter``, ``chonkie-token`` (configured from
``--tokenizer``, ``--limit``, ``--overlap``; see :mod:`tokspec.app.chunkers`), ``module:attr`` or
``cmd:COMMAND``. The checks and violation kinds: :mod:`tokspec.app.chunk_check`. ``--overlap K``
declares overlapping chunks (K tokens, passed to the built-in splitters), ``--trim`` declares
whitespace dropped at chunk edges (default for ``semantic-text-splitter``), ``--maximal`` declares
that no chunk can grow by one character within the limit. Texts: ``--inputs FILE`` (JSON Lines
``{"text": ...}`` or plain lines), else generated for ``--time`` seconds. Exit 0: no violation; 1:
violations found (minimized records in ``--report``); 2: usage or setup error.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path

from tokspec.app.chunk_check import ChunkClaims, fuzz_texts, search
from tokspec.app.chunkers import load_chunker
from tokspec.errors import TokspecError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("chunker", help="langchain-token, semantic-text-splitter, chonkie-token, module:attr or cmd:COMMAND")
    parser.add_argument("--tokenizer", required=True, help="engine counting tokens, e.g. tiktoken:cl100k_base")
    parser.add_argument("--limit", type=int, required=True, help="the promised maximum tokens per chunk")
    parser.add_argument("--overlap", type=int, default=0, help="declared overlap in tokens (default 0)")
    parser.add_argument("--trim", action=argparse.BooleanOptionalAction, default=None,
                        help="whitespace may be dropped at chunk edges (default: only semantic-text-splitter)")
    parser.add_argument("--maximal", action="store_true", help="check that no chunk can grow by a character")
    parser.add_argument("--inputs", help="JSON Lines ({\"text\": ...}) or plain UTF-8 lines")
    parser.add_argument("--time", type=float, default=20.0, help="seconds of fuzzing (default 20)")
    parser.add_argument("--max-texts", type=int, help="stop after this many texts")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", default="tokspec-chunk-reports", help="folder for minimized findings")
    parser.add_argument("--minimize-seconds", type=float, default=10.0)
    parser.add_argument("--json", action="store_true", help="print a JSON summary")


def _inputs(path: str) -> Iterator[str]:
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        try:
            obj = json.loads(line)
            yield obj["text"] if isinstance(obj, dict) else line
        except (ValueError, KeyError):
            yield line


def run(args: argparse.Namespace) -> int:
    from tokspec import load_engine
    if args.limit < 1 or args.overlap < 0:
        raise TokspecError(f"--limit={args.limit!r} must be >= 1 and --overlap={args.overlap!r} >= 0")
    trim = args.trim if args.trim is not None else args.chunker == "semantic-text-splitter"
    chunker = load_chunker(args.chunker, tokenizer=args.tokenizer, limit=args.limit, overlap=args.overlap,
                           trim=trim)
    enc = load_engine(args.tokenizer)
    claims = ChunkClaims(args.tokenizer, args.limit, args.overlap > 0, trim, args.maximal)
    texts = _inputs(args.inputs) if args.inputs else fuzz_texts(args.seed)
    checked, findings = search(chunker, args.chunker, lambda s: len(enc.encode(s).ids or ()), claims,
                               texts=texts, seconds=args.time if not args.inputs else float("inf"),
                               max_texts=args.max_texts, folder=Path(args.report),
                               minimize_seconds=args.minimize_seconds)
    if checked == 0:
        raise TokspecError("nothing checked: no input text")
    summary = {"chunker": args.chunker, "claims": claims.__dict__, "texts": checked,
               "findings": [{"kind": f.kind, "text": f.text, "chunks": f.chunks, "detail": f.violations[0].detail
                             if f.violations else "", "record": f.path} for f in findings]}
    if args.json:
        print(json.dumps(summary, ensure_ascii=False, indent=1))
    else:
        print(f"{args.chunker} on {args.tokenizer}, limit {args.limit}: {checked} texts, "
              f"{len(findings)} kinds of violation")
        for f in findings:
            detail = f.violations[0].detail if f.violations else ""
            print(f"  {f.kind}: text={f.text!r} chunks={f.chunks!r}\n    {detail}\n    record: {f.path}")
    sys.stdout.flush()
    return 1 if findings else 0
