"""Finding ``hf-added-token-normalized-empty`` (corpora/production/hf_added_token_normalized_empty.json):
a non-special added token with ``normalized=true`` whose normalized content is empty (here ``x``
under a Replace of ``x`` by nothing) makes HF tokenizers cut the normalized text between every two
characters, so ``ab`` is no longer merged. The reference refuses such a file, naming the finding.
Replayed with the stored tokenizer and keyed by the tokenizers version (tokspec.versions)."""

from __future__ import annotations

import json

import pytest

from tokspec.engines._findings import FINDINGS_DIR
from tokspec.engines._hf import HfEngine
from tokspec.errors import UnsupportedComponentError
from tokspec.reference.bpe_hf_pipeline import HfBpePipelineEncoder
from tokspec.versions import check_finding
from tokspec.formats.vocab import TokenizerJson

RECORD = json.loads((FINDINGS_DIR / "hf_added_token_normalized_empty.json").read_text(encoding="utf-8"))


def test_hf_cuts_between_every_character() -> None:
    tj = TokenizerJson("finding.json", "0" * 64, RECORD["tokenizer"])
    raw = HfEngine("hf:finding.json", tj).library_encode(RECORD["text"])
    got = {"tokens": raw.tokens, "ids": raw.ids, "offsets": [list(o) for o in raw.offsets]}
    without = dict(RECORD["tokenizer"], added_tokens=[])
    merged = HfEngine("hf:plain.json", TokenizerJson("plain.json", "0" * 64, without)).library_encode(RECORD["text"])
    check_finding(RECORD["id"], "tokenizers", got == RECORD["library_output"] and len(merged.ids) < len(raw.ids),
                  RECORD["what"])


def test_the_reference_refuses_the_file() -> None:
    with pytest.raises(UnsupportedComponentError, match="finding hf-added-token-normalized-empty"):
        HfBpePipelineEncoder(TokenizerJson("finding.json", "0" * 64, RECORD["tokenizer"]), "r")
