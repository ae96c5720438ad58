"""Benchmark suite ``reference-wp-unigram``: the readable WordPiece/Unigram references against the
production libraries on the same generated text.

Cases: English-like and Chinese-like text (generated at run time, ~1 MB; ~10 KB with ``quick``),
for ``reference:bert-base-uncased`` vs HF ``tokenizers``, ``reference:mon-unigram`` vs HF, and
the reference on a trained sentencepiece Unigram model (``tokspec.formats.models``) vs ``sentencepiece``.
The references are meant to be obviously correct, not fast: expect ratios far below 1.

Out of scope: the fast engines (suite ``fast``); batch APIs; multi-threading.
"""

from __future__ import annotations

import random

import sentencepiece
from tokenizers import Tokenizer

from tokspec.app.bench import BenchRow, time_best
from tokspec.formats.models import trained_model
from tokspec.reference.unigram import unigram_encoder_from_spm_model, unigram_encoder_from_tokenizer_json
from tokspec.reference.wordpiece import wordpiece_encoder_from_tokenizer_json
from tokspec.formats.vocab import named_path

__all__ = ["run", "english_like", "chinese_like"]

SUITE = "reference-wp-unigram"


def english_like(n_bytes: int, seed: int = 0) -> str:
    """Words of random syllables with punctuation and capitals, about ``n_bytes`` UTF-8 bytes."""
    rng = random.Random(seed)
    onsets, vowels, codas = "bcdfghjklmnprstvwy", "aeiou", ["", "n", "s", "t", "r", "nd", "st"]
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        word = "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas)
                       for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.1:
            word = word.capitalize()
        word += rng.choice([" "] * 12 + [", ", ". ", "\n"])
        parts.append(word)
        size += len(word)
    return "".join(parts)


def chinese_like(n_bytes: int, seed: int = 0) -> str:
    """CJK ideographs from the common block (skewed to a few hundred), with CJK punctuation."""
    rng = random.Random(seed)
    common = [chr(0x4E00 + rng.randrange(0x1000)) for _ in range(400)]
    parts: list[str] = []
    size = 0
    while size < n_bytes:
        ch = rng.choice(common) if rng.random() < 0.93 else rng.choice("，。、：！？")
        parts.append(ch)
        size += len(ch.encode("utf-8"))
    return "".join(parts)


def _rows(case: str, text: str, subject: str, encode_subject: object, baseline: str,
          encode_baseline: object, repeat: int) -> BenchRow:
    n = len(text.encode("utf-8"))
    s = time_best(lambda: encode_subject(text), repeat=repeat)      # type: ignore[operator]
    b = time_best(lambda: encode_baseline(text), repeat=max(3, repeat))  # type: ignore[operator]
    return BenchRow(SUITE, case, subject, baseline, n, s, b)


def run(*, quick: bool) -> list[BenchRow]:
    """One row per (engine pair, text kind). ``quick``: ~10 KB texts, one repeat."""
    n = 10_000 if quick else 1_000_000
    texts = {"english": english_like(n), "chinese": chinese_like(n)}
    bert_hf = Tokenizer.from_file(str(named_path("bert-base-uncased")))
    bert_hf.no_truncation()
    bert_hf.no_padding()
    mon_hf = Tokenizer.from_file(str(named_path("mon-unigram")))
    spm_path = trained_model("spm-unigram")
    sp = sentencepiece.SentencePieceProcessor(model_file=str(spm_path))
    pairs = [
        ("reference:bert-base-uncased", wordpiece_encoder_from_tokenizer_json(named_path("bert-base-uncased"), "r").encode,
         "hf:bert-base-uncased", lambda t: bert_hf.encode(t, add_special_tokens=False)),
        ("reference:mon-unigram", unigram_encoder_from_tokenizer_json(named_path("mon-unigram"), "r").encode,
         "hf:mon-unigram", lambda t: mon_hf.encode(t, add_special_tokens=False)),
        ("reference:spm-unigram", unigram_encoder_from_spm_model(spm_path, "r").encode,
         "sentencepiece:spm-unigram", lambda t: sp.encode(t, return_type="offset_mapping")),
    ]
    rows = []
    for kind, text in texts.items():
        for subject, enc_s, baseline, enc_b in pairs:
            rows.append(_rows(kind, text, subject, enc_s, baseline, enc_b, repeat=1))
    return rows
