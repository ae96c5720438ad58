"""``tokspec complexity ENGINE``: search for texts on which an engine's cost grows faster than linearly.

For each family of :mod:`tokspec.app.complexity_families`, texts of 1,024 characters doubling up to
``--max-chars`` (default 1,048,576) are encoded, after one untimed call (JIT compilation, caches);
a family stops when one call takes more than ``--cap`` seconds or its share of ``--time`` is spent.
The ladder gets a third of the family's share; then every size whose first call took at most
half the cap is measured again, interleaved over the sizes (so a burst of load on the machine hits
every size alike), ``--repeats`` times in all (about twice the ladder's time: ``--time`` can be
exceeded by the last calls); the median is kept. Only sizes measured ``--repeats`` times are fitted
or chosen as witness (one call hit by a burst once read 10x its neighbours on ``fast:cl100k_base``).

Timing: user CPU time of this process (``getrusage(RUSAGE_SELF).ru_utime``, all its threads), not
wall time, so the other programs of a shared machine cost little; system time is left out too: it
is mostly page faults of fresh allocations, which grow in steps past the caches (HF WordPiece on one
long Cyrillic word, five sizes to 1M characters: exponent 1.22 in user + system time, 1.12 in user
time; tiktoken's one piece: 1.51 and 1.50). ``cmd:`` engines work in their own process, so for them
it is wall time (the protocol reports no time). A call shorter than 20 ms is repeated
until 20 ms have passed and the mean taken (timer resolution).

Fit and threshold: the exponent is the log-log slope over the last five sizes whose median is at
least 1 ms (:func:`tokspec.spec.complexity.fit_exponent`; fewer than four such sizes: "too fast to
tell", no verdict). The engine is flagged when some family's exponent exceeds
:data:`~tokspec.spec.complexity.SUPERLINEAR` = 1.3. Why 1.3: n log n has local slope 1 + 1/ln n,
at most 1.14 from 1,024 characters on (1.09 at 64K); quadratic work gives 2. Linear engines are
not perfectly linear in CPU time either: past the caches, one doubling can cost 2.9x (HF's
WordPiece on one 1M-character Cyrillic word: 2.3x, 2.1x, 1.9x, 2.9x, 2.0x per doubling from 64K,
measured on this machine), which over four sizes read as 1.33; over five (a 16x range) such a
step weighs less (1.15 to 1.2). tiktoken's one long piece reads 1.35 to 1.55 up to 256K and more
beyond (the issue: 2.5x to 3.5x per doubling). 1.3 sits between; the numbers per engine are in the
issue's note.

Witness: the smallest measured size whose median costs at least 10x the linear extrapolation from
the first fitted size; if no size does, the largest (with its ratio). A flagged engine's finding is
a record of class "superlinear cost" (``complexity-<hash>.json`` with the table, exponent, family,
seed and witness size: the text is regenerated from them) plus an HTML page with a log-log plot of
seconds against size and the linear reference line. ``reproduce``: ``tokspec complexity ENGINE
--family F --max-chars N``.

Exit status: 1 flagged, 0 not, 2 usage or setup error. Out of scope: memory growth.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import html
import json
import math
import resource
import shlex
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from tokspec._atomic import write_atomic
from tokspec._escape import dumps, escape
from tokspec._registry import load_engine
from tokspec._types import Encoder
from tokspec.app._checks import ArgumentError, at_least, check_output_dir, positive_seconds
from tokspec.app.complexity_families import FAMILIES, family_text
from tokspec.errors import TokspecError
from tokspec.spec.complexity import SUPERLINEAR, fit_exponent

__all__ = ["CLASSIFICATION", "FamilyResult", "Result", "measure", "add_arguments", "run", "main"]

CLASSIFICATION = "superlinear cost"
START = 1024
MIN_TIMED = 0.02  # repeat a call until this much time has passed
MIN_FIT = 0.001  # sizes cheaper than this are not fitted (overhead, timer noise)
WITNESS_RATIO = 10.0
MIN_POINTS = 4  # fewer fitted sizes: no verdict ("too fast to tell")
FIT_POINTS = 5  # the last five sizes: a 16x range (one cache/allocation step weighs less than over 8x)


@dataclass
class FamilyResult:
    name: str
    runs: dict[int, list[float]] = field(default_factory=dict)
    stopped: str = "max-chars"
    repeats: int = 1  # sizes measured fewer times are shown, never fitted (one noisy call is no evidence)

    def table(self) -> list[tuple[int, float]]:
        return [(n, statistics.median(ts)) for n, ts in sorted(self.runs.items())]

    def measured(self) -> list[tuple[int, float]]:
        """(size, median) of the sizes measured ``repeats`` times and costing at least MIN_FIT."""
        full = {n for n, ts in self.runs.items() if len(ts) >= self.repeats}
        return [(n, t) for n, t in self.table() if t >= MIN_FIT and n in full]

    def fitted(self) -> list[tuple[int, float]]:
        return self.measured()[-FIT_POINTS:]

    def exponent(self) -> float | None:
        pts = self.fitted()
        return fit_exponent(pts, last=FIT_POINTS) if len(pts) >= MIN_POINTS else None

    def witness(self) -> tuple[int, float] | None:
        """(size, cost / linear extrapolation) of the witness (module docstring)."""
        pts = self.measured()
        if len(pts) < 2:
            return None
        n0, t0 = pts[0]
        ratios = [(n, t / (t0 * n / n0)) for n, t in pts]
        return next(((n, r) for n, r in ratios if r >= WITNESS_RATIO), ratios[-1])


@dataclass
class Result:
    engine: dict[str, Any]
    clock: str
    families: list[FamilyResult]

    def worst(self) -> FamilyResult | None:
        scored = [f for f in self.families if f.exponent() is not None]
        return max(scored, key=lambda f: f.exponent() or 0.0, default=None)

    def flagged(self) -> bool:
        w = self.worst()
        return w is not None and (w.exponent() or 0.0) > SUPERLINEAR


def _user_time() -> float:
    """User CPU seconds of this process, all threads (module docstring: why not system time)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_utime


