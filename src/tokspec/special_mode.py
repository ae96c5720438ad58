"""Special mode: encoding where special tokens are *wanted* (chat templates), as engines ``special:E``.

Text mode (``encode``) treats every special token as text. Special mode is the production libraries'
other call, made an engine so the whole of tokspec (``diff``, ``--fuzz``, workers, the plugin,
records) compares it unchanged:

==============================  ============================================================================
name                            what ``encode(text)`` does
==============================  ============================================================================
``special:ENGINE``              ENGINE's ``encode_special(text, post_process=False)``: special (control)
                                tokens spelled in the text become their ids (tiktoken
                                ``encode(text, allowed_special="all")``; HF added tokens matched with their
                                ``lstrip``, ``rstrip``, ``single_word`` flags, ``add_special_tokens=False``)
``special-post:ENGINE``         the same with ``post_process=True``: HF's post-processor adds its tokens
                                (``[CLS] ... [SEP]``); engines without one behave as ``special:``
``special-refuse:ENGINE``       tiktoken's default ``encode(text)``: a text spelling any special token is
                                *refused* (DisallowedSpecialError); other texts are encoded as text
``special-allow:IDS:ENGINE``    ``encode(text, allowed_special={...})`` (IDS: special ids, comma-
                                separated, e.g. ``special-allow:100257:tiktoken:cl100k_base``): those
                                are matched, a text spelling any other special token is refused
==============================  ============================================================================

An engine offers special mode with the optional method ``encode_special(text, *, post_process)``
returning an :class:`~tokspec.Encoding` (contract offsets: a matched special token covers the
characters it matched, including whitespace its ``lstrip``/``rstrip`` flags absorb; a token a
post-processor inserts covers nothing: ``(0, 0)`` before the text, ``(n, n)`` after it).
``special:E`` of an engine without it is a setup error. The refusing forms call
``encode_special(text, post_process=False, allowed_special=frozenset_of_strings)`` (an engine offers
them by accepting that keyword: ``tiktoken:`` and the ``reference:`` engines with a special mode); a refusal
is :class:`~tokspec.errors.DisallowedSpecialError`, and :mod:`tokspec.diff` counts two engines
refusing a text as agreeing, one refusing while the other encodes as ``"special refusal differs"``.
``decode`` and ``n_vocab`` pass through;
``special_tokens`` does not (in special mode a special id from text is the point, not a finding).

Out of scope: tiktoken's ``disallowed_special`` smaller than "every special not allowed" (some
specials text, others refused), refusal with ``post_process``, refusal over the ``cmd:`` protocol, HF
pair encodings, normalized added tokens.
"""

from __future__ import annotations

import inspect

from tokspec._types import Encoder, Encoding, EngineInfo
from tokspec.errors import UnknownEngineError

__all__ = ["SpecialModeEngine", "load", "engines", "mode_name", "PREFIXES"]

PREFIXES = ("special", "special-post", "special-refuse", "special-allow")


class SpecialModeEngine(Encoder):
    """ENGINE in special mode (module docstring)."""

    def __init__(self, inner: Encoder, *, post_process: bool, allowed_ids: tuple[int, ...] | None = None) -> None:
        """``allowed_ids``: None matches every special token; a tuple of ids matches those and refuses
        a text spelling any other (``special-refuse:`` is the empty tuple)."""
        if not callable(getattr(inner, "encode_special", None)):
            raise UnknownEngineError(f"engine {inner.info.name!r} has no special mode (no encode_special); "
                                     "special mode is offered by tiktoken:, hf:, reference:, cmd: engines declaring "
                                     "\"special_mode\": true (protocol v2) and some user engines")
        self.inner, self.post_process = inner, post_process
        self.allowed: frozenset[str] | None = None
        prefix = "special-post" if post_process else "special"
        if allowed_ids is not None:
            self.allowed = _allowed_strings(inner, allowed_ids)
            prefix = f"special-allow:{','.join(map(str, allowed_ids))}" if allowed_ids else "special-refuse"
        i = inner.info
        self.info = EngineInfo(f"{prefix}:{i.name}", i.kind, i.library, i.library_version, i.vocab_sha256,
                               f"special mode (post_process={post_process}, allowed={_shown(self.allowed)}) of {i.name}")
        for optional in ("decode", "n_vocab"):
            if hasattr(inner, optional):
                setattr(self, optional, getattr(inner, optional))

    def _encode(self, text: str) -> Encoding:
        special = self.inner.encode_special  # type: ignore[attr-defined]
        if self.allowed is None:
            encoding: Encoding = special(text, post_process=self.post_process)
        else:
            encoding = special(text, post_process=False, allowed_special=self.allowed)
        return encoding

    def token_piece(self, token_id: int) -> str:
        return self.inner.token_piece(token_id)

    def close(self) -> None:
        self.inner.close()


