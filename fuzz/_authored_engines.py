"""The engines of :mod:`tokspec.fuzz.authored_bugs`: plausible, wrong tokenizers, one bug each.

BPE engines wrap ``tiktoken`` over cl100k_base's verified ranks (:class:`_Cl100k` with a changed
pattern, or a subclass breaking one step around the real encoding); WordPiece and Unigram engines
are HF ``tokenizers`` built from a ``tokenizer.json`` with one configuration value changed
(:class:`_HfSlip` and its edits). Engines are named and reached as
``tokspec.fuzz.authored_bugs:NAME``: the table and the factories live there, the code here. Out of
scope: which bug is planted under which name (the table).
"""

from __future__ import annotations

import copy
import functools
import unicodedata
from collections.abc import Callable
from typing import Any

import regex
import tiktoken

from tokspec import Encoder, Encoding, EngineInfo
from tokspec._offsets import char_offsets_from_byte_lengths
from tokspec.spec.pretok import cl100k_pattern
from tokspec.formats.vocab import TokenizerJson, load_named_tiktoken, load_tokenizer_json, named_path

__all__: list[str] = []  # private: the public names are tokspec.fuzz.authored_bugs'

_ME = "tokspec.fuzz.authored_bugs:"


# ----------------------------------------------------------------------------- BPE (cl100k_base)

_CL100K = cl100k_pattern()


def _slip(old: str, new: str) -> str:
    """cl100k's pattern with ``old`` replaced once by ``new`` (``old`` must occur: checked here)."""
    if old not in _CL100K:
        raise ValueError(f"pattern slip old={old!r} is not in cl100k's pattern")
    return _CL100K.replace(old, new, 1)


@functools.lru_cache(maxsize=8)
def _encoding(pattern: str) -> tiktoken.Encoding:
    """cl100k_base's ranks with ``pattern`` (shared by engines with equal patterns: it is stateless)."""
    vocab = load_named_tiktoken("cl100k_base")
    return tiktoken.Encoding(f"authored-{len(pattern)}", pat_str=pattern, mergeable_ranks=vocab.ranks,
                             special_tokens={})


@functools.lru_cache(maxsize=1)
def _token_bytes() -> dict[int, bytes]:
    return {i: t for t, i in load_named_tiktoken("cl100k_base").ranks.items()}


class _Cl100k(Encoder):
    """cl100k_base through tiktoken with pattern ``pattern``; subclasses break one step."""

    def __init__(self, name: str, description: str, pattern: str = _CL100K) -> None:
        vocab = load_named_tiktoken("cl100k_base")
        self.info = EngineInfo(_ME + name, "tokenizer", "tokspec.fuzz.authored_bugs", "0", vocab.sha256,
                               description)
        self.enc = _encoding(pattern)
        self.token_bytes = _token_bytes()
        self.pattern = regex.compile(pattern)

    def ids(self, text: str) -> list[int]:
        return self.enc.encode_ordinary(text)

    def offsets(self, text: str, ids: list[int]) -> list[tuple[int, int]]:
        return char_offsets_from_byte_lengths(text, [len(self.token_bytes[i]) for i in ids])

    def _encode(self, text: str) -> Encoding:
        ids = self.ids(text)
        return Encoding.of(ids, self.offsets(text, ids))

    def token_piece(self, token_id: int) -> str:
        return repr(self.token_bytes.get(token_id, b"?"))[2:-1]


class _OffsetsInBytes(_Cl100k):
    def offsets(self, text: str, ids: list[int]) -> list[tuple[int, int]]:
        out, pos = [], 0
        for i in ids:  # BUG: UTF-8 byte positions where character positions are due
            out.append((pos, pos + len(self.token_bytes[i])))
            pos += len(self.token_bytes[i])
        return out


class _SplitCharSpans(_Cl100k):
    def offsets(self, text: str, ids: list[int]) -> list[tuple[int, int]]:
        starts = [0]  # byte -> character index, rounding DOWN (BUG at a token that ends mid-character)
        for ch in text:
            starts.extend([starts[-1]] * (len(ch.encode("utf-8")) - 1) + [starts[-1] + 1])
        out, pos = [], 0
        for i in ids:
            end = pos + len(self.token_bytes[i])
            out.append((starts[pos], starts[end]))
            pos = end
        return out


class _OlderUnicode(_Cl100k):
    def __init__(self, name: str, description: str) -> None:
        super().__init__(name, description)
        # BUG: the library's regex has Unicode 14.0 tables (letters assigned since are not letters)
        self.enc = _encoding(_CL100K.replace(r"\p{L}", r"[\p{L}&&\p{Age=V14_0}]"))


class _Chunked(_Cl100k):
    """Encodes ``text`` in pieces cut by ``cuts`` and concatenates (the bug: cuts are not pretoken
    boundaries)."""

    def cuts(self, text: str) -> list[int]:
        raise NotImplementedError

    def ids(self, text: str) -> list[int]:
        bounds = [0, *self.cuts(text), len(text)]
        return [i for s, e in zip(bounds, bounds[1:]) for i in self.enc.encode_ordinary(text[s:e])]


