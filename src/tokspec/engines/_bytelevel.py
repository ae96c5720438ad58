"""Adapters for the byte-level BPE libraries: ``tiktoken`` and the Rust encoder of ``bpe-openai``.

Both give token ids only. Offsets are derived here from each token's byte length (read from the
rank table tokspec loaded and sha256-verified, gathered per id into an int64 array) by the compiled
:func:`tokspec._offsets.char_spans_from_byte_lengths`, so a token that splits a multi-byte character
covers the whole character (``tokspec._types``). ``encode_arrays`` builds no Python object per token:
tiktoken's ids come as a numpy array (``encode_to_numpy`` with no special token allowed or
disallowed, which runs the same core encoder as ``encode_ordinary``), bpe-openai's as a list
converted in C.

Special tokens are ordinary text: ``tiktoken`` is called through ``encode_ordinary`` and the Rust
backend of ``bpe-openai`` has no special-token handling at all, so ``"<|endoftext|>"`` in the input
is encoded as the ordinary tokens of its characters.

Decoding (:mod:`tokspec.decoding`): ``decode(ids)`` is the library's own call: tiktoken's
``Encoding.decode`` (bytes joined, invalid UTF-8 replaced by U+FFFD, special ids give their text),
bpe-openai's ``decode`` is a partial function, strict where tiktoken replaces (it raises ValueError
on a sequence whose bytes are not valid UTF-8, e.g. any cut inside a character, and its Rust code
panics on a special id: stored finding ``corpora/production/decode/``), so the adapter offers it as
``library_decode`` and not as ``decode``: compared with a total decoder it would differ at every
token cut inside a character, which is that one recorded difference. ``n_vocab`` is the number of mergeable
tokens (ids ``0 .. n_vocab - 1`` are all mergeable in the named encodings); ``special_tokens()``
tiktoken's table (bpe-openai has none).

Out of scope: tiktoken's ``allowed_special`` and batch APIs; other encodings than cl100k_base
and o200k_base for ``bpe-openai``.
"""

from __future__ import annotations

import re
from dataclasses import replace
from importlib import metadata
from typing import Any

import numpy as np
import tiktoken

from tokspec._offsets import char_spans_from_byte_lengths
from tokspec._types import Encoder, Encoding, EncodingArrays, EngineInfo
from tokspec.errors import EngineFault
from tokspec.errors import UnknownEngineError
from tokspec.formats.vocab import TiktokenVocab

__all__ = ["PATTERNS", "SPECIAL_TOKENS", "TiktokenEngine", "BpeOpenaiEngine"]

#: The exact pre-tokenization patterns of the named encodings (as published in tiktoken's
#: ``tiktoken_ext/openai_public.py``; tests/test_engines_production.py checks they are equal).
PATTERNS: dict[str, str] = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
        r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]),
}

#: Special token ids of the named encodings: only used by ``token_piece`` (never matched in text).
SPECIAL_TOKENS: dict[str, dict[str, int]] = {
    "cl100k_base": {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276},
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}


def _bytes_by_id(ranks: dict[bytes, int]) -> dict[int, bytes]:
    """Invert a rank table. O(vocab)."""
    return {rank: token for token, rank in ranks.items()}


