"""One escaping rule for everything tokspec writes or prints that it did not write itself.

Engines are code under test: their exception messages, ``pieces``, handshake names and stderr,
like the engine names and paths a user types, are *data*, and hostile data at that. Written raw,
a lone surrogate aborts a write with ``UnicodeEncodeError`` (losing the finding), and an ESC
sequence, a C1 control or a bidi override (U+202E) rewrites what the terminal shows. So:

- :func:`escape` (for terminals and one-line messages): every *unsafe* character below becomes a
  visible escape -- ``\\n``, ``\\r``, ``\\t``, ``\\xNN`` (below U+0100) or ``\\uXXXX`` -- and nothing
  else changes (not even backslashes: this is display text, not a reversible encoding; records keep
  the exact data). Idempotent, O(n).
- :func:`dumps` (for JSON files and JSON on stdout): ``json.dumps(..., ensure_ascii=False)``, but
  every unsafe character inside a string is written as a ``\\uXXXX`` escape, so ``json.loads`` gives
  back exactly the same data (lone surrogates included), the output always encodes as UTF-8, and
  ``cat``-ing it shows no raw control character.

Unsafe characters: C0 controls and DEL, C1 controls (U+0080-U+009F), lone surrogates
(U+D800-U+DFFF), the bidi controls U+061C, U+200E, U+200F, U+202A-U+202E, U+2066-U+2069, and the
line/paragraph separators U+2028, U+2029. Out of scope: other invisible or confusable characters
(zero-width joiners, homoglyphs); they cannot change what else the terminal shows.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["UNSAFE", "escape", "dumps"]

#: One unsafe character (module docstring).
UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ud800-\udfff]")

#: Unsafe characters JSON text can still hold raw: ``json.dumps`` escapes C0 controls itself, and
#: a raw newline outside strings is ``indent`` layout.
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2028\u2029\u2066-\u2069\ud800-\udfff]")

_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _visible(m: re.Match[str]) -> str:
    ch = m.group()
    if ch in _SHORT:
        return _SHORT[ch]
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape(text: object) -> str:
    """``str(text)`` with every unsafe character replaced by a visible escape (module docstring).

    >>> escape("ok \\x1b[2J \\u202e \\ud800 \\n")
    'ok \\\\x1b[2J \\\\u202e \\\\ud800 \\\\n'
    """
    s = text if isinstance(text, str) else str(text)
    return UNSAFE.sub(_visible, s)


def _json_escape(m: re.Match[str]) -> str:
    return f"\\u{ord(m.group()):04x}"


def dumps(value: Any, **kwargs: Any) -> str:
    """JSON text of ``value`` with unsafe characters as ``\\uXXXX`` escapes (module docstring).

    ``kwargs`` go to :func:`json.dumps` (``indent``, ``sort_keys``...; not ``ensure_ascii``).
    Outside strings JSON is ASCII, so every such character found is inside a string. O(size).
    """
    return _JSON_UNSAFE.sub(_json_escape, json.dumps(value, ensure_ascii=False, **kwargs))
