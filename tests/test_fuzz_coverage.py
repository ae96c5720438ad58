"""The fuzz runner never prints an all-clear for targets it starved, skipped or deferred."""

from __future__ import annotations

from tokspec.fuzz._coverage import MIN_EXECS, not_covered, verdict_line
from tokspec.fuzz._schedule import TargetRun


def _run(name: str, execs: int, note: str = "", findings: int = 0) -> TargetRun:
    run = TargetRun(name, 10.0, [])
    run.stats = {"number_of_executed_units": float(execs)}
    run.note = note
    run.findings = [("x", 1.0, "f")] * findings
    return run


def test_starved_skipped_and_deferred_targets_are_not_covered() -> None:
    # the reported case: one target on 2 inputs, others on a few hundred, one fine
    runs = [_run("a", 2), _run("b", 300), _run("c", 50_000), _run("d", 0, "deferred: out of time"),
            _run("e", 5, findings=1)]
    missing = not_covered(runs, [("s", "unavailable: no module x")], ["later"])
    assert [name for name, _ in missing] == ["s", "later", "a", "b", "d"]
    assert dict(missing)["a"] == f"starved: 2 inputs executed (< {MIN_EXECS})"
    line = verdict_line(0, 7, missing)
    assert line.startswith("0 new finding(s) -- NOT an all-clear: 5 of 7 targets NOT covered: ")
    assert "a (starved: 2 inputs executed" in line and "s (unavailable: no module x)" in line


def test_all_clear_only_when_every_target_ran_enough() -> None:
    assert not_covered([_run("c", MIN_EXECS)]) == []
    assert verdict_line(0, 1, []) == f"0 new finding(s); all 1 targets covered (>= {MIN_EXECS} inputs each)"
    assert not_covered([_run("c", MIN_EXECS - 1)]) != []


def test_max_chars_caps_generated_long_texts(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import pytest

    from tokspec.fuzz.targets import LONG_MARK, text_from_bytes

    data = bytes([LONG_MARK, 255, 255]) + b"ab"  # asks for the largest boundary size
    monkeypatch.delenv("TOKSPEC_FUZZ_MAX_CHARS", raising=False)
    uncapped = text_from_bytes(data)
    assert len(uncapped) > 1_000_000
    monkeypatch.setenv("TOKSPEC_FUZZ_MAX_CHARS", "4096")
    assert text_from_bytes(data) == uncapped[:4096]
    assert text_from_bytes(b"short") == "short"
    monkeypatch.setenv("TOKSPEC_FUZZ_MAX_CHARS", "0")
    with pytest.raises(ValueError, match="TOKSPEC_FUZZ_MAX_CHARS='0'"):
        text_from_bytes(data)
