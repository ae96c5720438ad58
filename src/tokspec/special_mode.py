"""Special mode: encoding where special tokens are *wanted* (chat templates), as engines ``special:E``.

Text mode (``encode``) treats every special token as text. Special mode is the production libraries'
other call, made an engine so the whole of tokspec (``diff``, ``--fuzz``, workers, the plugin,
records) compares it unchanged:

=========================  ==========================================================================
name                       what ``encode(text)`` does
=========================  ==========================================================================
``special:ENGINE``         ENGINE's ``encode_special(text, post_process=False)``: special (control)
                           tokens spelled in the text become their ids (tiktoken
                           ``encode(text, allowed_special="all")``; HF added tokens matched with their
                           ``lstrip``, ``rstrip``, ``single_word`` flags, ``add_special_tokens=False``)
``special-post:ENGINE``    the same with ``post_process=True``: HF's post-processor adds its tokens
                           (``[CLS] ... [SEP]``); engines without one behave as ``special:``
=========================  ==========================================================================

An engine offers special mode with the optional method ``encode_special(text, *, post_process)``
returning an :class:`~tokspec.Encoding` (contract offsets: a matched special token covers the
characters it matched, including whitespace its ``lstrip``/``rstrip`` flags absorb; a token a
post-processor inserts covers nothing: ``(0, 0)`` before the text, ``(n, n)`` after it).
``special:E`` of an engine without it is a setup error. ``decode`` and ``n_vocab`` pass through;
``special_tokens`` does not (in special mode a special id from text is the point, not a finding).

Out of scope: tiktoken's refusal of disallowed specials (its default ``encode`` raises on them;
text mode compares ``encode_ordinary``), HF pair encodings, normalized added tokens.
"""

from __future__ import annotations

from tokspec._types import Encoder, Encoding, EngineInfo
from tokspec.errors import UnknownEngineError

__all__ = ["SpecialModeEngine", "load", "engines", "PREFIXES"]

PREFIXES = ("special", "special-post")


class SpecialModeEngine(Encoder):
    """ENGINE in special mode (module docstring)."""

    def __init__(self, inner: Encoder, *, post_process: bool) -> None:
        if not callable(getattr(inner, "encode_special", None)):
            raise UnknownEngineError(f"engine {inner.info.name!r} has no special mode (no encode_special); "
                                     "special mode is offered by tiktoken:, hf:, reference:, cmd: engines declaring "
                                     "\"special_mode\": true (protocol v2) and some user engines")
        self.inner, self.post_process = inner, post_process
        prefix = "special-post" if post_process else "special"
        i = inner.info
        self.info = EngineInfo(f"{prefix}:{i.name}", i.kind, i.library, i.library_version, i.vocab_sha256,
                               f"special mode (post_process={post_process}) of {i.name}")
        for optional in ("decode", "n_vocab"):
            if hasattr(inner, optional):
                setattr(self, optional, getattr(inner, optional))

    def _encode(self, text: str) -> Encoding:
        encoding: Encoding = self.inner.encode_special(text, post_process=self.post_process)  # type: ignore[attr-defined]
        return encoding

    def token_piece(self, token_id: int) -> str:
        return self.inner.token_piece(token_id)

    def close(self) -> None:
        self.inner.close()


def load(prefix: str, arg: str) -> Encoder:
    """``special:ENGINE`` / ``special-post:ENGINE`` (module docstring)."""
    from tokspec._registry import load_engine

    if prefix not in PREFIXES or not arg:
        raise UnknownEngineError(f"engine name {prefix + ':' + arg!r}: special mode needs an inner engine, "
                                 "e.g. special:tiktoken:cl100k_base")
    return SpecialModeEngine(load_engine(arg), post_process=prefix == "special-post")


def engines() -> list[tuple[str, str]]:
    """The name forms this module provides (for ``tokspec engines``)."""
    return [("special:ENGINE", "ENGINE in special mode: special tokens in the text are matched"),
            ("special-post:ENGINE", "special mode plus the post-processor's tokens ([CLS] ... [SEP])")]
