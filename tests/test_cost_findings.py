"""Timeouts in ``tokspec diff --fuzz`` become one "superlinear cost" finding per source (issue 24).

Unit tests drive :mod:`tokspec.app.cost_findings` with stand-in comparisons (no timing); the
``slow`` test runs a quadratic ``cmd:`` engine (1 s request timeout) against its linear twin.
"""

from __future__ import annotations

import argparse
import io
import json
import shlex
import sys
from pathlib import Path

import pytest

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.app import cli_diff
from tokspec.app.cost_findings import CLASSIFICATION, COST_MIN_CHARS, cost_key, is_timeout, shrink_by_time
from tokspec.diff import compare
from tokspec.errors import EngineFault


class Slow(Encoder):
    """Faults like a timed-out cmd: engine on texts of ``limit`` characters or more."""

    def __init__(self, limit: int, name: str = "toy:slow") -> None:
        self.limit, self.calls = limit, 0
        self.info = EngineInfo(name, "tokenizer", "toy", "0", None)

    def _encode(self, text: str) -> Encoding:
        self.calls += 1
        if len(text) >= self.limit:
            raise EngineFault(f"cmd engine 'x' hung (no reply within 1s) on text={text!r:.40}")
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


FAST = Slow(10**9, "toy:fast")


def test_a_long_timeout_is_halved_to_the_smallest_slow_prefix() -> None:
    slow = Slow(5000)
    c = compare(slow, FAST, "x" * 40_000)
    assert is_timeout(c) and not is_timeout(compare(FAST, FAST, "abc"))
    small = shrink_by_time(slow, FAST, c)
    assert small.classification == CLASSIFICATION and len(small.text) == 5000  # 40000 -> 20000 -> 10000 -> 5000
    assert cost_key(small, "src") == (CLASSIFICATION, "src", False, True)


def test_a_timeout_on_a_short_text_stays_a_fault() -> None:
    hang = Slow(10)  # hangs from 10 characters: a hang, not cost
    small = shrink_by_time(hang, FAST, compare(hang, FAST, "y" * 4000))
    assert small.classification == "engine fault" and len(small.text) < COST_MIN_CHARS


QUAD = r'''
import json, sys
print(json.dumps({"tokspec": 1, "name": "quad", "version": "1", "kind": "tokenizer"}), flush=True)
for line in sys.stdin:
    req = json.loads(line)
    text = req["text"]
    if QUADRATIC:
        n = 0
        for i in range(len(text)):  # offsets recomputed from the start: O(n^2)
            n += len(text[:i].encode("utf-8"))
    print(json.dumps({"id": req["id"], "ids": [ord(c) for c in text],
                      "offsets": [[i, i + 1] for i in range(len(text))]}), flush=True)
'''


@pytest.mark.slow
def test_diff_fuzz_reports_a_quadratic_cmd_engine_once_per_source(tmp_path: Path) -> None:
    names = []
    for kind in ("quad", "lin"):
        script = tmp_path / f"{kind}.py"
        script.write_text(QUAD.replace("QUADRATIC", str(kind == "quad")), encoding="utf-8")
        names.append(f"cmd:[timeout=1] {shlex.quote(sys.executable)} {shlex.quote(str(script))}")
    parser = argparse.ArgumentParser()
    cli_diff.add_arguments(parser)
    args = parser.parse_args([*names, "--fuzz", "--time", "30", "--workers", "1", "--json", "--quiet",
                              "--report", str(tmp_path / "rep"), "--max-findings", "20"])
    out = io.StringIO()
    code = cli_diff.run(args, out=out, err=io.StringIO())
    summary = json.loads(out.getvalue())
    records = [json.loads(Path(p).read_text(encoding="utf-8")) for p in summary["counterexamples"]]
    cost = [r for r in records if r["classification"] == CLASSIFICATION]
    assert code == 1 and cost and len(cost) <= len(summary["generators"])
    assert all(len(r["text"]) >= COST_MIN_CHARS for r in cost)
    assert not [r for r in records if "hung" in json.dumps(r["outputs"]) and r not in cost]
