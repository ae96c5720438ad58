"""Reference decoders: ids -> text, written from each library's definition, straight-line.

Byte-level BPE (tiktoken's ``Encoding.decode``): the tokens' bytes joined (a special id gives its
string's UTF-8), then decoded as UTF-8 with ``errors="replace"``: each maximal invalid subpart
becomes one U+FFFD (Python's codec and Rust's ``String::from_utf8_lossy`` follow the same Unicode
practice). An id that is no token raises :class:`UnknownIdError` (tiktoken raises ``KeyError``).

HF ``tokenizers`` (``Tokenizer.decode(ids, skip_special_tokens=False)``): ids -> token strings
(added tokens first, then the model's vocabulary; an unknown id is skipped), then the configured
decoder chain, each step mapping a list of token strings to a list of strings:

- ``WordPiece(prefix, cleanup)``: token ``i > 0`` loses a leading ``prefix`` or else gains a
  leading space; with ``cleanup`` each token then gets :func:`wordpiece_cleanup`;
- ``ByteFallback``: each run of ``<0xHH>`` tokens becomes its bytes decoded as UTF-8, or, when those
  bytes are not valid UTF-8, one U+FFFD *per byte token* of the run;
- ``Fuse``: all tokens joined into one; ``Replace(String pattern, content)``: in each token;
  ``Strip(content, start, stop)``: up to ``start`` leading and ``stop`` trailing ``content``
  characters removed from each token; ``Metaspace(replacement, prepend_scheme)``: replacement ->
  space in each token, and the first token loses one leading space unless the scheme is ``never``.

The result is the chain's tokens joined with no separator (no decoder: joined by spaces).

sentencepiece (``DecodeIds``), from the model's piece types: control pieces decode to nothing,
the unknown piece to `` ⁇ ``, each run of byte pieces to its bytes with every byte of an invalid
UTF-8 sequence replaced by U+FFFD one by one, ``▁`` to a space; with ``add_dummy_prefix`` an
ordinary piece decoded while the text so far is still empty loses one leading ``▁`` (so ``▁ ▁ x``
gives ``x``; a byte piece or the unknown piece keeps its surface and ends that state; found by
experiment against sentencepiece 0.2, replayed in tests/test_reference_decode.py).

Out of scope: other HF decoders (BPEDecoder, CTC, ByteLevel) raise UnsupportedComponentError;
sentencepiece's ``remove_extra_whitespaces`` has no decode side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from tokspec._types import Encoder
from tokspec.errors import TokspecError, UnsupportedComponentError

__all__ = ["ByteLevelDecoder", "HfDecoder", "SpmDecoder", "attach", "UnknownIdError", "decode_bytelevel", "decode_hf", "hf_tokens", "wordpiece_cleanup",
           "byte_fallback", "decode_spm", "utf8_replace_per_byte", "byte_of_piece"]

REPLACEMENT = "\ufffd"


class UnknownIdError(TokspecError, ValueError):
    """An id that names no token of the vocabulary."""


def decode_bytelevel(by_id: Mapping[int, bytes], specials: Mapping[int, str], ids: Sequence[int]) -> str:
    """tiktoken's decode (module docstring). O(total bytes)."""
    parts = []
    for i in ids:
        if i in by_id:
            parts.append(by_id[i])
        elif i in specials:
            parts.append(specials[i].encode("utf-8"))
        else:
            raise UnknownIdError(f"id={i!r} is no token of this vocabulary")
    return b"".join(parts).decode("utf-8", errors="replace")


def byte_of_piece(piece: str) -> int | None:
    """The byte of a byte-fallback piece ``<0xHH>`` (two upper-case hex digits), else None."""
    if len(piece) == 6 and piece.startswith("<0x") and piece.endswith(">"):
        digits = piece[3:5]
        if all(c in "0123456789ABCDEF" for c in digits):
            return int(digits, 16)
    return None