def _cost(engine: Encoder, text: str, clock: Any) -> float:
    """Seconds of one ``encode_arrays(text)`` by ``clock`` (repeated while under MIN_TIMED)."""
    calls, start = 0, clock()
    while True:
        engine.encode_arrays(text)
        calls += 1
        spent = clock() - start
        if spent >= MIN_TIMED:
            return float(spent / calls)


def measure(engine: Encoder, *, families: Sequence[str] | None = None, seconds: float = 240.0,
            max_chars: int = 1 << 20, cap: float = 2.0, repeats: int = 3, seed: int = 0,
            progress: TextIO | None = None) -> Result:
    """Measure every family (module docstring). ``seconds`` is shared equally by the families."""
    names = list(families or FAMILIES)
    wall = engine.info.name.startswith("cmd:")
    clock = time.perf_counter if wall else _user_time
    share = seconds / max(1, len(names))
    out = []
    for name in names:
        fam = FamilyResult(name, repeats=repeats)
        engine.encode_arrays(family_text(name, START, seed))  # warm-up, untimed (JIT compiles, caches)
        deadline = time.monotonic() + share / 3  # the ladder's third; the repeats cost about twice it
        n = START
        texts: dict[int, str] = {}
        while n <= max_chars:  # the ladder: one call per size until a call passes the cap
            texts[n] = family_text(name, n, seed)
            t = _cost(engine, texts[n], clock)
            fam.runs[n] = [t]
            if t > cap:
                fam.stopped = f"cap ({t:.2f}s > {cap}s at {n} chars)"
                break
            if time.monotonic() > deadline:
                fam.stopped = "time share"
                break
            n *= 2
        for _ in range(repeats - 1):  # interleaved repeats, cheap sizes only
            for size in sorted(fam.runs):
                if fam.runs[size][0] <= cap / 2:
                    fam.runs[size].append(_cost(engine, texts[size], clock))
        if progress is not None:
            e = fam.exponent()
            print(f"complexity: {name}: {len(fam.runs)} sizes, exponent "
                  f"{'too fast to tell' if e is None else f'{e:.2f}'}", file=progress, flush=True)
        out.append(fam)
    return Result(dataclasses.asdict(engine.info), "wall" if wall else "user cpu", out)


