"""Chunkers under test: the three production text splitters, configured from a tokenizer and a
token limit, and how any chunker is named (``tokspec chunk-check CHUNKER``).

A *chunker* is a callable ``text -> list[str]`` (the chunks, in order). Names:

- ``langchain-token``: langchain-text-splitters' ``TokenTextSplitter`` on tiktoken
  (``encoding_name`` from ``--tokenizer``), ``chunk_size=limit``, ``chunk_overlap=overlap``.
- ``semantic-text-splitter``: ``TextSplitter.from_tiktoken_model`` (its own tiktoken-rs copy of the
  vocabulary: ``gpt-4`` for cl100k_base, ``gpt-4o`` for o200k_base), ``capacity=limit``,
  ``overlap``, ``trim`` (default True: chunks lose surrounding whitespace).
- ``chonkie-token``: chonkie's ``TokenChunker`` given tiktoken's ``Encoding``, ``chunk_size=limit``,
  ``chunk_overlap=overlap``.
- ``module:attr``: your callable ``text -> list[str]`` (or ``-> list`` of objects with ``.text``).
- ``cmd:COMMAND``: a program reading one JSON object ``{"text": ...}`` on stdin and writing
  ``{"chunks": [...]}`` on stdout, started once per text.

The splitters need tiktoken's vocabulary files offline: :func:`offline_tiktoken` writes tokspec's
sha256-verified copies (the same bytes tiktoken pins) into tiktoken's cache folder
(``TIKTOKEN_CACHE_DIR``, under ``$TOKSPEC_CACHE``), so ``tiktoken.get_encoding`` works without network.
Install them with ``pip install tokspec[chunkers]``.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import os
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tokspec.errors import TokspecError, UnknownEngineError

__all__ = ["Chunker", "BUILTIN", "load_chunker", "offline_tiktoken", "ChunkerError"]

Chunker = Callable[[str], list[str]]

#: Built-in names (module docstring).
BUILTIN = ("langchain-token", "semantic-text-splitter", "chonkie-token")
_URL = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"
_MODEL = {"cl100k_base": "gpt-4", "o200k_base": "gpt-4o"}


class ChunkerError(TokspecError):
    """A chunker that cannot be loaded, or that returned something other than a list of chunks."""


def offline_tiktoken(vocab: str) -> Any:
    """``tiktoken.get_encoding(vocab)`` working offline (see module docstring)."""
    import tiktoken

    from tokspec.formats.vocab import named_path, read_verified
    if vocab not in _MODEL:
        raise ChunkerError(f"tokenizer vocab={vocab!r}: the splitters are wired for {sorted(_MODEL)}")
    folder = os.environ.get("TIKTOKEN_CACHE_DIR")
    if not folder:
        base = os.environ.get("TOKSPEC_CACHE") or str(Path.home() / ".cache" / "tokspec")
        folder = os.environ["TIKTOKEN_CACHE_DIR"] = str(Path(base) / "tiktoken")
    target = Path(folder) / hashlib.sha1(_URL.format(vocab).encode()).hexdigest()
    if not target.is_file():
        raw, _ = read_verified(named_path(vocab))
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f"{target.name}.{os.getpid()}.tmp")
        tmp.write_bytes(raw)
        os.replace(tmp, target)
    return tiktoken.get_encoding(vocab)


def _vocab_of(tokenizer: str) -> str:
    """``tiktoken:cl100k_base`` (or any ``PREFIX:NAME``) -> ``cl100k_base``."""
    return tokenizer.partition(":")[2] or tokenizer


def _texts(chunks: Any) -> list[str]:
    if not isinstance(chunks, (list, tuple)):
        raise ChunkerError(f"the chunker returned type={type(chunks).__name__!r}; need a list of chunks")
    out = [c if isinstance(c, str) else getattr(c, "text", None) for c in chunks]
    bad = [c for c in out if not isinstance(c, str)]
    if bad:
        raise ChunkerError(f"a chunk is not a str (nor has .text): chunk={bad[0]!r:.80}")
    return out  # type: ignore[return-value]


def _cmd(command: str) -> Chunker:
    argv = shlex.split(command)

    def run(text: str) -> list[str]:
        done = subprocess.run(argv, input=json.dumps({"text": text}), capture_output=True, text=True,
                              timeout=60, check=False)
        try:
            return _texts(json.loads(done.stdout)["chunks"])
        except (ValueError, KeyError, TypeError) as exc:
            raise ChunkerError(f"cmd:{command} printed no {{\"chunks\": [...]}} (exit {done.returncode}): "
                               f"{done.stdout[:80]!r}") from exc
    return run


def load_chunker(name: str, *, tokenizer: str, limit: int, overlap: int = 0, trim: bool = True) -> Chunker:
    """The chunker called ``name`` (module docstring), configured for ``limit`` tokens."""
    if not isinstance(limit, int) or limit < 1:
        raise ChunkerError(f"limit={limit!r}: need at least 1 token")
    vocab = _vocab_of(tokenizer)
    if name == "langchain-token":
        from langchain_text_splitters import TokenTextSplitter
        offline_tiktoken(vocab)
        lc = TokenTextSplitter(encoding_name=vocab, chunk_size=limit, chunk_overlap=overlap)
        return lambda text: _texts(lc.split_text(text))
    if name == "semantic-text-splitter":
        from semantic_text_splitter import TextSplitter
        if vocab not in _MODEL:
            raise ChunkerError(f"tokenizer={tokenizer!r}: semantic-text-splitter is wired for {sorted(_MODEL)}")
        sts = TextSplitter.from_tiktoken_model(_MODEL[vocab], limit, overlap=overlap, trim=trim)
        return lambda text: _texts(sts.chunks(text))
    if name == "chonkie-token":
        from chonkie import TokenChunker
        ch = TokenChunker(tokenizer=offline_tiktoken(vocab), chunk_size=limit, chunk_overlap=overlap)
        return lambda text: _texts(ch.chunk(text))
    if name.startswith("cmd:"):
        return _cmd(name[4:])
    module, sep, attr = name.partition(":")
    if not sep or not module or not attr:
        raise UnknownEngineError(f"unknown chunker name={name!r}; use one of {', '.join(BUILTIN)}, "
                                 "module:attr or cmd:COMMAND")
    try:
        fn = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ChunkerError(f"chunker name={name!r} cannot be loaded: {exc}") from exc
    if not callable(fn):
        raise ChunkerError(f"chunker name={name!r} is not callable")
    return lambda text: _texts(fn(text))
