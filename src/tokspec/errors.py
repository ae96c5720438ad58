"""The errors tokspec raises on bad input, bad files and bad engines.

Every error a user can cause is a subclass of :class:`TokspecError` (itself a ``ValueError``), and its
message names the offending value and says how to fix it. ``assert`` is kept for internal invariants.
"""

from __future__ import annotations

__all__ = [
    "TokspecError",
    "InvalidTextError",
    "VocabularyError",
    "UnknownEngineError",
    "UnsupportedComponentError",
    "EngineFault",
    "DisallowedSpecialError",
]


class TokspecError(ValueError):
    """Base class of every error tokspec raises because of its input."""


class InvalidTextError(TokspecError):
    """The text is outside tokspec's text domain (see ``tokspec.check_text``)."""


class VocabularyError(TokspecError):
    """A vocabulary is missing, fails its sha256 check, or is malformed. The message names the file."""


class UnknownEngineError(TokspecError):
    """An engine name resolves to nothing usable on this machine."""


class UnsupportedComponentError(TokspecError):
    """A tokenizer file uses a component (normalizer, pretokenizer, model option) an engine lacks.

    Raised instead of guessing: an engine never silently ignores part of a tokenizer definition.
    """


class EngineFault(TokspecError):
    """An engine crashed, hung, or returned something that is not a valid Encoding for the input."""


class DisallowedSpecialError(TokspecError):
    """Special mode refused the text: it spells a special token that is neither allowed nor text.

    tiktoken's ``encode(text)`` (``disallowed_special="all"``) refuses such text with a ValueError;
    the engines of :mod:`tokspec.special_mode` refuse it with this error, whose ``token`` is the
    special token's string found (the leftmost occurrence). Two engines that both refuse a text
    agree on it (:mod:`tokspec.diff`). Raise it from a user engine to model the refusal.
    """

    def __init__(self, token: str, message: str | None = None) -> None:
        self.token = token
        super().__init__(message or (
            f"the text spells the disallowed special token token={token!r}: allow it (special-allow:IDS:ENGINE, "
            "tiktoken's allowed_special) or compare it as text (text mode)"))
