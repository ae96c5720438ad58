"""``UnigramModel``: everything a Unigram Viterbi needs, after normalization and pretokenization.

A model is data plus one function: ``pretokenize(text) -> list[Aligned]`` turns an input text into
the normalized pretokens the Viterbi segments, each with the original character span of every
normalized character (see :mod:`tokspec.normalize`). The Viterbi itself is NOT here: the readable
one is ``tokspec.reference.unigram_viterbi``, the fast one ``tokspec.fast.unigram_datrie``; both
read this model, so they agree on normalization by construction and differ only in the algorithm
under test (normalization is checked against the production libraries on its own).

Library flavours (``flavour``), found by reading both libraries and by experiment:

- ``"hf"`` (HF ``tokenizers``): every vocabulary entry is matchable (even ``<unk>``, ``<s>`` and
  ``<0xNN>`` pieces); scores are float64; ``unk_score = min(all scores) - 10``; consecutive
  unknown characters are fused into one ``<unk>``; with byte fallback each byte token of a fused run
  carries the whole run's offsets.
- ``"spm"`` (sentencepiece): only NORMAL and USER_DEFINED pieces are matchable; scores and sums are
  float32; ``unk_score = min(NORMAL scores) - 10``; see ``tokspec.spm_normalize``.

Out of scope: HF pipelines with normalizers/pretokenizers not listed in ``NORMALIZERS`` /
``PRETOKENIZERS`` (UnsupportedComponentError, never silently ignored); non-special added tokens;
sampling / n-best. Special tokens are ordinary text (tokspec contract): compare with HF using
``tokenizer.encode_special_tokens = True``.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import regex

from tokspec import normalize as nz
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.normalize import Aligned
from tokspec.vocab import TokenizerJson, load_tokenizer_json, read_verified

__all__ = [
    "UnigramModel",
    "UNK_PENALTY",
    "NORMALIZERS",
    "PRETOKENIZERS",
    "unigram_model_from_tokenizer_json",
    "unigram_model_from_spm",
    "byte_piece",
    "serde_json_f64",
]

#: Both libraries score an unknown character ``min_score - UNK_PENALTY`` (kUnkPenalty / K_UNK_PENALTY).
UNK_PENALTY = 10.0

Flavour = Literal["hf", "spm"]
Normalizer = Callable[[Aligned], Aligned]
PreTokenizer = Callable[[Aligned], list[Aligned]]


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
        if self.byte_fallback != (len(self.byte_ids) == 256):
            raise VocabularyError(f"{self.source!r}: byte_ids must have 256 entries iff byte_fallback")
        return self


# -- HF tokenizer.json pipelines ------------------------------------------------------------------

def _pattern(spec: dict[str, Any], where: str) -> regex.Pattern[str]:
    pat = spec.get("pattern", {})
    if "Regex" in pat:
        return regex.compile(pat["Regex"])
    if "String" in pat:
        return regex.compile(regex.escape(pat["String"]))
    raise UnsupportedComponentError(f"{where}: Replace pattern {pat!r} is neither Regex nor String")


def _normalizer(spec: dict[str, Any] | None, where: str) -> Normalizer:
    """Build one normalizer step from its tokenizer.json object."""
    if spec is None:
        return lambda a: a
    kind = spec.get("type")
    if kind == "Sequence":
        steps = [_normalizer(s, where) for s in spec["normalizers"]]
        return lambda a: _chain(a, steps)
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):
        return lambda a, f=kind: nz.unicode_form(a, f)
    if kind == "Replace":
        pattern, content = _pattern(spec, where), str(spec["content"])
        return lambda a: nz.replace(a, pattern, content)
    if kind == "Lowercase":
        return nz.lowercase
    if kind == "Prepend":
        return lambda a, s=str(spec["prepend"]): nz.prepend(a, s)
    if kind == "Precompiled":
        return _precompiled(spec, where)
    if kind == "Strip":
        left, right = bool(spec.get("strip_left", True)), bool(spec.get("strip_right", True))
        return lambda a: nz.strip(a, left=left, right=right)
    raise UnsupportedComponentError(
        f"{where}: normalizer type={kind!r} is not supported (supported: {', '.join(NORMALIZERS)})")


NORMALIZERS = ("Sequence", "NFC", "NFD", "NFKC", "NFKD", "Replace", "Lowercase", "Prepend",
               "Precompiled", "Strip")


def _precompiled(spec: dict[str, Any], where: str) -> Normalizer:
    """HF ``Precompiled``: a sentencepiece charsmap (base64) applied HF's way."""
    from tokspec.spm_normalize import CharsMap, hf_precompiled  # local: that module imports this one
    try:
        blob = base64.b64decode(str(spec.get("precompiled_charsmap") or ""), validate=True)
    except binascii.Error as exc:
        raise VocabularyError(f"{where}: Precompiled precompiled_charsmap is not base64: {exc}") from exc
    cm = CharsMap.parse(blob, where)
    return (lambda a: a) if cm is None else (lambda a: hf_precompiled(a, cm))
