"""``tokspec bench --suite cold``: the first use of an engine in a fresh process, with an empty cache
and with a filled one.

First use = ``python -c`` importing tokspec, ``load_engine(NAME)`` and one ``encode`` of a short text:
what a user waits for before the first ids. Each measurement is a new interpreter (imports, table
building, numba compilation and the on-disk caches all count) whose ``TOKSPEC_CACHE`` is a new empty
folder of its own (``cold``), then the same folder again (``warm``: tables and compiled kernels read
back). ``NUMBA_CACHE_DIR`` is removed from the child's environment so that numba's cache lives in that
folder too.

Rows (``fast:cl100k_base`` against ``tiktoken:cl100k_base`` loaded the same way, both through
tokspec): ``cold wall``, ``warm wall`` (seconds from starting the interpreter to its exit), and
``cold cpu``, ``warm cpu`` (user + system seconds of the child: the figure a loaded machine distorts
least); the case names both seconds (MB/s means nothing for one short text). Subject and baseline alternate round by round; each figure is the best of the rounds (3, 1
with ``quick``). The ids of the text are compared between subject and baseline in the same run; a
row whose ids differ is marked ``INEXACT``. Issue 29's targets: cold <= 5 s, warm <= 1 s wall.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tokspec.app.bench import BenchRow

__all__ = ["run", "FirstUse", "first_use", "FirstUseError"]

SUITE = "cold"
TEXT = "hello world, the first use of an engine: 12345 \u4e2d\u6587!"

#: the child: first use of argv[1] on TEXT, then its ids as one JSON line
_CHILD = ("import json, sys\n"
          "from tokspec import load_engine\n"
          "e = load_engine(sys.argv[1])\n"
          "print(json.dumps(list(e.encode(sys.argv[2]).ids)))\n")


class FirstUseError(RuntimeError):
    """The child process measuring a first use failed (its stderr's last line is in the message)."""


@dataclass(frozen=True)
class FirstUse:
    """One first use: wall and CPU (user + system) seconds of the child, and the ids it printed."""

    wall_s: float
    cpu_s: float
    ids: tuple[int, ...]


def first_use(engine: str, cache: Path, text: str = TEXT) -> FirstUse:
    """Run the first use of ``engine`` in a new interpreter whose cache folder is ``cache``.

    Raises FirstUseError if the child exits non-zero or prints no ids.
    """
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["TOKSPEC_CACHE"] = str(cache)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", _CHILD, engine, text], env=env, capture_output=True,
                          text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise FirstUseError(f"first use of engine={engine!r} failed (exit {proc.returncode}): {last}")
    return FirstUse(wall, cpu, tuple(json.loads(lines[-1])))


def _fresh_cache() -> Path:
    return Path(tempfile.mkdtemp(prefix="tokspec-cold-"))  # mode 0700 and ours: a valid cache root


def _rows(subject: str, baseline: str, runs: dict[str, dict[str, list[FirstUse]]]) -> list[BenchRow]:
    out = []
    exact = {phase: all(s.ids == b.ids for s, b in zip(runs[subject][phase], runs[baseline][phase]))
             for phase in ("cold", "warm")}
    for phase in ("cold", "warm"):
        for measure in ("wall", "cpu"):
            best = {name: min(getattr(u, f"{measure}_s") for u in runs[name][phase]) for name in (subject, baseline)}
            mark = "" if exact[phase] else " INEXACT"
            case = f"{phase} {measure} {best[subject]:.2f}s vs {best[baseline]:.2f}s{mark}"
            out.append(BenchRow(SUITE, case, subject, baseline, len(TEXT.encode()), best[subject], best[baseline]))
    return out


def run(*, quick: bool) -> list[BenchRow]:
    subject, baseline = "fast:cl100k_base", "tiktoken:cl100k_base"
    rounds = 1 if quick else 3
    runs: dict[str, dict[str, list[FirstUse]]] = {n: {"cold": [], "warm": []} for n in (subject, baseline)}
    folders = []
    try:
        for r in range(rounds):
            order = (subject, baseline) if r % 2 == 0 else (baseline, subject)
            for name in order:  # alternate: neither always runs on the quieter machine
                folders.append(_fresh_cache())
                runs[name]["cold"].append(first_use(name, folders[-1]))
                runs[name]["warm"].append(first_use(name, folders[-1]))
    finally:
        import shutil
        for folder in folders:
            shutil.rmtree(folder, ignore_errors=True)
    return _rows(subject, baseline, runs)
