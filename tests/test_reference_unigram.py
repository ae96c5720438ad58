"""Reference Unigram: Viterbi == brute force (the spec), tie-breaks found by experiment against
both libraries, and conformance (ids AND offsets) with HF ``tokenizers`` and ``sentencepiece``."""

from __future__ import annotations

import json
import struct
from pathlib import Path
from typing import Any

import pytest
import sentencepiece
from hypothesis import example, given
from hypothesis import strategies as st
from tokenizers import Tokenizer, models

from tokspec import InvalidTextError, load_engine
from tokspec._offsets import char_offsets_from_byte_spans
from tokspec.corpus import build_corpus
from tokspec.formats._protowire import iter_fields
from tokspec.formats._protowire import write_varint as _varint
from tokspec.formats.models import trained_model
from tokspec.formats.normalize import Aligned
from tokspec.reference.unigram import (
    UnigramReference,
    unigram_encoder_from_spm_model,
    unigram_encoder_from_tokenizer_json,
)
from tokspec.reference.unigram_bruteforce import best_segmentations, bruteforce
from tokspec.reference.unigram_spm020 import unigram_encoder_from_spm_model_0_2_0
from tokspec.engines._spm import OFFSET_MAPPING, proto_encode
from tokspec.reference.unigram_viterbi import viterbi
from tokspec.formats.unigram_model import UnigramModel
from tokspec.formats.vocab import named_path

TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
SPM_KINDS = ["spm-unigram", "spm-unigram-bytes", "spm-unigram-identity"]


# -- Viterbi vs brute force on generated tiny vocabularies ---------------------------------------

@st.composite
def tiny_models(draw: st.DrawFn, *, dyadic: bool) -> tuple[UnigramModel, str]:
    """A random vocabulary over 'abc' (+ unknown 'd') and a short text."""
    pieces = sorted(set(draw(st.lists(st.text("abc", min_size=1, max_size=3), min_size=1, max_size=10))))
    if dyadic:  # exact sums: ties are real ties
        scores = [draw(st.integers(-12, -1)) / 4 for _ in pieces]
    else:
        scores = [draw(st.floats(-20, -0.01, allow_nan=False)) for _ in pieces]
    float32 = draw(st.booleans())
    model = UnigramModel(
        pieces=("<unk>", *pieces), scores=(0.0, *scores), matchable=(True,) * (len(pieces) + 1),
        unk_id=0, unk_score=min(scores) - 10, byte_fallback=False, byte_ids=(), fuse_unk=True,
        flavour="hf", float32=float32, pretokenizer=lambda t: [Aligned.of(t)])
    return model, draw(st.text("abcd", min_size=1, max_size=9))


def _index(model: UnigramModel) -> tuple[dict[str, int], int]:
    return {p: i for i, p in enumerate(model.pieces)}, max(map(len, model.pieces))


@given(case=tiny_models(dyadic=True))
def test_hyp_viterbi_equals_bruteforce_with_ties(case: tuple[UnigramModel, str]) -> None:
    model, text = case
    index, max_len = _index(model)
    for rule in ("hf", "spm", "last"):
        assert viterbi(model, index, max_len, text, rule) == bruteforce(model, index, text, max_len, rule)


@given(case=tiny_models(dyadic=False))
def test_hyp_viterbi_score_is_optimal(case: tuple[UnigramModel, str]) -> None:
    from tokspec.reference.unigram_bruteforce import segmentation_score
    model, text = case
    index, max_len = _index(model)
    best, winners = best_segmentations(model, index, text, max_len)
    seg = viterbi(model, index, max_len, text)
    assert segmentation_score(model, seg) == best and seg in winners


def test_tie_break_matters() -> None:
    model = UnigramModel(("<unk>", "a", "b", "ab"), (0.0, -1.0, -1.0, -2.0), (True,) * 4, 0, -12.0,
                         False, (), True, "hf", False, lambda t: [Aligned.of(t)])
    index, max_len = _index(model)
    assert [e[2] for e in viterbi(model, index, max_len, "ab", "hf")] == [3]       # "ab"
    assert [e[2] for e in viterbi(model, index, max_len, "ab", "last")] == [1, 2]  # "a" "b"


# -- tie-breaks found by experiment ---------------------------------------------------------------

TIED_VOCAB = st.lists(st.tuples(st.text("abc", min_size=1, max_size=3), st.sampled_from([-1.0, -2.0, -3.0])),
                      min_size=1, max_size=12)