PRETOKENIZERS = ("Metaspace", "WhitespaceSplit", "Sequence")


def _chain(a: Aligned, steps: list[Normalizer]) -> Aligned:
    for step in steps:
        a = step(a)
    return a


def _split_before(a: Aligned, marker: str) -> list[Aligned]:
    """Split so every ``marker`` character starts a new piece (HF ``MergedWithNext``)."""
    cuts = [i for i, c in enumerate(a.text) if c == marker and i > 0]
    bounds = [0, *cuts, len(a.text)]
    return [a.slice(s, e) for s, e in zip(bounds, bounds[1:]) if e > s]


def _metaspace(spec: dict[str, Any]) -> Callable[[Aligned, int], list[Aligned]]:
    """HF Metaspace: ' ' -> replacement, prepend per ``prepend_scheme``, split before each marker."""
    rep = str(spec.get("replacement", "\u2581"))
    scheme = spec.get("prepend_scheme")
    if scheme is None:  # older files: add_prefix_space
        scheme = "always" if spec.get("add_prefix_space", True) else "never"
    if scheme not in ("always", "first", "never"):
        raise UnsupportedComponentError(f"Metaspace prepend_scheme={scheme!r} is not supported")
    split = bool(spec.get("split", True))

    def run(a: Aligned, index: int) -> list[Aligned]:
        # HF "first": the piece starts at original offset 0 (the unsplit root always does)
        first = isinstance(a, _Root) or bool(a.spans and a.spans[0][0] == 0)
        a = nz.apply_edits(a, [(rep if c == " " else c, 0) for c in a.text])
        if scheme == "always" or (scheme == "first" and first):
            if not a.text.startswith(rep):
                a = nz.prepend(a, rep)
        return _split_before(a, rep) if split else [a]
    return run


class _Root(Aligned):
    """The whole normalized text before any split (HF: its original offsets start at 0 even when
    normalization deleted leading characters)."""


def _whitespace_split(a: Aligned) -> list[Aligned]:
    """HF WhitespaceSplit: maximal runs of non-White_Space characters."""
    out: list[Aligned] = []
    start: int | None = None
    for i, c in enumerate(a.text + " "):
        if nz.is_rust_whitespace(c):
            if start is not None:
                out.append(a.slice(start, i))
            start = None
        elif start is None:
            start = i
    return out


def _pretokenizer(spec: dict[str, Any] | None, where: str) -> Callable[[list[Aligned]], list[Aligned]]:
    """Build a pretokenizer step mapping a list of pieces to a list of pieces."""
    if spec is None:
        return lambda pieces: pieces
    kind = spec.get("type")
    if kind == "Sequence":
        steps = [_pretokenizer(s, where) for s in spec["pretokenizers"]]
        return lambda pieces: _chain_pre(pieces, steps)
    if kind == "Metaspace":
        run = _metaspace(spec)
        return lambda pieces: [q for i, p in enumerate(pieces) for q in run(p, i)]
    if kind == "WhitespaceSplit":
        return lambda pieces: [q for p in pieces for q in _whitespace_split(p)]
    raise UnsupportedComponentError(
        f"{where}: pre_tokenizer type={kind!r} is not supported (supported: {', '.join(PRETOKENIZERS)})")


def _chain_pre(pieces: list[Aligned], steps: list[Callable[[list[Aligned]], list[Aligned]]]) -> list[Aligned]:
    for step in steps:
        pieces = step(pieces)
    return pieces


def hf_pipeline(tj: TokenizerJson) -> Callable[[str], list[Aligned]]:
    """The normalizer + pretokenizer of a tokenizer.json as one function text -> pretokens."""
    norm = _normalizer(tj.data.get("normalizer"), tj.path)
    pre = _pretokenizer(tj.data.get("pre_tokenizer"), tj.path)

    def pipeline(text: str) -> list[Aligned]:
        root = norm(Aligned.of(text))
        return pre([_Root(root.text, root.spans, root.origins)])
    return pipeline


def _check_added_tokens(tj: TokenizerJson) -> None:
    for tok in tj.data.get("added_tokens") or []:
        if not tok.get("special", False):
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


def unigram_model_from_spm(path: str | Path) -> UnigramModel:
    """An ``"spm"``-flavour model from a sentencepiece ``.model`` file (see ``tokspec.spm_normalize``)."""
    from tokspec.spm_normalize import spm_unigram_model  # local: spm_normalize imports this module
    return spm_unigram_model(path)
