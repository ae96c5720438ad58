"""reference/spm_bpe.py equals sentencepiece (``spm:``), ids and offsets, on Mistral's real BPE models
(mistral-common 1.13.1, sha256-checked), on a BPE model trained by tokspec.formats.models, and on tiny
synthesized models that pin ties, unused-piece resegmentation and byte fallback; ``reference:``
and ``spm:`` read any file name by content."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import tokspec
from tokspec.engines._spm import SpmEngine
from tokspec.formats.models import trained_model
from tokspec.reference.spm_bpe import SpmBpeReference, initial_symbols, merge_symbols
from tokspec.formats.spm_model import load_spm_model
from tokspec.formats.spm_normalize import synthesize_spm_model
from tokspec.formats.vocab import read_verified

import mistral_common  # noqa: E402 - a test dependency: missing, this file fails to collect
DATA = Path(mistral_common.__file__).parent / "data"
MISTRAL = {  # file -> sha256 (mistral-common 1.13.1)
    "tokenizer.model.v1": "dadfd56d766715c61d2ef780a525ab43b8e6da4de6865bda3d95fdef5e134055",
    "mistral_instruct_tokenizer_240323.model.v3": "9addc8bdce5988448ae81b729336f43a81262160ae8da760674badab9d4c7d33",
    "mistral_instruct_tokenizer_241114.model.v7": "1b968b8dc352f42192367337c78ccc61e1eaddc6d641a579372d4f20694beb7a",
}
TEXT = st.lists(st.sampled_from(list("ab c1 2\t\n'.,é\u00e9e\u0301\u4e2d\U0001f600\u0416\u00a0")
                                + ["[INST]", "[/INST]", "[REF]", "[TOOL_CALLS]", "  ", "[REFERENCE_DOC_1"]),
               max_size=12).map("".join)
SEEDS = ["[INST] Hello world [/INST]", "  two  spaces ", "12345", "中文 😀", "[REF]x[REFERENCE_DOC_1]", ""]


def _pair(path: Path | str) -> tuple[SpmBpeReference, SpmEngine]:
    model = load_spm_model(path)
    return SpmBpeReference(model, f"reference:{path}"), SpmEngine(f"spm:{path}", model)


@pytest.fixture(scope="module", params=sorted(MISTRAL))
def mistral(request: pytest.FixtureRequest) -> tuple[SpmBpeReference, SpmEngine]:
    path = DATA / request.param
    read_verified(path, MISTRAL[request.param])
    return _pair(path)


@settings(max_examples=40, deadline=None)
@given(text=TEXT)
def test_hyp_mistral_reference_equals_sentencepiece(mistral: tuple[SpmBpeReference, SpmEngine], text: str) -> None:
    ref, prod = mistral
    for t in (text, *SEEDS):
        assert ref.encode(t) == prod.encode(t), t


@settings(max_examples=40, deadline=None)
@given(text=st.text(max_size=12))
def test_hyp_trained_nmt_nfkc_model_equals_sentencepiece(text: str) -> None:
    ref, prod = _pair(trained_model("spm-bpe"))
    assert ref.encode(text) == prod.encode(text)


def _tiny(tmp_path: Path, extra: list[tuple[str, float, str]]) -> Path:
    pieces = [("<unk>", 0.0, "unknown"), ("<s>", 0.0, "control"), ("</s>", 0.0, "control"),
              *[(f"<0x{b:02X}>", 0.0, "byte") for b in range(256)],
              ("\u2581", -1.0, "normal"), ("a", -1.0, "normal"), ("b", -1.0, "normal"), ("c", -1.0, "normal"),
              *extra]
    return synthesize_spm_model(tmp_path / f"tiny{len(list(tmp_path.iterdir()))}.bin", pieces,
                                specs_from=trained_model("spm-bpe"))


TINY = {
    "ties-go-left": [("ab", -2.0, "normal"), ("bc", -2.0, "normal"), ("abc", -3.0, "normal")],
    "unused-resegmented": [("ca", 5.0, "unused"), ("cab", -0.5, "normal"), ("ab", -2.0, "normal")],
    "score-not-length": [("\u2581a", -5.0, "normal"), ("ab", -1.5, "normal"), ("\u2581ab", -1.2, "normal")],
}


@pytest.mark.parametrize("case", sorted(TINY))
@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="abc xy", max_size=10))
def test_hyp_tiny_models_equal_sentencepiece(tmp_path_factory: pytest.TempPathFactory, case: str, text: str) -> None:
    ref, prod = _pair(_tiny(tmp_path_factory.mktemp(case), TINY[case]))
    for t in (text, "abcab ca cab", "bcab", "ccab x"):
        assert ref.encode(t) == prod.encode(t), t


def test_merge_rules_by_hand() -> None:
    scores = {"ab": -2.0, "bc": -2.0, "abc": -3.0}
    assert merge_symbols("abc", scores)[0] == [(0, 3)]          # ab first (leftmost tie), then abc
    assert merge_symbols("bcab", scores)[0] == [(0, 2), (2, 4)]
    symbols, record = merge_symbols("cab", {"ca": 5.0, "cab": -0.5, "ab": -2.0}, frozenset({"ca"}))
    assert symbols == [(0, 3)] and record == {"ca": ("c", "a")}
    assert initial_symbols("x[INST]y", frozenset({"[INST]", "[I"})) == ([(0, 1), (1, 7), (7, 8)], {1})
    assert merge_symbols("[I]", {"[I": 1.0, "I]": 2.0}, user=frozenset({"[I"}))[0] == [(0, 2), (2, 3)]


def test_any_file_name_is_read_by_content(tmp_path: Path) -> None:
    src = DATA / "tokenizer.model.v1"
    renamed = tmp_path / "mistral-v1.bin"
    shutil.copyfile(src, renamed)
    ref, prod = tokspec.load_engine(f"reference:{renamed}"), tokspec.load_engine(f"spm:{renamed}")
    assert isinstance(ref, SpmBpeReference)
    assert ref.encode("Hello world") == prod.encode("Hello world")
    assert isinstance(tokspec.load_engine(f"reference:{src}"), SpmBpeReference)  # .model.v1: no .model suffix


def test_unigram_models_stay_with_the_unigram_reference() -> None:
    engine = tokspec.load_engine(f"reference:{trained_model('spm-unigram')}")
    assert not isinstance(engine, SpmBpeReference)
    with pytest.raises(tokspec.errors.UnsupportedComponentError, match="expected 'bpe'"):
        SpmBpeReference(load_spm_model(trained_model("spm-unigram")), "r")


def test_fast_names_the_sentencepiece_bpe_files_it_has_no_engine_for(tmp_path: Path) -> None:
    path = tmp_path / "mistral.model"
    shutil.copyfile(DATA / "tokenizer.model.v1", path)
    with pytest.raises(tokspec.errors.UnsupportedComponentError, match=r"fast: has no sentencepiece BPE engine"):
        tokspec.load_engine(f"fast:{path}")


def test_refusals_and_engine_info_exactly(tmp_path: Path) -> None:
    user = _tiny(tmp_path, [("ab", -2.0, "user")])  # specs (and the nmt_nfkc charsmap) of a trained model
    with pytest.raises(tokspec.errors.UnsupportedComponentError) as info:
        SpmBpeReference(load_spm_model(user), "r")
    assert str(info.value) == (f"{user}: user-defined symbols with a normalization charsmap are not supported "
                               "(sentencepiece keeps them out of normalization)")
    unigram = trained_model("spm-unigram")
    with pytest.raises(tokspec.errors.UnsupportedComponentError) as info:
        SpmBpeReference(load_spm_model(unigram), "r")
    assert str(info.value) == f"{unigram}: model_type='unigram', expected 'bpe'"
    ref = SpmBpeReference(load_spm_model(DATA / "tokenizer.model.v1"), "reference:v1")
    assert (ref.info.library, ref.info.library_version, ref.info.kind) == ("tokspec.reference.spm_bpe", "1", "tokenizer")
    assert ref.info.description == "reference sentencepiece BPE, 32000 pieces (identity)"
    assert ref.info.vocab_sha256 == MISTRAL["tokenizer.model.v1"]
    assert [ref.token_piece(i) for i in ref.encode("Hello").ids or ()] == ["\u2581Hello"]
    path = tmp_path / "v1.model"
    shutil.copyfile(DATA / "tokenizer.model.v1", path)
    with pytest.raises(tokspec.errors.UnsupportedComponentError) as info:
        tokspec.load_engine(f"fast:{path}")
    assert str(info.value) == (f"engine name='fast:{path}': fast: has no sentencepiece BPE engine (the backtracking "
                               "encoder's theorem covers min-rank byte-level BPE, not score-ordered merges over "
                               "characters); use reference:PATH (the specification) or spm:PATH")
