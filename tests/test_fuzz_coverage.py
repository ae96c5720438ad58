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


def test_interpreted_targets_cap_their_long_texts(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """Targets over interpreted kernels take long texts up to INTERPRETED_MAX_CHARS (a 2M-character
    text took the interpreted Unigram kernels 18 s, past the 60 s call limit under load: a "hang"),
    every other target the full length; `tokspec diff --raw` replays a crash file with the cap of
    the engines it names, so the replayed text is the one the harness ran."""
    from tokspec.app.inputs import iter_raw_inputs
    from tokspec.fuzz._texts import MANY_CALLS
    from tokspec.fuzz.targets import (INTERPRETED_MAX_CHARS, LONG_MARK, TARGETS, long_text_cap, text_for,
                                      text_from_bytes)

    monkeypatch.delenv("TOKSPEC_FUZZ_MAX_CHARS", raising=False)
    data = bytes([LONG_MARK, 255, 255]) + b"ab"
    full = text_from_bytes(data)
    assert 100_000 < INTERPRETED_MAX_CHARS < len(full)
    capped = [t for t in TARGETS if "interpreted" in t.name or "max_pretoken" in t.meta
              or any(e in MANY_CALLS for e in t.engines)]
    assert len(capped) >= 10
    for t in TARGETS:
        if "max_pretoken" in t.meta:  # "abab...": one pretoken, cut (test below)
            assert text_for(t, data) == full[:len(text_for(t, data))] and len(text_for(t, data)) < 10_000
            continue
        want = full[:INTERPRETED_MAX_CHARS] if t in capped else full
        assert text_for(t, data) == want, t.name
    assert text_for(capped[0], b"short") == "short"
    assert long_text_cap(("fast:cl100k_base", "tiktoken:cl100k_base")) is None
    assert long_text_cap(("tokspec.fuzz.wrapped:fast_mon_interpreted", "fast:mon-unigram")) == INTERPRETED_MAX_CHARS
    assert long_text_cap(("tokspec.fuzz.wrapped:fast_blocks_o200k", "tiktoken:o200k_base")) == INTERPRETED_MAX_CHARS
    crash = tmp_path / "crash-1"
    crash.write_bytes(data)
    assert [t for _, t in iter_raw_inputs(crash, cap=INTERPRETED_MAX_CHARS)] == [full[:INTERPRETED_MAX_CHARS]]
    assert [t for _, t in iter_raw_inputs(crash)] == [full]


def test_reference_bpe_targets_cut_long_texts_at_a_long_pretoken(monkeypatch, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """The reference BPE is O(m^2) in a pretoken's m bytes (a 2 MiB letter run: days), so a long text
    of a target over it ends where its first pretoken passes REFERENCE_MAX_PRETOKEN_BYTES; a long
    text of ordinary pretokens keeps its full length; `tokspec diff --raw` replays the same text."""
    from tokspec.app.inputs import iter_raw_inputs
    from tokspec.fuzz.targets import (INTERPRETED_MAX_CHARS, LONG_MARK, REFERENCE_MAX_PRETOKEN_BYTES as LIMIT,
                                      TARGETS, long_text_cap, pair_target, pretoken_cap, text_for, text_from_bytes)
    from tokspec.fuzz._texts import _cut_long_pretoken
    from tokspec.reference.pretok_regex import split

    monkeypatch.delenv("TOKSPEC_FUZZ_MAX_CHARS", raising=False)
    cut = [t for t in TARGETS if "max_pretoken" in t.meta]
    assert sorted(t.name for t in cut) == sorted(t.name for t in TARGETS if "reference_cl100k" in t.name
                                                 or "reference_o200k" in t.name)
    assert pretoken_cap(("reference:o200k_base", "tiktoken:o200k_base")) == ("o200k_base", LIMIT)
    assert pretoken_cap(("reference:cl100k_base-u17", "x")) == ("cl100k_base", LIMIT)
    assert pretoken_cap(("fast:cl100k_base", "tiktoken:cl100k_base")) is None
    assert pretoken_cap(("reference:mon-unigram", "hf:mon-unigram")) is None
    assert pair_target("tiktoken:cl100k_base", "reference:cl100k_base").meta["max_pretoken"] == ("cl100k_base", LIMIT)
    words = bytes([LONG_MARK, 255, 255]) + " word, 12 é".encode()
    letters = bytes([LONG_MARK, 255, 255]) + "é".encode() + b"ab"
    assert len(text_from_bytes(words)) > 1_000_000 and long_text_cap(cut[0].engines) == INTERPRETED_MAX_CHARS
    for t in cut:
        assert text_for(t, words) == text_from_bytes(words)[:INTERPRETED_MAX_CHARS], t.name  # not cut
        text = text_for(t, letters)  # one run of letters: cut before the byte limit is passed
        assert text == text_from_bytes(letters)[:len(text)]
        assert [(0, len(text))] == split(text, t.meta["max_pretoken"][0])
        assert LIMIT - 2 < len(text.encode()) <= LIMIT
    # a long pretoken after ordinary ones: everything before it stays
    text = _cut_long_pretoken("x " * 100 + "y" * 10_000, "cl100k_base", LIMIT)
    assert text == "x " * 99 + "x" + (" " + "y" * 10_000)[:LIMIT]
    crash = tmp_path / "crash-1"
    crash.write_bytes(letters)
    replayed = [t for _, t in iter_raw_inputs(crash, cap=long_text_cap(cut[0].engines),
                                              pretokens=pretoken_cap(cut[0].engines))]
    assert replayed == [text_for(cut[0], letters)]
    assert text_for(cut[0], b"short " + b"a" * 9000) == "short " + "a" * 9000  # short inputs are not cut
