"""``merge_rules.decide`` on hand-written tokenizer.json structures: each setting lands on the
theorem whose conditions it meets (M2, M3w, M3u), or on serial encoding with the reason that
names the first unmet condition (the reason is what ``merge-check`` and ``lopt:`` engines show).
"""

from __future__ import annotations

import pytest

from tokspec.fast.merge_rules import decide


def tj(model: str = "BPE", normalizer: dict | None = None, pre: dict | None = None, **extra: object) -> dict:
    return {"format": "tokenizer.json", "model": {"type": model}, "normalizer": normalizer,
            "pre_tokenizer": pre, **extra}


@pytest.mark.parametrize(("structure", "rule", "why", "family"), [
    (tj(pre={"type": "ByteLevel"}), "space-after-letter", "M2", "BPE (no normalizer, ByteLevel)"),
    (tj(normalizer={"type": "NFC"}, pre={"type": "ByteLevel"}), None,
     "a regex pre-tokenizer behind a normalizer is outside M2's scope", "BPE (NFC, ByteLevel)"),
    (tj("WordPiece", {"type": "BertNormalizer"}, {"type": "BertPreTokenizer"}), "space", "M3w",
     "WordPiece (BertNormalizer, BertPreTokenizer)"),
    (tj("Unigram", None, {"type": "Metaspace"}), "space-after-letter", "M3u", "Unigram (no normalizer, Metaspace)"),
    (tj("Unigram", None, {"type": "Metaspace", "split": False}), None,
     "Metaspace(split=false): the model sees whole runs of words", "Unigram (no normalizer, Metaspace)"),
    (tj("Mystery"), None, "model type 'Mystery' unknown", "Mystery (no normalizer, None)"),
    (tj(pre={"type": "ByteLevel"}) | {"model": {"type": "BPE", "dropout": 0.1}}, None,
     "BPE dropout is random", "BPE (no normalizer, ByteLevel)"),
    (tj(pre={"type": "Whitespace"}, added_tokens=[{"content": "a b", "special": False}]), None,
     "added token 'a b' may straddle a space", "BPE (no normalizer, Whitespace)"),
    (tj(pre={"type": "Whitespace"}, added_tokens=[{"content": "[X] y", "special": True}]), "space", "M3w",
     "BPE (no normalizer, Whitespace)"),
    (tj(), None, "no pre-tokenizer: the model sees the whole text", "BPE (no normalizer, None)"),
])
def test_decide_on_tokenizer_json(structure: dict, rule: str | None, why: str, family: str) -> None:
    dec = decide(structure)
    assert (None if dec.rule is None else dec.rule.name) == rule
    assert dec.why == why
    assert dec.family == family
