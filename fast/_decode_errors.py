"""The one error the fast decoders raise for an id they cannot decode (``tokspec.fast.bpe_decode``,
``tokspec.fast.unigram_decode``)."""

from __future__ import annotations

from tokspec.errors import TokspecError

__all__ = ["UnknownIdError"]


class UnknownIdError(TokspecError):
    """An id that names no token of the decoder's vocabulary (a ``ValueError``); the message names
    it as ``id=...``."""
