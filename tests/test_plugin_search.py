"""check_against's search (tokspec.app.finder): deterministic, and it finds the planted user bugs.

The planted bugs are :mod:`tokspec.fuzz.authored_bugs`. A representative handful runs by default
(short and long inputs, BPE, WordPiece, Unigram); the whole set runs twice, with the same verdict
required on both runs, under TOKSPEC_SLOW=1.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tokspec import load_engine
from tokspec.app.finder import LONG_DOCUMENT_CHARS, Finder, finding_key, replay_texts, run_search
from tokspec.app.pytest_plugin import check_against
from tokspec.app.search import text_sources
from tokspec.diff import compare
from tokspec.fuzz.authored_bugs import AUTHORED_BUGS, by_name

# One hand-written input per planted bug on which it must disagree with its reference engine: the
# bug is real and its engine name resolves (the search must find these without being told).
PROBES = {
    "digits_by_two": "1234", "case_sensitive_contractions": "'The", "unicode_14_letters": "\U00032315'a", "whitespace_no_lookahead": "a  b", "ascii_letters": "café",
    "punct_without_newlines": "f(x);\n}\n", "offsets_in_bytes": "é", "split_char_spans": "𝔘𝔫",
    "nul_terminated": "a\x00b", "casefolded_cache": "the cat, the The", "crash_mark_after_astral": "🙂\u0301",
    "output_buffer_4096": "a " * 5000, "independent_chunks_8k": "word " * 2000,
    "seam_at_whitespace": ("x" * 1000 + "\n\n\n") * 3, "wp_max_chars_200": "a" * 150,
    "wp_keeps_accents": "café", "wp_cjk_not_spaced": "你好", "wp_no_clean_text": "a\x07b",
    "uni_no_nfc": "e\u0301", "uni_keeps_zero_width": "a\u200bb", "uni_no_byte_fallback": "\U0001F600 \u2603",
}


@pytest.mark.slow
def test_every_planted_bug_is_real() -> None:
    assert len(AUTHORED_BUGS) >= 15 and set(PROBES) == {b.name for b in AUTHORED_BUGS}
    assert {b.model for b in AUTHORED_BUGS} == {"BPE", "WordPiece", "Unigram"}
    assert any(b.long for b in AUTHORED_BUGS)
    for bug in AUTHORED_BUGS:
        engine = load_engine(bug.engine)
        c = compare(engine, load_engine(bug.against), PROBES[bug.name])
        assert not c.agree, bug.name
    with pytest.raises(ValueError, match="unknown planted bug name='nope'"):
        by_name("nope")


def _texts_tried(seed: int, budget: int) -> list[str]:
    a = load_engine("tiktoken:cl100k_base")
    tried: list[str] = []
    finder = Finder(a, a, on_compare=lambda c: tried.append(c.text))
    outcome = run_search(finder, text_sources(a, seed), seconds=600, max_inputs=budget, slice_inputs=40)
    assert outcome.inputs == budget and not outcome.cut_by_time
    return tried


def test_counted_search_is_deterministic() -> None:
    first = _texts_tried(3, 120)
    assert len(first) == 120 and len(set(first)) > 60
    assert _texts_tried(3, 120) == first
    assert _texts_tried(4, 120) != first


def test_search_cut_short_by_time_warns() -> None:
    from tokspec.app.pytest_plugin import SearchCutShort

    # max_seconds bounds the replay of stored findings too (issue 28): 0.5 s may end either
    with pytest.warns(SearchCutShort, match="ended the (search after|replay)"):
        check_against("tiktoken:cl100k_base", "bpe-openai:cl100k_base", max_examples=10**9, max_seconds=0.5)


def test_replay_has_stored_findings_corpus_and_long_documents() -> None:
    sources = [source for source, _ in replay_texts()]
    assert sources[0] == "stored findings (corpora/)" and "conformance corpus" in sources
    long = [text for source, text in replay_texts() if source.startswith("long documents")]
    assert len(long) == 2 and all(len(t) == LONG_DOCUMENT_CHARS for t in long)


def test_finding_key_counts_one_fault_per_message() -> None:
    engine = load_engine(by_name("crash_mark_after_astral").engine)
    reference = load_engine("tiktoken:cl100k_base")
    c1, c2 = (compare(engine, reference, t) for t in ("🙂\u0301", "x𝔘\u0300"))
    assert c1.classification == c2.classification == "engine fault"
    assert finding_key(c1) == finding_key(c2)


def _verdict(name: str, tmp_path: Path) -> str | None:
    """The first line of check_against's failure (the minimized text), or None if it passed."""
    bug = by_name(name)
    try:
        check_against(load_engine(bug.engine), bug.against, reports=tmp_path)  # a fresh engine each run
    except AssertionError as exc:
        assert "replay: tokspec diff " + bug.engine in str(exc)
        return str(exc).splitlines()[0]
    return None


# BPE, WordPiece, Unigram, each found within seconds (the long-input class: the next test).
HANDFUL = ["whitespace_no_lookahead", "crash_mark_after_astral", "wp_cjk_not_spaced", "uni_no_byte_fallback"]


@pytest.mark.parametrize("name", HANDFUL)
def test_check_against_finds_planted_bug(name: str, tmp_path: Path) -> None:
    assert _verdict(name, tmp_path) is not None, f"check_against with defaults passed the planted bug {name}"


def test_long_documents_catch_a_long_input_bug() -> None:
    bug = by_name("output_buffer_4096")
    finder = Finder(load_engine(bug.engine), load_engine(bug.against), shrink_seconds=5.0)
    assert finder.replay(t for t in replay_texts() if t[0].startswith("long documents"))
    assert finder.findings[0].comparison.classification == "decoded text differs"


@pytest.mark.slow
def test_check_against_finds_every_planted_bug_twice(tmp_path: Path) -> None:
    first = {b.name: _verdict(b.name, tmp_path) for b in AUTHORED_BUGS}
    assert [name for name, line in first.items() if line is None] == []
    second = {b.name: _verdict(b.name, tmp_path) for b in AUTHORED_BUGS}
    assert second == first  # same verdict and same minimized text


def test_finding_key_does_not_cut_a_short_text_out_of_its_message() -> None:
    """Regression (found by tests/test_diff_parallel.py in CI): the fault on the minimized text "!"
    and on a long text holding a "!" have the same message, "fails on !"; cutting the raw text "!"
    out of the first message made them two findings."""
    from tokspec.diff import Comparison, Outcome

    def fault(text: str) -> Comparison:
        return Comparison(text, Outcome(None, None), Outcome(None, "RuntimeError: toy engine fails on !"),
                          None, "engine fault")

    assert finding_key(fault("!")) == finding_key(fault("lorem ipsum " * 50_000 + "!"))
