"""The reference Unigram encoder: normalize + pretokenize (``tokspec.formats.unigram_model``), Viterbi
(``unigram_viterbi``), then turn unknown edges into tokens the way the model's library does.

Unknown handling, per flavour (found by experiment against the libraries, replayed in
``tests/test_reference_unigram*.py``):

- ``"hf"``: consecutive unknown edges are fused into one run. The run becomes, in order of
  preference: the piece equal to the run's text (never happens unless scores are positive), the
  byte pieces of its UTF-8 bytes (byte fallback, every byte token carrying the WHOLE run's
  offsets), else one ``unk_id`` token over the run.
- ``"spm"``: each unknown character with byte fallback becomes its byte pieces; offsets: the last
  byte piece of a character covers the character, the others are empty spans at its start.
  Without byte fallback consecutive unknowns are merged into one ``unk_id`` token.

Offsets are original-text character spans: a token over normalized characters ``[s, e)`` covers
``(spans[s].start, spans[e-1].end)`` of its pretoken (HF's rule; sentencepiece uses the same).
Out of scope: n-best/sampling; special-token splitting (special tokens are ordinary text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from tokspec import Encoder, Encoding, EngineInfo
from tokspec.formats.normalize import Aligned
from tokspec.reference.unigram_viterbi import Edge, TieBreak, viterbi
from tokspec.formats.unigram_model import (
    UnigramModel,
    unigram_model_from_spm,
    unigram_model_from_tokenizer_json,
)
from tokspec.formats.vocab import TokenizerJson

__all__ = [
    "UnigramReference",
    "unigram_encoder_from_tokenizer_json",
    "unigram_encoder_from_spm_model",
]

Token = tuple[int, int, int]  # (id, start, end) in characters of the normalized pretoken
OffsetMode = Literal["contract", "library"]


class UnigramReference(Encoder):
    """Reference Unigram engine over a :class:`UnigramModel`.

    ``tie_break`` defaults to the model's library. Encoding is O(n * L) per pretoken (L = the
    longest piece in characters) plus normalization; no caches.
    """

    def __init__(self, model: UnigramModel, name: str, *, tie_break: TieBreak | None = None,
                 offsets: OffsetMode = "contract", library: str = "tokspec.reference") -> None:
        self.model = model
        self.offsets: OffsetMode = offsets
        self.tie_break: TieBreak = tie_break or model.flavour
        self.index = {p: i for i, p in enumerate(model.pieces)}
        self.max_len = max((len(p) for p, ok in zip(model.pieces, model.matchable) if ok), default=1)
        self.info = EngineInfo(name=name, kind="tokenizer", library=library, library_version="0",
                               vocab_sha256=model.sha256,
                               description=f"reference Unigram ({model.flavour} flavour) {model.description}")

    def token_piece(self, token_id: int) -> str:
        return self.model.pieces[token_id]

    def encode_pretoken(self, text: str) -> list[Token]:
        """Tokens of one normalized pretoken, offsets in its characters."""
        edges = viterbi(self.model, self.index, self.max_len, text, self.tie_break)
        per_char = self.offsets == "contract"
        if self.model.flavour == "hf":
            return _emit_hf(self.model, self.index, text, edges, per_char)
        return _emit_spm(self.model, text, edges, per_char)

    def _encode(self, text: str) -> Encoding:
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        for pre in self.model.pretokenize(text):
            for tid, s, e in self.encode_pretoken(pre.text):
                ids.append(tid)
                offsets.append(pre.contract_span(s, e) if self.offsets == "contract" and s < e
                               else _original(pre, s, e))
        return Encoding.of(ids, offsets, [self.model.pieces[i] for i in ids])


def _original(pre: Aligned, s: int, e: int) -> tuple[int, int]:
    """Original span of normalized characters [s, e); an empty span sits at character s."""
    if s == e:
        start = pre.spans[s][0] if s < len(pre.spans) else pre.spans[-1][1]
        return (start, start)
    return pre.original_span(s, e)


def _runs(edges: list[Edge], fuse: bool) -> list[Edge]:
    """Merge consecutive unknown edges into one (when ``fuse``)."""
    out: list[Edge] = []
    for edge in edges:
        if fuse and edge[3] and out and out[-1][3]:
            out[-1] = (out[-1][0], edge[1], edge[2], True)
        else:
            out.append(edge)
    return out


def _byte_tokens(model: UnigramModel, chunk: str) -> list[int] | None:
    """Byte-piece ids of ``chunk``'s UTF-8 bytes, or None if byte fallback cannot cover it."""
    if not model.byte_fallback:
        return None
    ids = [model.byte_ids[b] for b in chunk.encode("utf-8")]
    return None if -1 in ids else ids


def _per_char_bytes(model: UnigramModel, text: str, s: int, e: int) -> list[Token]:
    """Byte tokens of ``text[s:e]``, each over the one character its byte belongs to."""
    return [(model.byte_ids[b], c, c + 1) for c in range(s, e) for b in text[c].encode("utf-8")]


def _emit_hf(model: UnigramModel, index: dict[str, int], text: str, edges: list[Edge],
             per_char: bool) -> list[Token]:
    out: list[Token] = []
    for s, e, pid, unknown in _runs(edges, model.fuse_unk):
        if not unknown:
            out.append((pid, s, e))
            continue
        run = text[s:e]
        byte_ids = _byte_tokens(model, run)
        if run in index:                       # HF looks the fused string up first
            out.append((index[run], s, e))
        elif byte_ids is not None and per_char:
            out.extend(_per_char_bytes(model, text, s, e))
        elif byte_ids is not None:             # HF: every byte token spans the whole run
            out.extend((b, s, e) for b in byte_ids)
        else:
            out.append((model.unk_id, s, e))
    return out


def _emit_spm(model: UnigramModel, text: str, edges: list[Edge], per_char: bool) -> list[Token]:
    out: list[Token] = []
    prev_unknown = False
    for s, e, pid, unknown in edges:
        byte_ids = _byte_tokens(model, text[s:e]) if unknown else None
        if byte_ids is not None and per_char:
            out.extend(_per_char_bytes(model, text, s, e))
        elif byte_ids is not None:
            # the last byte piece carries the character; the others are empty at its start
            out.extend((b, s, s) for b in byte_ids[:-1])
            out.append((byte_ids[-1], s, e))
        elif unknown and prev_unknown:
            out[-1] = (model.unk_id, out[-1][1], e)   # merge a run of unknowns
        else:
            out.append((model.unk_id if unknown else pid, s, e))
        prev_unknown = unknown and byte_ids is None
    return out


def unigram_encoder_from_tokenizer_json(tj: TokenizerJson | str | Path, name: str, *,
                                        tie_break: TieBreak | None = None,
                                        offsets: OffsetMode = "contract") -> UnigramReference:
    """Reference engine for a Unigram tokenizer.json (HF flavour). ``offsets="library"``
    reproduces HF's raw offsets instead of the contract's."""
    return UnigramReference(unigram_model_from_tokenizer_json(tj), name, tie_break=tie_break,
                            offsets=offsets)


def unigram_encoder_from_spm_model(path: str | Path, name: str, *,
                                   tie_break: TieBreak | None = None,
                                   offsets: OffsetMode = "contract") -> UnigramReference:
    """Reference engine for a sentencepiece Unigram ``.model`` (spm flavour)."""
    return UnigramReference(unigram_model_from_spm(path), name, tie_break=tie_break,
                            offsets=offsets)
