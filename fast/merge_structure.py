"""Read an engine's structure (the input of :func:`tokspec.fast.merge_rules.decide`) from the engine.

=========================  =====================================================================
engine                     where its structure comes from
=========================  =====================================================================
declares ``merge_structure``  that dict, as declared (``cmd:`` engines via the protocol's
                           ``structure`` field, ``module:attr`` engines via the attribute);
                           ``tokspec merge-check`` tests the declaration
``hf:`` (HF tokenizers)    the loaded tokenizer's own ``to_str()`` JSON (what HF runs)
``spm:``                   the ``.model``'s NormalizerSpec/TrainerSpec, read by ``tokspec.formats.spm_model``
``tiktoken:``              the pattern string the ``tiktoken.Encoding`` was built with
``bpe-openai:NAME``        the pattern of encoding NAME (the binding is built for it)
``fast:`` BPE              its Peek2 pattern name
``fast:`` Unigram          the file its model was read from (``.model`` or ``tokenizer.json``)
=========================  =====================================================================

Anything else has no readable structure and is encoded serially by ``lopt``. Never by vocabulary
hash: a tokenizer trained yesterday gets its rule from what it is.
Complexity: O(size of the tokenizer description) per engine; :func:`decision_for` caches by engine.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from pathlib import Path
from typing import Any

from tokspec import Encoder
from tokspec.fast.merge_rules import KNOWN_BPE_PATTERNS, RULES, Decision, decide

__all__ = ["structure_of", "decision_for", "spm_structure"]

_decisions: OrderedDict[int, tuple[Encoder, Decision, str]] = OrderedDict()


def spm_structure(model: Any) -> dict[str, Any]:
    """The sentencepiece structure of a :class:`tokspec.formats.spm_model.SpmModel`."""
    from tokspec.formats.spm_normalize import CharsMap

    keys = ("model_type", "normalizer_name", "add_dummy_prefix", "remove_extra_whitespaces",
            "escape_whitespaces", "treat_whitespace_as_suffix", "split_by_whitespace",
            "allow_whitespace_only_pieces", "byte_fallback")
    out: dict[str, Any] = {"format": "sentencepiece", **{k: getattr(model, k) for k in keys}}
    out["charsmap"] = CharsMap.parse(model.precompiled_charsmap, model.path)
    out["user_symbols"] = [p for p, t in zip(model.pieces, model.types) if t == "user"]
    out["space_piece"] = any(p == "\u2581" and t == "normal" for p, t in zip(model.pieces, model.types))
    return out


def _file_structure(source: str) -> dict[str, Any] | None:
    from tokspec.formats import spm_model

    path = Path(source)
    if path.suffix == ".model" and path.is_file():
        return spm_structure(spm_model.load_spm_model(path))
    if path.suffix == ".json" and path.is_file():
        return {"format": "tokenizer.json", **json.loads(path.read_text(encoding="utf-8"))}
    return None


def structure_of(engine: Encoder) -> tuple[dict[str, Any] | None, str]:
    """(structure or None, where it came from) for ``engine`` (see the module table)."""
    declared = getattr(engine, "merge_structure", None)
    if declared is not None:
        return declared, "declared by the engine"
    hf = getattr(engine, "library_tokenizer", None)
    if hf is not None and callable(getattr(hf, "to_str", None)):
        return {"format": "tokenizer.json", **json.loads(hf.to_str())}, "HF tokenizer's JSON"
    model = getattr(engine, "model", None)
    if model is not None and hasattr(model, "precompiled_charsmap"):
        return spm_structure(model), "sentencepiece model's specs"
    pat = getattr(getattr(engine, "library_encoding", None), "_pat_str", None)
    if isinstance(pat, str):
        return {"format": "regex-bpe", "pattern": pat}, "tiktoken pattern"
    if engine.info.library == "bpe-openai":
        return {"format": "regex-bpe", "pattern": engine.info.name.rpartition(":")[2]}, \
            "bpe-openai encoding"
    pattern_name = getattr(engine, "pattern", None)
    if engine.info.library == "tokspec.fast" and pattern_name in KNOWN_BPE_PATTERNS \
            and hasattr(engine, "bpe"):
        return {"format": "regex-bpe", "pattern": pattern_name}, "fast BPE's Peek2 pattern"
    source = getattr(model, "source", None)
    if isinstance(source, str) and source:
        found = _file_structure(source)
        if found is not None:
            return found, f"model file {Path(source).name}"
    return None, "no structure"


def decision_for(engine: Encoder) -> tuple[Decision, str]:
    """(decision, structure source) for ``engine``: the legacy ``merge_family`` attribute names a
    rule directly; else :func:`structure_of` then ``decide``. Cached per engine object."""
    hit = _decisions.get(id(engine))
    if hit is not None and hit[0] is engine:
        return hit[1], hit[2]
    named = getattr(engine, "merge_family", None)
    if isinstance(named, str) and named in RULES:
        decision, source = Decision(f"declared {named}", RULES[named], "declared rule"), "declared"
    else:
        structure, source = structure_of(engine)
        decision = decide(structure)
    _decisions[id(engine)] = (engine, decision, source)
    while len(_decisions) > 64:
        _decisions.popitem(last=False)
    return decision, source