# ----------------------------------------------------------------------------- records and HTML


def make_record(result: Result, fam: FamilyResult, *, seed: int, max_chars: int) -> dict[str, Any]:
    """The "superlinear cost" record of family ``fam``."""
    witness = fam.witness()
    name = shlex.quote(result.engine["name"])
    return {"tokspec_complexity": 1, "classification": CLASSIFICATION, "engine": result.engine,
            "family": fam.name, "seed": seed, "clock": result.clock, "threshold": SUPERLINEAR,
            "exponent": fam.exponent(), "table": [[n, t] for n, t in fam.table()],
            "witness": None if witness is None else {"chars": witness[0], "ratio_to_linear": witness[1]},
            "reproduce": f"tokspec complexity {name} --family {fam.name} --max-chars {max_chars}"}


def render_html(record: dict[str, Any]) -> str:
    """A page with the table and an SVG log-log plot (seconds against size, linear reference)."""
    table = record["table"]
    xs = [math.log2(n) for n, _ in table]
    ys = [math.log10(t) for _, t in table]
    n0, t0 = table[0]
    ref = [math.log10(t0 * n / n0) for n, _ in table]
    lo_x, hi_x = min(xs), max(xs) + 1e-9
    lo_y, hi_y = min(ys + ref), max(ys + ref) + 1e-9

    def pt(x: float, y: float) -> str:
        return f"{40 + 500 * (x - lo_x) / (hi_x - lo_x):.1f},{290 - 250 * (y - lo_y) / (hi_y - lo_y):.1f}"

    measured = " ".join(pt(x, y) for x, y in zip(xs, ys))
    linear = " ".join(pt(x, y) for x, y in zip(xs, ref))
    rows = "".join(f"<tr><td>{n}</td><td>{t:.6f}</td></tr>" for n, t in table)
    e = record["exponent"]
    return (f"<!doctype html><meta charset=utf-8><title>superlinear cost</title>"
            f"<h1>{html.escape(record['engine']['name'])}: {html.escape(record['family'])}</h1>"
            f"<p>exponent {'n/a' if e is None else f'{e:.2f}'} (threshold {record['threshold']}); "
            f"witness {html.escape(json.dumps(record['witness']))}; clock {record['clock']}</p>"
            f"<svg width=560 height=320 xmlns='http://www.w3.org/2000/svg'>"
            f"<rect x=40 y=40 width=500 height=250 fill=none stroke=#999 />"
            f"<polyline points='{linear}' fill=none stroke=#999 stroke-dasharray='4 3' />"
            f"<polyline points='{measured}' fill=none stroke=#c00 stroke-width=2 />"
            f"<text x=40 y=312 font-size=11>log2 size: {lo_x:.0f} .. {hi_x:.0f}; log10 seconds: "
            f"{lo_y:.1f} .. {hi_y:.1f}; dashed: linear from the first size</text></svg>"
            f"<table><tr><th>chars</th><th>seconds</th></tr>{rows}</table>"
            f"<p>reproduce: <code>{html.escape(record['reproduce'])}</code></p>")


def write_records(record: dict[str, Any], directory: str | Path) -> tuple[Path, Path]:
    """Write the record (JSON) and its page (HTML) atomically under a content-hash name."""
    key = json.dumps([record["engine"]["name"], record["engine"]["library_version"], record["family"]])
    stem = "complexity-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    base = Path(directory)
    return (write_atomic(base / f"{stem}.json", json.dumps(record, indent=1) + "\n"),
            write_atomic(base / f"{stem}.html", render_html(record)))


