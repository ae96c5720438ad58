"""tokspec.spec.merge: the published merge theorems stay falsified by their witnesses, tokspec's
sound-cut theorems hold on the corpus, and every predicate can both pass and fail."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tokspec import Encoder, load_engine
from tokspec.corpus import build_corpus
from tokspec.spec import merge as M
from tokspec.spec._verdict import CLAIMS

WITNESSES = Path(__file__).resolve().parents[1] / "corpora" / "merge" / "witnesses.jsonl"
CHECKS = {"4.1": M.lopt_theorem_4_1, "7.1": M.lopt_lemma_7_1, "blog": M.blog_overlap_theorem,
          "pt": M.parallel_tokenizer_claim}
RULE_OF = {"tiktoken:cl100k_base": "space-after-letter", "hf:bert-base-uncased": "space",
           "hf:mon-unigram": "space-after-letter"}


@pytest.mark.parametrize("name", sorted(n for n, c in CLAIMS.items()
                                        if n.startswith("merge.") and c.status == "falsified"))
def test_falsified_claim_replays(name: str) -> None:
    claim = CLAIMS[name]
    assert claim.counterexample is not None
    verdict = claim.check(**claim.counterexample)
    assert not verdict.holds and verdict.witness, verdict.explanation


def _witness_rows() -> list[dict]:
    rows = [json.loads(line) for line in WITNESSES.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if r["witness"] is not None]


@pytest.mark.parametrize("row", _witness_rows(), ids=lambda r: f"{r['claim']}-{r['engine']}")
def test_every_family_witness_replays(row: dict) -> None:
    assert not CHECKS[row["claim"]](row["engine"], **row["witness"]).holds


def test_predicates_can_hold_non_vacuously() -> None:
    bert = load_engine("hf:bert-base-uncased")
    text = "the cat sat on the mat and the dog sat on the log"
    thm = [M.lopt_theorem_4_1(bert, text, c, 10) for c in range(8, 20)]
    assert all(v.holds for v in thm) and any(not v.explanation.startswith("vacuous") for v in thm)
    for verdict in (M.lopt_lemma_7_3(bert, text, 2, 4),
                    M.blog_overlap_theorem(bert, text, 20, 19), M.split_equation(bert, text, 7),
                    M.parallel_tokenizer_claim(bert, text, 20, 18)):
        assert verdict.holds and not verdict.explanation.startswith("vacuous"), verdict.explanation


def test_cut_without_the_rule_can_be_unsound() -> None:
    cl = load_engine("tiktoken:cl100k_base")
    assert not M.split_equation(cl, "hello world", 2).holds  # inside a word
    assert not M.split_equation(cl, "a   b", 2).holds  # inside a space run of 3
    assert not M.rule_space_after_letter("a   b", 2)


@pytest.fixture(scope="module", params=sorted(RULE_OF))
def engine(request: pytest.FixtureRequest) -> Encoder:
    return load_engine(request.param)


def test_sound_cut_theorems_on_corpus(engine: Encoder) -> None:
    rule = RULE_OF[engine.info.name]
    rng = random.Random(3)
    checked = 0
    for text in build_corpus(seed=0, size="small"):
        cuts = [c for c in range(1, len(text)) if M._RULES[rule](text, c)]
        for c in rng.sample(cuts, min(3, len(cuts))):
            verdict = M.lopt_cut_theorem(engine, text, c, rule)
            assert verdict.holds, verdict.witness
            checked += 1
        if len(cuts) > 1:
            assert M.pieces_equation(engine, text, cuts).holds  # M4: all cuts at once
    assert checked > 100


# Registered witnesses that are the search's own output (corpora/merge/search_witnesses.py), row for
# row; the other two falsified merge claims carry hand-minimized witnesses (Lemma 7.3: by deletion;
# the blog theorem: a shorter run than the search's), replayed by test_falsified_claim_replays.
FROM_THE_SEARCH = {"merge.lopt_theorem_4_1": "4.1", "merge.lopt_lemma_7_1": "7.1",
                   "merge.parallel_tokenizer_overlap": "pt"}


@pytest.mark.parametrize("name", sorted(FROM_THE_SEARCH))
def test_registered_witness_is_the_recorded_search_result(name: str) -> None:
    """A stored witness edited by hand (say its letters re-cased) may still falsify the claim, so
    replaying it is not enough: it must be, byte for byte, what the witness search recorded."""
    example = dict(CLAIMS[name].counterexample)
    engine = example.pop("engine")
    rows = [r for r in _witness_rows() if r["claim"] == FROM_THE_SEARCH[name] and r["engine"] == engine]
    assert len(rows) == 1, (name, engine)
    assert example == rows[0]["witness"]


@pytest.mark.parametrize("name", sorted(n for n, c in CLAIMS.items()
                                        if n.startswith("merge.") and c.status == "falsified"))
def test_witness_texts_are_written_as_the_engine_normalizes_them(name: str) -> None:
    """Characters an engine's normalizer maps to the same text give the same encoding, so a
    minimized witness (tokspec.minimize replaces characters that do not matter by plain ones) holds
    none the normalizer would still rewrite: each text argument is a fixed point of the library's
    own normalizer (uncased BERT: already lower case). Engines without a normalizer: nothing to check."""
    example = dict(CLAIMS[name].counterexample)
    engine = load_engine(example.pop("engine"))
    tokenizer = getattr(engine, "library_tokenizer", None)
    normalizer = tokenizer.normalizer if tokenizer is not None else None
    texts = {k: v for k, v in example.items() if isinstance(v, str)}
    assert texts
    if normalizer is None:
        return
    for key, value in texts.items():
        assert normalizer.normalize_str(value) == value, (name, key, value)
