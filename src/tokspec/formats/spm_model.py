"""sentencepiece ``.model`` files, read without the ``protobuf`` package.

A ``.model`` is a serialized ``ModelProto``; :func:`load_spm_model` parses it with tokspec's own
wire reader (:mod:`tokspec.formats._protowire`), checks the invariants :class:`SpmModel` states,
and raises :class:`~tokspec.errors.VocabularyError` naming the file for anything else. The bytes are
read, and their sha256 checked, by :func:`tokspec.formats.vocab.read_verified` like every vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokspec.formats._protowire import WireError, as_float, as_signed, iter_fields
from tokspec.errors import VocabularyError
from tokspec.formats.vocab import read_verified

__all__ = ["SpmModel", "load_spm_model"]

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
