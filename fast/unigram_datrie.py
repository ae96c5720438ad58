"""Unigram Viterbi over a double-array trie (seed ``unigram-double-array-viterbi``).

What it computes (the definitions of ``tokspec.unigram_model`` and the Unigram spec): the maximal-
score segmentation of each normalized pretoken into matchable pieces, where a character that no
one-character piece covers may be crossed by an *unknown edge* (score ``model.unk_score``); path
scores are float64 (HF) or float32 (sentencepiece) sums; ties keep the first predecessor that
reached the best score (``tie_break="hf"``/``"spm"``; ``"last"`` keeps the latest, for tests).
Unknown edges then become tokens as the model's library does: HF fuses runs of unknowns and emits
the run's piece, its byte pieces or ``<unk>``; sentencepiece emits byte pieces per character or
merges runs into one ``<unk>``. Offsets (``offsets=``): ``"contract"`` (default, tokspec's
convention: a byte token covers its own character; spans from the pretoken's origins) or
``"library"`` (HF: every byte token of a run spans the run; sentencepiece: all but the last byte
token of a character are empty).

Theorem relied on: Viterbi's optimal substructure (the best path to position ``e`` extends a best
path to its predecessor), with the tie rule applied at each relaxation; positions are relaxed in
increasing order, so "first predecessor" is "earliest start". The property that checks it is spec/
"Unigram exactness" (``tests/test_fast_unigram_datrie.py`` against ``tokspec.reference.unigram``).

The loop: positions are UTF-8 byte offsets of the pretoken (only character starts are relaxed:
pieces are whole strings, so every match ends on a character boundary); the trie walk per start is
two list loads and a compare per byte (``base``/``check``, see ``tokspec.fast._double_array``), the
piece id and score come from flat per-slot / per-id lists, and nothing is allocated per match.
O(n * L) per pretoken, L = longest piece in bytes. ``trie="dict"`` runs the same loop over a
dict-of-dicts trie (the seed's "baseline") for the benchmark.

Out of scope: n-best, sampling, user-defined-symbol bonuses, special tokens (ordinary text).
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Literal

from tokspec import Encoder, Encoding, EngineInfo
from tokspec import __version__ as _VERSION
from tokspec._offsets import byte_to_char_index
from tokspec.fast._double_array import DoubleArray
from tokspec.normalize import Aligned
from tokspec.unigram_model import UnigramModel, unigram_model_from_spm, unigram_model_from_tokenizer_json
from tokspec.vocab import NAMED_FILES, load_tokenizer_json, named_path

__all__ = ["DatrieUnigram", "datrie_encoder", "OffsetMode", "TieBreak"]

TieBreak = Literal["hf", "spm", "last"]
OffsetMode = Literal["contract", "library"]
Edge = tuple[int, int, int, bool]  # (start, end, id, is_unknown); bytes, then characters
_NEG = float("-inf")
_PAYLOAD = 256


def _utf8_len(lead: int) -> int:
    return 1 if lead < 0x80 else 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


_CHAR_LEN = [_utf8_len(b) for b in range(256)]


class DatrieUnigram(Encoder):
    """Fast Unigram engine over a :class:`UnigramModel` (see module docstring).

    Build: the double array over the matchable pieces' UTF-8 bytes (or the dict trie).
    """

    def __init__(self, model: UnigramModel, name: str, *, tie_break: TieBreak | None = None,
                 trie: Literal["double-array", "dict"] = "double-array",
                 offsets: OffsetMode = "contract") -> None:
        self.model = model
        self.offsets: OffsetMode = offsets
        self.tie_break: TieBreak = tie_break or model.flavour
        ids = [i for i, ok in enumerate(model.matchable) if ok]
        keys = [model.pieces[i].encode("utf-8") for i in ids]
        self.trie_kind = trie
        if trie == "double-array":
            self.da = DoubleArray.cached(keys, ids)
        else:
            self.dict_trie = DoubleArray._dict_trie(keys, ids)
        self.scores = [_f32(s) if model.float32 else s for s in model.scores]
        self.unk_score = _f32(model.unk_score) if model.float32 else model.unk_score
        self.index = {p: i for i, p in enumerate(model.pieces)}  # for HF's fused-unknown lookup
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.fast",
                               library_version=_VERSION, vocab_sha256=model.sha256,
                               description=f"{trie} trie Unigram Viterbi ({model.flavour} flavour)")

    def token_piece(self, token_id: int) -> str:
        return self.model.pieces[token_id]

    # -- Viterbi ---------------------------------------------------------------------------------

    def viterbi(self, data: bytes) -> list[Edge]:
        """Best segmentation of the UTF-8 bytes of one pretoken: edges in byte offsets."""
        n = len(data)
        best = [_NEG] * (n + 1)
        back_start = [0] * (n + 1)
        back_id = [0] * (n + 1)  # -1: unknown edge
        best[0] = 0.0
        if self.trie_kind == "double-array":
            self._forward_da(data, best, back_start, back_id)
        else:
            self._forward_dict(data, best, back_start, back_id)
        edges: list[Edge] = []
        e = n
        while e > 0:
            s, pid = back_start[e], back_id[e]
            edges.append((s, e, self.model.unk_id if pid < 0 else pid, pid < 0))
            e = s
        edges.reverse()
        return edges

    def _forward_da(self, data: bytes, best: list[float], back_start: list[int], back_id: list[int]) -> None:
        """Relax every edge leaving every character start, walking the double array."""
        base, check, value = self.da.base, self.da.check, self.da.value
        scores, unk, f32, last = self.scores, self.unk_score, self.model.float32, self.tie_break == "last"
        r32 = array("f", [0.0])
        n = len(data)
        for start in range(n):
            lead = data[start]
            if 0x80 <= lead < 0xC0:
                continue  # not a character start
            here, single = best[start], start + _CHAR_LEN[lead]
            has_single, s, q = False, 0, start
            while q < n:
                t = base[s] + data[q]
                if check[t] != s:  # always in range (the arrays are padded)
                    break
                s, q = t, q + 1
                v = value[s]
                if v >= 0:
                    cand = here + scores[v]
                    if f32:
                        r32[0] = cand
                        cand = r32[0]
                    if cand > best[q] or (last and cand == best[q]):
                        best[q], back_start[q], back_id[q] = cand, start, v
                    has_single = has_single or q == single
            if not has_single:
                self._relax_unknown(here, start, single, best, back_start, back_id, unk, f32, last, r32)

    def _forward_dict(self, data: bytes, best: list[float], back_start: list[int], back_id: list[int]) -> None:
        """The same relaxation over the dict-of-dicts trie (benchmark baseline)."""
        root = self.dict_trie
        scores, unk, f32, last = self.scores, self.unk_score, self.model.float32, self.tie_break == "last"
        r32 = array("f", [0.0])
        n = len(data)
        for start in range(n):
            lead = data[start]
            if 0x80 <= lead < 0xC0:
                continue
            here, single = best[start], start + _CHAR_LEN[lead]
            has_single, node, q = False, root, start
            while q < n:
                node = node.get(data[q])  # type: ignore[assignment]
                if node is None:
                    break
                q += 1
                v = node.get(_PAYLOAD, -1)
                if v >= 0:  # type: ignore[operator]
                    cand = here + scores[v]  # type: ignore[index]
                    if f32:
                        r32[0] = cand
                        cand = r32[0]
                    if cand > best[q] or (last and cand == best[q]):
                        best[q], back_start[q], back_id[q] = cand, start, v  # type: ignore[assignment]
                    has_single = has_single or q == single
            if not has_single:
                self._relax_unknown(here, start, single, best, back_start, back_id, unk, f32, last, r32)

    @staticmethod
    def _relax_unknown(here: float, start: int, end: int, best: list[float], back_start: list[int],
                       back_id: list[int], unk: float, f32: bool, last: bool, r32: array[float]) -> None:
        cand = here + unk
        if f32:
            r32[0] = cand
            cand = r32[0]
        if cand > best[end] or (last and cand == best[end]):
            best[end], back_start[end], back_id[end] = cand, start, -1

    # -- tokens ----------------------------------------------------------------------------------

    def encode_pretoken(self, text: str) -> list[tuple[int, int, int]]:
        """Tokens ``(id, start, end)`` of one normalized pretoken, offsets in its characters."""
        data = text.encode("utf-8")
        to_char = byte_to_char_index(text)
        edges = [(to_char[s], to_char[e], pid, unk) for s, e, pid, unk in self.viterbi(data)]
        return self._emit_hf(text, edges) if self.model.flavour == "hf" else self._emit_spm(text, edges)

    def _byte_ids(self, chunk: str) -> list[int] | None:
        if not self.model.byte_fallback:
            return None
        ids = [self.model.byte_ids[b] for b in chunk.encode("utf-8")]
        return None if -1 in ids else ids

    def _per_char_bytes(self, text: str, s: int, e: int) -> list[tuple[int, int, int]]:
        """Contract offsets: each byte token covers the one character its byte belongs to."""
        byte_ids = self.model.byte_ids
        return [(byte_ids[b], c, c + 1) for c in range(s, e) for b in text[c].encode("utf-8")]

    def _emit_hf(self, text: str, edges: list[Edge]) -> list[tuple[int, int, int]]:
        """HF: fuse unknown runs (if the model does); run -> its piece, else byte pieces, else unk."""
        runs: list[Edge] = []
        for edge in edges:
            if self.model.fuse_unk and edge[3] and runs and runs[-1][3]:
                runs[-1] = (runs[-1][0], edge[1], edge[2], True)
            else:
                runs.append(edge)
        out: list[tuple[int, int, int]] = []
        for s, e, pid, unknown in runs:
            if not unknown:
                out.append((pid, s, e))
                continue
            chunk = text[s:e]
            byte_ids = self._byte_ids(chunk)
            if chunk in self.index:
                out.append((self.index[chunk], s, e))
            elif byte_ids is not None and self.offsets == "contract":
                out.extend(self._per_char_bytes(text, s, e))
            elif byte_ids is not None:  # HF's own offsets: every byte token spans the whole run
                out.extend((b, s, e) for b in byte_ids)
            else:
                out.append((self.model.unk_id, s, e))
        return out

    def _emit_spm(self, text: str, edges: list[Edge]) -> list[tuple[int, int, int]]:
        """sentencepiece: byte pieces per unknown character, else merge unknown runs into one unk."""
        out: list[tuple[int, int, int]] = []
        prev_unknown = False
        unk_id = self.model.unk_id
        for s, e, pid, unknown in edges:
            byte_ids = self._byte_ids(text[s:e]) if unknown else None
            if byte_ids is not None and self.offsets == "contract":
                out.extend(self._per_char_bytes(text, s, e))
            elif byte_ids is not None:  # library offsets: empty spans, the last byte has the char
                out.extend((b, s, s) for b in byte_ids[:-1])
                out.append((byte_ids[-1], s, e))
            elif unknown and prev_unknown:
                out[-1] = (unk_id, out[-1][1], e)
            else:
                out.append((unk_id if unknown else pid, s, e))
            prev_unknown = unknown and byte_ids is None
        return out

    def _encode(self, text: str) -> Encoding:
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        contract = self.offsets == "contract"
        for pre in self.model.pretokenize(text):
            for tid, s, e in self.encode_pretoken(pre.text):
                ids.append(tid)
                offsets.append(pre.contract_span(s, e) if contract and s < e else _original(pre, s, e))
        return Encoding.of(ids, offsets)


def _original(pre: Aligned, s: int, e: int) -> tuple[int, int]:
    """Original-text span of normalized characters [s, e); an empty span sits at character s."""
    if s == e:
        start = pre.spans[s][0] if s < len(pre.spans) else pre.spans[-1][1]
        return (start, start)
    return pre.original_span(s, e)


def _f32(x: float) -> float:
    return array("f", [x])[0]


def datrie_encoder(arg: str, *, tie_break: TieBreak | None = None,
                   trie: Literal["double-array", "dict"] = "double-array",
                   offsets: OffsetMode = "contract") -> DatrieUnigram:
    """``fast:ARG``: ``mon-unigram``, a Unigram ``tokenizer.json`` path, or a sentencepiece ``.model``."""
    if arg in NAMED_FILES:
        model = unigram_model_from_tokenizer_json(load_tokenizer_json(named_path(arg), NAMED_FILES[arg].sha256))
    elif Path(arg).suffix == ".model":
        model = unigram_model_from_spm(arg)
    else:
        model = unigram_model_from_tokenizer_json(arg)
    return DatrieUnigram(model, f"fast:{arg}", tie_break=tie_break, trie=trie, offsets=offsets)
