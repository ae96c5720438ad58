"""Smoke test of the ``cold`` bench suite's machinery (first-use seconds are reported by ``tokspec
bench --suite cold``, never asserted): the child process, its ids, errors, the rows and marks."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokspec import load_engine
from tokspec.app.bench import SUITES
from tokspec.app.bench.cold import SUITE, TEXT, FirstUse, FirstUseError, _rows, first_use


def test_first_use_runs_a_fresh_interpreter_on_the_given_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir(mode=0o700)
    got = first_use("tiktoken:cl100k_base", cache, "first use")
    assert got.ids == tuple(load_engine("tiktoken:cl100k_base").encode("first use").ids)
    assert got.wall_s > 0 and got.cpu_s > 0


def test_first_use_names_a_failing_engine(tmp_path: Path) -> None:
    with pytest.raises(FirstUseError, match=r"engine='no-such-prefix:x'.*exit 1"):
        first_use("no-such-prefix:x", tmp_path)


def test_rows_take_the_best_round_and_mark_differing_ids() -> None:
    def uses(*walls: float, ids: tuple[int, ...] = (1, 2)) -> list[FirstUse]:
        return [FirstUse(w, w / 2, ids) for w in walls]
    runs = {"s": {"cold": uses(3.0, 2.0), "warm": uses(0.5, 0.7)},
            "b": {"cold": uses(4.0, 5.0), "warm": uses(0.4, 0.9, ids=(1, 3))}}
    rows = _rows("s", "b", runs)
    assert [r.case for r in rows] == ["cold wall 2.00s vs 4.00s", "cold cpu 1.00s vs 2.00s",
                                      "warm wall 0.50s vs 0.40s INEXACT", "warm cpu 0.25s vs 0.20s INEXACT"]
    assert [(r.subject_s, r.baseline_s) for r in rows] == [(2.0, 4.0), (1.0, 2.0), (0.5, 0.4), (0.25, 0.2)]
    assert all(r.suite == SUITE == "cold" and r.input_bytes == len(TEXT.encode()) for r in rows)
    assert SUITES["cold"] == "tokspec.app.bench.cold"
