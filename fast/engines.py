"""Provider of the engines ``fast:*`` and ``peek2:*`` (see tokspec._registry).

=================================  ===============================================================
name                               engine
=================================  ===============================================================
``fast:cl100k_base``               Peek2 (cl100k) + compiled backtracking BPE
``fast:o200k_base``                Peek2 (o200k) + compiled backtracking BPE
``fast:qwen``                      Peek2 (qwen2) + compiled backtracking BPE, Qwen ranks (no NFC)
``fast:PATH.tiktoken[.gz]``        Peek2 + compiled backtracking BPE on that rank file, its pattern as
                                   for ``reference:PATH.tiktoken`` (Peek2's patterns only)
``fast:mon-unigram``               double-array-trie Viterbi on the named Unigram tokenizer.json
``fast:PATH.json`` / ``.model``    double-array-trie Viterbi on a Unigram tokenizer.json / spm model
``fast:PATH.json`` (BPE)           Peek2 + compiled backtracking BPE on a byte-level BPE tokenizer.json
                                   whose merges are rank-consistent (``tokspec.fast.hf_bpe_json``)
``peek2:P``                        Peek2 spans only (kind="pretokenizer"), P in cl100k_base,
                                   o200k_base, llama3, qwen2; diff against ``pretok:P``
=================================  ===============================================================

The ``fast:`` BPE and ``peek2:`` engines implement ``_encode_arrays`` on compiled kernels
(``tokspec.fast.pretok_peek2``, ``tokspec.fast.bpe_kernel``; numba, GIL released, so threads run
them in parallel); ``tokspec.fast.interpreted`` gives the same engines with the kernels as plain
Python. Engines here use the tokspec core only (never tokspec.reference or tokspec.spec). Special
tokens are ordinary text. ``fast:`` BPE engines decode (``tokspec.fast.bpe_decode``, theorem D2) and
declare the named encodings' special tokens (:mod:`tokspec.decoding`). ``fast:`` Unigram engines decode as
sentencepiece's ``DecodeIds`` or the tokenizer.json's HF decoder chain (``tokspec.fast.unigram_decode``; a
chain it does not cover leaves the engine without ``decode``). BPE tokenizer.json files: only those ``tokspec.fast.hf_bpe_json`` accepts (others refused, named).
"""

from __future__ import annotations

import functools
from pathlib import Path

from tokspec import Encoder, EngineInfo
from tokspec import __version__ as _VERSION
from tokspec._types import EncodingArrays
from tokspec.errors import UnknownEngineError, UnsupportedComponentError
from tokspec.rank_families import resolve_pattern, split_pattern_option
# FastBpeEncoder and its constants live in tokspec.fast.bpe_encoder; imported from here before
# stop 53, and still importable from here (the same objects)
from tokspec.fast.bpe_encoder import BATCH_GROUP, BLOCK, FILL_MIN, FastBpeEncoder
from tokspec.fast.pretok_peek2 import PATTERN_NAMES, spans
from tokspec.formats.vocab import load_tiktoken, named_tiktoken_lazily

__all__ = ["load", "engines", "FastBpeEncoder", "Peek2Pretokenizer", "FILL_MIN", "BLOCK", "BATCH_GROUP"]

#: named rank vocabulary -> its pretokenizer pattern (the same pairing as tokspec.reference).
BPE_PATTERNS = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base", "qwen": "qwen2"}


class Peek2Pretokenizer(Encoder):
    """Peek2 spans as a pretokenizer engine (ids=None), from the compiled kernel."""

    def __init__(self, pattern: str) -> None:
        self.pattern = pattern
        self.info = EngineInfo(name=f"peek2:{pattern}", kind="pretokenizer", library="tokspec.fast",
                               library_version=_VERSION, vocab_sha256=None,
                               description=f"Peek2 regex-free {pattern} pretokenizer", thread_safe=True)

    def _encode_arrays(self, text: str) -> EncodingArrays:
        starts, ends = spans(text, self.pattern)
        return EncodingArrays(None, starts, ends)


@functools.lru_cache(maxsize=8)
def _bpe_engine(arg: str) -> FastBpeEncoder:
    from tokspec.engines._bytelevel import SPECIAL_TOKENS  # the named encodings' table (core)

    # ranks parsed only if the tables are not cached, or for decode
    engine = FastBpeEncoder(named_tiktoken_lazily(arg), BPE_PATTERNS[arg], f"fast:{arg}")
    engine.specials = dict(SPECIAL_TOKENS.get(arg, {}))
    return engine


