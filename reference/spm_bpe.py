"""Reference sentencepiece BPE (``model_type: BPE`` ``.model`` files: Llama 2, Mistral v1-v7, Gemma).

The algorithm of sentencepiece's ``bpe_model.cc`` ``Encode``, on the normalized text of
:class:`tokspec.formats.spm_normalize.SpmNormalizer` (charsmap, extra whitespace, dummy prefix, ``▁``):

1. One symbol per character of the whole normalized text (no pretokenization: a piece may cross a
   ``▁`` when the vocabulary has one).
2. Repeatedly merge the adjacent pair whose concatenation is a *mergeable* piece (type NORMAL,
   USER_DEFINED or UNUSED) of the HIGHEST score, the leftmost pair on ties, until no adjacent pair
   concatenates to a mergeable piece. Candidates wait in a heap, as in sentencepiece; a stale one
   (its symbols changed since) is skipped, so the pair popped is exactly that pair.
3. Resegmentation: a final piece of type UNUSED is split back into the two pieces it was merged
   from, recursively.
4. Ids: a piece's id; a piece outside the vocabulary is the unknown piece, or with
   ``byte_fallback`` the ``<0xHH>`` pieces of its UTF-8 bytes.
5. Offsets (the contract): a token covers the original characters its normalized characters came
   from (``Aligned.contract_span``); each byte token covers the character holding its byte; the
   dummy prefix alone covers nothing.

Invariants: the pieces of the tokens concatenate to the normalized text (byte tokens to its
bytes); a model whose every piece is one character never merges. Cost: O(m log m) for m
normalized characters (the heap), so long texts can be fuzzed.
User-defined symbols (Mistral v3/v7's ``[INST]``...): at each position the longest one is one
symbol that never merges (step 1). Out of scope (UnsupportedComponentError): user-defined symbols
together with a normalization charsmap, ``treat_whitespace_as_suffix`` (refused by the normalizer), BPE dropout/sampling.
"""

from __future__ import annotations

import heapq
import math
from pathlib import Path

from tokspec._types import Encoder, Encoding, EngineInfo, Span
from tokspec.errors import UnsupportedComponentError
from tokspec.formats.normalize import Aligned
from tokspec.formats.spm_model import SpmModel, load_spm_model
from tokspec.formats.spm_normalize import SpmNormalizer

__all__ = ["SpmBpeReference", "spm_bpe_encoder", "initial_symbols", "merge_symbols"]

Symbol = tuple[int, int]  # (start, end) in characters of the normalized text

MERGEABLE = ("normal", "user", "unused")


def initial_symbols(text: str, user: frozenset[str]) -> tuple[list[Symbol], set[int]]:
    """Step 1: one symbol per character, except that the LONGEST user-defined symbol starting at
    a position is one symbol, frozen (never merged). Returns the symbols and the frozen starts."""
    symbols: list[Symbol] = []
    frozen: set[int] = set()
    pos = 0
    while pos < len(text):
        hits = [u for u in user if text.startswith(u, pos)]
        end = pos + max(map(len, hits)) if hits else pos + 1
        if hits:
            frozen.add(pos)
        symbols.append((pos, end))
        pos = end
    return symbols, frozen


