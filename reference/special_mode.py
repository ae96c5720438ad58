"""Reference special mode (``tokspec.special_mode``): special tokens matched in text, from definitions.

Added-token matching (HF ``AddedVocabulary``; tiktoken's ``allowed_special="all"`` is the case of
no flags): scanning left to right, at the leftmost position where some special token's content
occurs (and its flags allow it) the LONGEST such token is taken; the text between matches is
encoded by the engine's ordinary ``encode`` (each piece alone: normalization and pre-tokenization,
Metaspace's prefix included, run per piece as HF runs them per split), offsets shifted. Flags:

- ``single_word``: the match is allowed only if the character before it and the one after it (when
  they exist) are not word characters (``str.isalnum`` or ``_``);
- ``lstrip`` / ``rstrip``: the whitespace run (``str.isspace``) right before / after the match is
  absorbed into the token's span.

Refusal (tiktoken's ``encode`` with ``disallowed_special``; its default ``encode(text)`` disallows
every special token not allowed): before any matching, the text is searched for the strings of the
*disallowed* tokens; if one occurs anywhere, the text is refused with DisallowedSpecialError naming
the leftmost occurrence (the longest string starting there: tiktoken's regex alternation takes the
first in its set's order, which differs only when one special string is a prefix of another, as in
no vocabulary tokspec ships; tokspec.diff does not compare the token named). Only the allowed tokens
are then matched, so tiktoken's skipping of a non-allowed match (never reached: it would refuse) is
not modelled.

Post-processing (``post_process=True``, HF ``TemplateProcessing`` single template): the template's
special tokens are inserted around the encoded text with empty spans, ``(0, 0)`` before the text and
``(n, n)`` after it.

Complexity: O(n * k * L) for k special tokens of length at most L, plus the ordinary encodes (the
refusal search: O(n * d * L) for d disallowed strings).
Out of scope: ``normalized=True`` added tokens (matched on normalized text) raise
UnsupportedComponentError when built; other post-processors (RobertaProcessing, ByteLevel).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tokspec._types import Encoding
from tokspec.errors import DisallowedSpecialError, UnsupportedComponentError

__all__ = ["AddedToken", "split_special", "refused_special", "encode_special", "added_tokens_of", "template_of"]


@dataclass(frozen=True)
class AddedToken:
    """One special token: its text, id and HF flags."""

    content: str
    id: int
    single_word: bool = False
    lstrip: bool = False
    rstrip: bool = False


def _word_char(c: str) -> bool:
    """A character that continues a word for ``single_word``: alphanumeric or ``_`` (found against
    HF: ``_[SEP]_`` does not match a single_word ``[SEP]``)."""
    return c.isalnum() or c == "_"


def _allowed(text: str, start: int, end: int, token: AddedToken) -> bool:
    if not token.single_word:
        return True
    before_ok = start == 0 or not _word_char(text[start - 1])
    after_ok = end == len(text) or not _word_char(text[end])
    return before_ok and after_ok


def split_special(text: str, tokens: Sequence[AddedToken]) -> list[tuple[int, int, AddedToken | None]]:
    """``text`` cut into ``(start, end, token)`` pieces: ``token`` is the matched special token (its
    span widened by lstrip/rstrip) or None for ordinary text. Pieces tile the text in order."""
    out: list[tuple[int, int, AddedToken | None]] = []
    pos = plain = 0
    while pos < len(text):
        found = [t for t in tokens if t.content and text.startswith(t.content, pos)
                 and _allowed(text, pos, pos + len(t.content), t)]
        if not found:
            pos += 1
            continue
        token = max(found, key=lambda t: len(t.content))  # longest at the leftmost position
        start, end = pos, pos + len(token.content)
        if token.lstrip:
            while start > plain and text[start - 1].isspace():
                start -= 1
        if token.rstrip:
            while end < len(text) and text[end].isspace():
                end += 1
        if start > plain:
            out.append((plain, start, None))
        out.append((start, end, token))
        pos = plain = end
    if plain < len(text):
        out.append((plain, len(text), None))
    return out


def refused_special(text: str, disallowed: Sequence[str]) -> str | None:
    """The disallowed string occurring leftmost in ``text`` (the longest of those starting at that
    position), or None when none occurs: the token tiktoken's refusal names. Examples:
    ``refused_special("a<|x|>b<|y|>", ["<|y|>", "<|x|>"]) == "<|x|>"``; a fragment (``"<|x|"``) is
    no occurrence. Empty strings never occur."""
    for pos in range(len(text)):
        found = [s for s in disallowed if s and text.startswith(s, pos)]
        if found:
            return max(found, key=len)
    return None


def encode_special(text: str, tokens: Sequence[AddedToken], encode: Callable[[str], Encoding], *,
                   template: Sequence[int | None] = (), post_process: bool = False,
                   disallowed: Sequence[str] = ()) -> Encoding:
    """Special mode (module docstring). ``template`` is the single template as ids, ``None`` standing
    for the text (empty: no post-processor). ``tokens`` are the allowed tokens; a text spelling one
    of ``disallowed`` raises DisallowedSpecialError (nothing is encoded)."""
    refused = refused_special(text, disallowed)
    if refused is not None:
        raise DisallowedSpecialError(refused)
    ids: list[int] = []
    offsets: list[tuple[int, int]] = []
    for start, end, token in split_special(text, tokens):
        if token is not None:
            ids.append(token.id)
            offsets.append((start, end))
            continue
        piece = encode(text[start:end])
        ids.extend(piece.ids or ())
        offsets.extend((s + start, e + start) for s, e in piece.offsets)
    if not (post_process and template):
        return Encoding.of(ids, offsets)
    out_ids: list[int] = []
    out_offsets: list[tuple[int, int]] = []
    seen_text = False
    for item in template:
        if item is None:
            out_ids += ids
            out_offsets += offsets
            seen_text = True
        else:
            out_ids.append(item)
            out_offsets.append((len(text), len(text)) if seen_text else (0, 0))
    return Encoding.of(out_ids, out_offsets)


def added_tokens_of(data: dict[str, Any]) -> list[AddedToken]:
    """The special added tokens of a tokenizer.json (UnsupportedComponentError for normalized ones)."""
    out = []
    for t in data.get("added_tokens") or []:
        if not t.get("special"):
            continue
        if t.get("normalized"):
            raise UnsupportedComponentError(f"added token {t['content']!r} is normalized=True")
        out.append(AddedToken(str(t["content"]), int(t["id"]), bool(t.get("single_word")),
                              bool(t.get("lstrip")), bool(t.get("rstrip"))))
    return out


def template_of(data: dict[str, Any]) -> list[int | None]:
    """The single template of a TemplateProcessing post-processor as ids (None: the text); [] when
    there is no post-processor; UnsupportedComponentError for other kinds."""
    post = data.get("post_processor")
    if post is None:
        return []
    if post.get("type") != "TemplateProcessing":
        raise UnsupportedComponentError(f"post_processor type={post.get('type')!r} has no reference")
    out: list[int | None] = []
    for item in post["single"]:
        if "Sequence" in item:
            out.append(None)
        else:
            out.extend(int(i) for i in post["special_tokens"][item["SpecialToken"]["id"]]["ids"])
    return out
