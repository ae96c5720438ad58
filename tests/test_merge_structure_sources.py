"""``merge_structure``: where each kind of engine's structure comes from (the module's table), what
the sentencepiece structure holds, and ``decision_for``'s per-engine cache.

Each row of the table is exercised with a minimal engine exposing exactly the attribute the row
reads (and real engines where they are cheap: ``fast:`` Unigram over a trained ``.model``); the
oracle for the sentencepiece fields is the model as sentencepiece itself reports it
(``SentencePieceProcessor``: piece types, normalizer behaviour via ``tokspec.formats.vocab``'s reader).
"""

from __future__ import annotations

import dataclasses
import io
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest

from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec.fast.merge_rules import RULES, decide
from tokspec.fast.merge_structure import _decisions, _file_structure, decision_for, spm_structure, structure_of


class Toy(Encoder):
    """One token per character; ``attrs`` become attributes (the row of the table under test)."""

    def __init__(self, library: str = "toy", name: str = "toy:x", **attrs: Any) -> None:
        self.info = EngineInfo(name, "tokenizer", library, "0", None)
        for k, v in attrs.items():
            setattr(self, k, v)

    def _encode(self, text: str) -> Encoding:
        return Encoding.of([ord(c) for c in text], [(i, i + 1) for i in range(len(text))])


class _Obj:
    def __init__(self, **attrs: Any) -> None:
        self.__dict__.update(attrs)


BERTISH = {"normalizer": None, "pre_tokenizer": {"type": "Whitespace"}, "model": {"type": "WordPiece"}}


def test_declared_structure_wins_over_everything() -> None:
    declared = {"format": "regex-bpe", "pattern": "gpt2"}
    engine = Toy(merge_structure=declared,
                 library_tokenizer=_Obj(to_str=lambda: json.dumps(BERTISH)))
    assert structure_of(engine) == (declared, "declared by the engine")


def test_hf_tokenizer_json_is_read_from_to_str() -> None:
    engine = Toy(library_tokenizer=_Obj(to_str=lambda: json.dumps(BERTISH)))
    assert structure_of(engine) == ({"format": "tokenizer.json", **BERTISH}, "HF tokenizer's JSON")
    not_callable = Toy(library_tokenizer=_Obj(to_str="{}"))
    assert structure_of(not_callable) == (None, "no structure")
    assert structure_of(Toy(library_tokenizer=_Obj())) == (None, "no structure")


def test_tiktoken_bpe_openai_and_fast_bpe_patterns() -> None:
    pat = r"\S+|\s+"
    assert structure_of(Toy(library_encoding=_Obj(_pat_str=pat))) == (
        {"format": "regex-bpe", "pattern": pat}, "tiktoken pattern")
    assert structure_of(Toy(library_encoding=_Obj(_pat_str=None))) == (None, "no structure")
    assert structure_of(Toy("bpe-openai", "bpe-openai:o200k_base")) == (
        {"format": "regex-bpe", "pattern": "o200k_base"}, "bpe-openai encoding")
    assert structure_of(Toy("bpe-openai", "wrapped:bpe-openai:o200k_base")) == (
        {"format": "regex-bpe", "pattern": "o200k_base"}, "bpe-openai encoding")  # NAME: the last part
    assert structure_of(Toy("tokspec.fast", pattern="o200k_base", bpe=object())) == (
        {"format": "regex-bpe", "pattern": "o200k_base"}, "fast BPE's Peek2 pattern")
    # a fast engine without a BPE, an unknown pattern name, or another library: no structure
    assert structure_of(Toy("tokspec.fast", pattern="o200k_base")) == (None, "no structure")
    assert structure_of(Toy("tokspec.fast", pattern="r50k_base", bpe=object())) == (None, "no structure")
    assert structure_of(Toy("toy", pattern="o200k_base", bpe=object())) == (None, "no structure")


def test_real_engines_report_their_source() -> None:
    for name, src, fmt in [("fast:cl100k_base", "fast BPE's Peek2 pattern", "regex-bpe"),
                           ("bpe-openai:cl100k_base", "bpe-openai encoding", "regex-bpe")]:
        structure, source = structure_of(load_engine(name))
        assert (source, structure) == (src, {"format": fmt, "pattern": "cl100k_base"})


def test_model_file_sources(tmp_path: Path) -> None:
    tj = tmp_path / "tok.json"
    tj.write_text(json.dumps(BERTISH), encoding="utf-8")
    assert structure_of(Toy(model=_Obj(source=str(tj)))) == (
        {"format": "tokenizer.json", **BERTISH}, "model file tok.json")
    for missing in (str(tmp_path / "none.json"), str(tmp_path / "none.model"), str(tmp_path), "", None, 5):
        assert structure_of(Toy(model=_Obj(source=missing))) == (None, "no structure"), missing
    other = tmp_path / "tok.txt"
    other.write_text(json.dumps(BERTISH), encoding="utf-8")
    assert structure_of(Toy(model=_Obj(source=str(other)))) == (None, "no structure")
    a_dir = tmp_path / "d.json"
    a_dir.mkdir()
    assert structure_of(Toy(model=_Obj(source=str(a_dir)))) == (None, "no structure")
    assert structure_of(Toy()) == (None, "no structure")