def _hf_unigram_file(tmp: Path, vocab: list[tuple[str, float]]) -> Path:
    tok = Tokenizer(models.Unigram([("<unk>", 0.0), *vocab], unk_id=0, byte_fallback=False))
    path = tmp / "tied.json"
    path.write_text(tok.to_str())
    return path


@given(vocab=TIED_VOCAB, text=st.text("abcd", min_size=1, max_size=10))
def test_hyp_hf_tie_break_by_experiment(tmp_path_factory: pytest.TempPathFactory,
                                        vocab: list[tuple[str, float]], text: str) -> None:
    vocab = list(dict(vocab).items())
    path = _hf_unigram_file(tmp_path_factory.mktemp("hf"), vocab)
    hf = Tokenizer.from_file(str(path))
    ref = unigram_encoder_from_tokenizer_json(path, "t", offsets="library")
    got = ref.encode(text)
    enc = hf.encode(text, add_special_tokens=False)
    assert (got.ids, got.offsets) == (tuple(enc.ids), tuple(map(tuple, enc.offsets)))


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _piece(text: str, score: float, kind: int) -> bytes:
    return (_field(1, text.encode()) + _varint(2 << 3 | 5) + struct.pack("<f", score)
            + _varint(3 << 3) + _varint(kind))


#: sentencepiece 0.2.0 (tox -e lowest) segments with other arithmetic and no re-basing (finding
#: sentencepiece-0.2.0-viterbi-arithmetic, corpora/production/findings_old_releases.json): the
#: installed library is compared with the reference of its own release.
SPM_0_2_0 = sentencepiece.__version__ == "0.2.0"


def _spm_reference(path: str | Path, name: str, **kwargs: Any) -> UnigramReference:
    if SPM_0_2_0:
        return unigram_encoder_from_spm_model_0_2_0(path, name, **kwargs)
    return unigram_encoder_from_spm_model(path, name, **kwargs)


def write_spm_model(path: Path, vocab: list[tuple[str, float]], *, like: str = "spm-unigram") -> Path:
    """A sentencepiece .model with the given NORMAL pieces (after <unk>, <s>, </s>), taking the
    trainer and normalizer specs of a trained model (nmt_nfkc, dummy prefix)."""
    raw = Path(trained_model(like)).read_bytes()
    specs = b"".join(_field(n, v) for n, w, v in iter_fields(raw) if n in (2, 3) and isinstance(v, bytes))
    pieces = [_piece("<unk>", 0.0, 2), _piece("<s>", 0.0, 3), _piece("</s>", 0.0, 3)]
    pieces += [_piece(p, s, 1) for p, s in vocab]
    path.write_bytes(b"".join(_field(1, p) for p in pieces) + specs)
    return path


@given(vocab=TIED_VOCAB, text=st.text("abcd", min_size=1, max_size=10))
def test_hyp_spm_tie_break_by_experiment(tmp_path_factory: pytest.TempPathFactory,
                                         vocab: list[tuple[str, float]], text: str) -> None:
    vocab = [("\u2581", -1.0), *((p, s) for p, s in dict(vocab).items())]
    path = write_spm_model(tmp_path_factory.mktemp("spm") / "tied.model", vocab)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    ref = _spm_reference(path, "t", offsets="library")
    assert list(ref.encode(text).ids) == sp.encode(text)


def test_both_libraries_pick_the_longest_last_piece_on_ties(tmp_path: Path) -> None:
    vocab = [("a", -1.0), ("b", -1.0), ("ab", -2.0)]
    hf = Tokenizer.from_file(str(_hf_unigram_file(tmp_path, vocab)))
    assert hf.encode("ab", add_special_tokens=False).tokens == ["ab"]
    sp = sentencepiece.SentencePieceProcessor(
        model_file=str(write_spm_model(tmp_path / "t.model", [("\u2581", -1.0), *vocab])))
    assert sp.encode("ab", out_type=str) == ["\u2581", "ab"]


# -- conformance: HF mon-unigram ------------------------------------------------------------------

@pytest.fixture(scope="module")
def mon() -> tuple[Tokenizer, UnigramReference, UnigramReference]:
    hf = Tokenizer.from_file(str(named_path("mon-unigram")))
    hf.encode_special_tokens = True   # special tokens are ordinary text (tokspec contract)
    lib = unigram_encoder_from_tokenizer_json(named_path("mon-unigram"), "r", offsets="library")
    return hf, lib, unigram_encoder_from_tokenizer_json(named_path("mon-unigram"), "r")


