"""Streaming decoders: text emitted token by token, checked against the engine's whole decode.

A *streaming decoder* is made fresh per sequence by a factory and has ``step(id) -> str | None``:
the text it can emit once token ``id`` arrived (None: nothing yet, e.g. an incomplete UTF-8
character is buffered). Two properties (:func:`check_stream`), for an id sequence ``ids`` and the
engine's whole decode ``D = decode(ids)``:

- **S1 (prefix)**: after every step, the concatenation of everything emitted so far is a prefix of
  ``D``. In particular no U+FFFD is emitted for a character that a later token completes (``D`` has
  the completed character there, not U+FFFD).
- **S2 (complete)**: once the sequence ends, the concatenation equals ``D`` except for a tail made
  only of U+FFFD: the bytes of an incomplete character the decoder still buffers (a stream that ends
  mid-character has nothing valid to emit; the whole decode shows them replaced). Seen on HF
  ``DecodeStream`` with byte fallback (one U+FFFD per buffered byte token) and byte-level BPE.

Production streaming decoder: HF ``tokenizers.decoders.DecodeStream`` (:func:`hf_stream_factory`,
when the installed ``tokenizers`` has it). Reference streaming decoder for byte-level BPE
(:class:`ByteLevelStream`): token bytes are buffered and the longest prefix that is valid UTF-8 is
emitted; an invalid sequence that no later byte can complete is emitted as U+FFFD, as the whole
decode replaces it.

Out of scope: streams over ``cmd:`` engines (the protocol has no incremental request).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["StreamViolation", "check_stream", "hf_stream_factory", "ByteLevelStream"]


@dataclass(frozen=True)
class StreamViolation:
    """``rule`` ("S1" or "S2") failed at step ``step`` (0-based): ``emitted`` (all so far) against
    ``full``, the whole decode of ``ids``."""

    rule: str
    ids: tuple[int, ...]
    step: int
    emitted: str
    full: str

    def as_json(self) -> dict[str, Any]:
        return {"rule": self.rule, "ids": list(self.ids), "step": self.step, "emitted": self.emitted, "full": self.full}


def check_stream(make_stream: Callable[[], Any], decode: Callable[[list[int]], str], ids: Sequence[int]
                 ) -> tuple[StreamViolation | None, str]:
    """Run a fresh stream over ``ids``; return (the first S1 or S2 violation or None, all emitted text).
    O(len(ids)) steps plus one whole decode."""
    full = decode(list(ids))
    stream = make_stream()
    emitted = ""
    for k, token in enumerate(ids):
        chunk = stream.step(int(token))
        emitted += chunk or ""
        if not full.startswith(emitted):
            return StreamViolation("S1", tuple(int(i) for i in ids[:k + 1]), k, emitted, full), emitted
    if full[len(emitted):].strip("\ufffd"):
        return StreamViolation("S2", tuple(int(i) for i in ids), len(ids) - 1, emitted, full), emitted
    return None, emitted


def hf_stream_factory(tokenizer: Any) -> Callable[[], Any] | None:
    """A factory of HF ``DecodeStream`` steppers over ``tokenizer`` (special tokens kept), or None
    when the installed ``tokenizers`` has no ``DecodeStream``."""
    try:
        from tokenizers.decoders import DecodeStream
    except ImportError:
        return None

    class _Stepper:
        def __init__(self) -> None:
            self.stream = DecodeStream(skip_special_tokens=False)

        def step(self, token: int) -> str | None:
            out = self.stream.step(tokenizer, token)
            return None if out is None else str(out)

    return _Stepper


class ByteLevelStream:
    """Reference streaming decoder for byte-level BPE over ``token_bytes`` (id -> bytes)."""

    def __init__(self, token_bytes: Callable[[int], bytes]) -> None:
        self.token_bytes = token_bytes
        self.buffer = b""

    def step(self, token: int) -> str | None:
        """Append the token's bytes; emit the longest decodable prefix (invalid bytes that cannot
        start a character any more become U+FFFD, as in the whole decode)."""
        self.buffer += self.token_bytes(token)
        out = ""
        while self.buffer:
            try:
                out += self.buffer.decode("utf-8")
                self.buffer = b""
            except UnicodeDecodeError as exc:
                out += self.buffer[:exc.start].decode("utf-8")
                rest = self.buffer[exc.start:]
                if exc.end == len(self.buffer) and exc.reason == "unexpected end of data":
                    self.buffer = rest  # an incomplete character: wait for the next token
                    break
                out += "\ufffd"  # a maximal invalid subpart: replaced, as decode(errors="replace") does
                self.buffer = self.buffer[exc.end:]
        return out or None
