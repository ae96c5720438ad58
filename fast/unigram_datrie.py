"""Unigram Viterbi over a double-array trie (seed ``unigram-double-array-viterbi``), compiled.

What it computes (the definitions of ``tokspec.unigram_model`` and the Unigram spec): the maximal-
score segmentation of each normalized pretoken into matchable pieces, where a character that no
one-character piece covers may be crossed by an *unknown edge* (score ``model.unk_score``); path
scores are float64 (HF) or float32 (sentencepiece) sums, re-based past ``model.score_reset`` as
sentencepiece 0.2.x does; ties keep the first predecessor that reached the best score
(``tie_break="hf"``/``"spm"``; ``"last"`` keeps the latest, for tests). Unknown edges then become
tokens as the model's library does (HF: fused runs -> the run's piece, its byte pieces or
``<unk>``; sentencepiece: byte pieces per character, or runs merged into one ``<unk>``).
Offsets (``offsets=``): ``"contract"`` (default: a byte token covers its own character; spans
from the pretoken's origins) or ``"library"`` (HF: every byte token of a run spans the run;
sentencepiece: all but the last byte token of a character are empty).

The work is one compiled kernel per text (``tokspec.fast._unigram_kernels.encode_pretokens``:
Viterbi, backtrack, emission and offsets over numpy arrays, nogil); see that module for the theorem
relied on and the complexity. The property that checks it is spec/ "Unigram exactness"
(``tests/test_fast_unigram_datrie.py`` against ``tokspec.reference.unigram`` and the libraries).
``trie="hash"`` runs the same kernel over :class:`tokspec.fast._hash_trie.HashTrie` (open
addressing over ``(node, byte)`` keys) for the benchmark.

What stays in Python: the model's normalizer and pretokenizer (``model.pretokenize``) and turning
its per-character alignment into arrays, O(n) Python steps per text, which dominate a full encode.

Out of scope: n-best, sampling, user-defined-symbol bonuses, special tokens (ordinary text).
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Literal

import numpy as np

from tokspec import Encoder, EncodingArrays, EngineInfo
from tokspec import __version__ as _VERSION
from tokspec.fast._double_array import DoubleArray
from tokspec.fast._hash_trie import HashTrie
from tokspec.fast._unigram_kernels import encode_pretokens, forward_da, forward_hash
from tokspec.normalize import Aligned
from tokspec.unigram_model import UnigramModel, unigram_model_from_spm, unigram_model_from_tokenizer_json
from tokspec.vocab import NAMED_FILES, load_tokenizer_json, named_path

__all__ = ["DatrieUnigram", "datrie_encoder", "OffsetMode", "TieBreak", "TrieKind"]

TieBreak = Literal["hf", "spm", "last"]
OffsetMode = Literal["contract", "library"]
TrieKind = Literal["double-array", "hash"]
Edge = tuple[int, int, int, bool]  # (start, end, id, is_unknown) in bytes of the pretoken
_NONE = np.zeros(0, dtype=np.int64)


class DatrieUnigram(Encoder):
    """Fast Unigram engine over a :class:`UnigramModel` (see module docstring).

    Build: the double array over the matchable pieces' UTF-8 bytes (cached on disk), or the hash
    trie. ``tie_break`` and ``offsets`` are read at each encode (tests switch them).
    """

    def __init__(self, model: UnigramModel, name: str, *, tie_break: TieBreak | None = None,
                 trie: TrieKind = "double-array", offsets: OffsetMode = "contract") -> None:
        if trie not in ("double-array", "hash"):
            raise ValueError(f"trie={trie!r}: expected 'double-array' or 'hash'")
        self.model = model
        self.offsets: OffsetMode = offsets
        self.tie_break: TieBreak = tie_break or model.flavour
        self.trie_kind: TrieKind = trie
        ids = [i for i, ok in enumerate(model.matchable) if ok]
        keys = [model.pieces[i].encode("utf-8") for i in ids]
        # HF matches every piece (``matchable`` all true), so the trie is also the exact-piece index
        # its fused unknown runs are looked up in.
        self.da: DoubleArray | None = None
        self.ht: HashTrie | None = None
        self._da = (_NONE, _NONE, _NONE)
        self._ht = (_NONE, _NONE, 0, _NONE)
        if trie == "double-array":
            self.da = DoubleArray.cached(keys, ids)
            self._da = tuple(np.asarray(a, dtype=np.int64) for a in (self.da.base, self.da.check, self.da.value))
        else:
            self.ht = HashTrie(keys, ids)
            self._ht = (self.ht.keys, self.ht.child, self.ht.mask, self.ht.node_value)
        self.scores = np.asarray(model.scores, dtype=np.float32 if model.float32 else np.float64).astype(np.float64)
        self.unk_score = float(np.float32(model.unk_score)) if model.float32 else model.unk_score
        self.reset = float(model.score_reset or 0.0)
        self.byte_ids = np.asarray(model.byte_ids, dtype=np.int64) if model.byte_fallback else _NONE
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.fast",
                               library_version=_VERSION, vocab_sha256=model.sha256,
                               description=f"{trie} trie Unigram Viterbi ({model.flavour} flavour), numba kernel")

    def token_piece(self, token_id: int) -> str:
        return self.model.pieces[token_id]

    def forward(self, data: np.ndarray, best: np.ndarray, bstart: np.ndarray, bid: np.ndarray) -> None:
        """The Viterbi forward pass alone over one pretoken's bytes (for the benchmark)."""
        f32, last = self.model.float32, self.tie_break == "last"
        if self.trie_kind == "double-array":
            forward_da(data, 0, len(data), *self._da, self.scores, self.unk_score, f32, last, self.reset,
                       best, bstart, bid)
        else:
            forward_hash(data, 0, len(data), *self._ht, self.scores, self.unk_score, f32, last, self.reset,
                         best, bstart, bid)

    def viterbi(self, data: bytes) -> list[Edge]:
        """Best segmentation of the UTF-8 bytes of one pretoken: edges in byte offsets."""
        arr = np.frombuffer(data, dtype=np.uint8)
        n = len(arr)
        best = np.empty(n + 1, dtype=np.float64)
        bstart = np.empty(n + 1, dtype=np.int64)
        bid = np.empty(n + 1, dtype=np.int64)
        self.forward(arr, best, bstart, bid)
        edges: list[Edge] = []
        e = n
        while e > 0:
            s, pid = int(bstart[e]), int(bid[e])
            edges.append((s, e, self.model.unk_id if pid < 0 else pid, pid < 0))
            e = s
        edges.reverse()
        return edges

    def _encode_arrays(self, text: str) -> EncodingArrays:
        pres = self.model.pretokenize(text)
        encoded = [p.text.encode("utf-8") for p in pres]
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=bounds[1:])
        o_start, o_end, sp_start, sp_end = _alignment_arrays(pres)
        ids, starts, ends = encode_pretokens(
            data, bounds, self.trie_kind == "hash", *self._da, *self._ht, self.scores, self.unk_score,
            self.model.unk_id, self.model.float32, self.tie_break == "last", self.reset,
            self.model.flavour == "hf", self.model.fuse_unk, self.byte_ids, self.offsets == "contract",
            o_start, o_end, sp_start, sp_end)
        return EncodingArrays(ids, starts, ends)