def _unigram_engine(arg: str) -> Encoder:
    from tokspec.fast.unigram_datrie import datrie_encoder  # numpy-heavy build: import on demand
    return datrie_encoder(arg)


def _refuse_other_models(arg: str) -> None:
    """Name the files ``fast:`` has no engine for (instead of a Unigram loader's complaint)."""
    import json
    if Path(arg).suffix == ".model" and Path(arg).is_file():
        from tokspec.formats.spm_model import load_spm_model
        if load_spm_model(arg).model_type == "bpe":
            raise UnsupportedComponentError(
                f"engine name='fast:{arg}': fast: has no sentencepiece BPE engine (the backtracking "
                "encoder's theorem covers min-rank byte-level BPE, not score-ordered merges over "
                "characters); use reference:PATH (the specification) or spm:PATH")
    if Path(arg).suffix == ".json" and Path(arg).is_file():
        try:
            data = json.loads(Path(arg).read_bytes())
        except (OSError, ValueError):
            return  # the Unigram loader names the problem
        model = data.get("model") if isinstance(data, dict) else None
        kind = model.get("type") if isinstance(model, dict) else "tekken" if isinstance(data, dict) \
            and "config" in data else None
        if kind == "BPE":
            return
        if kind == "tekken":
            raise UnsupportedComponentError(
                f"engine name='fast:{arg}': fast: has no engine for tekken JSON files yet; use "
                "reference:PATH (the specification) or mistral:PATH")


def _bpe_json_engine(arg: str) -> Encoder | None:
    """``fast:PATH.json`` for a BPE tokenizer.json (tokspec.fast.hf_bpe_json), else None."""
    if Path(arg).suffix != ".json":
        return None
    from tokspec.formats.vocab import load_tokenizer_json
    tj = load_tokenizer_json(arg)
    if tj.data.get("model", {}).get("type") != "BPE":
        return None
    from tokspec.fast.hf_bpe_json import FastHfBpeEncoder
    return FastHfBpeEncoder(tj, f"fast:{arg}")


def load(prefix: str, arg: str) -> Encoder:
    """Resolve ``prefix:arg`` for the prefixes this module provides (see the module docstring)."""
    if prefix == "peek2":
        if arg not in PATTERN_NAMES:
            raise UnknownEngineError(
                f"unknown engine name='peek2:{arg}'; known: {', '.join('peek2:' + p for p in PATTERN_NAMES)}")
        return Peek2Pretokenizer(arg)
    if prefix != "fast":
        raise UnknownEngineError(f"prefix={prefix!r} is not provided by tokspec.fast.engines")
    if arg in BPE_PATTERNS:
        return _bpe_engine(arg)
    if split_pattern_option(arg)[0].endswith((".tiktoken", ".tiktoken.gz")):
        path, explicit = split_pattern_option(arg)
        vocab = load_tiktoken(path)
        return FastBpeEncoder(vocab, resolve_pattern(path, vocab.sha256, explicit, PATTERN_NAMES)[0], f"fast:{arg}")
    if arg == "mon-unigram" or Path(arg).suffix in (".json", ".model"):
        _refuse_other_models(arg)
        bpe = _bpe_json_engine(arg)
        return bpe if bpe is not None else _unigram_engine(arg)
    raise UnknownEngineError(
        f"unknown engine name='fast:{arg}'; use fast:NAME with NAME in "
        f"{', '.join([*BPE_PATTERNS, 'mon-unigram'])}, or fast:PATH ending in .tiktoken, .tiktoken.gz, "
        ".json or .model (Unigram)")


def engines() -> list[tuple[str, str]]:
    """The engines this module provides, with one-line descriptions."""
    out = [(f"fast:{n}", f"Peek2 {p} + backtracking BPE") for n, p in BPE_PATTERNS.items()]
    out += [("fast:PATH.tiktoken", "Peek2 + backtracking BPE on a rank file"),
            ("fast:mon-unigram", "double-array-trie Unigram Viterbi"),
            ("fast:PATH.json", "double-array-trie Viterbi on a Unigram tokenizer.json"),
            ("fast:PATH.model", "double-array-trie Viterbi on a sentencepiece Unigram model")]
    out += [(f"peek2:{p}", f"Peek2 regex-free {p} pretokenizer") for p in PATTERN_NAMES]
    return out