def _shown(allowed: frozenset[str] | None) -> str:
    return "all" if allowed is None else repr(sorted(allowed))


def _allowed_strings(inner: Encoder, ids: tuple[int, ...]) -> frozenset[str]:
    """The strings of the special ids ``ids`` of ``inner`` (a setup error for an engine without the
    ``allowed_special`` keyword, or an id not in its ``special_tokens()``)."""
    from tokspec.decoding import special_ids

    params = inspect.signature(inner.encode_special).parameters  # type: ignore[attr-defined]
    if "allowed_special" not in params:
        raise UnknownEngineError(f"engine {inner.info.name!r} has no refusal of disallowed special tokens "
                                 "(its encode_special takes no allowed_special); special-refuse: and special-allow: "
                                 "are offered by tiktoken: and reference: engines")
    table = special_ids(inner)
    unknown = [i for i in ids if i not in table]
    if unknown:
        raise UnknownEngineError(f"special-allow: ids={unknown!r} are not special tokens of {inner.info.name!r} "
                                 f"(its special ids: {sorted(table)!r})")
    return frozenset(table[i] for i in ids)


def _parse_ids(arg: str) -> tuple[tuple[int, ...], str]:
    """``IDS:ENGINE`` of ``special-allow:IDS:ENGINE`` (IDS: ids >= 0, comma-separated)."""
    head, _, rest = arg.partition(":")
    parts = head.split(",")
    if not rest or not all(p.isascii() and p.isdigit() for p in parts):
        raise UnknownEngineError(f"engine name {'special-allow:' + arg!r}: special-allow needs special ids and an "
                                 "inner engine, e.g. special-allow:100257:tiktoken:cl100k_base")
    return tuple(int(p) for p in parts), rest


def load(prefix: str, arg: str) -> Encoder:
    """``special:ENGINE`` / ``special-post:ENGINE`` / ``special-refuse:ENGINE`` /
    ``special-allow:IDS:ENGINE`` (module docstring)."""
    from tokspec._registry import load_engine

    if prefix not in PREFIXES or not arg:
        raise UnknownEngineError(f"engine name {prefix + ':' + arg!r}: special mode needs an inner engine, "
                                 "e.g. special:tiktoken:cl100k_base")
    if prefix == "special-allow":
        ids, inner = _parse_ids(arg)
        return SpecialModeEngine(load_engine(inner), post_process=False, allowed_ids=ids)
    allowed: tuple[int, ...] | None = () if prefix == "special-refuse" else None
    return SpecialModeEngine(load_engine(arg), post_process=prefix == "special-post", allowed_ids=allowed)


def mode_name(name: str, allowed: str | None = None) -> str:
    """``name`` in special mode (``tokspec diff --special``, ``--allowed-special``): ``special:NAME``;
    ``allowed`` "none" gives ``special-refuse:NAME``, ids "1,2" give ``special-allow:1,2:NAME``. A
    name already in a special mode is kept."""
    if name.partition(":")[0] in PREFIXES:
        return name
    if allowed is None:
        return f"special:{name}"
    return f"special-refuse:{name}" if allowed.strip().lower() == "none" else f"special-allow:{allowed}:{name}"


def engines() -> list[tuple[str, str]]:
    """The name forms this module provides (for ``tokspec engines``)."""
    return [("special:ENGINE", "ENGINE in special mode: special tokens in the text are matched"),
            ("special-post:ENGINE", "special mode plus the post-processor's tokens ([CLS] ... [SEP])"),
            ("special-refuse:ENGINE", "tiktoken's default encode: a text spelling a special token is refused"),
            ("special-allow:IDS:ENGINE", "only the special ids IDS are matched; any other special token refuses")]
