"""Measure, per planted bug of :mod:`tokspec.fuzz.authored_bugs`, whether a search finds it and how long it takes.

Usage: python scripts/planted_yardstick.py {check,diff} [--bug NAME ...] [--time 10]

``check``: ``check_against(ENGINE, AGAINST)`` with its defaults, as a user's test would call it, in a
fresh process and a fresh empty working directory (no hypothesis example database carried over).
``diff``: ``tokspec diff ENGINE AGAINST --fuzz --time T --max-findings 1`` (seconds = time to the
first finding, shrinking included, or the whole budget). One JSON line per bug on stdout.
Wall-clock times include engine loading; they are noisy on a shared machine.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time

from tokspec.fuzz.authored_bugs import AUTHORED_BUGS

_CHECK = """
import sys, time
import importlib
check_against = importlib.import_module(sys.argv[3]).check_against
from tokspec import load_engine
a, b = load_engine(sys.argv[1]), load_engine(sys.argv[2])
t = time.monotonic()
try:
    check_against(a, b)
except AssertionError as exc:
    print("FOUND", round(time.monotonic() - t, 2), str(exc).splitlines()[0][:150])
except Exception as exc:
    print("OTHER", round(time.monotonic() - t, 2), type(exc).__name__, str(exc).splitlines()[0][:150])
else:
    print("PASSED", round(time.monotonic() - t, 2))
"""


def _check(engine: str, against: str, module: str, timeout: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as cwd:
        proc = subprocess.run([sys.executable, "-c", _CHECK, engine, against, module], cwd=cwd, capture_output=True,
                              text=True, timeout=timeout)
    last = (proc.stdout.strip().splitlines() or ["ERROR " + proc.stderr[-300:]])[-1]
    word, _, rest = last.partition(" ")
    seconds, _, detail = rest.partition(" ")
    return {"found": word == "FOUND", "outcome": word, "seconds": seconds,
            "detail": detail if word != "ERROR" else rest}


def _diff(engine: str, against: str, budget: float, timeout: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as cwd:
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "tokspec", "diff", engine, against, "--fuzz", "--time",
                               str(budget), "--max-findings", "1", "--json", "--quiet", "--report", cwd],
                              cwd=cwd, capture_output=True, text=True, timeout=timeout)
        wall = time.monotonic() - start
    try:
        summary = json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"found": False, "seconds": None, "detail": "ERROR " + proc.stderr[-300:]}
    return {"found": proc.returncode == 1, "seconds": summary["seconds"], "wall": round(wall, 2),
            "inputs": summary["inputs"], "detail": ",".join(summary["classifications"])}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mode", choices=("check", "diff"))
    parser.add_argument("--bug", action="append", help="only these planted bugs (repeatable)")
    parser.add_argument("--module", default="tokspec.app.pytest_plugin",
                        help="check: the module whose check_against runs (an old copy, to compare)")
    parser.add_argument("--time", type=float, default=10.0, help="diff: --time budget (default 10)")
    args = parser.parse_args(argv)
    for bug in AUTHORED_BUGS:
        if args.bug and bug.name not in args.bug:
            continue
        row = (_check(bug.engine, bug.against, args.module, 600) if args.mode == "check"
               else _diff(bug.engine, bug.against, args.time, 600))
        print(json.dumps({"bug": bug.name, "mode": args.mode, **row}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
