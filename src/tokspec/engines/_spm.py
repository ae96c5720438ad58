"""Adapter for ``sentencepiece`` (any ``.model``: Unigram, BPE, word, char).

Called with no BOS/EOS, no sampling. Control symbols (``<s>``, ``</s>``) are never matched in the
input by sentencepiece itself, so special tokens are ordinary text here too; user-defined symbols
stay matched (they are part of the model's segmentation).

Offsets. sentencepiece 0.2.3 no longer returns ``immutable_proto`` (it raises ValueError) and its
``proto`` output needs the ``protobuf`` package, so this adapter reads the same ``begin``/``end``
fields through ``return_type="offset_mapping", return_bytes=True``: UTF-8 byte spans into the
ORIGINAL text (tests check them against the ``serialized_proto`` output, parsed by tokspec's own
wire reader). They differ from the contract in one way, converted here and recorded in
``corpora/production/spm_offset_findings.json``: when several pieces come from one input character
(the byte pieces of a byte-fallback character, or ``f`` + ``i`` from NFKC of ``ﬁ``), sentencepiece
gives the whole span to the LAST piece and empty spans to the earlier ones. The contract gives each
of them the character: a run of empty-span pieces at byte ``p`` followed by a piece spanning
``[p, q)`` all get ``[p, q)``. The dummy prefix ``▁`` that sentencepiece inserts (first piece, empty
span, exactly ``"▁"``) covers no input and keeps its empty span.

Out of scope: sampling, n-best, BOS/EOS, ``reverse``, decoding.
"""

from __future__ import annotations

from pathlib import Path

import sentencepiece

from tokspec._offsets import char_offsets_from_byte_spans
from tokspec._types import Encoder, Encoding, EngineInfo
from tokspec.errors import EngineFault
from tokspec.vocab import SpmModel

__all__ = ["SpmEngine", "contract_byte_spans"]

_DUMMY_PREFIX = "\u2581"


def contract_byte_spans(pieces: list[str], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Convert sentencepiece's byte spans to the contract's (module docstring). O(pieces)."""
    out = list(spans)
    pending: list[int] = []  # indices of empty-span pieces waiting for the piece that owns them
    for i, (b, e) in enumerate(spans):
        if b < e:
            for k in pending:
                if out[k][0] == b:
                    out[k] = (b, e)
            pending = []
        elif not (i == 0 and pieces[0] == _DUMMY_PREFIX):
            pending.append(i)
    return out


class SpmEngine(Encoder):
    """One ``sentencepiece.SentencePieceProcessor`` loaded from tokspec's verified bytes."""

    def __init__(self, name: str, model: SpmModel) -> None:
        self.model = model
        self.library_processor = sentencepiece.SentencePieceProcessor()
        self.library_processor.LoadFromSerializedProto(Path(model.path).read_bytes())
        self.info = EngineInfo(
            name, "tokenizer", "sentencepiece", sentencepiece.__version__, model.sha256,
            f"sentencepiece {model.model_type} ({model.normalizer_name}, "
            f"byte_fallback={model.byte_fallback}) from {model.path}")

    def library_encode(self, text: str) -> dict[str, list]:  # type: ignore[type-arg]
        """sentencepiece's own ``offset_mapping`` output with byte offsets."""
        try:
            out: dict[str, list] = self.library_processor.encode(  # type: ignore[type-arg]
                text, return_type="offset_mapping", return_bytes=True)
        except Exception as exc:
            raise EngineFault(f"{self.info.name}: sentencepiece failed on text={text!r:.80}: {exc}") from exc
        return out

    def _encode(self, text: str) -> Encoding:
        """Encode; O(n) beyond sentencepiece's own encode."""
        out = self.library_encode(text)
        pieces = [p.decode("utf-8", "replace") for p in out["pieces"]]
        spans = contract_byte_spans(pieces, [tuple(s) for s in out["offsets"]])
        offsets = char_offsets_from_byte_spans(text, spans)
        return Encoding.of(out["ids"], offsets, pieces).validate(text, self.info.name)

    def token_piece(self, token_id: int) -> str:
        if 0 <= token_id < self.library_processor.get_piece_size():
            return str(self.library_processor.id_to_piece(token_id))
        return str(token_id)
