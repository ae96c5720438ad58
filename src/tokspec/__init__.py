"""tokspec: a verification-first specification and fuzzing suite for tokenizers.

Public surface: the engine contract (:class:`Encoder`, :class:`Encoding`, :class:`EngineInfo`),
:func:`load_engine` / :func:`list_engines`, :func:`check_text`, the adapters of
:mod:`tokspec.adapt` (:func:`engine_from_ids`: an ids-returning library as an engine) and the errors. Layers live in
``tokspec.spec``, ``tokspec.reference``, ``tokspec.fast`` and ``tokspec.fuzz``.
"""

from __future__ import annotations

from tokspec._registry import list_engines as list_engines
from tokspec._registry import load_engine as load_engine
from tokspec._types import Encoder as Encoder
from tokspec._types import Encoding as Encoding
from tokspec._types import EncodingArrays as EncodingArrays
from tokspec._types import EngineInfo as EngineInfo
from tokspec._types import check_text as check_text
from tokspec.adapt import engine_from_byte_spans as engine_from_byte_spans
from tokspec.adapt import engine_from_ids as engine_from_ids
from tokspec.adapt import engine_from_offsets as engine_from_offsets
from tokspec.adapt import ids_only as ids_only
from tokspec.errors import EngineFault as EngineFault
from tokspec.errors import InvalidTextError as InvalidTextError
from tokspec.errors import TokspecError as TokspecError
from tokspec.errors import UnknownEngineError as UnknownEngineError
from tokspec.errors import UnsupportedComponentError as UnsupportedComponentError
from tokspec.errors import VocabularyError as VocabularyError

__version__ = "0.1.0"

__all__ = [
    "Encoder",
    "Encoding",
    "EncodingArrays",
    "EngineInfo",
    "EngineFault",
    "InvalidTextError",
    "TokspecError",
    "UnknownEngineError",
    "UnsupportedComponentError",
    "VocabularyError",
    "check_text",
    "engine_from_byte_spans",
    "engine_from_ids",
    "engine_from_offsets",
    "ids_only",
    "list_engines",
    "load_engine",
]
