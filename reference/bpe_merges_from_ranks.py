"""Recover an HF merge list from tiktoken ranks, and run it with HF ``tokenizers``.

A tiktoken vocabulary has no merge list: any adjacent pair whose concatenation is a token may
merge, in order of the token's rank. HF BPE needs explicit merges. For a token ``t`` of two or more
bytes, its merge is the pair the minimum-rank loop ends with when it encodes ``t``'s own bytes with
only the ranks below ``rank(t)`` (:func:`merge_pair`): if that loop ends with exactly two pieces
``(a, b)``, then ``(a, b) -> t`` is the last merge that builds ``t``. Otherwise ``t`` is
*unreachable* by merges (the loop never builds it from its bytes); it stays in the vocabulary and
is only produced when a whole pretoken equals it and ``ignore_merges`` is on.

The merges are listed by the rank of the token they produce, so HF's "lowest merge rank first"
orders merges as tiktoken orders tokens. Whether HF then reproduces tiktoken exactly is an
empirical question the tests answer; each difference found is stored under
``corpora/reference-bpe/findings``.

Out of scope: special tokens (the generated file has no added tokens).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tokspec._cache_files import load_bytes, save_bytes
from tokspec._cache_store import subfolder
from tokspec._types import Encoder, Encoding, EngineInfo
from tokspec.reference.bpe_hf import bytes_to_unicode
from tokspec.reference.bpe_naive import bpe_pieces
from tokspec.reference.pretok_regex import PATTERNS

__all__ = ["CONVERTER_VERSION", "HfConvertedEncoder", "HfSplitPretokenizer", "converted_json_path", "merge_pair",
           "merges_from_ranks", "tokenizer_json_from_ranks"]

#: Bump when the generated JSON changes, so stale cache files are not reused.
CONVERTER_VERSION = 1


def merge_pair(token: bytes, ranks: Mapping[bytes, int]) -> tuple[bytes, bytes] | None:
    """The pair whose merge produces ``token``, or None if ``token`` is a single byte or unreachable.

    Runs :func:`bpe_pieces` on ``token`` with ranks restricted to those below ``ranks[token]``.
    O(m^2) for an m-byte token.
    """
    if len(token) < 2:
        return None
    parts = bpe_pieces(token, ranks, max_rank=ranks[token], shortcut=False)
    return (parts[0], parts[1]) if len(parts) == 2 else None


def merges_from_ranks(ranks: Mapping[bytes, int]) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    """``(merges, unreachable)``: merges ordered by the rank of the token they produce, and the
    multi-byte tokens no merge produces. O(sum over tokens of len^2)."""
    merges: list[tuple[bytes, bytes]] = []
    unreachable: list[bytes] = []
    for token in sorted(ranks, key=ranks.__getitem__):
        pair = merge_pair(token, ranks)
        if pair is not None:
            merges.append(pair)
        elif len(token) >= 2:
            unreachable.append(token)
    return merges, unreachable


def _visible(token: bytes) -> str:
    """A token's bytes written with the ByteLevel alphabet (one character per byte)."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


def tokenizer_json_from_ranks(ranks: Mapping[bytes, int], pattern: str, *,
                              ignore_merges: bool = True) -> dict[str, Any]:
    """An HF tokenizer.json (as a dict): ByteLevel BPE with the recovered merges, the regex
    ``pattern`` as an isolating Split, ByteLevel without its own regex, no normalizer."""
    merges, _ = merges_from_ranks(ranks)
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": [],
        "normalizer": None,
        "pre_tokenizer": {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": pattern}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False, "use_regex": False},
        ]},
        "post_processor": None,
        "decoder": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": False,
                    "use_regex": False},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
            "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
            "ignore_merges": ignore_merges,
            "vocab": {_visible(tok): rank for tok, rank in sorted(ranks.items(), key=lambda kv: kv[1])},
            "merges": [[_visible(a), _visible(b)] for a, b in merges],
        },
    }


