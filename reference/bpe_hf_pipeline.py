"""Reference BPE for any supported HF ``tokenizer.json`` pipeline: normalizer, pretokenizers, BPE.

``bpe_hf.HfBpeEncoder`` is the model and the added-token logic for files without a normalizer;
this engine puts a normalizer and the pretokenizers of :mod:`tokspec.reference.hf_components` in
front of it, in HF's order for ``encode(text, add_special_tokens=False)``:

1. non-special added tokens with ``normalized=false`` are cut out of the ORIGINAL text
   (leftmost-longest, ``bpe_hf._cut_added``);
2. each remaining run is normalized (an :class:`~tokspec.formats.normalize.Aligned` string: every
   normalized character knows its original characters);
3. added tokens with ``normalized=true`` are cut out of the NORMALIZED run, matched by their own
   normalized content (HF normalizes those tokens' contents with the same normalizer);
4. the pretokenizer passes cut the normalized run, ByteLevel last maps bytes, BPE runs on each
   word (``bpe_hf.bpe_word``);
5. a token's offsets are the contract's: the hull of the original characters its normalized
   characters came from (``Aligned.contract_span``); a token of inserted characters only (the
   ByteLevel prefix space, a ``Prepend``) is the empty span where its next character starts.

Invariants: with an identity normalizer (``null``, an empty ``Sequence``) this engine and
``HfBpeEncoder`` give the same encoding (tests check it); offsets are non-decreasing in start.
Out of scope: what the two modules refuse. Cost: normalization O(n), then as ``HfBpeEncoder``.
"""

from __future__ import annotations

from typing import Any, cast

from tokspec._types import Encoder, Encoding, EngineInfo, Span
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.normalize import Aligned
from tokspec.reference.bpe_hf import Dialect, HfBpeEncoder, _cut_added, bpe_word, parse_pretokenizer
from tokspec.reference.bpe_hf_pretok import Pretokenizer, SplitStep
from tokspec.reference.hf_components import normalizer_of, split_steps
from tokspec.formats.vocab import TokenizerJson

__all__ = ["HfBpePipelineEncoder", "parse_pipeline_pretokenizer"]


def parse_pipeline_pretokenizer(pt: dict[str, Any] | None, dialect: Dialect) -> Pretokenizer:
    """``bpe_hf.parse_pretokenizer`` extended by the passes of ``hf_components`` (ByteLevel last)."""
    if pt is not None and pt.get("type") == "Sequence" and not isinstance(pt.get("pretokenizers"), list):
        raise VocabularyError("a Sequence pre_tokenizer needs its 'pretokenizers' list")  # as HF
    items = [] if pt is None else (pt["pretokenizers"] if pt.get("type") == "Sequence" else [pt])
    steps: list[SplitStep] = []
    for i, item in enumerate(items):
        own = split_steps(item)
        if own is not None:
            steps.extend(cast(list[SplitStep], own))  # duck-typed: CharSplit.apply has SplitStep's contract
            continue
        if item.get("type") == "ByteLevel" and i < len(items) - 1:
            parse_pretokenizer({"type": "Sequence", "pretokenizers": [item, item]})  # raises: not last
        parsed = parse_pretokenizer({"type": "Sequence", "pretokenizers": [item]}, dialect)
        if parsed.byte_level:
            return Pretokenizer((*steps, *parsed.steps), True, parsed.byte_split, parsed.prefix_space)
        steps.extend(parsed.steps)
    return Pretokenizer(tuple(steps), False)


class HfBpePipelineEncoder(Encoder):
    """Engine ``reference:PATH.json`` for BPE files with a normalizer or an ``hf_components``
    pretokenizer (see the module docstring)."""

    def __init__(self, tj: TokenizerJson, name: str, *, dialect: Dialect = "oniguruma") -> None:
        self.normalize = normalizer_of(tj.data.get("normalizer"), tj.path)
        plain = TokenizerJson(tj.path, tj.sha256, {**tj.data, "normalizer": None, "pre_tokenizer": None})
        self.bpe = HfBpeEncoder(plain, name, dialect=dialect)
        self.pretokenizer = parse_pipeline_pretokenizer(tj.data.get("pre_tokenizer"), dialect)
        self.raw_added = self.bpe.added[0]
        self.normalized_added = {self.normalize(Aligned.of(content)).text: tid
                                 for content, tid in self.bpe.added[1].items()}
        if "" in self.normalized_added:
            raise UnsupportedComponentError(
                f"{tj.path}: a normalized added token normalizes to the empty string; HF then cuts "
                "the text between every two characters (finding hf-added-token-normalized-empty), "
                "which no definition here reproduces")
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.reference.bpe_hf_pipeline",
                               library_version="1", vocab_sha256=tj.sha256,
                               description=f"reference HF BPE pipeline (normalizer, pretokenizers) of {tj.path}")

    def token_piece(self, token_id: int) -> str:
        return self.bpe.token_piece(token_id)

    def _encode(self, text: str) -> Encoding:
        ids: list[int] = []
        offsets: list[Span] = []
        for s0, e0, raw_id in _cut_added(text, 0, len(text), self.raw_added):
            if raw_id is not None:
                ids.append(raw_id)
                offsets.append((s0, e0))
                continue
            a = self.normalize(Aligned.of(text[s0:e0], s0))
            for s, e, tid in _cut_added(a.text, 0, len(a.text), self.normalized_added):
                if tid is not None:
                    ids.append(tid)
                    offsets.append(a.contract_span(s, e))
                    continue
                self._encode_run(a, s, e, ids, offsets)
        return Encoding.of(ids, offsets)

    def _encode_run(self, a: Aligned, s: int, e: int, ids: list[int], offsets: list[Span]) -> None:
        """Tokens of normalized characters ``a.text[s:e]``. A token of inserted characters only
        (the prefix space ByteLevel puts before a piece) sits where the piece's first character
        starts: ``origin`` maps an inserted character to that character's index."""
        for string, origin, inserted in self.pretokenizer.words(a.text, s, e):
            for tid, ws, we in bpe_word(self.bpe.model, string):
                read = [origin[k] for k in range(ws, we) if not inserted[k]]
                ids.append(tid)
                if read:
                    offsets.append(a.contract_span(read[0], read[-1] + 1))
                else:
                    start = a.origins[origin[ws]][0]
                    offsets.append((start, start))