def merge_symbols(text: str, scores: dict[str, float], unused: frozenset[str] = frozenset(),
                  user: frozenset[str] = frozenset()) -> tuple[list[Symbol], dict[str, tuple[str, str]]]:
    """Steps 1-2: the final symbols of ``text`` as character spans, and the merge record of step 3.

    ``scores`` holds the mergeable pieces. The next merge is the adjacent pair of highest score,
    the leftmost on ties. Candidate pairs wait in a heap keyed (-score, left symbol's first
    position), as in sentencepiece; a popped pair whose symbols changed since it was pushed is
    stale and skipped (its left symbol was merged away or grew, or its right one did). The record
    maps an UNUSED piece to the two pieces of the LAST pair that formed it as a candidate, in
    sentencepiece's order: every initial pair left to right, then after each merge the pair ending
    at the new symbol and the pair starting at it. O(m log m) for m characters.
    """
    spans, frozen = initial_symbols(text, user)
    start = [a for a, _ in spans]
    end = [b for _, b in spans]          # end[k] == start[k] marks a symbol merged into its left
    nxt = list(range(1, len(spans))) + [-1]
    prv = list(range(-1, len(spans) - 1))
    record: dict[str, tuple[str, str]] = {}
    heap: list[tuple[float, int, int, int]] = []  # (-score, left, right, end of right when pushed)

    def push(left: int, right: int) -> None:
        if left < 0 or right < 0 or start[left] in frozen or start[right] in frozen:
            return
        piece = text[start[left]:end[right]]
        if piece in unused:
            record[piece] = (text[start[left]:end[left]], text[start[right]:end[right]])
        if piece in scores:
            heapq.heappush(heap, (-scores[piece], left, right, end[right]))

    for k in range(len(spans) - 1):
        push(k, k + 1)
    while heap:
        _, left, right, right_end = heapq.heappop(heap)
        if end[left] == start[left] or nxt[left] != right or end[right] != right_end:
            continue  # stale: the pair no longer stands as it was pushed
        end[left] = end[right]               # the left symbol absorbs the right one
        end[right] = start[right]
        nxt[left] = nxt[right]
        if nxt[left] >= 0:
            prv[nxt[left]] = left
        push(prv[left], left)
        push(left, nxt[left])
    return [(start[k], end[k]) for k in range(len(spans)) if end[k] > start[k]], record


class SpmBpeReference(Encoder):
    """Engine ``reference:PATH`` for a sentencepiece BPE model (see the module docstring)."""

    def __init__(self, model: SpmModel, name: str) -> None:
        if model.model_type != "bpe":
            raise UnsupportedComponentError(f"{model.path}: model_type={model.model_type!r}, expected 'bpe'")
        if "user" in model.types and model.precompiled_charsmap:
            raise UnsupportedComponentError(
                f"{model.path}: user-defined symbols with a normalization charsmap are not supported "
                "(sentencepiece keeps them out of normalization)")
        self.model = model
        self.normalizer = SpmNormalizer(model)
        self.ids = model.piece_to_id()
        self.scores = {p: s for p, s, t in zip(model.pieces, model.scores, model.types) if t in MERGEABLE}
        if not all(math.isfinite(s) for s in self.scores.values()):
            raise UnsupportedComponentError(f"{model.path}: a mergeable piece has a non-finite score")
        self.unused = frozenset(p for p, t in zip(model.pieces, model.types) if t == "unused")
        self.user = frozenset(p for p, t in zip(model.pieces, model.types) if t == "user")
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.reference.spm_bpe",
                               library_version="1", vocab_sha256=model.sha256,
                               description=f"reference sentencepiece BPE, {len(model.pieces)} pieces "
                                           f"({model.normalizer_name or 'identity'})")

    def token_piece(self, token_id: int) -> str:
        return self.model.pieces[token_id]

    def _resegment(self, text: str, s: int, e: int, record: dict[str, tuple[str, str]],
                   out: list[Symbol]) -> None:
        """Step 3: split an UNUSED piece into the two pieces that formed it (``record``), recursively."""
        piece = text[s:e]
        if piece not in self.unused or piece not in record:
            out.append((s, e))
            return
        cut = s + len(record[piece][0])
        self._resegment(text, s, cut, record, out)
        self._resegment(text, cut, e, record, out)

    def _encode(self, text: str) -> Encoding:
        a: Aligned = self.normalizer.normalize(text)
        final: list[Symbol] = []
        symbols, record = merge_symbols(a.text, self.scores, self.unused, self.user)
        for s, e in symbols:
            self._resegment(a.text, s, e, record, final)
        ids: list[int] = []
        offsets: list[Span] = []
        for s, e in final:
            piece = a.text[s:e]
            tid = self.ids.get(piece)
            if tid is not None and self.model.types[tid] in MERGEABLE:
                ids.append(tid)
                offsets.append(a.contract_span(s, e))
            elif self.model.byte_fallback:
                for c in range(s, e):  # each byte token covers the character holding its byte
                    for b in a.text[c].encode("utf-8"):
                        ids.append(self.ids[f"<0x{b:02X}>"])
                        offsets.append(a.contract_span(c, c + 1))
            else:
                ids.append(self.model.unk_id)
                offsets.append(a.contract_span(s, e))
        return Encoding.of(ids, offsets)


def spm_bpe_encoder(path: str | Path, name: str) -> SpmBpeReference:
    """The reference engine for the sentencepiece BPE model at ``path`` (any file name)."""
    return SpmBpeReference(load_spm_model(path), name)
