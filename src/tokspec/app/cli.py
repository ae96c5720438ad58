"""The ``tokspec`` command line.

Subcommands: ``engines`` (names usable here), ``corpus`` (write the conformance corpus as an inputs
file), ``diff`` (compare two engines), ``merge-check`` (compare a parallel merge with serial encoding),
``bench`` (speed ratios side by side). Exit codes for every subcommand: 0 success / agreement,
1 disagreement found, 2 usage or setup error (one line on stderr, no traceback) -- also when
nothing was compared at all (an empty inputs file) and when an engine or plugin asks the process
to exit (``sys.exit``) outside an engine call; 130 interrupted (Ctrl-C), 128+N ended by signal N
(SIGTERM, SIGHUP: engines and files are cleaned up first), 141 stdout closed early (``| head``:
no traceback). An unexpected internal error prints its (escaped) traceback and exits 2, never 1.
Everything printed that tokspec did not write itself is escaped (:mod:`tokspec._escape`).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import signal
import sys
import threading
import traceback
from collections.abc import Sequence
from types import FrameType
from typing import Any

from tokspec._escape import dumps, escape
from tokspec.errors import TokspecError

__all__ = ["main"]

#: subcommand -> (module with add_arguments(parser) and run(args) -> int, help line)
_SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "diff": ("tokspec.app.cli_diff", "compare two engines' ids and offsets on inputs or fuzzed text"),
    "merge-check": ("tokspec.app.cli_merge", "compare a chunked parallel merge with serial encoding"),
    "chunk-check": ("tokspec.app.cli_chunk", "fuzz a chunker: token limit, reassembly, character boundaries"),
    "export": ("tokspec.app.cli_export", "write a shipped vocabulary as .tiktoken, tokenizer.json or vocab.json + merges.txt"),
    "encode": ("tokspec.app.cli_encode", "record an engine's outputs on inputs as a golden file (engine golden:FILE)"),
    "complexity": ("tokspec.app.complexity", "search for texts on which an engine's cost grows faster than linearly"),
}


#: The top-level help's description (plain text: argparse prints it as is).
_DESCRIPTION = ("tokspec: check tokenizers against each other and against their specification; two "
                "engines agree only if token ids and character offsets agree. Run `tokspec COMMAND --help` "
                "for a command's options.")


class _UsageError(Exception):
    pass


class _Terminated(KeyboardInterrupt):
    """SIGTERM/SIGHUP, raised in the main thread so that ``finally`` blocks close engines."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _on_signal(signum: int, frame: FrameType | None) -> None:
    raise _Terminated(signum)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        # main() prints "tokspec: error: " before it; a subcommand's parser names itself once more
        prog = self.prog.removeprefix("tokspec").strip()
        raise _UsageError(f"{prog}: {message}" if prog else message)


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
        print(dumps([{"name": n, "description": d} for n, d in rows]))
    else:
        width = max((len(n) for n, _ in rows), default=10)
        for name, desc in rows:
            print(f"{escape(name):<{width}}  {escape(desc)}")
    return 0


