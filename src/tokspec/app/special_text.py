"""Text that spells special tokens: so an engine promoting one from ordinary text is found in seconds.

In tokspec's contract every special token is ordinary text: ``"<|endoftext|>"`` in user input must
encode as the tokens of its characters. An engine that matches it as the control token (id 100257)
lets untrusted text inject control tokens (huggingface/tokenizers#1347; OWASP AISVS 2.1.7); tokspec
classifies that as ``"special token from text"`` (:mod:`tokspec.diff`), a security finding.

Random text almost never spells ``<|endoftext|>``, so this module makes texts that do:

- :func:`special_strings`: every special token string either engine declares
  (``special_tokens()``, :mod:`tokspec.decoding`) plus :data:`WELL_KNOWN` control strings of
  common model families (a user's engine may not declare its table);
- :func:`variants`: each string whole, its fragments (``<|endoftext``, ``endoftext|>``), near misses
  (doubled brackets, case variants, a character changed), inside words, after each kind of
  whitespace, twice in a row, and next to another special string;
- :func:`special_texts`: the deterministic list the plugin replays first (every string in every
  variant), and :class:`SpecialTextSource`, the seeded fuzz source of ``tokspec diff --fuzz``.

Out of scope: special *mode* (tokens wanted as control tokens).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from tokspec.decoding import special_ids

__all__ = ["WELL_KNOWN", "special_strings", "variants", "special_texts", "SpecialTextSource"]

#: Control strings of common model families, tried even when no engine declares them.
WELL_KNOWN = ("<|endoftext|>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|endofprompt|>",
              "<|im_start|>", "<|im_end|>", "<|begin_of_text|>", "<|eot_id|>", "<|start_header_id|>",
              "<s>", "</s>", "<unk>", "<pad>", "<mask>", "[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]",
              "<start_of_turn>", "<end_of_turn>", "<bos>", "<eos>")

_SPACES = (" ", "\n", "\t", "\r\n", "\u00a0", "\u3000", "  ", "\u2028")


def special_strings(*engines: Any) -> list[str]:
    """The engines' declared special token strings, then :data:`WELL_KNOWN`, each once, in order."""
    out: dict[str, None] = {}
    for engine in engines:
        out.update((s, None) for s in special_ids(engine).values() if s)
    out.update((s, None) for s in WELL_KNOWN)
    return list(out)


def _near_misses(s: str) -> list[str]:
    """Strings one slip away from ``s``: case variants, doubled first/last character, a fragment."""
    out = [s.upper(), s.lower(), s.swapcase(), s[0] + s, s + s[-1], s[:-1], s[1:]]
    if len(s) > 3:
        out += [s[:-2], s[2:], s[: len(s) // 2], s[len(s) // 2:], s[:2] + " " + s[2:]]
    return [m for m in out if m and m != s]


def variants(s: str) -> list[str]:
    """Every text made of ``s`` this module tries (module docstring), in a fixed order."""
    out = [s, s + s, "a" + s + "b", "word" + s + "word", s + "\n" + s, "x " + s + " y"]
    out += [w + s + w for w in _SPACES]
    out += _near_misses(s)
    out += [m + s for m in _near_misses(s)[:3]]
    return out


def special_texts(*engines: Any) -> list[str]:
    """Every variant of every special string of ``engines``, each once (module docstring)."""
    seen: dict[str, None] = {}
    strings = special_strings(*engines)
    for s in strings:
        seen.update((t, None) for t in variants(s))
    seen["".join(strings)] = None
    return list(seen)


class SpecialTextSource:
    """Seeded fuzz source: special strings, their variants, embedded in short random context."""

    name = "special-token strings"
    cost = 1

    def __init__(self, seed: int, engines: Iterable[Any], context: list[str] | None = None) -> None:
        self.rng = random.Random(seed)
        self.strings = special_strings(*engines)
        self.context = context or ["", " ", "hello", "\n", "é", "🙂", "1", "'s"]

    def text(self) -> str:
        """One text: 1 to 3 variants of special strings, joined by context pieces."""
        rng = self.rng
        parts = []
        for _ in range(rng.randint(1, 3)):
            s = rng.choice(self.strings)
            parts.append(rng.choice(variants(s)))
            parts.append(rng.choice(self.context)[: rng.randint(0, 12)])
        return "".join(parts)

    def run(self, until: float, on_text: Callable[[str], bool]) -> None:
        """Feed texts to ``on_text`` until the monotonic time ``until`` or until it returns True."""
        while time.monotonic() < until:
            if on_text(self.text()):
                return
