"""Provider of the engine ``mistral:PATH``: a tekken file through ``mistral-common``'s ``Tekkenizer``.

``Tekkenizer.from_file(PATH).encode(text, bos=False, eos=False)`` gives the ids (ordinary tokens
shifted by the number of special tokens, see :mod:`tokspec.tekken`); offsets come from the token
bytes of the verified file, as for ``tiktoken:`` (``_bytelevel``). Special tokens are never
matched in text by ``encode``. Needs the optional package ``mistral-common`` (``tokspec[files]``).
Out of scope: Mistral's sentencepiece ``.model`` files (use ``spm:PATH``), chat templates.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tokspec._types import Encoder, EngineInfo
from tokspec.engines._bytelevel import _ByteLevelEngine
from tokspec.errors import UnknownEngineError
from tokspec.tekken import load_tekken
from tokspec.formats.vocab import TiktokenVocab

__all__ = ["load", "engines", "MistralTekkenEngine"]


def _tekkenizer_class() -> Any:
    try:
        from mistral_common.tokens.tokenizers.tekken import Tekkenizer
    except ImportError as exc:
        raise UnknownEngineError(
            f"mistral: engines need the package mistral-common ({exc}); fix: pip install mistral-common") from exc
    return Tekkenizer


class MistralTekkenEngine(_ByteLevelEngine):
    """mistral-common's Tekkenizer on one tekken file."""

    def __init__(self, name: str, path: Path) -> None:
        tekken = load_tekken(path)
        import mistral_common
        self.library_tokenizer = _tekkenizer_class().from_file(path)
        info = EngineInfo(name, "tokenizer", "mistral-common", mistral_common.__version__, tekken.sha256,
                          f"mistral-common Tekkenizer ({tekken.version}) on {path}")
        super().__init__(info, TiktokenVocab(str(path), tekken.sha256, tekken.ranks), {})

    def _id_array(self, text: str) -> np.ndarray:
        return np.asarray(self.library_tokenizer.encode(text, bos=False, eos=False), dtype=np.int64)


def load(prefix: str, arg: str) -> Encoder:
    """``mistral:PATH`` for an existing tekken file."""
    if prefix != "mistral":
        raise UnknownEngineError(f"prefix={prefix!r} is not provided by tokspec.engines.mistral")
    path = Path(arg).expanduser()
    if not path.is_file():
        raise UnknownEngineError(f"engine name={'mistral:' + arg!r}: {arg!r} is not an existing tekken file")
    return MistralTekkenEngine(f"mistral:{arg}", path)


def engines() -> list[tuple[str, str]]:
    """The PATH form, when mistral-common is installed."""
    try:
        _tekkenizer_class()
    except UnknownEngineError:
        return []
    return [("mistral:PATH", "mistral-common Tekkenizer on a tekken file")]