def _cmd_corpus(args: argparse.Namespace) -> int:
    from tokspec.corpus import build_corpus, check_output_path, write_inputs

    if args.out != "-":
        check_output_path(args.out)  # before the (slow) build: a bad --out fails fast
    texts = build_corpus(seed=args.seed, size=args.size)
    if args.out == "-":  # the usual convention: "-" is stdout
        from tokspec.app._stdout import write_stdout

        write_stdout("".join(dumps({"text": text}) + "\n" for text in texts))
    else:
        write_inputs(args.out, texts)
    where = "stdout" if args.out == "-" else args.out
    print(f"wrote {len(texts)} inputs ({sum(len(t) for t in texts)} characters) to {escape(where)}",
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
        print(dumps([r.as_dict() for r in rows], indent=1))
    else:
        print(format_rows(rows))
    return 0


def _build_parser(command: str | None) -> _Parser:
    """The argument parser; only the chosen subcommand's module is imported (start-up stays fast)."""
    from tokspec import __version__

    parser = _Parser(prog="tokspec", description=_DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"tokspec {__version__}",
                        help="print tokspec's version and exit")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser, metavar="COMMAND",
                                help="one of these (`tokspec COMMAND --help` for its options)")
    p = sub.add_parser("engines", help="list every engine name usable on this machine")
    p.add_argument("--json", action="store_true", help="print a JSON list")
    p.add_argument("--versions", action="store_true",
                   help="show installed library versions next to those the stored findings were recorded with")
    p.set_defaults(func=_cmd_engines)
    p = sub.add_parser("corpus", help="write tokspec's conformance corpus as a JSON Lines inputs file")
    p.add_argument("--out", required=True, metavar="FILE",
                   help="output file (JSON Lines, one {\"text\": ...} per line); - writes to stdout")
    p.add_argument("--seed", type=int, default=0, metavar="N",
                   help="seed of the generated parts; the same seed writes the same corpus (default 0)")
    p.add_argument("--size", choices=("small", "large"), default="large",
                   help="small: a few hundred texts, large: a few thousand (default large)")
    p.set_defaults(func=_cmd_corpus)
    p = sub.add_parser("bench", help="benchmarks: subject vs baseline ratios in one run")
    p.add_argument("--suite", action="append", metavar="NAME", help="suite to run (repeatable; default all)")
    p.add_argument("--quick", action="store_true", help="small inputs, seconds not minutes")
    p.add_argument("--json", action="store_true", help="print the rows as JSON")
    p.set_defaults(func=_cmd_bench)
    for name, (module_name, help_line) in _SUBCOMMANDS.items():
        p = sub.add_parser(name, help=help_line)
        if name == command:
            module = importlib.import_module(module_name)
            module.add_arguments(p)
            p.set_defaults(func=module.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tokspec`` script; returns the exit code (module docstring)."""
    handlers = _install_signal_handlers()
    try:
        argv = list(sys.argv[1:] if argv is None else argv)
        if not argv:  # bare `tokspec`: the help, as `tokspec --help` prints it
            _build_parser(None).print_help()
            return 0
        command = next((a for a in argv if not a.startswith("-")), None)
        parser = _build_parser(command)
        args = parser.parse_args(argv)  # --help and argparse's own exits pass through
        try:
            code: int = args.func(args)
        except SystemExit as exc:  # from an engine or plugin, outside an engine call
            raise TokspecError(f"something called sys.exit({exc.code!r}) during the run "
                               "(an engine or plugin?); treated as a setup error") from None
        sys.stdout.flush()
        return code
    except _UsageError as exc:
        print(f"tokspec: error: {escape(exc)}", file=sys.stderr)
        return 2
    except TokspecError as exc:
        print(f"tokspec: error: {escape(exc)}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return _stdout_closed()
    except _Terminated as exc:
        print(f"tokspec: terminated by signal {exc.signum}", file=sys.stderr)
        return 128 + exc.signum
    except KeyboardInterrupt:
        print("tokspec: interrupted", file=sys.stderr)
        return 130
    except MemoryError:  # a setup error: the machine's limit, not a bug (tokspec._limits)
        print("tokspec: error: out of memory (one input is bounded by TOKSPEC_MAX_INPUT_BYTES; lower it, "
              "or --workers)", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - a bug must not read as "disagreement found" (1)
        for line in traceback.format_exception(exc):
            sys.stderr.write(escape(line.rstrip("\n")) + "\n")
        print(f"tokspec: internal error: {escape(type(exc).__name__)}: {escape(exc)}", file=sys.stderr)
        return 2
    finally:
        for signum, handler in handlers.items():
            signal.signal(signum, handler)


def _install_signal_handlers() -> dict[int, Any]:
    """SIGTERM and SIGHUP end the run like Ctrl-C (engines closed, temp files removed)."""
    if os.name != "posix" or threading.current_thread() is not threading.main_thread():
        return {}
    old: dict[int, Any] = {}
    for signum in (signal.SIGTERM, signal.SIGHUP):
        old[signum] = signal.signal(signum, _on_signal)
    return old


def _stdout_closed() -> int:
    """stdout's reader went away (``tokspec ... | head``): stop quietly, exit 141 (128+SIGPIPE)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the interpreter's final flush must not fail again
    except (OSError, ValueError):
        pass
    return 141


if __name__ == "__main__":
    sys.exit(main())
