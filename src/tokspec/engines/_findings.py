"""Recorded surprises of the production libraries, and how to re-observe them.

Each case names an engine, a text and what is surprising. :func:`observe` computes both the
library's raw output and tokspec's (contract) output; ``corpora/production/findings.json`` stores
them (written by :func:`write_findings`), and tests/test_engines_production.py replays every case,
requiring both outputs to be unchanged and tokspec's to pass the slow offset oracle.

The ByteLevel cases use ``corpora/production/findings_hf_bytelevel.json`` (a small deterministic
byte-level BPE with RoBERTa's prefix-space and offset-trimming settings, built by
:func:`build_findings_hf_bytelevel`). The sentencepiece cases use
``corpora/production/findings_spm.model``: a 300-piece Unigram model
with byte fallback and a three-rule normalizer (U+FB01 -> ``fi``, U+02D9 -> space + U+0307,
U+335C -> ``4点``), trained
by :func:`build_findings_spm_model` (byte-identical on every run; 6 kB instead of nmt_nfkc's 250 kB).

Out of scope: training-reproducibility observations (``training_reproducibility.json``, not
replayable because the behaviour is non-deterministic).
"""

from __future__ import annotations

import io
import json
import os
import random
import tempfile
from pathlib import Path
from typing import Any

import sentencepiece
import tokenizers
import tokenizers.models
import tokenizers.pre_tokenizers
import tokenizers.processors
import tokenizers.trainers

from tokspec._paths import corpora_dir
from tokspec._registry import load_engine
from tokspec.formats._protowire import iter_field_slices, write_varint
from tokspec.formats.vocab import named_path

__all__ = ["CASES", "FINDINGS_DIR", "observe", "write_findings", "build_findings_spm_model"]

FINDINGS_DIR = corpora_dir() / "production"
SPM_MODEL = "findings_spm.model"
HF_BYTELEVEL = "findings_hf_bytelevel.json"

CASES: list[dict[str, str]] = [
    {"id": "hf-metaspace-inserted-prefix", "engine": "hf:mon-unigram", "text": "Hello world",
     "what": "the prepended metaspace token gets the span of the next character, (0, 1); it covers "
             "no input, so the contract gives (0, 0)"},
    {"id": "hf-byte-fallback-shared-span", "engine": "hf:mon-unigram", "text": "日本語 テスト",
     "what": "all byte tokens of one unknown piece get the whole piece's span (1, 3); the contract "
             "gives each byte token the character holding its byte"},
    {"id": "hf-nfc-composition-orphan", "engine": "hf:mon-unigram", "text": "xe\u0301y",
     "what": "NFC composes e + U+0301; HF spans the composed token over 'e' only and leaves U+0301 "
             "covered by no token; the contract covers both"},
    {"id": "hf-nfc-reordering-positional", "engine": "hf:mon-unigram", "text": "i\ua8e8\u0329x",
     "what": "NFC reorders U+A8E8 (ccc 230) after U+0329 (ccc 220); HF aligns by position, giving "
             "the U+0329 token the span of U+A8E8; the contract traces each character to its true "
             "origin (starts may decrease there)"},
    {"id": "hf-nfkc-reorder-cluster-nukta", "engine": "hf:mon-unigram",
     "text": "\u0305\u0740\U00016af0\U0001cf15\U0001d17d\u093c",
     "what": "from tokspec's corpus: NFKC moves the nukta U+093C (ccc 7) before U+1D17D (ccc 220) behind "
             "U+1CF15; HF aligns by position, so the nukta token gets U+1D17D's span (4, 5) and U+1D17D's "
             "byte tokens the nukta's (5, 6), while U+0740 U+1CF15 form one byte-fallback run with one "
             "shared span (2, 4) across the cluster's start; tokspec's adapter cannot re-tile that "
             "cluster and gives the nukta and U+1D17D's bytes the whole cluster (3, 6), its finest "
             "justified alignment; the references (reference:, fast:) give the exact origins (5, 6), (4, 5)"},
    {"id": "hf-unigram-control-pieces-in-model", "engine": "hf:mon-unigram", "text": "<s> </s> <pad>",
     "what": "mon-unigram's Unigram vocabulary holds <s>, </s>, <pad> as ordinary pieces (score 0), "
             "so even with special added tokens removed the model emits ids 1, 2, 3 for that text "
             "(sentencepiece never matches control pieces)"},
    {"id": "hf-special-added-token-matched", "engine": "hf:bert-base-uncased", "text": "a [CLS] b",
     "what": "with add_special_tokens=False HF still matches '[CLS]' in the input as id 101; "
             "tokspec encodes it as ordinary text"},
    {"id": "hf-bytelevel-trim-offsets", "engine": "hf:" + HF_BYTELEVEL, "text": "hello   world",
     "what": "a ByteLevel post-processor with trim_offsets trims spaces out of offsets even with "
             "add_special_tokens=False: the token of two spaces gets an empty span (7, 7) and "
             "'Ġw' starts after its space; tokspec drops the post-processor"},
    {"id": "spm-byte-fallback-last-piece-span", "engine": "spm:" + SPM_MODEL, "text": "龍😀",
     "what": "byte pieces of one character: only the LAST gets the character's byte span, the "
             "earlier ones get empty spans; the contract gives each the character"},
    {"id": "spm-expansion-first-piece-empty", "engine": "spm:" + SPM_MODEL, "text": "o\ufb01o",
     "what": "U+FB01 normalizes to 'fi', segmented f + i: 'f' gets an empty span, 'i' the whole "
             "character; the contract gives both the character"},
    {"id": "spm-expansion-space-piece", "engine": "spm:" + SPM_MODEL, "text": "a\u02d9b",
     "what": "U+02D9 normalizes to space + U+0307: the '▁' piece from that space gets an empty "
             "span at 1 (looks inserted) though it comes from U+02D9"},
    {"id": "spm-piece-across-expansion", "engine": "spm:" + SPM_MODEL, "text": "a \u335c",
     "what": "U+335C normalizes to '4点'; the piece '▁4' (space + first half of the expansion) gets "
             "the span of the space only, ending before U+335C; the contract covers both"},
]


