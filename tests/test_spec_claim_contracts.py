"""What a registered claim shows a user, checked against the seed it cites and against inputs on
which its property MUST fail.

- A falsified claim's stored counterexample, as the registering code produces it (re-registered
  into an empty registry), replays to a failing verdict with a witness: ``check(**counterexample)``
  is the documented way to reproduce it (``tokspec.spec._verdict.Claim``).
- The seed's worked example (``seeds/bpe-backtracking-linear-encoder.txt``, the ``abacbb``
  example): the dictionary, the prefix table and the claim's statement are what the seed prints,
  re-read from the seed document, not copied here; the passing verdict names the cited section.
- Corollary II's property also checks the one-token runs: an encoder that is stable on every run of
  two or more tokens but splits a single token it emitted is refuted.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tokspec.spec import CLAIMS, load_claims
from tokspec.spec import bpe as B
from tokspec.spec._verdict import Claim

load_claims()


def _falsified() -> list[str]:
    return sorted(n for n, c in CLAIMS.items() if c.status == "falsified")


@pytest.mark.parametrize("name", _falsified())
def test_registered_counterexample_replays_to_a_failing_verdict(name: str, registry: dict[str, Claim]) -> None:
    claim = registry[name]
    assert claim.counterexample is not None
    v = claim.check(**claim.counterexample)
    assert not v.holds, f"{name}: the stored counterexample no longer falsifies: {v.explanation}"
    assert isinstance(v.witness, dict) and v.witness
    json.dumps(v.witness)


# --- the seed's worked example ------------------------------------------------------------------

def _seed_document() -> str:
    for parent in Path(__file__).resolve().parents:
        path = parent / "shared" / "seeds" / "bpe-backtracking-linear-encoder.txt"
        if path.is_file():
            return path.read_text(encoding="utf-8")
    if os.environ.get("CI"):
        raise AssertionError("shared/seeds (the seed documents) not found beside the repository")
    pytest.skip("shared/seeds (the seed documents) is not beside this checkout; CI runs this check")


def _printed_prefix_table(doc: str) -> dict[bytes, list[bytes]]:
    """The seed's first table "prefix / ---->tokens" (full encodings of every prefix); the second
    table repeats the prefixes with only their last token, so the first occurrence wins."""
    lines = doc.splitlines()
    table: dict[bytes, list[bytes]] = {}
    for prefix, arrow in zip(lines, lines[1:]):
        m = re.fullmatch(r"-+>(.+)", arrow.strip())
        if m and re.fullmatch(r"[abc]+", prefix.strip()) and prefix.strip().encode() not in table:
            table[prefix.strip().encode()] = [t.encode() for t in m.group(1).split()]
    return table


def test_seed_example_prefix_table_is_the_seeds() -> None:
    doc = _seed_document()
    assert _printed_prefix_table(doc) == B.SEED_EXAMPLE_PREFIXES
    m = re.search(r"dictionary contains the tokens ([a-z ]+)\n", doc)
    assert m and tuple(t.encode() for t in m.group(1).split()) == B.SEED_EXAMPLE_DICT


def test_seed_example_statement_is_the_seeds_and_the_definitions(registry: dict[str, Claim]) -> None:
    """"abacb encodes as ab a cb; abacbb as ab acbb (...)": every "X [encodes] as T" of the
    statement is a row of the seed's table and what the BPE definition gives."""
    claim = registry["bpe.seed_example"]
    assert claim.check is B.prop_seed_example and "abacbb example" in claim.source
    ranks = {tok: rank for rank, tok in enumerate(B.SEED_EXAMPLE_DICT)}
    table = _printed_prefix_table(_seed_document())
    said = re.findall(r"\b([abc]+) (?:encodes )?as ((?:[abc]+ ?)+)", claim.statement.split("(")[0])
    assert len(said) == 2, claim.statement
    for prefix, tokens in said:
        want = [t.encode() for t in tokens.split()]
        assert table[prefix.encode()] == want, (prefix, tokens)
        assert B.bpe_encode(ranks, prefix.encode()) == want


def test_seed_example_verdict_names_the_cited_section(registry: dict[str, Claim]) -> None:
    claim = registry["bpe.seed_example"]
    section = claim.source.rpartition(", ")[2]
    v = claim.check()
    assert v.holds and re.search(rf"(^|\s){re.escape(section)}:", v.explanation), v.explanation
    assert f"all {len(B.SEED_EXAMPLE_PREFIXES)} checks hold" in v.explanation


# --- Corollary II: single-token runs -----------------------------------------------------------

def test_corollary_II_refutes_an_encoder_that_splits_a_token_it_emitted() -> None:
    """``enc(b"abc") == [ab, c]`` but ``enc(b"ab") == [a, b]``: the run ``e_0..e_0`` is not valid,
    while every run of two or more tokens is (there is only ``[ab, c]`` itself)."""
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"ab": 3}

    def enc(data: bytes) -> list[bytes]:
        return [b"ab", b"c"] if data == b"abc" else [data[i:i + 1] for i in range(len(data))]

    v = B.prop_substrings_valid(ranks, b"abc", enc)
    assert not v.holds
    assert v.witness == {"data": "616263", "encoding": ["6162", "63"], "run": ["6162"],
                         "run_encoding": ["61", "62"]}
    assert "run 0..1" in v.explanation


@pytest.mark.parametrize("data", [b"abcab", b"cbacab", b"a"])
def test_corollary_II_checks_every_run(data: bytes) -> None:
    """k tokens have k(k+1)/2 contiguous runs, and each is one check of the passing verdict."""
    ranks = {b"a": 0, b"b": 1, b"c": 2, b"bc": 3, b"ab": 4}
    k = len(B.bpe_encode(ranks, data))
    v = B.prop_substrings_valid(ranks, data)
    assert v.holds and f"all {k * (k + 1) // 2} checks hold" in v.explanation, v.explanation


def test_lemma_7_3_witness_is_minimal(registry: dict[str, Claim]) -> None:
    """Claim.counterexample holds the minimized witness: dropping any one character of the text
    makes the same token range (l, r) satisfy Lemma 7.3 again."""
    claim = registry["merge.lopt_lemma_7_3"]
    witness = claim.counterexample
    assert not claim.check(**witness).holds
    text = witness["text"]
    for smaller in sorted({text[:i] + text[i + 1:] for i in range(len(text))}):
        assert claim.check(**{**witness, "text": smaller}).holds, f"{smaller!r} still falsifies"
