"""Reference for Mistral's tekken files: min-rank byte-level BPE (``bpe_naive``) on the file's
ranks, shifted by its number of special tokens (:mod:`tokspec.tekken`), with the file's own split
pattern read as tiktoken reads it (Unicode 16.0 properties, ``pretok_regex.pin_unicode_16``).

Invariant: ids are at least ``num_special`` (special tokens are never produced: all text is
ordinary). Out of scope: special tokens, the image/audio sections. Cost: as ``bpe_naive``.
"""

from __future__ import annotations

from pathlib import Path

import regex

from tokspec.reference.bpe_naive import NaiveBpeEncoder
from tokspec.reference.pretok_regex import pin_unicode_16
from tokspec.tekken import load_tekken

__all__ = ["tekken_encoder"]


def tekken_encoder(path: str | Path, name: str) -> NaiveBpeEncoder:
    """The reference engine for the tekken file at ``path``."""
    tekken = load_tekken(path)
    pattern = regex.compile("(?-f)" + pin_unicode_16(tekken.pattern), flags=regex.V1)
    return NaiveBpeEncoder(tekken.ranks, pattern, name=name, vocab_sha256=tekken.sha256,
                           description=f"naive min-rank BPE on tekken {tekken.version} ranks "
                                       f"(+{tekken.num_special}), the file's pattern, Unicode 16.0")