def _same_as_hf(hf: Tokenizer, ref: UnigramReference, text: str) -> None:
    enc = hf.encode(text, add_special_tokens=False)
    got = ref.encode(text)
    assert (got.ids, got.offsets) == (tuple(enc.ids), tuple(map(tuple, enc.offsets))), text[:80]


def test_mon_unigram_equals_hf_on_corpus(mon: tuple[Tokenizer, UnigramReference, UnigramReference]) -> None:
    for text in build_corpus():
        _same_as_hf(mon[0], mon[1], text)


@given(text=TEXT)
@example(text="00000000")            # findings/hf-serde-score-ties.json
@example(text="\u0898\u05a7")       # findings/hf-unicode-tables-ccc.json
@example(text="<s> <unk> <0x41>")   # HF's trie holds special and byte pieces too
def test_hyp_mon_unigram_equals_hf(mon: tuple[Tokenizer, UnigramReference, UnigramReference], text: str) -> None:
    _same_as_hf(mon[0], mon[1], text)


def test_mon_unigram_contract_ids_equal_production_engine(
        mon: tuple[Tokenizer, UnigramReference, UnigramReference]) -> None:
    """Against engineer A's ``hf:`` engine (contract offsets): same ids everywhere; offsets differ
    only where A's conversion is coarser (findings in corpora/reference-wp-unigram/findings)."""
    engine = load_engine("hf:mon-unigram")
    same = 0
    corpus = build_corpus()
    for text in corpus:
        a, b = engine.encode(text), mon[2].encode(text)
        assert a.ids == b.ids, text[:80]
        same += a.offsets == b.offsets
    assert same >= 0.9 * len(corpus)


# -- conformance: sentencepiece trained models ----------------------------------------------------

@pytest.fixture(scope="module", params=SPM_KINDS)
def spm(request: pytest.FixtureRequest) -> tuple[str, sentencepiece.SentencePieceProcessor, UnigramReference]:
    path = str(trained_model(request.param))
    return path, sentencepiece.SentencePieceProcessor(model_file=path), \
        _spm_reference(path, "r", offsets="library")


def _same_as_spm(sp: sentencepiece.SentencePieceProcessor, ref: UnigramReference, text: str) -> None:
    # offset_mapping is 0.2.3's; before it the same spans come from the serialized proto (the adapter's path)
    out = sp.encode(text, return_type="offset_mapping", return_bytes=True) if OFFSET_MAPPING else proto_encode(sp, text)
    want = (tuple(out["ids"]), tuple(char_offsets_from_byte_spans(text, [tuple(o) for o in out["offsets"]])))
    got = ref.encode(text)
    assert (got.ids, got.offsets) == want, text[:80]


def test_spm_models_equal_sentencepiece_on_corpus(spm: tuple[str, sentencepiece.SentencePieceProcessor, UnigramReference]) -> None:
    for text in build_corpus():
        _same_as_spm(spm[1], spm[2], text)


@given(text=st.one_of(TEXT, st.text(" \t\u3000ab\ufb01\u00ad\u4e00\U0001F600", max_size=12)))
def test_hyp_spm_models_equal_sentencepiece(spm: tuple[str, sentencepiece.SentencePieceProcessor, UnigramReference], text: str) -> None:
    _same_as_spm(spm[1], spm[2], text)


def test_spm_contract_ids_equal_production_engine(spm: tuple[str, sentencepiece.SentencePieceProcessor, UnigramReference]) -> None:
    engine = load_engine("spm:" + spm[0])
    ref = _spm_reference(spm[0], "r")
    for text in build_corpus()[::2]:
        assert engine.encode(text).ids == ref.encode(text).ids, text[:80]


def test_bad_input_is_rejected(mon: tuple[Tokenizer, UnigramReference, UnigramReference]) -> None:
    with pytest.raises(InvalidTextError, match="surrogate"):
        mon[1].encode("a\ud800b")
    assert mon[1].encode("").ids == ()


def test_library_and_contract_offsets_differ_only_in_offsets(
        mon: tuple[Tokenizer, UnigramReference, UnigramReference]) -> None:
    text = "\u4e01\u4e02 e\u0301 hello"
    lib, con = mon[1].encode(text), mon[2].encode(text)
    assert lib.ids == con.ids
    # contract: the prepended metaspace covers nothing; each byte token covers its own character
    assert con.offsets[0] == (0, 0) and lib.offsets[0] == (0, 1)
    assert json.dumps(con.offsets[:7]) == json.dumps([[0, 0]] + [[0, 1]] * 3 + [[1, 2]] * 3)


