"""Smoke test of the ``reference-bpe`` benchmark suite (speed is reported by ``tokspec bench``,
never asserted here), and of its text generators."""

from __future__ import annotations

from tokspec.app.bench.reference_bpe import SUITE, chinese_like, english_like, run


def test_generators_are_deterministic_and_sized() -> None:
    assert english_like(5000, seed=1) == english_like(5000, seed=1) != english_like(5000, seed=2)
    assert 5000 <= len(english_like(5000).encode()) < 5200 and english_like(5000).isascii()
    text = chinese_like(6000)
    assert 6000 <= len(text.encode()) < 6200
    assert sum("\u4e00" <= c <= "\u9fff" for c in text) > 0.9 * len(text)


def test_quick_run_produces_rows() -> None:
    rows = run(quick=True)
    assert {r.suite for r in rows} == {SUITE}
    assert {r.case for r in rows} >= {"english bpe", "chinese bpe", "english pretok", "chinese pretok"}
    assert all(r.subject_s > 0 and r.baseline_s > 0 and r.input_bytes >= 20_000 for r in rows)
