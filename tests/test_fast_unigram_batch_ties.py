"""The HF Unigram batch path (``DatrieUnigram.encode_ids_batch`` -> ``_identity_group`` ->
``tokspec.fast._unigram_batch``) honours the tie-break rule and the HF flavour's unknown emission.

The trained ``mon-unigram`` model has no tied best paths, so nothing there tells a batch that keeps
the first predecessor from one that keeps the last. Here a tiny HF Unigram ``tokenizer.json``
(built with ``tokenizers`` itself, Metaspace pretokenizer, no normalizer: every text goes to the
batch group) has exact ties: score("ab") == score("a") + score("b"), score("\u2581a") ==
score("\u2581") + score("a"), score("ba") == score("b") + score("a"), all dyadic, so float64 sums
are exact. The library defines the rule: for ``tie_break="hf"``/``"spm"`` (first predecessor) the
batch ids must equal HF ``tokenizers``' ids; for ``"last"`` (latest predecessor, tokspec's test
rule) they must equal the reference engine's ``"last"`` ids, which differ from HF's on these texts.
In both cases they equal ``encode_ids`` text by text. Runs of unknown characters (byte fallback with
some byte pieces missing) check that the batch emits them as HF does, not as sentencepiece does.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from tokspec.fast import _unigram_batch
from tokspec.fast.unigram_datrie import DatrieUnigram, datrie_encoder
from tokspec.reference.unigram import unigram_encoder_from_tokenizer_json

# "<0x71>" (q) is missing on purpose: a run "zq" is one <unk> in HF (the run's bytes are not all
# pieces) but "<0x7A>" then <unk> in sentencepiece's per-character emission
VOCAB = [("<unk>", 0.0), ("\u2581", -1.0), ("a", -1.0), ("b", -1.0), ("ab", -2.0), ("\u2581a", -2.0),
         ("ba", -2.0), ("c", -1.5), ("bc", -2.5), ("<0x7A>", -3.0), ("<0xC3>", -3.0), ("<0xA9>", -3.0)]
TIED = ["ab", "aba", "a b", "abab c", "ab bc abc", "bab", "a", "b a b a"]
UNKNOWN = ["zq ab", "qz", "z\u00e9 ab", "q", "abq\u00e9z", "zz ab"]
TEXTS = [*TIED, *UNKNOWN, "", " ", "ab  ab "]


@pytest.fixture(scope="module")
def tied(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny tied model as an HF ``tokenizer.json``, written by ``tokenizers``."""
    tok = Tokenizer(models.Unigram(VOCAB, unk_id=0, byte_fallback=True))
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
    path = tmp_path_factory.mktemp("ties") / "tied.json"
    path.write_text(tok.to_str())
    return path


def hf_ids(path: Path, texts: list[str]) -> list[list[int]]:
    tok = Tokenizer.from_file(str(path))
    return [list(tok.encode(t, add_special_tokens=False).ids) for t in texts]


def reference_ids(path: Path, texts: list[str], tie_break: str) -> list[list[int]]:
    ref = unigram_encoder_from_tokenizer_json(path, "ref", tie_break=tie_break)  # type: ignore[arg-type]
    return [list(ref.encode(t).ids) for t in texts]


def batch_through_the_group_path(fast: DatrieUnigram, texts: list[str],
                                 monkeypatch: pytest.MonkeyPatch) -> list[list[int]]:
    """``encode_ids_batch(texts)``, checking that every non-empty text went to the HF batch group."""
    grouped: list[bytes] = []
    real = _unigram_batch.ids_of_texts

    def spy(bk: object, encoded: list[bytes], *rest: object) -> object:
        grouped.extend(encoded)
        return real(bk, encoded, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(_unigram_batch, "ids_of_texts", spy)
    got = [g.tolist() for g in fast.encode_ids_batch(texts)]
    assert grouped == [t.encode() for t in texts if t]  # the group path, not encode_ids one by one
    return got


def test_the_tiny_model_has_tied_best_paths(tied: Path) -> None:
    """Precondition of the other tests: on most tied texts the two rules give different ids (so a
    batch that ignored the rule would be seen), and the "hf" rule is HF's own."""
    first, last = reference_ids(tied, TIED, "hf"), reference_ids(tied, TIED, "last")
    assert sum(f != g for f, g in zip(first, last)) >= 5
    assert reference_ids(tied, TEXTS, "hf") == hf_ids(tied, TEXTS)


@pytest.mark.parametrize("jit", [True, False], ids=["compiled", "interpreted"])
@pytest.mark.parametrize("tie_break", ["hf", "spm"])
def test_batch_with_first_predecessor_ties_equals_hf_and_encode_ids(
        tie_break: str, jit: bool, tied: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """First-predecessor rules ("hf", the model's default, and "spm"): batch ids == encode_ids ==
    HF tokenizers' ids on tied texts and on unknown runs (HF emission: a run is one <unk> unless all
    its bytes are pieces)."""
    fast = datrie_encoder(str(tied), tie_break=tie_break, jit=jit)  # type: ignore[arg-type]
    assert fast.model.flavour == "hf"
    got = batch_through_the_group_path(fast, TEXTS, monkeypatch)
    assert got == [fast.encode_ids(t).tolist() for t in TEXTS]
    assert got == hf_ids(tied, TEXTS)


@pytest.mark.parametrize("jit", [True, False], ids=["compiled", "interpreted"])
def test_batch_with_last_predecessor_ties_equals_reference_and_encode_ids(
        jit: bool, tied: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tie_break="last"``: batch ids == encode_ids == the reference engine's "last" ids, which on
    tied texts are not HF's (the batch really applies the rule it was given)."""
    fast = datrie_encoder(str(tied), tie_break="last", jit=jit)
    got = batch_through_the_group_path(fast, TEXTS, monkeypatch)
    assert got == [fast.encode_ids(t).tolist() for t in TEXTS]
    assert got == reference_ids(tied, TEXTS, "last")
    assert got[:len(TIED)] != hf_ids(tied, TIED)


def test_switching_the_tie_break_on_one_engine_switches_the_batch(tied: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``tie_break`` is read at each encode (module docstring): the same engine's batch follows a
    switch to "last" and back, with encode_ids agreeing each time."""
    fast = datrie_encoder(str(tied))
    for rule in ("last", "hf", "last"):
        fast.tie_break = rule  # type: ignore[assignment]
        got = batch_through_the_group_path(fast, TIED, monkeypatch)
        assert got == reference_ids(tied, TIED, rule) == [fast.encode_ids(t).tolist() for t in TIED]