def _uncached_path(name: str, data: bytes) -> Path:
    """``data`` written as ``name`` in this process's own private temporary folder (``mkdtemp``:
    mode 0700, a fresh name, removed at exit): used only when the per-user cache is unusable, so
    nothing another user planted, and nothing from an earlier run, is ever read."""
    global _private
    if _private is None:
        _private = Path(tempfile.mkdtemp(prefix="tokspec-hf-converted-"))
        atexit.register(shutil.rmtree, _private, True)
    path = _private / name
    path.write_bytes(data)
    return path


_private: Path | None = None


def converted_json_path(ranks: Mapping[bytes, int], vocab_sha256: str, pattern_name: str, *,
                        ignore_merges: bool = True) -> Path:
    """Path of the cached converted tokenizer.json, generating it if absent or not verified.

    The cache is the per-user one (``$TOKSPEC_CACHE``, else ``$XDG_CACHE_HOME/tokspec``, else
    ``~/.cache/tokspec``; sub-folder ``hf-converted``, owner and mode checked by
    :func:`tokspec._cache_store.subfolder`), never a folder shared by every user. The file name
    carries a hash of the inputs (vocabulary sha256, pattern, flag, CONVERTER_VERSION); its bytes
    are reused only if their sidecar digest over those inputs and the bytes matches
    (:func:`tokspec._cache_files.load_bytes`): a truncated, emptied, planted or foreign file is
    rebuilt. Writes are atomic (temporary sibling, then ``os.replace``). If the cache is unusable,
    the file goes to a private per-process folder instead (one note on stderr).
    """
    key = f"{vocab_sha256}|{PATTERNS[pattern_name]}|{ignore_merges}|{CONVERTER_VERSION}"
    name = f"hf-converted-{pattern_name}-{hashlib.sha256(key.encode()).hexdigest()[:20]}.json"
    folder = subfolder("hf-converted")
    # 1. a verified cached file is used as it is
    if folder is not None and load_bytes(folder / name, key) is not None:
        return folder / name
    # 2. otherwise build the JSON (UTF-8 whatever the locale: HF reads it as UTF-8) ...
    data = tokenizer_json_from_ranks(ranks, PATTERNS[pattern_name], ignore_merges=ignore_merges)
    text = json.dumps(data, ensure_ascii=False).encode("utf-8")
    # 3. ... and store it with its digest, or keep it private to this process
    if folder is not None and save_bytes(folder / name, key, text):
        return folder / name
    return _uncached_path(name, text)


class HfConvertedEncoder(Encoder):
    """Engine ``hf-converted:NAME``: HF ``tokenizers`` running the JSON from this module.

    ``encode(text, add_special_tokens=False)``; ids and HF's character offsets as returned.
    """

    def __init__(self, json_path: Path, *, name: str, vocab_sha256: str) -> None:
        import tokenizers  # imported here: the reference layer otherwise needs only the core

        self.json_path = json_path
        self.tokenizer = tokenizers.Tokenizer.from_file(str(json_path))
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokenizers",
                               library_version=str(tokenizers.__version__), vocab_sha256=vocab_sha256,
                               description=f"HF tokenizers on merges recovered from ranks ({json_path.name})")

    def _encode(self, text: str) -> Encoding:
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        return Encoding.of(enc.ids, enc.offsets).validate(text, self.info.name)

    def token_piece(self, token_id: int) -> str:
        return self.tokenizer.id_to_token(token_id) or str(token_id)


class HfSplitPretokenizer(Encoder):
    """HF ``tokenizers``' ``Split(Regex(pattern), "isolated")`` as a pretokenizer engine: the
    production counterpart of ``pretok:NAME`` when HF runs the same pattern (spans from
    ``pre_tokenize_str``, which are character offsets)."""

    def __init__(self, pattern_name: str) -> None:
        import tokenizers
        from tokenizers import pre_tokenizers

        self.split = pre_tokenizers.Split(tokenizers.Regex(PATTERNS[pattern_name]), behavior="isolated")
        self.info = EngineInfo(name=f"pretok:hf-split-{pattern_name}", kind="pretokenizer", library="tokenizers",
                               library_version=str(tokenizers.__version__), vocab_sha256=None,
                               description=f"HF Split pre-tokenizer with the {pattern_name} pattern")

    def _encode(self, text: str) -> Encoding:
        return Encoding.of(None, [span for _, span in self.split.pre_tokenize_str(text)])