class _ByteLevelEngine(Encoder):
    """Shared part: ids come from a library, offsets from the verified rank table."""

    def __init__(self, info: EngineInfo, vocab: TiktokenVocab, special: dict[str, int]) -> None:
        self.info = info
        self._token_bytes = _bytes_by_id(vocab.ranks)
        self._special = {i: s for s, i in special.items()}
        #: byte length of each mergeable token by id; -1 for ids that are not mergeable tokens
        self._token_len = np.full(max(self._token_bytes, default=-1) + 1, -1, dtype=np.int64)
        for token_id, token in self._token_bytes.items():
            self._token_len[token_id] = len(token)
        #: the first id that is not a mergeable token (cl100k: 100256, the first special id)
        self._n_mergeable = int(np.argmin(self._token_len >= 0)) if (self._token_len < 0).any() \
            else len(self._token_len)

    def _id_array(self, text: str) -> np.ndarray:
        """The library's ids for ``text`` as an integer array."""
        raise NotImplementedError

    def _encode_arrays(self, text: str) -> EncodingArrays:
        """Encode; offsets from token byte lengths (compiled). O(bytes) beyond the library's encode,
        no Python object per token."""
        ids = self._id_array(text).astype(np.int64)
        if len(ids) and (int(ids.max()) >= len(self._token_len) or int(ids.min()) < 0
                         or int(self._token_len[ids].min()) < 0):
            bad = next(int(i) for i in ids if not 0 <= i < len(self._token_len) or self._token_len[i] < 0)
            raise EngineFault(f"{self.info.name}: library returned id {bad}, not a mergeable token")
        lens = self._token_len[ids]
        if int(lens.sum()) != len(text.encode("utf-8")):
            raise EngineFault(f"{self.info.name}: the tokens cover "
                              f"{int(lens.sum())} bytes of a {len(text.encode('utf-8'))}-byte text")
        starts, ends = char_spans_from_byte_lengths(text, lens)
        return EncodingArrays(ids, starts, ends)

    def _encode(self, text: str) -> Encoding:
        """The tuple form of :meth:`_encode_arrays`, with each token's bytes as its piece."""
        arrays = self._encode_arrays(text)
        enc = arrays.to_encoding()
        pieces = tuple(repr(self._token_bytes[i])[2:-1] for i in enc.ids or ())
        return Encoding(enc.ids, enc.offsets, pieces).validate(text, self.info.name)

    @property
    def n_vocab(self) -> int:
        """Ids ``0 .. n_vocab - 1`` are mergeable tokens (random decode sequences draw there)."""
        return self._n_mergeable

    def token_bytes(self, token_id: int) -> bytes:
        """The bytes of a mergeable token; raises UnknownEngineError for an id outside the vocab."""
        try:
            return self._token_bytes[token_id]
        except KeyError:
            raise UnknownEngineError(
                f"{self.info.name}: token_id={token_id!r} is not a mergeable token") from None

    def token_piece(self, token_id: int) -> str:
        """The token's bytes shown as a Python bytes literal body, or the special token's text."""
        if token_id in self._special:
            return self._special[token_id]
        if token_id in self._token_bytes:
            return repr(self._token_bytes[token_id])[2:-1]
        return str(token_id)


class TiktokenEngine(_ByteLevelEngine):
    """``tiktoken.Encoding`` built from tokspec's verified ranks and an explicit pattern.

    No network: tiktoken's own registry (which downloads) is never consulted.
    """

    def __init__(self, name: str, vocab: TiktokenVocab, pattern: str,
                 special: dict[str, int], description: str) -> None:
        info = EngineInfo(name, "tokenizer", "tiktoken", tiktoken.__version__, vocab.sha256,
                          description, thread_safe=True)  # read-only after __init__ (issue 24)
        super().__init__(info, vocab, special)
        self.library_encoding = tiktoken.Encoding(
            name=name, pat_str=pattern, mergeable_ranks=vocab.ranks, special_tokens=special)
        #: tiktoken 0.9's encode_to_numpy matches every special token whatever allowed_special says
        #: (it passes special_tokens_set to the core; corpora/production/findings_old_releases.json):
        #: there the adapter takes the older path, encode_ordinary (a list, then an array).
        self.numpy_path = numpy_respects_allowed_special(self.library_encoding)
        if not self.numpy_path:
            self.info = replace(info, description=f"{description}; tiktoken {tiktoken.__version__}: "
                                "encode_ordinary (its encode_to_numpy matches special tokens)")

    def decode(self, ids: list[int]) -> str:
        """tiktoken's ``Encoding.decode`` (``errors="replace"``)."""
        return self.library_encoding.decode(ids)

    def special_tokens(self) -> dict[str, int]:
        """The encoding's special tokens (string -> id)."""
        return {s: i for i, s in self._special.items()}

    def encode_special(self, text: str, *, post_process: bool = False,
                       allowed_special: frozenset[str] | None = None) -> Encoding:
        """Special mode (``tokspec.special_mode``): ``encode(text, allowed_special="all")``; offsets
        from each token's byte length (a special token's: its string's). No post-processor.
        ``allowed_special``: a set is passed to ``encode`` with its default ``disallowed_special``
        ("all": every other special token), so tiktoken refuses a text spelling one of those; its
        ValueError becomes DisallowedSpecialError (naming the token tiktoken named)."""
        from tokspec._offsets import char_offsets_from_byte_lengths

        try:
            ids = self.library_encoding.encode(
                text, allowed_special="all" if allowed_special is None else set(allowed_special))
        except ValueError as exc:
            raise _refusal(exc) from None
        lengths = [len(self._special[i].encode("utf-8")) if i in self._special else len(self._token_bytes[i])
                   for i in ids]
        return Encoding.of(ids, char_offsets_from_byte_lengths(text, lengths))

    def _id_array(self, text: str) -> np.ndarray:
        if not self.numpy_path:
            return np.array(self.library_encoding.encode_ordinary(text), dtype=np.uint32)
        # allowed_special=set(), disallowed_special=(): no special token is matched nor refused,
        # which is encode_ordinary (tests compare the two on every corpus text)
        return self.library_encoding.encode_to_numpy(text, allowed_special=set(), disallowed_special=())