# ----------------------------------------------------------------------------- CLI


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = "Search for texts on which an engine's cost grows faster than linearly."
    parser.add_argument("engine", metavar="ENGINE")
    parser.add_argument("--time", type=float, default=240.0, metavar="SECONDS",
                        help="total measuring time, shared by the families (default 240)")
    parser.add_argument("--max-chars", type=int, default=1 << 20, metavar="N",
                        help="largest text, in characters (default 1048576)")
    parser.add_argument("--cap", type=float, default=2.0, metavar="SECONDS",
                        help="stop a family once one call takes longer (default 2)")
    parser.add_argument("--repeats", type=int, default=3, help="measurements per size (median; default 3)")
    parser.add_argument("--family", action="append", choices=sorted(FAMILIES),
                        help="family to measure (repeatable; default all)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print one JSON summary object")
    parser.add_argument("--report", default="tokspec-reports", metavar="DIR",
                        help="where a finding's record and page go (default tokspec-reports/)")
    parser.add_argument("--quiet", action="store_true")


def _summary(result: Result, records: list[str]) -> dict[str, Any]:
    worst = result.worst()
    return {"engine": result.engine, "clock": result.clock, "threshold": SUPERLINEAR,
            "flagged": result.flagged(), "worst": None if worst is None else worst.name,
            "families": {f.name: {"exponent": f.exponent(), "stopped": f.stopped, "witness": f.witness(),
                                  "table": [[n, t] for n, t in f.table()]} for f in result.families},
            "records": records}


def run(args: argparse.Namespace, *, out: TextIO | None = None, err: TextIO | None = None) -> int:
    """Run ``tokspec complexity``; return 0, 1 or 2 (module docstring)."""
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    try:
        positive_seconds(args.time, "--time")
        positive_seconds(args.cap, "--cap")
        at_least(args.max_chars, START, "--max-chars")
        at_least(args.repeats, 1, "--repeats")
        check_output_dir(args.report, "--report")
        engine = load_engine(args.engine)
        try:
            result = measure(engine, families=args.family, seconds=args.time, max_chars=args.max_chars,
                             cap=args.cap, repeats=args.repeats, seed=args.seed,
                             progress=None if args.quiet else err)
        finally:
            engine.close()
    except (TokspecError, ArgumentError, OSError, ValueError) as exc:
        print(f"tokspec complexity: error: {escape(exc)}", file=err)
        return 2
    records: list[str] = []
    worst = result.worst()
    if result.flagged() and worst is not None:
        rec = make_record(result, worst, seed=args.seed, max_chars=args.max_chars)
        records = [str(p) for p in write_records(rec, args.report)]
    if args.json:
        print(dumps(_summary(result, records)), file=out)
    else:
        _print_text(result, records, out)
    return 1 if result.flagged() else 0


def _print_text(result: Result, records: list[str], out: TextIO) -> None:
    for f in result.families:
        e = f.exponent()
        print(f"{f.name:<20} exponent {'   -' if e is None else f'{e:4.2f}'}  sizes {len(f.runs):2d}  "
              f"stopped: {f.stopped}", file=out)
    worst = result.worst()
    if worst is None:
        print(f"{escape(result.engine['name'])}: every family too fast to tell; not flagged", file=out)
        return
    print(f"worst family: {worst.name} (exponent {worst.exponent():.2f}, threshold {SUPERLINEAR}, "
          f"{result.clock} time)", file=out)
    for n, t in worst.table():
        print(f"  {n:>9} chars  {t:.6f} s", file=out)
    w = worst.witness()
    if w is not None:
        print(f"  witness: {worst.name} at {w[0]} chars costs {w[1]:.1f}x the linear extrapolation", file=out)
    verdict = f"{CLASSIFICATION} (record: {escape(records[0])})" if records else "not flagged"
    print(f"{escape(result.engine['name'])}: {verdict}", file=out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="tokspec complexity")
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