def wordpiece_cleanup(s: str) -> str:
    """HF's WordPiece ``cleanup``: spaces before punctuation and English contractions removed."""
    for old, new in ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")):
        s = s.replace(old, new)
    return s


def byte_fallback(tokens: list[str]) -> list[str]:
    """HF's ByteFallback decoder step (module docstring)."""
    out: list[str] = []
    run: list[int] = []
    for token in [*tokens, None]:
        b = None if token is None else byte_of_piece(token)
        if b is not None:
            run.append(b)
            continue
        if run:  # a run of byte tokens ends here
            try:
                out.append(bytes(run).decode("utf-8"))
            except UnicodeDecodeError:
                out.extend(REPLACEMENT for _ in run)
            run = []
        if token is not None:
            out.append(token)
    return out


def _step(step: dict[str, Any], tokens: list[str]) -> list[str]:
    kind = step.get("type")
    if kind == "WordPiece":
        prefix, out = step.get("prefix", "##"), []
        for i, token in enumerate(tokens):
            if i > 0:
                token = token[len(prefix):] if token.startswith(prefix) else " " + token
            out.append(wordpiece_cleanup(token) if step.get("cleanup", True) else token)
        return out
    if kind == "ByteFallback":
        return byte_fallback(tokens)
    if kind == "Fuse":
        return ["".join(tokens)]
    if kind == "Replace" and "String" in step.get("pattern", {}):
        return [t.replace(step["pattern"]["String"], step["content"]) for t in tokens]
    if kind == "Strip":
        return [_strip(t, step["content"], step.get("start", 0), step.get("stop", 0)) for t in tokens]
    if kind == "Metaspace":
        out = [t.replace(step.get("replacement", "\u2581"), " ") for t in tokens]
        if out and step.get("prepend_scheme", "always") != "never" and out[0].startswith(" "):
            out[0] = out[0][1:]
        return out
    if kind == "Sequence":
        for inner in step["decoders"]:
            tokens = _step(inner, tokens)
        return tokens
    raise UnsupportedComponentError(f"HF decoder type={kind!r} has no reference decoder")


def _strip(token: str, content: str, start: int, stop: int) -> str:
    lead = 0
    while lead < start and lead < len(token) and token[lead] == content:
        lead += 1
    trail = 0
    while trail < stop and trail < len(token) - lead and token[len(token) - 1 - trail] == content:
        trail += 1
    return token[lead:len(token) - trail]


def hf_tokens(vocab: Mapping[int, str], added: Mapping[int, str], ids: Sequence[int]) -> list[str]:
    """Token strings of ``ids``: added tokens first, then the vocabulary; unknown ids skipped."""
    return [added[i] if i in added else vocab[i] for i in ids if i in added or i in vocab]


def decode_hf(decoder: dict[str, Any] | None, vocab: Mapping[int, str], added: Mapping[int, str],
              ids: Sequence[int]) -> str:
    """HF ``Tokenizer.decode`` with special tokens kept (module docstring). O(tokens * chain)."""
    tokens = hf_tokens(vocab, added, ids)
    if decoder is None:
        return " ".join(tokens)
    return "".join(_step(decoder, tokens))


def utf8_replace_per_byte(data: bytes) -> str:
    """UTF-8 decoding where every byte that does not start a valid sequence becomes one U+FFFD
    (sentencepiece's byte-piece rule). O(len(data))."""
    out, i = [], 0
    while i < len(data):
        for size in (1, 2, 3, 4):
            try:
                out.append(data[i:i + size].decode("utf-8"))
            except UnicodeDecodeError:
                continue
            i += size
            break
        else:
            out.append(REPLACEMENT)
            i += 1
    return "".join(out)