def build_findings_spm_model() -> bytes:
    """Train the tiny findings model (see module docstring). Deterministic, ~0.1 s."""
    rng = random.Random(0)
    words = ["fix", "find", "the", "dot", "tokenizer", "offset", "span", "byte", "fallback", "text",
             "4"]
    lines = [" ".join(rng.choice(words) for _ in range(8)) for _ in range(300)]
    with tempfile.TemporaryDirectory() as tmp:
        rules = Path(tmp) / "rules.tsv"
        rules.write_text("FB01\t66 69\n2D9\t20 307\n335C\t34 70B9\n", encoding="ascii")
        out = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=iter(lines), model_writer=out, vocab_size=300, model_type="unigram",
            byte_fallback=True, normalization_rule_tsv=str(rules), num_threads=1, minloglevel=2,
            hard_vocab_limit=False)
    return _drop_rule_path(out.getvalue())


def _drop_rule_path(model: bytes) -> bytes:
    """Remove ``normalizer_spec.normalization_rule_tsv`` (field 6 of field 3): the trainer stores
    the rule file's temporary path there, which would make every training differ."""
    out = bytearray()
    for number, _, value, raw in iter_field_slices(model):
        if number == 3 and isinstance(value, bytes):
            spec = b"".join(r for n, _, _, r in iter_field_slices(value) if n != 6)
            out += bytes([3 << 3 | 2]) + write_varint(len(spec)) + spec
        else:
            out += raw
    return bytes(out)


def build_findings_hf_bytelevel() -> str:
    """A small HF byte-level BPE (trained on fixed text, deterministic) with ByteLevel
    ``add_prefix_space`` and a ByteLevel post-processor with ``trim_offsets``, as RoBERTa ships."""
    tok = tokenizers.Tokenizer(tokenizers.models.BPE())
    tok.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.post_processor = tokenizers.processors.ByteLevel(trim_offsets=True)
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=300, show_progress=False,
        initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet())
    tok.train_from_iterator(["hello world, hello there   world"] * 50, trainer=trainer)
    return str(tok.to_str(pretty=True))


def _engine_name(case: dict[str, str]) -> str:
    for local in (SPM_MODEL, HF_BYTELEVEL):
        if case["engine"].endswith(":" + local):
            return case["engine"].replace(local, str(FINDINGS_DIR / local))
    return case["engine"]


def _library_output(case: dict[str, str]) -> dict[str, Any]:
    """The library's own output, unconverted (HF: from the unmodified file, char offsets;
    sentencepiece: offset_mapping byte offsets)."""
    text = case["text"]
    if case["engine"].startswith("hf:"):
        name = case["engine"][3:]
        path = FINDINGS_DIR / name if name == HF_BYTELEVEL else named_path(name)
        tok = tokenizers.Tokenizer.from_file(str(path))
        tok.no_truncation()
        tok.no_padding()
        enc = tok.encode(text, add_special_tokens=False)
        return {"ids": enc.ids, "tokens": enc.tokens, "offsets": [list(o) for o in enc.offsets],
                "offset_unit": "char"}
    sp = sentencepiece.SentencePieceProcessor(model_file=str(FINDINGS_DIR / SPM_MODEL))
    from tokspec.engines._spm import OFFSET_MAPPING, proto_encode

    # before 0.2.3: the same fields from serialized_proto (tokspec.engines._spm, "Older releases")
    out = sp.encode(text, return_type="offset_mapping", return_bytes=True) if OFFSET_MAPPING else \
        proto_encode(sp, text)
    return {"ids": out["ids"], "tokens": [p.decode("utf-8", "replace") for p in out["pieces"]],
            "offsets": [list(o) for o in out["offsets"]], "offset_unit": "utf-8 byte"}


def observe(case: dict[str, str]) -> dict[str, Any]:
    """A finding record: the case, the library's output and tokspec's output."""
    eng = load_engine(_engine_name(case))
    enc = eng.encode(case["text"])
    return {**case, "library": f"{eng.info.library} {eng.info.library_version}",
            "vocab_sha256": eng.info.vocab_sha256, "library_output": _library_output(case),
            "tokspec_output": {"ids": list(enc.ids or ()), "offsets": [list(o) for o in enc.offsets]}}


def write_findings(directory: Path = FINDINGS_DIR) -> Path:
    """(Re)write the findings model (if missing) and findings.json; return the JSON path."""
    directory.mkdir(parents=True, exist_ok=True)
    model = directory / SPM_MODEL
    if not model.is_file():
        model.write_bytes(build_findings_spm_model())
    hf_file = directory / HF_BYTELEVEL
    if not hf_file.is_file():
        hf_file.write_text(build_findings_hf_bytelevel(), encoding="utf-8")
    path = directory / "findings.json"
    records = [observe(case) for case in CASES]
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(records, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return path
