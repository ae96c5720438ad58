"""Seed corpora for the fuzz targets, generated (never pasted) and named by content hash.

Text targets get up to :data:`MAX_TEXT_SEEDS` texts of ``tokspec.corpus.build_corpus(seed=0)``
(each cut to at most 512 UTF-8 bytes at a character boundary), chosen evenly across the corpus so
every kind of generated text is represented. Hypothesis targets get byte strings from a seeded
``random.Random`` (they are choice sequences, not text). File names are the sha1 of the content,
libFuzzer's own naming, so libFuzzer's additions and these seeds never collide.

Out of scope: corpus minimization (libFuzzer ``-merge=1`` does that if wanted).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from pathlib import Path

from tokspec.fuzz import _findings
from tokspec.fuzz.targets import Target

__all__ = ["MAX_TEXT_SEEDS", "text_seeds", "byte_seeds", "write_seed_corpora"]

MAX_TEXT_SEEDS = 64


def _cut(text: str, limit: int = 512) -> bytes:
    data = text.encode("utf-8")
    if len(data) <= limit:
        return data
    return data[:limit].decode("utf-8", errors="ignore").encode("utf-8")


def text_seeds() -> list[bytes]:
    """Seed inputs for text targets (deterministic)."""
    from tokspec.corpus import build_corpus
    texts = build_corpus(seed=0, size="small")
    step = max(1, len(texts) // MAX_TEXT_SEEDS)
    return [_cut(t) for t in texts[::step][:MAX_TEXT_SEEDS] if t]


def byte_seeds(count: int = 16) -> list[bytes]:
    """Seed choice sequences for hypothesis targets (deterministic)."""
    rng = random.Random(0)
    return [bytes(rng.randrange(256) for _ in range(rng.choice((8, 32, 128, 256)))) for _ in range(count)]


def _write(folder: Path, seeds: Iterable[bytes]) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    n = 0
    for data in seeds:
        path = folder / hashlib.sha1(data).hexdigest()
        if not path.exists():
            path.write_bytes(data)
        n += 1
    return n


def write_seed_corpora(targets: Iterable[Target]) -> dict[str, int]:
    """Write the seeds of every target into ``corpora/fuzz/<target>/corpus``; returns counts."""
    texts, blobs = text_seeds(), byte_seeds()
    return {t.name: _write(_findings.corpus_dir(t.name), blobs if t.kind == "hypothesis" else texts)
            for t in targets}