#: tiktoken's refusal message (``raise_disallowed_special_token``): its first line names the token's repr
_REFUSAL = re.compile(r"\AEncountered text corresponding to disallowed special token (.+)\.\n")


def _refusal(exc: ValueError) -> Exception:
    """tiktoken's refusal as DisallowedSpecialError; any other ValueError is returned unchanged (a
    fault). The token is read back from the message's ``repr`` (a literal: ``ast.literal_eval``)."""
    import ast

    from tokspec.errors import DisallowedSpecialError

    match = _REFUSAL.match(str(exc))
    if match is None:
        return exc
    token = ast.literal_eval(match.group(1))
    return DisallowedSpecialError(token, f"tiktoken refused the text: it spells the disallowed special token {token!r}")


def numpy_respects_allowed_special(encoding: Any) -> bool:
    """True unless ``encoding.encode_to_numpy`` matches a special token that ``allowed_special=set()``
    excludes (tiktoken 0.9 does). An encoding without special tokens passes. O(longest special)."""
    for special in sorted(encoding.special_tokens_set)[:1]:
        ids = encoding.encode_to_numpy(special, allowed_special=set(), disallowed_special=())
        return bool([int(i) for i in ids] == encoding.encode_ordinary(special))
    return True


def _bpe_openai_backend(encoding: str) -> Any:
    """The Rust ``PyTokenizer`` of ``bpe_openai._bindings`` (never the package's Python fallback).

    ``bpe_openai.Encoding.encode_ordinary`` wraps this object but also refuses texts of 1M
    characters or more and results over 200,000 tokens; calling the binding avoids both limits.
    """
    from bpe_openai import _bindings  # the compiled extension module

    return _bindings.tokenizer_for_encoding(encoding)


class BpeOpenaiEngine(_ByteLevelEngine):
    """The backtracking BPE encoder of github/rust-gems, via the ``bpe-openai`` Rust binding."""

    def __init__(self, name: str, encoding: str, vocab: TiktokenVocab) -> None:
        from bpe_openai import _bindings

        version = f"{metadata.version('bpe-openai')} (rust {_bindings.RUST_BACKEND_VERSION})"
        info = EngineInfo(name, "tokenizer", "bpe-openai", version, vocab.sha256,
                          f"rust-gems backtracking BPE encoder, {encoding}, ordinary text only",
                          thread_safe=True)  # read-only after __init__ (issue 24)
        super().__init__(info, vocab, SPECIAL_TOKENS[encoding])
        self.backend = _bpe_openai_backend(encoding)

    def library_decode(self, ids: list[int]) -> str:
        """bpe-openai's own ``decode`` (strict UTF-8; see the module docstring)."""
        out = self.backend.decode(ids)
        if out is None:
            raise ValueError("bpe-openai decode returned None")
        return str(out)

    def _id_array(self, text: str) -> np.ndarray:
        ids = self.backend.encode(text)
        return np.fromiter(ids, dtype=np.int64, count=len(ids))