class _FixedChunks(_Chunked):
    def cuts(self, text: str) -> list[int]:
        return list(range(8192, len(text), 8192))  # BUG: independent 8 KiB chunks


class _SeamAtWhitespace(_Chunked):
    def cuts(self, text: str) -> list[int]:
        out, at = [], 0
        while at + 1024 < len(text):  # 1 KiB chunks, each cut moved back to a whitespace character
            cut = at + 1024
            while cut > at + 1 and not text[cut].isspace():
                cut -= 1
            at = cut if cut > at + 1 else at + 1024  # BUG: a whitespace run is not a boundary
            out.append(at)
        return out


class _NulTerminated(_Cl100k):
    def ids(self, text: str) -> list[int]:
        return self.enc.encode_ordinary(text.split("\x00", 1)[0])  # BUG: C string, text ends at NUL


class _OutputBuffer(_Cl100k):
    def ids(self, text: str) -> list[int]:
        return self.enc.encode_ordinary(text)[:4096]  # BUG: a fixed 4096-token output array


class _CaseFoldedCache(_Cl100k):
    """A piece cache shared across calls, keyed by the lowercased piece (copied from an uncased model)."""

    def __init__(self, name: str, description: str) -> None:
        super().__init__(name, description)
        self.cache: dict[str, list[int]] = {}

    def ids(self, text: str) -> list[int]:
        out: list[int] = []
        for m in self.pattern.finditer(text):
            key = m.group().lower()  # BUG: "The" and "the" share an entry
            if key not in self.cache:
                self.cache[key] = self.enc._encode_single_piece(m.group())
            out.extend(self.cache[key])
        return out


class _CrashOnMarkAfterAstral(_Cl100k):
    def ids(self, text: str) -> list[int]:
        for a, b in zip(text, text[1:]):  # BUG: UTF-16 index arithmetic, astral + combining mark
            if ord(a) > 0xFFFF and unicodedata.category(b) == "Mn":
                raise IndexError("string index out of range")
        return self.enc.encode_ordinary(text)


_CL100K_SPECIALS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                    "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}


class _SpecialAware(_Cl100k):
    """Knows cl100k's special tokens (as a chat-serving tokenizer does) and decodes; ``allowed``
    is what ``encode`` lets through from text (the right value for user text: nothing)."""

    allowed: Any = frozenset()

    def __init__(self, name: str, description: str) -> None:
        super().__init__(name, description)
        self.enc = tiktoken.Encoding("authored-specials", pat_str=_CL100K, mergeable_ranks=load_named_tiktoken(
            "cl100k_base").ranks, special_tokens=_CL100K_SPECIALS)
        self.by_id = {**self.token_bytes, **{i: s.encode() for s, i in _CL100K_SPECIALS.items()}}
        self.n_vocab = 100256

    def ids(self, text: str) -> list[int]:
        return self.enc.encode(text, allowed_special=self.allowed, disallowed_special=())

    def offsets(self, text: str, ids: list[int]) -> list[tuple[int, int]]:
        return char_offsets_from_byte_lengths(text, [len(self.by_id[i]) for i in ids])

    def special_tokens(self) -> dict[str, int]:
        return dict(_CL100K_SPECIALS)

    def token_piece(self, token_id: int) -> str:
        return repr(self.by_id.get(token_id, b"?"))[2:-1]

    def decode(self, ids: list[int]) -> str:
        return b"".join(self.by_id[i] for i in ids).decode("utf-8", "replace")


class _PromotesSpecials(_SpecialAware):
    allowed = "all"  # BUG: special tokens recognized in untrusted text


class _DecodeIgnore(_SpecialAware):
    def decode(self, ids: list[int]) -> str:
        return b"".join(self.by_id[i] for i in ids).decode("utf-8", "ignore")  # BUG: drops, no U+FFFD


# ----------------------------------------------------------------------------- WordPiece, Unigram


class _HfSlip(Encoder):
    """HF ``tokenizers`` from named file ``vocab`` after ``edit`` changed one setting of its JSON."""

    def __init__(self, name: str, description: str, vocab: str, edit: Callable[[dict[str, Any]], None]) -> None:
        from tokspec.engines._hf import HfEngine

        tj = load_tokenizer_json(named_path(vocab))
        data = copy.deepcopy(tj.data)
        edit(data)
        self.inner = HfEngine(_ME + name, TokenizerJson(tj.path, tj.sha256, data), description)
        self.info = self.inner.info

    def _encode(self, text: str) -> Encoding:
        return self.inner.encode(text)

    def token_piece(self, token_id: int) -> str:
        return self.inner.token_piece(token_id)


def _set(*path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        node = data
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _drop_normalizer(kind: str, pattern: str = "") -> Callable[[dict[str, Any]], None]:
    def edit(data: dict[str, Any]) -> None:
        steps = data["normalizer"]["normalizers"]
        data["normalizer"]["normalizers"] = [
            s for s in steps if not (s["type"] == kind and pattern in str(s.get("pattern", "")))]
    return edit
