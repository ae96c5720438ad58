"""Adapters for the byte-level BPE libraries: ``tiktoken`` and the Rust encoder of ``bpe-openai``.

Both give token ids only. Offsets are derived here from each token's bytes (read from the rank
table tokspec loaded and sha256-verified) by :func:`tokspec._offsets.char_offsets_from_byte_lengths`,
so a token that splits a multi-byte character covers the whole character (``tokspec._types``).

Special tokens are ordinary text: ``tiktoken`` is called through ``encode_ordinary`` and the Rust
backend of ``bpe-openai`` has no special-token handling at all, so ``"<|endoftext|>"`` in the input
is encoded as the ordinary tokens of its characters.

Out of scope: tiktoken's ``allowed_special``, batch and numpy APIs; other encodings than cl100k_base
and o200k_base for ``bpe-openai``.
"""

from __future__ import annotations

from importlib import metadata
from typing import Any

import tiktoken

from tokspec._offsets import char_offsets_from_byte_lengths
from tokspec._types import Encoder, Encoding, EngineInfo
from tokspec.errors import UnknownEngineError
from tokspec.vocab import TiktokenVocab

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

    def _ids(self, text: str) -> list[int]:
        raise NotImplementedError

    def _encode(self, text: str) -> Encoding:
        """Encode; offsets from token byte lengths. O(n) beyond the library's own encode."""
        ids = self._ids(text)
        pieces = [self.token_bytes(i) for i in ids]
        offsets = char_offsets_from_byte_lengths(text, [len(p) for p in pieces])
        return Encoding.of(ids, offsets, [repr(p)[2:-1] for p in pieces]).validate(text, self.info.name)

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
                          description)
        super().__init__(info, vocab, special)
        self.library_encoding = tiktoken.Encoding(
            name=name, pat_str=pattern, mergeable_ranks=vocab.ranks, special_tokens=special)

    def _ids(self, text: str) -> list[int]:
        return self.library_encoding.encode_ordinary(text)


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
                          f"rust-gems backtracking BPE encoder, {encoding}, ordinary text only")
        super().__init__(info, vocab, SPECIAL_TOKENS[encoding])
        self.backend = _bpe_openai_backend(encoding)

    def _ids(self, text: str) -> list[int]:
        return list(self.backend.encode(text))
