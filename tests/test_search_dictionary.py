"""The search's blind spots (issue 26): pattern dictionary, Unicode drift, a corpus fixed per version."""

from __future__ import annotations

from pathlib import Path

import pytest

from tokspec import load_engine
from tokspec.app import finder as finder_module
from tokspec.app.dictionary_source import DictionarySource
from tokspec.app.finder import Finder, replay_texts, run_search
from tokspec.diff import compare
from tokspec.fuzz.dictionary import SPECIALS, contraction_cases
from tokspec.unicode_drift import drift_reason, drift_table

CASES = "tokspec.fuzz.authored_bugs:case_sensitive_contractions"
OLD_UNICODE = "tokspec.fuzz.authored_bugs:unicode_14_letters"


def test_dictionary_has_every_contraction_case_and_whitespace_kind() -> None:
    assert {"'s", "'S", "'ll", "'LL", "'Ll", "'lL", "'VE", "'t", "'T", "'m", "'M", "'d", "'D"} <= set(contraction_cases())
    assert {"\u0085", "\ufeff", "\u00a0", "\u3000", "\u2028", "\x1c"} <= set(SPECIALS)
    from tokspec.fuzz.clusterfuzzlite import SPECIALS as cfl

    assert cfl is SPECIALS  # one dictionary, not two


def test_drift_table_lists_newer_letters_and_whitespace_definitions() -> None:
    table = drift_table()
    assert len(table) > 10_000
    assert "Cn in unicodedata" in str(drift_reason("\U000323b0"))  # a CJK letter new in Unicode 15
    assert drift_reason("\x1c") == "whitespace to str.isspace only"
    assert drift_reason("a") is None and drift_reason(" ") is None


@pytest.mark.parametrize("bug", [CASES, OLD_UNICODE])
def test_the_dictionary_source_finds_what_random_text_misses(bug: str) -> None:
    a, b = load_engine(bug), load_engine("tiktoken:cl100k_base")
    finder = Finder(a, b, max_findings=1, shrink_tests=200)
    outcome = run_search(finder, [DictionarySource(0)], seconds=60, max_inputs=2000, slice_inputs=200)
    assert finder.findings, f"{bug}: not found in {outcome.inputs} texts"
    small = finder.findings[0].comparison
    assert not compare(a, b, small.text).agree and len(small.text) <= 6


def test_check_against_finds_case_sensitive_contractions_at_its_default_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tokspec.app.pytest_plugin import check_against

    monkeypatch.setenv("TOKSPEC_CORPORA", str(tmp_path / "none"))  # as installed from a wheel: no stored findings
    replay_texts.cache_clear()
    try:
        with pytest.raises(AssertionError, match="engines disagree"):
            check_against(CASES, "tiktoken:cl100k_base", reports=tmp_path / "r")
    finally:
        replay_texts.cache_clear()


def test_replayed_corpus_is_fixed_per_version(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import tokspec.corpus as corpus

    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text("machine file one " * 50, encoding="utf-8")
    two.write_text("another machine file " * 50, encoding="utf-8")
    replay_texts.cache_clear()
    try:
        monkeypatch.setattr(corpus, "_machine_files", lambda: [one])
        first = replay_texts()
        replay_texts.cache_clear()
        monkeypatch.setattr(corpus, "_machine_files", lambda: [two])
        assert replay_texts() == first  # what /usr/share holds does not change the verdict
        assert not any("machine file" in text for _, text in first)
        replay_texts.cache_clear()
        monkeypatch.setenv("TOKSPEC_MACHINE_TEXTS", "1")  # opt-in extra source
        assert finder_module.machine_texts_wanted()
        assert any("another machine file" in text for _, text in replay_texts())
    finally:
        replay_texts.cache_clear()
