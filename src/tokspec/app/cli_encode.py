"""``tokspec encode ENGINE --inputs F --out FILE``: record a golden file (:mod:`tokspec.engines.golden`).

Exit 0 when written; 2 for a usage or setup error (bad engine, unreadable inputs, no inputs).
``--out -`` writes to stdout. The file is written atomically (all or nothing).
"""

from __future__ import annotations

import argparse
import sys

from tokspec._atomic import write_atomic
from tokspec._escape import escape
from tokspec.errors import TokspecError

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = ("Record ENGINE's ids, offsets (and decode, where it has one) on every input, with "
                          "its name, version and vocabulary sha256, as a golden file; golden:FILE answers from it.")
    parser.add_argument("engine", metavar="ENGINE", help="engine name (see `tokspec engines`)")
    parser.add_argument("--inputs", metavar="FILE", required=True,
                        help="inputs file (.jsonl, .json or plain text lines), as for diff")
    parser.add_argument("--out", metavar="FILE", required=True, help="golden file to write; - writes to stdout")


def run(args: argparse.Namespace) -> int:
    from tokspec.app._checks import load_engine_checked
    from tokspec.app.inputs import read_inputs
    from tokspec.engines.golden import golden_lines

    texts = [text for _, text in read_inputs(args.inputs)]
    if not texts:
        raise TokspecError(f"--inputs {escape(args.inputs)!r} holds no input: nothing to record")
    engine = load_engine_checked(args.engine)
    try:
        content = "".join(line + "\n" for line in golden_lines(engine, texts))
    finally:
        engine.close()
    if args.out == "-":
        from tokspec.app._stdout import write_stdout

        write_stdout(content)
    else:
        write_atomic(args.out, content)
    print(f"recorded {len(content.splitlines()) - 1} outputs of {escape(args.engine)} to "
          f"{'stdout' if args.out == '-' else escape(args.out)}", file=sys.stderr)
    return 0