def _train_spm(folder: Path, model_type: str, user: list[str], normalization: str) -> Path:
    import sentencepiece

    buf = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["hello world the quick brown fox 12 jumps"] * 60), model_writer=buf,
        vocab_size=60, model_type=model_type, user_defined_symbols=user, hard_vocab_limit=False,
        normalization_rule_name=normalization, add_dummy_prefix=False, minloglevel=3)
    path = folder / f"{model_type}-{normalization}.model"
    path.write_bytes(buf.getvalue())
    return path


@pytest.fixture(scope="module")
def spm_files() -> list[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tokspec-structure-"))
    return [_train_spm(folder, "bpe", ["<u1>", "@@"], "identity"),
            _train_spm(folder, "unigram", [], "nmt_nfkc")]


def test_spm_structure_is_what_sentencepiece_says(spm_files: list[Path]) -> None:
    import sentencepiece

    from tokspec.formats.spm_normalize import CharsMap
    from tokspec.formats.spm_model import load_spm_model

    for path in spm_files:
        model = load_spm_model(path)
        got = spm_structure(model)
        proc = sentencepiece.SentencePieceProcessor(model_file=str(path))
        pieces = [proc.id_to_piece(i) for i in range(proc.get_piece_size())]
        special = {i for i in range(len(pieces)) if proc.is_control(i) or proc.is_unknown(i)
                   or proc.is_unused(i) or proc.is_byte(i)}
        user = [p for i, p in enumerate(pieces) if i not in special and p in ("<u1>", "@@")]
        assert got["user_symbols"] == user == (["<u1>", "@@"] if "bpe" in path.name else [])
        assert got["space_piece"] == ("\u2581" in pieces and pieces.index("\u2581") not in special)
        assert got["space_piece"] is True
        keys = {"model_type", "normalizer_name", "add_dummy_prefix", "remove_extra_whitespaces",
                "escape_whitespaces", "treat_whitespace_as_suffix", "split_by_whitespace",
                "allow_whitespace_only_pieces", "byte_fallback"}
        assert set(got) == keys | {"format", "charsmap", "user_symbols", "space_piece"}
        assert got["format"] == "sentencepiece"
        assert {k: got[k] for k in keys} == {k: getattr(model, k) for k in keys}
        assert got["model_type"] == path.name.split("-")[0]
        assert got["normalizer_name"] == path.stem.split("-", 1)[1]
        assert got["add_dummy_prefix"] is False and got["split_by_whitespace"] is True
        want_cm = CharsMap.parse(model.precompiled_charsmap, model.path)
        if want_cm is None:
            assert got["charsmap"] is None and "identity" in path.name
        else:
            assert "nfkc" in path.name and got["charsmap"].units == want_cm.units
            assert got["charsmap"].pool == want_cm.pool


def test_user_symbol_with_a_space_piece_is_read(spm_files: list[Path]) -> None:
    from tokspec.formats.spm_model import load_spm_model

    model = load_spm_model(spm_files[0])
    types = tuple("unused" if p == "\u2581" else t for p, t in zip(model.pieces, model.types))
    fake = dataclasses.replace(model, pieces=(*model.pieces, "a\u2581b", " "), types=(*types, "user", "user"),
                               scores=(*model.scores, 0.0, 0.0))
    got = spm_structure(fake)
    assert got["user_symbols"] == ["<u1>", "@@", "a\u2581b", " "]
    assert got["space_piece"] is False
    assert decide(got | {"remove_extra_whitespaces": False}).why == "a user-defined symbol holds a space"


def test_spm_engines_give_their_models_specs(spm_files: list[Path]) -> None:
    from tokspec.formats.spm_model import load_spm_model

    for path in spm_files:
        engine = load_engine(f"spm:{path}")
        structure, source = structure_of(engine)
        want = spm_structure(load_spm_model(path))
        assert source == "sentencepiece model's specs"
        assert {k: v for k, v in structure.items() if k != "charsmap"} == \
            {k: v for k, v in want.items() if k != "charsmap"}
        assert (structure["charsmap"] is None) == (want["charsmap"] is None) == ("identity" in path.name)
    # a model object without a charsmap field is not a sentencepiece model
    assert structure_of(Toy(model=_Obj(pieces=(), source=""))) == (None, "no structure")


def test_fast_unigram_over_a_model_file_reads_the_model(spm_files: list[Path]) -> None:
    from tokspec.formats.spm_model import load_spm_model

    path = spm_files[1]
    engine = load_engine(f"fast:{path}")
    structure, source = structure_of(engine)
    assert source == f"model file {path.name}"
    want = spm_structure(load_spm_model(path))
    assert {k: v for k, v in structure.items() if k != "charsmap"} == \
        {k: v for k, v in want.items() if k != "charsmap"}
    assert structure["charsmap"].units == want["charsmap"].units
    assert decision_for(engine)[0].rule is None  # sentencepiece Unigram: serial (finding M6)


# -- decision_for ------------------------------------------------------------------------------

def test_declared_rule_name_is_used_directly() -> None:
    for rule in RULES:
        dec, source = decision_for(Toy(merge_family=rule, merge_structure={"format": "nothing"}))
        assert (dec.family, dec.rule, dec.why, source) == (f"declared {rule}", RULES[rule], "declared rule",
                                                          "declared")
    dec, source = decision_for(Toy(merge_family="no-such-rule", merge_structure={
        "format": "tokenizer.json", **BERTISH}))
    assert (dec.rule, dec.why, source) == (RULES["space"], "M3w", "declared by the engine")
    dec, source = decision_for(Toy(merge_family=7))
    assert (dec.rule, source) == (None, "no structure")


def test_decisions_are_cached_per_engine_object() -> None:
    engine = Toy(merge_structure={"format": "tokenizer.json", **BERTISH})
    first = decision_for(engine)
    engine.merge_structure = {"format": "nothing"}  # the cache answers, not the new structure
    again = decision_for(engine)
    assert again[0] is first[0] and again == (first[0], "declared by the engine")
    fresh = Toy(merge_structure={"format": "nothing"})
    assert decision_for(fresh)[0].rule is None


def test_cache_entry_of_another_engine_under_the_same_id_is_not_used() -> None:
    real = Toy(merge_structure={"format": "tokenizer.json", **BERTISH})
    impostor = Toy(merge_family="space-after-letter")
    _decisions[id(real)] = (impostor, *decision_for(impostor))
    dec, source = decision_for(real)
    assert (dec.rule, source) == (RULES["space"], "declared by the engine")
    assert _decisions[id(real)][0] is real


def test_cache_keeps_the_64_most_recent_engines() -> None:
    _decisions.clear()
    engines = [Toy(merge_family="space") for _ in range(70)]
    for e in engines:
        decision_for(e)
    assert list(_decisions) == [id(e) for e in engines[-64:]]
    assert all(_decisions[id(e)][0] is e for e in engines[-64:])


def test_a_broken_charsmap_is_a_vocabulary_error_naming_the_model_file(spm_files: list[Path]) -> None:
    from tokspec.errors import VocabularyError
    from tokspec.formats.spm_model import load_spm_model

    model = load_spm_model(spm_files[1])
    broken = dataclasses.replace(model, precompiled_charsmap=model.precompiled_charsmap[:3])
    with pytest.raises(VocabularyError) as err:
        spm_structure(broken)
    assert str(err.value).startswith(f"{model.path}: precompiled charsmap of 3 bytes")


def test_a_tokenizer_json_is_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """tokenizer.json is UTF-8 by definition: a non-ASCII structure reads the same under an ASCII
    locale (a child Python with the C locale, no coercion, no UTF-8 mode)."""
    import os
    import subprocess
    import sys

    structure = {**BERTISH, "pre_tokenizer": {"type": "Metaspace", "replacement": "\u2581"},
                 "added_tokens": [{"content": "\u00e9t\u00e9", "special": False}]}
    path = tmp_path / "unicode.json"
    path.write_text(json.dumps(structure, ensure_ascii=False), encoding="utf-8")
    # here too (this process's locale), which also lets mutmut's call recording see the test
    assert _file_structure(str(path)) == {"format": "tokenizer.json", **structure}
    code = ("import json, sys; from tokspec.fast.merge_structure import _file_structure; "
            "print(json.dumps(_file_structure(sys.argv[1])))")
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert json.loads(out.stdout) == {"format": "tokenizer.json", **structure}


class Frozen(Toy):
    """An engine that refuses new attributes after construction."""

    def __init__(self) -> None:
        super().__init__(library_tokenizer=_Obj(to_str=lambda: json.dumps(BERTISH)))
        self._frozen = True

    def __setattr__(self, name: str, value: Any) -> None:
        if getattr(self, "_frozen", False):
            raise AttributeError(f"{type(self).__name__} is frozen")
        super().__setattr__(name, value)


def test_a_cached_decision_keeps_its_source_for_an_engine_refusing_attributes() -> None:
    """Regression: the source was kept as an attribute of the engine, so a second call on an engine
    refusing attributes answered the cached decision with source ''."""
    engine = Frozen()
    first = decision_for(engine)
    assert first[1] == "HF tokenizer's JSON" and first[0].rule is RULES["space"]
    assert decision_for(engine) == first and decision_for(engine)[0] is first[0]
