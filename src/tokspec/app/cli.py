"""The ``tokspec`` command line.

Subcommands: ``engines`` (names usable here), ``corpus`` (write the conformance corpus as an inputs
file), ``diff`` (compare two engines), ``merge-check`` (compare a parallel merge with serial encoding),
``bench`` (speed ratios side by side). Exit codes for every subcommand: 0 success / agreement,
1 disagreement found, 2 usage or setup error (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Sequence

from tokspec.errors import TokspecError

__all__ = ["main"]

#: subcommand -> (module with add_arguments(parser) and run(args) -> int, help line)
_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "diff": ("tokspec.app.cli_diff", "compare two engines' ids and offsets on inputs or fuzzed text"),
    "merge-check": ("tokspec.app.cli_merge", "compare a chunked parallel merge with serial encoding"),
}


class _UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        raise _UsageError(f"{self.prog}: {message}")


def _cmd_versions(args: argparse.Namespace) -> int:
    from tokspec.versions import versions_table

    rows = versions_table()
    if args.json:
        print(json.dumps([{"library": lib, "installed": have, "findings_recorded_with": rec,
                           "verdict": verdict} for lib, have, rec, verdict in rows]))
        return 0
    print(f"{'library':<14}  {'installed':<12}  {'findings recorded with':<22}  verdict")
    for lib, have, rec, verdict in rows:
        print(f"{lib:<14}  {have:<12}  {rec:<22}  {verdict}")
    return 0


def _cmd_engines(args: argparse.Namespace) -> int:
    from tokspec._registry import list_engines

    if args.versions:
        return _cmd_versions(args)
    rows = list_engines()
    if args.json:
        print(json.dumps([{"name": n, "description": d} for n, d in rows], ensure_ascii=False))
    else:
        width = max((len(n) for n, _ in rows), default=10)
        for name, desc in rows:
            print(f"{name:<{width}}  {desc}")
    return 0


def _cmd_corpus(args: argparse.Namespace) -> int:
    from tokspec.corpus import build_corpus, write_inputs

    texts = build_corpus(seed=args.seed, size=args.size)
    write_inputs(args.out, texts)
    print(f"wrote {len(texts)} inputs ({sum(len(t) for t in texts)} characters) to {args.out}",
          file=sys.stderr)
    return 0


def _cmd_bench(args: argparse.Namespace) -> int:
    from tokspec.app.bench import SUITES, format_rows

    names = args.suite or list(SUITES)
    unknown = [n for n in names if n not in SUITES]
    if unknown:
        raise _UsageError(f"unknown suite {unknown[0]!r}; suites: {', '.join(SUITES)}")
    rows = []
    for name in names:
        module = importlib.import_module(SUITES[name])
        print(f"[bench] running suite {name} ({'quick' if args.quick else 'full'})...", file=sys.stderr)
        rows.extend(module.run(quick=args.quick))
    if args.json:
        print(json.dumps([r.as_dict() for r in rows], indent=1))
    else:
        print(format_rows(rows))
    return 0


def _build_parser(command: str | None) -> _Parser:
    """The argument parser; only the chosen subcommand's module is imported (start-up stays fast)."""
    parser = _Parser(prog="tokspec", description=__doc__.split("\n\n")[0] if __doc__ else None)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("engines", help="list every engine name usable on this machine")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--versions", action="store_true",
                   help="show installed library versions next to those the stored findings were recorded with")
    p.set_defaults(func=_cmd_engines)
    p = sub.add_parser("corpus", help="write tokspec's conformance corpus as a JSON Lines inputs file")
    p.add_argument("--out", required=True, help="output file (JSON Lines, one {\"text\": ...} per line)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--size", choices=("small", "large"), default="large")
    p.set_defaults(func=_cmd_corpus)
    p = sub.add_parser("bench", help="benchmarks: subject vs baseline ratios in one run")
    p.add_argument("--suite", action="append", help="suite to run (repeatable; default all)")
    p.add_argument("--quick", action="store_true", help="small inputs, seconds not minutes")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=_cmd_bench)
    for name, (module_name, help_line) in _SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_line)
        if name == command:
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            p.set_defaults(func=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tokspec`` script; returns the exit code."""
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        command = next((a for a in argv if not a.startswith("-")), None)
        parser = _build_parser(command)
        args = parser.parse_args(argv)
        code: int = args.func(args)
        return code
    except _UsageError as exc:
        print(f"tokspec: error: {exc}", file=sys.stderr)
        return 2
    except TokspecError as exc:
        print(f"tokspec: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("tokspec: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
