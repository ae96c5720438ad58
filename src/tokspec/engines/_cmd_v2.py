"""Protocol version 2 of ``cmd:`` engines (``docs/protocol.md``): decode requests, special tokens.

A version 2 handshake may declare

- ``"decode": true``: the program answers ``{"id": n, "decode": [ids...]}`` with
  ``{"id": n, "text": "..."}`` (or ``{"id": n, "error": "..."}``); the engine then has the optional
  ``decode`` of :mod:`tokspec.decoding` and is compared on it;
- ``"special_tokens": {"<|endoftext|>": 100257, ...}``: its special tokens (so an id of this table in
  the encoding of text is class "special token from text");
- ``"n_vocab": N``: ids ``0 .. N - 1`` are all tokens (random decode sequences draw there).

A version 1 handshake (or a version 2 one without these fields) gives none of them: the engine
works as before and is simply not compared on decoding. Malformed fields are a setup fault.
- ``"special_mode": true``: the program also answers ``{"id": n, "text": "...", "special": true,
  "post_process": false}`` with an ordinary encode reply in which special tokens spelled in the
  text are their ids (tiktoken's ``allowed_special="all"``; ``post_process``: the tokens a
  post-processor adds, as ``[CLS]``); the engine then has ``encode_special`` and ``special:cmd:...``
  / ``special-post:cmd:...`` compare it (:mod:`tokspec.special_mode`).
"""

from __future__ import annotations

from typing import Any

from tokspec._escape import escape

__all__ = ["declare_v2"]


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def declare_v2(engine: Any, handshake: dict[str, Any]) -> None:
    """Give a :class:`~tokspec.engines.cmd.CmdEngine` what its version 2 handshake declares."""
    if handshake.get("tokspec") != 2:
        return
    specials = handshake.get("special_tokens")
    if specials is not None:
        if not isinstance(specials, dict) or not all(isinstance(k, str) and _is_int(v) and v >= 0
                                                     for k, v in specials.items()):
            engine._fail("handshake special_tokens must map strings to ids >= 0", None)
        table = dict(specials)
        engine.special_tokens = lambda: dict(table)
    n_vocab = handshake.get("n_vocab")
    if n_vocab is not None:
        if not _is_int(n_vocab) or n_vocab <= 0:
            engine._fail(f"handshake n_vocab={n_vocab!r} must be an integer > 0", None)
        engine.n_vocab = n_vocab
    if handshake.get("decode") is True:
        engine.decode = lambda ids: _decode(engine, ids)
    mode = handshake.get("special_mode")
    if mode is not None and not isinstance(mode, bool):
        engine._fail(f"handshake special_mode={mode!r} must be true or false", None)
    if mode is True:
        engine.encode_special = lambda text, *, post_process=False: _encode_special(engine, text, post_process)


def _decode(engine: Any, ids: list[int]) -> str:
    """One decode request (module docstring); faults as for encode requests."""
    from tokspec.engines.cmd import CmdEngineFault

    ids = [int(i) for i in ids]
    label = f"ids={ids!r:.120}"
    reply = engine._request(label, {"decode": ids})
    if "error" in reply:
        raise CmdEngineFault(f"cmd engine {engine.shown_name!r} reported error {escape(str(reply['error']))!r:.300} "
                             f"on decode {label}", text=label)
    text = reply.get("text")
    if isinstance(text, str):
        return text
    engine._fail(f"sent a decode reply without a string \"text\": {escape(str(reply))[:200]}", label)
    raise AssertionError("unreachable: _fail raises")


def _encode_special(engine: Any, text: str, post_process: bool) -> Any:
    """One special-mode request (module docstring); the reply is read as an encode reply."""
    from tokspec._types import check_text

    check_text(text)
    reply = engine._request(text, {"text": text, "special": True, "post_process": bool(post_process)})
    return engine._reply_encoding(reply, text, " in special mode")
