"""Smoke test of the ``stages`` bench suite's machinery (the seconds are reported by ``tokspec
bench --suite stages``, never asserted): one row per step and per peer, exactness checked."""

from __future__ import annotations

from tokspec.app.bench import SUITES
from tokspec.app.bench.stages import SUITE, _stage_rows


def test_stage_rows_name_every_step_and_check_the_ids() -> None:
    text = "Hello world, the stages of encode_ids: 12345 \u4e2d\u6587 'll   \n\n" * 20
    rows = _stage_rows("t", text, 1)
    steps = [r.subject.removeprefix("fast:cl100k_base ") for r in rows if r.baseline.endswith("encode_ids")]
    assert steps == ["code points", "peek2", "utf8", "merge", "merge, cold memo"]
    peers = [r.baseline for r in rows if not r.baseline.endswith("encode_ids")]
    assert peers[0] == "tiktoken encode_ordinary"  # always installed; the bench extra's peers follow
    assert all("INEXACT" not in r.case and r.suite == SUITE for r in rows)
    assert all(r.subject_s > 0 and r.baseline_s > 0 and r.input_bytes == len(text.encode()) for r in rows)
    assert SUITES["stages"] == "tokspec.app.bench.stages"


def test_stage_rows_for_o200k_name_their_engine() -> None:
    text = "o200k's stages: Hello WORLD 123 \u4e2d\u6587\n" * 10
    rows = _stage_rows("t", text, 1, "o200k_base")
    assert {r.subject.split()[0] for r in rows} == {"fast:o200k_base"}
    assert all("INEXACT" not in r.case for r in rows)
