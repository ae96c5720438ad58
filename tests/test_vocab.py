"""tokspec.formats.vocab: named-file verification, malformed files of every kind, the sentencepiece .model
reader (checked against sentencepiece's own API) and the protobuf wire reader under it."""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path

import pytest
import sentencepiece
from hypothesis import given
from hypothesis import strategies as st

from tokspec import VocabularyError, load_engine, models
from tokspec.engines._findings import FINDINGS_DIR, SPM_MODEL
from tokspec.formats._protowire import WireError, iter_fields, read_varint, write_varint
from tokspec.formats.spm_model import load_spm_model
from tokspec.formats.vocab import (
    NAMED_FILES,
    load_named_tiktoken,
    load_tiktoken,
    load_tokenizer_json,
    load_wordpiece_vocab_txt,
    named_path,
)

# --- named files and sha256 ----------------------------------------------------------------------


def test_named_tiktoken_loads_verified() -> None:
    vocab = load_named_tiktoken("cl100k_base")
    assert vocab.sha256 == NAMED_FILES["cl100k_base"].sha256
    assert len(vocab.ranks) == 100256 and vocab.ranks[b"!"] == 0


def _corrupt_copy(src: Path, dst: Path) -> Path:
    """Copy ``src`` (decompressed if .gz) to ``dst`` with the case of one ASCII letter in the middle
    flipped (re-gzipped when ``dst`` ends in .gz): same size, different sha256."""
    data = bytearray(gzip.decompress(src.read_bytes()) if src.suffix == ".gz" else src.read_bytes())
    i = next(k for k in range(len(data) // 2, len(data)) if chr(data[k]).isalpha() and data[k] < 128)
    data[i] ^= 0x20
    dst.write_bytes(gzip.compress(bytes(data)) if dst.suffix == ".gz" else bytes(data))
    return dst


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base", "bert-base-uncased",
                                  "bert-base-uncased.vocab", "mon-unigram"])
def test_sha256_mismatch_names_file(name: str, tmp_path: Path) -> None:
    src = named_path(name)
    bad = _corrupt_copy(src, tmp_path / ("bad" + "".join(src.suffixes)))
    loader = {"cl100k_base": load_tiktoken, "o200k_base": load_tiktoken,
              "bert-base-uncased": load_tokenizer_json, "mon-unigram": load_tokenizer_json,
              "bert-base-uncased.vocab": load_wordpiece_vocab_txt}[name]
    with pytest.raises(VocabularyError, match="sha256") as exc:
        loader(bad, NAMED_FILES[name].sha256)
    assert str(bad) in str(exc.value)