def decode_spm(pieces: Sequence[str], types: Sequence[str], add_dummy_prefix: bool, ids: Sequence[int]) -> str:
    """sentencepiece's ``DecodeIds`` (module docstring); an id outside the model raises
    UnknownIdError. O(tokens)."""
    surfaces: list[str] = []
    run: list[int] = []
    for i in [*ids, None]:
        if i is not None and not 0 <= i < len(pieces):
            raise UnknownIdError(f"id={i!r} is outside the model's {len(pieces)} pieces")
        if i is not None and types[i] == "byte":
            run.append(byte_of_piece(pieces[i]) or 0)
            continue
        if run:
            surfaces.append(utf8_replace_per_byte(bytes(run)))
            run = []
        if i is None or types[i] == "control":
            continue
        if types[i] == "unknown":
            surfaces.append(" \u2047 ")
        else:  # the dummy prefix: an ordinary piece while nothing is decoded yet loses one marker
            at_start = not any(surfaces)
            piece = pieces[i][1:] if at_start and add_dummy_prefix and pieces[i].startswith("\u2581") else pieces[i]
            surfaces.append(piece.replace("\u2581", " "))
    return "".join(surfaces)


# ----------------------------------------------------------------------------- engines' decoders


class ByteLevelDecoder:
    """``decode`` of a byte-level BPE engine: :func:`decode_bytelevel` over its ranks."""

    def __init__(self, ranks: Mapping[bytes, int], specials: Mapping[str, int]) -> None:
        self.by_id = {i: t for t, i in ranks.items()}
        self.specials = {i: s for s, i in specials.items()}
        n = 0
        while n in self.by_id:
            n += 1
        self.n_vocab = n  # ids 0 .. n - 1 are all tokens

    def __call__(self, ids: list[int]) -> str:
        return decode_bytelevel(self.by_id, self.specials, ids)


class HfDecoder:
    """``decode`` of an engine defined by a tokenizer.json: :func:`decode_hf` over its vocabulary,
    added tokens and decoder."""

    def __init__(self, data: dict[str, Any]) -> None:
        model = data["model"]
        if model["type"] == "Unigram":
            self.vocab = {i: str(entry[0]) for i, entry in enumerate(model["vocab"])}
        else:
            self.vocab = {int(i): str(t) for t, i in model["vocab"].items()}
        self.added = {int(t["id"]): str(t["content"]) for t in data.get("added_tokens") or []}
        self.specials = {str(t["content"]): int(t["id"]) for t in data.get("added_tokens") or [] if t.get("special")}
        self.decoder = data.get("decoder")
        if self.decoder is not None:
            _step(self.decoder, [])  # UnsupportedComponentError now for a decoder without a reference
        self.n_vocab = max([*self.vocab, *self.added], default=-1) + 1

    def __call__(self, ids: list[int]) -> str:
        return decode_hf(self.decoder, self.vocab, self.added, ids)


class SpmDecoder:
    """``decode`` of a sentencepiece model: :func:`decode_spm` over its pieces and types."""

    def __init__(self, pieces: Sequence[str], types: Sequence[str], add_dummy_prefix: bool) -> None:
        self.pieces, self.types, self.add_dummy_prefix = tuple(pieces), tuple(types), add_dummy_prefix
        self.specials = {p: i for i, (p, t) in enumerate(zip(pieces, types)) if t == "control"}
        self.n_vocab = len(self.pieces)

    def __call__(self, ids: list[int]) -> str:
        return decode_spm(self.pieces, self.types, self.add_dummy_prefix, ids)


def attach(engine: Encoder, decoder: ByteLevelDecoder | HfDecoder | SpmDecoder) -> Encoder:
    """Give ``engine`` the optional contract methods of :mod:`tokspec.decoding` from ``decoder``:
    ``decode``, ``special_tokens()`` and ``n_vocab``. Returns ``engine``."""
    specials = dict(decoder.specials) if not isinstance(decoder, ByteLevelDecoder) else {
        s: i for i, s in decoder.specials.items()}
    setattr(engine, "decode", decoder)  # noqa: B010 - optional methods, absent from Encoder's type
    setattr(engine, "special_tokens", lambda: dict(specials))  # noqa: B010
    setattr(engine, "n_vocab", decoder.n_vocab)  # noqa: B010
    return engine
