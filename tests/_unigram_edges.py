"""The reference Unigram Viterbi's lattice edges per pretoken, in UTF-8 bytes (the kernels'
positions), and the space-split pretokenizer of the tiny test models, shared by the Unigram kernel
test files."""

from __future__ import annotations

from tokspec.formats.normalize import Aligned
from tokspec.formats.unigram_model import UnigramModel
from tokspec.reference.unigram_viterbi import viterbi

Edge = tuple[int, int, int, bool]  # (start, end, id, is_unknown), bytes of one pretoken


def reference_edges(model: UnigramModel, text: str, tie_break: str) -> list[list[Edge]]:
    """The reference Viterbi's edges of every pretoken, character positions turned into bytes."""
    index = {p: i for i, p in enumerate(model.pieces)}
    max_len = max(len(p) for p, ok in zip(model.pieces, model.matchable) if ok)
    out = []
    for pre in model.pretokenize(text):
        at = [len(pre.text[:i].encode("utf-8")) for i in range(len(pre.text) + 1)]
        out.append([(at[s], at[e], i, unk) for s, e, i, unk
                    in viterbi(model, index, max_len, pre.text, tie_break)])  # type: ignore[arg-type]
    return out


def words(text: str) -> list[Aligned]:
    """Space-separated pretokens (several per text, of different lengths), identity alignment."""
    out, pos = [], 0
    for word in text.split(" "):
        out.append(Aligned.of(word, pos))
        pos += len(word) + 1
    return out