_META = {"type": "Metaspace", "replacement": "\u2581"}
PRETOKENIZER_VARIANTS = [
    *({**_META, "prepend_scheme": scheme, "split": split}
      for scheme in ("always", "first", "never") for split in (True, False)),
    {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                           {**_META, "prepend_scheme": "first", "split": True}]},
    {"type": "Sequence", "pretokenizers": [{"type": "WhitespaceSplit"},
                                           {**_META, "prepend_scheme": "always", "split": False}]},
]


def _variant_id(variant: dict[str, object]) -> str:
    """``always-split`` / ``WhitespaceSplit+first-split``: ASCII, stable across collections."""
    sequence = variant["type"] == "Sequence"
    meta = variant["pretokenizers"][-1] if sequence else variant  # type: ignore[index]
    split = "split" if meta["split"] else "nosplit"  # type: ignore[index]
    return f"{'WhitespaceSplit+' if sequence else ''}{meta['prepend_scheme']}-{split}"  # type: ignore[index]


@pytest.mark.parametrize("variant", PRETOKENIZER_VARIANTS, ids=_variant_id)
def test_metaspace_variants_equal_hf(tmp_path: Path, variant: dict[str, object]) -> None:
    """The mon-unigram model under every Metaspace/WhitespaceSplit configuration HF offers."""
    data = json.loads(named_path("mon-unigram").read_bytes())
    data["pre_tokenizer"] = variant
    path = tmp_path / "variant.json"
    path.write_text(json.dumps(data))
    hf = Tokenizer.from_file(str(path))
    hf.encode_special_tokens = True
    ref = unigram_encoder_from_tokenizer_json(path, "r", offsets="library")
    for text in [*build_corpus()[::6], "  a  b ", "\u200b a", " ", "\u2581\u2581a", "\u200b\u3000x y"]:
        _same_as_hf(hf, ref, text)


def test_converted_spm_model_with_precompiled_equals_hf(tmp_path: Path) -> None:
    """A trained nmt_nfkc sentencepiece model converted to tokenizer.json (HF ``Precompiled`` +
    space-run collapsing + Metaspace): the reference's HF flavour equals HF."""
    import base64
    from tokspec.formats.spm_model import load_spm_model
    m = load_spm_model(trained_model("spm-unigram-bytes"))
    tj = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": [], "post_processor": None,
          "decoder": None,
          "normalizer": {"type": "Sequence", "normalizers": [
              {"type": "Precompiled", "precompiled_charsmap": base64.b64encode(m.precompiled_charsmap).decode()},
              {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]},
          "pre_tokenizer": {**_META, "prepend_scheme": "always", "split": True},
          "model": {"type": "Unigram", "unk_id": m.unk_id, "byte_fallback": m.byte_fallback,
                    "vocab": [[p, s] for p, s in zip(m.pieces, m.scores)]}}
    path = tmp_path / "converted.json"
    path.write_text(json.dumps(tj))
    hf = Tokenizer.from_file(str(path))
    ref = unigram_encoder_from_tokenizer_json(path, "r", offsets="library")
    for text in [*build_corpus()[::2], "\uff21\u0301", "\x7fy", "a\r\nb"]:
        _same_as_hf(hf, ref, text)


@pytest.mark.parametrize("n", [10, 100, 1000, 5000])
def test_repetition_ladder_equals_libraries(n: int, mon: tuple[Tokenizer, UnigramReference, UnigramReference]) -> None:
    """Pathological repetition (long tied runs) at growing sizes, both libraries."""
    sp_path = str(trained_model("spm-unigram-bytes"))
    sp = sentencepiece.SentencePieceProcessor(model_file=sp_path)
    ref = _spm_reference(sp_path, "r", offsets="library")
    for text in ["0" * n, "ab" * (n // 2), "\u4e01" * n, "a " * (n // 2)]:
        _same_as_hf(mon[0], mon[1], text)
        _same_as_spm(sp, ref, text)


@pytest.mark.slow
def test_repetition_one_million(mon: tuple[Tokenizer, UnigramReference, UnigramReference]) -> None:
    _same_as_hf(mon[0], mon[1], "00000000" * 125_000)
