"""``UnigramModel``: everything a Unigram Viterbi needs, after normalization and pretokenization.

A model is data plus one function: ``pretokenize(text) -> list[Aligned]`` turns an input text into
the normalized pretokens the Viterbi segments, each with the original character span of every
normalized character (see :mod:`tokspec.formats.normalize`). The Viterbi itself is NOT here: the readable
one is ``tokspec.reference.unigram_viterbi``, the fast one ``tokspec.fast.unigram_datrie``; both
read this model, so they agree on normalization by construction and differ only in the algorithm
under test (normalization is checked against the production libraries on its own).

Library flavours (``flavour``), found by reading both libraries and by experiment:

- ``"hf"`` (HF ``tokenizers``): every vocabulary entry is matchable (even ``<unk>``, ``<s>`` and
  ``<0xNN>`` pieces); scores are float64; ``unk_score = min(all scores) - 10``; consecutive
  unknown characters are fused into one ``<unk>``; with byte fallback each byte token of a fused run
  carries the whole run's offsets.
- ``"spm"`` (sentencepiece): only NORMAL and USER_DEFINED pieces are matchable; scores and sums are
  float32; ``unk_score = min(NORMAL scores) - 10``; see ``tokspec.formats.spm_normalize``. Scores are
  re-based once they pass 1e5 in magnitude (``score_reset``, sentencepiece 0.2.x's
  ``kScoreResetThreshold``): this changes float32 results, so long inputs (from ~100K characters)
  segment differently without it (finding ``spm-score-reset-long-input``).

Out of scope: HF pipelines with normalizers/pretokenizers not listed in ``NORMALIZERS`` /
``PRETOKENIZERS`` (UnsupportedComponentError, never silently ignored); non-special added tokens;
sampling / n-best. Special tokens are ordinary text (tokspec contract): compare with HF using
``tokenizer.encode_special_tokens = True``.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.hf_pipeline import NORMALIZERS, PRETOKENIZERS, hf_pipeline
from tokspec.formats.normalize import Aligned
from tokspec.formats.spm_normalize import SpmNormalizer
from tokspec.formats.spm_model import load_spm_model
from tokspec.formats.vocab import (
    TokenizerJson,
    load_tokenizer_json,
    read_verified,
)

__all__ = [
    "NORMALIZERS",
    "PRETOKENIZERS",
    "SPM_SCORE_RESET",
    "UNK_PENALTY",
    "UnigramModel",
    "byte_piece",
    "serde_json_f64",
    "unigram_model_from_spm",
    "unigram_model_from_tokenizer_json",
]

#: Both libraries score an unknown character ``min_score - UNK_PENALTY`` (kUnkPenalty / K_UNK_PENALTY).
UNK_PENALTY = 10.0

Flavour = Literal["hf", "spm"]

#: sentencepiece (since 0.2.x, ``kScoreResetThreshold``) re-bases its Viterbi scores when the best
#: score at a position passes this magnitude; see :attr:`UnigramModel.score_reset`.
SPM_SCORE_RESET = 100000.0


def _f32(x: float) -> float:
    return float(struct.unpack("<f", struct.pack("<f", x))[0])


_U64_MAX = 2**64 - 1


def serde_json_f64(literal: str) -> float:
    """Parse a JSON number the way ``serde_json`` does WITHOUT its ``float_roundtrip`` feature
    (how HF ``tokenizers`` reads tokenizer.json): decimal digits into a u64 significand (digits
    after a u64 overflow are dropped), then ONE float multiply/divide by a power of ten. This is
    not always correctly rounded: e.g. ``-13.843325008003077`` comes out 1 ulp above Python's
    ``float()``, which decides exact ties between segmentations. O(len(literal)).
    """
    text = literal.strip()
    negative = text.startswith("-")
    mantissa, _, exp_text = text.lstrip("-").lower().partition("e")
    int_part, _, frac_part = mantissa.partition(".")
    significand, exponent, overflowed = 0, int(exp_text or 0), False
    for i, ch in enumerate(int_part + frac_part):
        if overflowed or significand * 10 + int(ch) > _U64_MAX:
            overflowed = True                      # ignore every further digit...
            exponent += 1 if i < len(int_part) else 0  # ...but integer digits still scale
            continue
        significand = significand * 10 + int(ch)
        exponent -= 1 if i >= len(int_part) else 0
    value = float(significand)
    while exponent < -308 and value != 0.0:
        value /= 1e308
        exponent += 308
    value = value * float(f"1e{exponent}") if exponent >= 0 else value / float(f"1e{-exponent}")
    return -value if negative else value


def byte_piece(b: int) -> str:
    """The byte-fallback piece of byte ``b``: ``<0x41>`` for 65 (upper-case hex, both libraries)."""
    return f"<0x{b:02X}>"


@dataclass(frozen=True, eq=False)
class UnigramModel:
    """A Unigram model ready for Viterbi.

    Invariants (checked by :meth:`check`): ``len(pieces) == len(scores) == len(matchable)``;
    pieces are unique; ``0 <= unk_id < len(pieces)``; ``byte_ids`` is empty when ``byte_fallback``
    is false, else 256 entries, ``byte_ids[b]`` the id of ``<0xNN>`` or -1 if the piece is missing.
    """

    pieces: tuple[str, ...]
    scores: tuple[float, ...]
    matchable: tuple[bool, ...]      # may piece i label a lattice edge?
    unk_id: int
    unk_score: float                 # score of the edge over one unknown character
    byte_fallback: bool
    byte_ids: tuple[int, ...]
    fuse_unk: bool                   # merge consecutive unknown characters into one unknown token
    flavour: Flavour
    float32: bool                    # path scores accumulate in float32 (sentencepiece)
    pretokenizer: Callable[[str], list[Aligned]] = field(repr=False)
    source: str = ""                 # path of the file the model came from
    sha256: str | None = None
    description: str = ""
    # sentencepiece's score re-basing: when the best score at a start position ``p`` exceeds this
    # magnitude (strictly), it is subtracted (float32) from the scores of ``p`` and of every
    # position after ``p`` already reached, and ``p`` continues from 0. None: never (HF).
    score_reset: float | None = None
    # the normalizer as data, when the whole pipeline is sentencepiece's (``pretokenizer`` is then
    # ``[spm_normalizer.normalize(text)]``): fast engines compile it instead of calling Python
    spm_normalizer: SpmNormalizer | None = field(default=None, repr=False)

    def pretokenize(self, text: str) -> list[Aligned]:
        """Normalized pretokens of ``text`` with alignment to original characters (non-empty)."""
        return [p for p in self.pretokenizer(text) if p.text]

    def check(self) -> UnigramModel:
        n = len(self.pieces)
        if not (len(self.scores) == n == len(self.matchable)):
            raise VocabularyError(f"{self.source!r}: pieces/scores/matchable lengths differ")
        if len(set(self.pieces)) != n:
            dup = next(p for i, p in enumerate(self.pieces) if p in self.pieces[:i])
            raise VocabularyError(f"{self.source!r}: duplicate piece {dup!r}")
        if not 0 <= self.unk_id < n:
            raise VocabularyError(f"{self.source!r}: unk_id={self.unk_id} outside 0..{n - 1}")
        if self.score_reset is not None and not self.score_reset > 0:
            raise VocabularyError(f"{self.source!r}: score_reset={self.score_reset!r} must be > 0 or None")
        if self.byte_fallback != (len(self.byte_ids) == 256):
            raise VocabularyError(f"{self.source!r}: byte_ids must have 256 entries iff byte_fallback")
        return self


def _check_added_tokens(tj: TokenizerJson) -> None:
    for tok in tj.added_tokens:
        if not tok["special"]:
            raise UnsupportedComponentError(
                f"{tj.path}: non-special added token {tok.get('content')!r} is not supported "
                "(special tokens are ordinary text in tokspec; non-special ones would be split out)")


def _hf_scores(tj: TokenizerJson) -> tuple[float, ...]:
    """Scores as HF reads them: re-read the file keeping number literals, parse like serde_json."""
    raw = json.loads(read_verified(tj.path, tj.sha256)[0], parse_float=str, parse_int=str)
    return tuple(serde_json_f64(str(s)) for _, s in raw["model"]["vocab"])


def unigram_model_from_tokenizer_json(tj: TokenizerJson | str | Path, *,
                                      score_parse: Literal["serde", "exact"] = "serde") -> UnigramModel:
    """An ``"hf"``-flavour model from a Unigram tokenizer.json (a TokenizerJson or a path).

    ``score_parse="serde"`` (default) reads scores exactly as HF ``tokenizers`` does (see
    :func:`serde_json_f64`); ``"exact"`` uses correctly rounded floats. O(vocab). Raises VocabularyError for a malformed vocabulary, UnsupportedComponentError for a
    pipeline component this module does not implement.
    """
    if not isinstance(tj, TokenizerJson):
        tj = load_tokenizer_json(tj)
    m = tj.data["model"]
    if m.get("type") != "Unigram":
        raise VocabularyError(f"{tj.path!r}: model.type={m.get('type')!r}, expected 'Unigram'")
    pipeline = hf_pipeline(tj)  # first: an unsupported component fails before the slow parts
    try:
        pieces = tuple(str(p) for p, _ in m["vocab"])
        scores = _hf_scores(tj) if score_parse == "serde" else tuple(float(s) for _, s in m["vocab"])
    except (KeyError, TypeError, ValueError) as exc:
        raise VocabularyError(f"{tj.path!r}: model.vocab must be a list of [piece, score]: {exc}") from exc
    if m.get("unk_id") is None:
        raise UnsupportedComponentError(f"{tj.path!r}: Unigram without unk_id is not supported")
    _check_added_tokens(tj)
    byte_fallback = bool(m.get("byte_fallback", False))
    index = {p: i for i, p in enumerate(pieces)}
    byte_ids = tuple(index.get(byte_piece(b), -1) for b in range(256)) if byte_fallback else ()
    return UnigramModel(
        pieces=pieces, scores=scores, matchable=(True,) * len(pieces), unk_id=int(m["unk_id"]),
        unk_score=min(scores) - UNK_PENALTY, byte_fallback=byte_fallback, byte_ids=byte_ids,
        fuse_unk=True, flavour="hf", float32=False, pretokenizer=pipeline,
        source=tj.path, sha256=tj.sha256, description=f"HF Unigram {len(pieces)} pieces",
    ).check()


def unigram_model_from_spm(path: str | Path, *,
                           score_reset: float | None = SPM_SCORE_RESET) -> UnigramModel:
    """An ``"spm"``-flavour :class:`UnigramModel` from a sentencepiece Unigram ``.model``.

    NORMAL pieces are matchable; UNUSED, CONTROL, UNKNOWN and BYTE pieces are not; scores are
    float32 and ``unk_score = f32(min(NORMAL scores) - 10)``; normalization is
    :class:`tokspec.formats.spm_normalize.SpmNormalizer`. ``score_reset`` (default
    :data:`SPM_SCORE_RESET`, what sentencepiece 0.2.x does; None: the plain float32 Viterbi of
    earlier versions) see :attr:`UnigramModel.score_reset`. O(vocab + charsmap).
    """
    m = load_spm_model(path)
    if m.model_type != "unigram":
        raise UnsupportedComponentError(f"{m.path}: model_type={m.model_type!r}, expected 'unigram'")
    if "user" in m.types:
        raise UnsupportedComponentError(f"{m.path}: user-defined symbols are not supported")
    normal = [s for s, t in zip(m.scores, m.types) if t == "normal"]
    if not normal:
        raise VocabularyError(f"{m.path}: no NORMAL pieces")
    index = m.piece_to_id()
    byte_ids = tuple(index[byte_piece(b)] for b in range(256)) if m.byte_fallback else ()
    normalizer = SpmNormalizer(m)
    return UnigramModel(
        pieces=m.pieces, scores=tuple(_f32(s) for s in m.scores),
        matchable=tuple(t == "normal" for t in m.types), unk_id=m.unk_id,
        unk_score=_f32(min(normal) - UNK_PENALTY), byte_fallback=m.byte_fallback, byte_ids=byte_ids,
        fuse_unk=False, flavour="spm", float32=True, score_reset=score_reset, spm_normalizer=normalizer,
        pretokenizer=lambda text: [normalizer.normalize(text)],
        source=m.path, sha256=m.sha256,
        description=f"sentencepiece Unigram {len(m.pieces)} pieces ({m.normalizer_name or 'identity'})",
    ).check()