def _alignment_arrays(pres: list[Aligned]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per normalized character (all pretokens in order): contract origin and library span."""
    origins = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(p.origins for p in pres)),
                          dtype=np.int64).reshape(-1, 2)
    spans = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(p.spans for p in pres)),
                        dtype=np.int64).reshape(-1, 2)
    return (np.ascontiguousarray(origins[:, 0]), np.ascontiguousarray(origins[:, 1]),
            np.ascontiguousarray(spans[:, 0]), np.ascontiguousarray(spans[:, 1]))


def datrie_encoder(arg: str, *, tie_break: TieBreak | None = None, trie: TrieKind = "double-array",
                   offsets: OffsetMode = "contract") -> DatrieUnigram:
    """``fast:ARG``: ``mon-unigram``, a Unigram ``tokenizer.json`` path, or a sentencepiece ``.model``."""
    if arg in NAMED_FILES:
        model = unigram_model_from_tokenizer_json(load_tokenizer_json(named_path(arg), NAMED_FILES[arg].sha256))
    elif Path(arg).suffix == ".model":
        model = unigram_model_from_spm(arg)
    else:
        model = unigram_model_from_tokenizer_json(arg)
    return DatrieUnigram(model, f"fast:{arg}", tie_break=tie_break, trie=trie, offsets=offsets)