def test_unknown_name_and_missing_package(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(VocabularyError, match="unknown vocabulary name='nope'"):
        named_path("nope")
    from tokspec.formats import vocab

    fake = vocab.NamedFile("no-such-dist", "no_such_module_xyz", "data/x", "0" * 64)
    monkeypatch.setitem(vocab.NAMED_FILES, "fake", fake)
    with pytest.raises(VocabularyError, match="pip install no-such-dist"):
        named_path("fake")


# --- malformed files of every kind ---------------------------------------------------------------

def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


_ALL_BYTES = b"".join(b"%s %d\n" % (__import__("base64").b64encode(bytes([b])), b) for b in range(256))


@pytest.mark.parametrize("content, message", [
    (b"YQ==\n", "expected 'BASE64 RANK'"),
    (b"!!!! 1\n", "line 1"),
    (b"YQ== one\n", "line 1"),
    (_ALL_BYTES + b"YQ== 999\n", "duplicate token"),
    (_ALL_BYTES + b"YWI= 5\n", "not unique"),
    (b"YQ== 0\n", "not a byte-level vocabulary"),
    (b"", "not a byte-level vocabulary"),
])
def test_malformed_tiktoken(tmp_path: Path, content: bytes, message: str) -> None:
    path = _write(tmp_path, "bad.tiktoken", content)
    with pytest.raises(VocabularyError, match=message) as exc:
        load_tiktoken(path)
    assert str(path) in str(exc.value)
    with pytest.raises(VocabularyError):
        load_engine(f"tiktoken:{path}")


def test_malformed_gzip(tmp_path: Path) -> None:
    path = _write(tmp_path, "bad.tiktoken.gz", b"not gzip at all")
    with pytest.raises(VocabularyError, match="not valid gzip") as exc:
        load_tiktoken(path)
    assert str(path) in str(exc.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(VocabularyError, match="cannot read"):
        load_tiktoken(tmp_path / "absent.tiktoken")


@pytest.mark.parametrize("content, message", [
    (b"{not json", "not a JSON tokenizer file"),
    (b"\xff\xfe", "not a JSON tokenizer file"),
    (b"[1, 2]", "model.type must be"),
    (json.dumps({"model": {"type": "Foo"}}).encode(), "got 'Foo'"),
])
def test_malformed_tokenizer_json(tmp_path: Path, content: bytes, message: str) -> None:
    path = _write(tmp_path, "tokenizer.json", content)
    with pytest.raises(VocabularyError, match=message) as exc:
        load_tokenizer_json(path)
    assert str(path) in str(exc.value)


def test_tokenizer_json_hf_cannot_load(tmp_path: Path) -> None:
    """Right shape for tokspec's check, wrong for HF: the engine reports a VocabularyError too."""
    path = _write(tmp_path, "tokenizer.json", json.dumps(
        {"model": {"type": "BPE", "vocab": 5, "merges": "x"}}).encode())
    with pytest.raises(VocabularyError, match="HF tokenizers cannot load it") as exc:
        load_engine(f"hf:{path}")
    assert str(path) in str(exc.value)


_ADDED = {"id": 4, "content": "XY", "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": False}
_ADDED_BROKEN = [(f"no {k}", {f: v for f, v in _ADDED.items() if f != k}, f"missing field '{k}'") for k in _ADDED] + [
    ("id as text", _ADDED | {"id": "4"}, r"added_tokens\[1\]\.id must be int, got str"),
    ("id as bool", _ADDED | {"id": True}, r"added_tokens\[1\]\.id must be int, got bool"),
    ("normalized as 1", _ADDED | {"normalized": 1}, r"added_tokens\[1\]\.normalized must be bool, got int"),
    ("content as null", _ADDED | {"content": None}, r"added_tokens\[1\]\.content must be str, got NoneType"),
]


def _bpe_with_added(added: object) -> bytes:
    return json.dumps({"version": "1.0", "added_tokens": added, "normalizer": None, "pre_tokenizer": None,
                       "post_processor": None, "decoder": None,
                       "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "X": 2, "Y": 3}, "merges": []}}).encode()


@pytest.mark.parametrize("label, entry, message", _ADDED_BROKEN, ids=[b[0] for b in _ADDED_BROKEN])
def test_added_token_entries_hf_refuses_are_refused(tmp_path: Path, label: str, entry: dict, message: str) -> None:
    """Each field of an added token is required by HF's loader; the reference must not default one
    (it once read a missing "normalized" as false, where HF refuses the file)."""
    from tokenizers import Tokenizer

    content = _bpe_with_added([_ADDED | {"id": 5, "content": "ab"}, entry])
    with pytest.raises(Exception):                        # noqa: B017 - HF raises a bare Exception
        Tokenizer.from_str(content.decode())
    path = _write(tmp_path, "tokenizer.json", content)
    with pytest.raises(VocabularyError, match=message) as exc:
        load_tokenizer_json(path)
    assert str(path) in str(exc.value)


def test_complete_added_tokens_load_in_both(tmp_path: Path) -> None:
    from tokenizers import Tokenizer

    content = _bpe_with_added([_ADDED])
    assert Tokenizer.from_str(content.decode()).encode("aXYb").ids == [0, 4, 1]
    tj = load_tokenizer_json(_write(tmp_path, "tokenizer.json", content))
    assert tj.added_tokens == [_ADDED]
    assert list(load_engine(f"reference:{tj.path}").encode("aXYb").ids) == [0, 4, 1]
    for bad in ({"x": 1}, [1]):
        with pytest.raises(VocabularyError, match="added_tokens"):
            load_tokenizer_json(_write(tmp_path, "tokenizer.json", _bpe_with_added(bad)))


@pytest.mark.parametrize("content, message", [
    (b"\xff\xfeabc\n", "not UTF-8"),
    (b"[UNK]\nhello\nhello\n", "duplicate token 'hello'"),
    (b"", "is empty"),
])
def test_malformed_vocab_txt(tmp_path: Path, content: bytes, message: str) -> None:
    path = _write(tmp_path, "vocab.txt", content)
    with pytest.raises(VocabularyError, match=message) as exc:
        load_wordpiece_vocab_txt(path)
    assert str(path) in str(exc.value)


# --- sentencepiece .model ------------------------------------------------------------------------

def _field(number: int, wire_type: int, payload: bytes | int | float) -> bytes:
    key = write_varint(number << 3 | wire_type)
    if wire_type == 2:
        assert isinstance(payload, bytes)
        return key + write_varint(len(payload)) + payload
    if wire_type == 5:
        return key + struct.pack("<f", payload)
    assert isinstance(payload, int)
    return key + write_varint(payload)


def _piece(text: str, type_no: int = 1, score: float = 0.0) -> bytes:
    body = _field(1, 2, text.encode()) + _field(2, 5, score) + _field(3, 0, type_no)
    return _field(1, 2, body)


def _model(*pieces: bytes, trainer: bytes = b"") -> bytes:
    return b"".join(pieces) + (_field(2, 2, trainer) if trainer else b"")


_OK = (_piece("<unk>", 2), _piece("a", 1, -1.0))


@pytest.mark.parametrize("content, message", [
    (b"", "no pieces"),
    (b"\x0a\xff\xff\xff\xff\x0f", "runs past the end"),
    (b"\x0b\x00", "unsupported wire type 3"),
    (b"\x08\x80", "truncated varint"),
    (_model(_piece("a"), _piece("a"), _piece("<unk>", 2)), "duplicate piece 'a'"),
    (_model(_piece("a")), "exactly one unknown piece"),
    (_model(_piece("a", 2), _piece("<unk>", 2)), "exactly one unknown piece"),
    (_model(*_OK, _piece("b", 9)), "unknown type number 9"),
    (_model(*_OK, _field(1, 2, _field(1, 2, b"\xff"))), "not UTF-8"),
    (_model(*_OK, trainer=_field(35, 0, 1)), "byte_fallback is on but byte pieces"),
    (_model(*_OK, trainer=_field(3, 0, 7)), "unknown model_type number 7"),
    (_field(1, 0, 5), "wire type 0, expected 2"),
])
def test_malformed_spm_model(tmp_path: Path, content: bytes, message: str) -> None:
    path = _write(tmp_path, "bad.model", content)
    with pytest.raises(VocabularyError, match=message) as exc:
        load_spm_model(path)
    assert str(path) in str(exc.value)
    with pytest.raises(VocabularyError):
        load_engine(f"spm:{path}")


def test_truncated_real_model(tmp_path: Path) -> None:
    data = (FINDINGS_DIR / SPM_MODEL).read_bytes()
    for cut in (5, len(data) // 3, len(data) - 3):
        path = _write(tmp_path, f"cut{cut}.model", data[:cut])
        with pytest.raises(VocabularyError, match=str(path)):
            load_spm_model(path)


def test_minimal_handmade_model_loads(tmp_path: Path) -> None:
    path = _write(tmp_path, "ok.model", _model(*_OK))
    m = load_spm_model(path)
    assert m.pieces == ("<unk>", "a") and m.types == ("unknown", "normal") and m.scores == (0.0, -1.0)
    assert m.model_type == "unigram" and m.add_dummy_prefix and not m.byte_fallback


def _spm_model_files() -> list[str]:
    return [f"kind:{k}" for k in models.KINDS if k.startswith("spm-")] + ["findings"]


@pytest.mark.parametrize("which", _spm_model_files())
def test_spm_reader_agrees_with_sentencepiece(which: str) -> None:
    if which == "findings":
        path = FINDINGS_DIR / SPM_MODEL
    else:
        path = models.trained_model(which.split(":", 1)[1])
    m = load_spm_model(path)
    sp = sentencepiece.SentencePieceProcessor(model_file=str(path))
    assert len(m.pieces) == sp.get_piece_size()
    assert m.unk_id == sp.unk_id() and m.bos_id == sp.bos_id() and m.eos_id == sp.eos_id()
    assert m.pad_id == sp.pad_id()
    for i, (piece, score, kind) in enumerate(zip(m.pieces, m.scores, m.types)):
        assert piece == sp.id_to_piece(i) and score == sp.get_score(i)
        flags = {"unknown": sp.is_unknown(i), "control": sp.is_control(i),
                 "unused": sp.is_unused(i), "byte": sp.is_byte(i)}
        assert [k for k, v in flags.items() if v] == ([kind] if kind in flags else [])
    # Options: what the model was trained with (models.py table / _findings docstring).
    expected = {"spm-unigram": ("unigram", "nmt_nfkc", False),
                "spm-unigram-bytes": ("unigram", "nmt_nfkc", True),
                "spm-unigram-identity": ("unigram", "identity", True),
                "spm-bpe": ("bpe", "nmt_nfkc", True),
                "findings": ("unigram", "user_defined", True)}[which.split(":")[-1]]
    assert (m.model_type, m.normalizer_name, m.byte_fallback) == expected
    assert (len(m.precompiled_charsmap) > 0) == (m.normalizer_name != "identity")
    assert m.add_dummy_prefix and m.remove_extra_whitespaces and m.escape_whitespaces
    assert not m.treat_whitespace_as_suffix


# --- protobuf wire reader ------------------------------------------------------------------------

@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_hyp_varint_round_trip(value: int) -> None:
    data = write_varint(value) + b"tail"
    assert read_varint(data, 0) == (value, len(data) - 4)


def test_wire_errors() -> None:
    with pytest.raises(WireError, match="longer than 10 bytes"):
        read_varint(b"\xff" * 11, 0)
    with pytest.raises(WireError, match="field number 0"):
        list(iter_fields(b"\x00\x00"))
    with pytest.raises(WireError, match="truncated fixed32"):
        list(iter_fields(b"\x0d\x00"))
    with pytest.raises(WireError):
        write_varint(-1)
