"""Unigram Viterbi over a double-array trie (seed ``unigram-double-array-viterbi``), compiled.

What it computes (the definitions of ``tokspec.formats.unigram_model`` and the Unigram spec): the maximal-
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
Many texts (``encode_ids_batch``): a sentencepiece model's texts in one kernel call a group
(``tokspec.fast._spm_ids.spm_ids_batch``), an HF pipeline's texts its normalizer leaves alone
likewise (``tokspec.fast._unigram_batch``), so threads sharing a batch hand the GIL back once per
group, not once per text; checked by ``tests/test_fast_spm_batch.py`` and
``tests/test_fast_unigram_batch.py``.
``trie="hash"`` runs the same kernel over :class:`tokspec.fast._hash_trie.HashTrie` (open
addressing over ``(node, byte)`` keys) for the benchmark.

Normalization: a sentencepiece model's normalizer (precompiled charsmap such as nmt_nfkc, or
identity) is compiled too (``tokspec.fast._spm_kernels``), so an spm encode runs no Python per
character. HF pipelines (``tokenizer.json``): on text their normalizer leaves unchanged, a
``Metaspace`` pretokenizer goes straight to arrays (``tokspec.fast._hf_identity``, C-level checks
and numpy); other text goes through the compiled normalizer program (``tokspec.fast._hf_compiled``:
NFC/NFD/NFKC/NFKD, Replace of a class, a run of one or a literal, Strip, Prepend, Lowercase,
StripAccents, Precompiled, then Metaspace); pipelines it does not support (WhitespaceSplit, ...) take ``model.pretokenize`` plus turning its
alignment into arrays: O(n) Python steps per text, which dominate a full HF encode.

Out of scope: n-best, sampling, user-defined-symbol bonuses, special tokens (ordinary text).
Decoding: :func:`datrie_encoder` gives the engine ``decode`` (``tokspec.fast.unigram_decode``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Literal

import numpy as np

from tokspec import Encoder, EncodingArrays, EngineInfo, _interpreted
from tokspec import __version__ as _VERSION
from tokspec._types import check_text
from tokspec.fast import (_hf_norm_kernels, _hf_precompiled, _hf_pretok_kernels, _metaspace, _spm_ids, _spm_kernels,
                          _unigram_batch, _unigram_emit, _unigram_kernels)
from tokspec.fast._double_array import DoubleArray
from tokspec.fast._hash_trie import HashTrie
from tokspec.fast._hf_compiled import CompiledPipeline, compiled_plan
from tokspec.fast._hf_identity import IdentityMetaspace, identity_plan
from tokspec.fast._unigram_workspace import Workspace as _Workspace
from tokspec.formats.normalize import Aligned
from tokspec.formats.spm_normalize import SpmNormalizer
from tokspec.formats.unigram_model import (
    UnigramModel,
    unigram_model_from_spm,
    unigram_model_from_tokenizer_json,
)
from tokspec.formats.vocab import NAMED_FILES, load_tokenizer_json, named_path

__all__ = ["DatrieUnigram", "OffsetMode", "TieBreak", "TrieKind", "datrie_encoder"]

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
                 trie: TrieKind = "double-array", offsets: OffsetMode = "contract", jit: bool = True,
                 identity: IdentityMetaspace | None = None, compiled: CompiledPipeline | None = None) -> None:
        if trie not in ("double-array", "hash"):
            raise ValueError(f"trie={trie!r}: expected 'double-array' or 'hash'")
        # jit=False: the same kernel sources run as plain Python, nested calls included (fuzzing
        # with coverage, and the compiled == interpreted check)
        self._uk = _unigram_kernels if jit else interpreted_module(_unigram_kernels)
        self._sk = _spm_kernels if jit else interpreted_module(_spm_kernels)
        self._ek = _unigram_emit if jit else interpreted_module(_unigram_emit)
        self._ik = _spm_ids if jit else interpreted_module(_spm_ids)
        self._mk = _metaspace if jit else interpreted_module(_metaspace)
        self._bk = _unigram_batch if jit else interpreted_module(_unigram_batch)
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
        self._da = (_NONE,)
        self._ht = (_NONE, _NONE, 0, _NONE)
        if trie == "double-array":
            self.da = DoubleArray.cached(keys, ids)
            self._da = (self.da.units(),)
        else:
            self.ht = HashTrie(keys, ids)
            self._ht = (self.ht.keys, self.ht.child, self.ht.mask, self.ht.node_value)
        self.scores = np.asarray(model.scores, dtype=np.float32 if model.float32 else np.float64).astype(np.float64)
        self.unk_score = float(np.float32(model.unk_score)) if model.float32 else model.unk_score
        self.reset = float(model.score_reset or 0.0)
        self.byte_ids = np.asarray(model.byte_ids, dtype=np.int64) if model.byte_fallback else _NONE
        self._spm = None if model.spm_normalizer is None else _spm_arrays(model.spm_normalizer, self._sk)
        # encode_ids of a sentencepiece model over the double array: one call of _spm_ids.spm_ids
        self._spm_model = None if self._spm is None or self.da is None or not model.float32 else \
            _spm_ids.engine_args(self._spm, self._da[0], self.scores, self.unk_score, model.unk_id, self.reset,
                                 self.byte_ids)
        self._identity = identity  # HF pipelines: text the normalizer leaves alone, straight to arrays
        self._compiled = compiled  # HF pipelines: any other text, compiled (tokspec.fast._hf_compiled)
        self._work = _Workspace()
        self.info = EngineInfo(name=name, kind="tokenizer", library="tokspec.fast",
                               library_version=_VERSION, vocab_sha256=model.sha256,
                               description=f"{trie} trie Unigram Viterbi ({model.flavour} flavour), numba kernel",
                               thread_safe=True)  # buffers are per thread (_Workspace)

    def token_piece(self, token_id: int) -> str:
        return self.model.pieces[token_id]

    def forward(self, data: np.ndarray, best: np.ndarray, bstart: np.ndarray, bid: np.ndarray) -> None:
        """The Viterbi forward pass alone over one pretoken's bytes (for the benchmark)."""
        f32, last = self.model.float32, self.tie_break == "last"
        if self.trie_kind == "double-array":
            self._uk.forward_da(data, 0, len(data), *self._da, self.scores, self.unk_score, f32, last, self.reset,
                       best, bstart, bid)
        else:
            self._uk.forward_hash(data, 0, len(data), *self._ht, self.scores, self.unk_score, f32, last, self.reset,
                         best, bstart, bid)

    def forward_all(self, data: np.ndarray, bounds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The forward pass alone over every pretoken of :meth:`normalized` output (benchmark)."""
        best: tuple[np.ndarray, np.ndarray] = self._uk.forward_pretokens(
            data, bounds, self.trie_kind == "hash", *self._da, *self._ht, self.scores, self.unk_score,
            self.model.float32, self.tie_break == "last", self.reset)
        return best

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

    def normalized(self, text: str, *, alignment: bool = True) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """(normalized bytes, pretoken byte bounds, per-character alignment arrays) of ``text``:
        compiled for a sentencepiece normalizer, else from ``model.pretokenize`` (Python).
        ``alignment=False`` (ids only): the compiled path skips the alignment arrays (empty)."""
        if self._spm is not None:
            ws = self._work
            raw = np.frombuffer(str.encode(text), dtype=np.uint8)  # str.encode: a str subclass cannot lie
            n = len(raw)
            out, n2o, r1, k, m = self._sk.spm_normalize(
                raw, *self._spm, ws.get("rep", self._spm[1].size + 4, np.uint8),
                ws.get("out", n + n // 2 + 8, np.uint8), ws.get("n2o", n + 10, np.int64),
                ws.get("r1", n + 9, np.int64))
            ws.keep(out=out, n2o=n2o, r1=r1)
            if not alignment:
                return out[:k], np.array([0, k], dtype=np.int64), (_NONE, _NONE, _NONE, _NONE)
            table = ws.get("table", n + 1, np.int64)
            self._uk.char_of_byte_into(raw, table)
            aligned = tuple(ws.get(name, m, np.int64)[:m] for name in ("o_start", "o_end", "sp_start", "sp_end"))
            self._sk.spm_alignment(n2o, r1, m, table, *aligned)
            return out[:k], np.array([0, k], dtype=np.int64), aligned
        if self._identity is not None and self._identity.applies(text):
            if not alignment:  # ids only: bytes and bounds in one kernel pass (tokspec.fast._metaspace)
                plan, raw = self._identity, np.frombuffer(str.encode(text), dtype=np.uint8)
                out = self._work.get("ms_out", len(plan.marker_bytes) * (len(raw) + 1), np.uint8)
                cuts = self._work.get("ms_bounds", len(raw) + 2, np.int64)
                k, b = self._mk.metaspace_bytes(raw, plan.marker_bytes, plan.prepend, plan.split, out, cuts)
                return out[:k], cuts[:b], (_NONE, _NONE, _NONE, _NONE)
            return self._identity.arrays(text, alignment)
        if self._compiled is not None:
            return self._compiled.arrays(text, alignment)
        pres = self.model.pretokenize(text)
        encoded = [p.text.encode("utf-8") for p in pres]
        data = np.frombuffer(b"".join(encoded), dtype=np.uint8)
        bounds = np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum([len(b) for b in encoded], out=bounds[1:])
        return data, bounds, _alignment_arrays(pres)

    def encode_ids(self, text: str) -> np.ndarray:
        """Token ids of ``text`` only (int64 array; alignment and offsets are skipped), like
        sentencepiece's ``encode``. Same text domain as :meth:`encode` (InvalidTextError outside).
        A sentencepiece model over the double array takes one kernel call (``tokspec.fast._spm_ids``;
        the Python around it is kept to a few steps: it is a visible share of a short text)."""
        if type(text) is not str:
            check_text(text)  # raises, or accepts a str subclass
        model = self._spm_model
        try:  # no separate scan for lone surrogates: they are exactly what makes UTF-8 encoding fail
            if model is not None and self.tie_break != "last":
                data = str.encode(text)  # not text.encode: a str subclass cannot hand the kernel other bytes
                bufs = self._work.spm_ids
                if bufs is None or bufs.capacity < 3 * len(data) + 8:  # an ASCII text's worst case: all spaces
                    bufs = self._work.spm_ids = _spm_ids.IdsBuffers(3 * len(data) + 8, model)
                j = self._ik.spm_ids(data, *bufs.args)
                while j < 0:  # the normalized text outgrew the buffers (a text that expands): grow, again
                    bufs = self._work.spm_ids = _spm_ids.IdsBuffers(max(-1 - j, 2 * bufs.capacity), model)
                    j = self._ik.spm_ids(data, *bufs.args)
                ids: np.ndarray = bufs.ids[j:].copy()
                return ids
            if not text:
                return _NONE.copy()
            return self._run(text, offsets=False)[0]
        except UnicodeEncodeError:
            check_text(text)  # raises InvalidTextError
            raise

    def encode_ids_batch(self, texts: Sequence[str]) -> list[np.ndarray]:
        """``[encode_ids(t) for t in texts]``, in one kernel call per group of texts where it can:
        a sentencepiece model over the double array (``_spm_ids.spm_ids_batch``, groups of
        ``_spm_ids.BATCH_BYTES``), an HF pipeline on the short texts its normalizer leaves alone
        (``_unigram_batch.metaspace_ids_batch``); one GIL hand-off per group, not per text, is
        what lets threads scale on short texts. Other texts and engines: text by text. A text
        ``encode_ids`` rejects: the same error. The ids of a group are views of one array."""
        if any(type(t) is not str for t in texts):
            return [self.encode_ids(t) for t in texts]
        if self._spm_model is not None and self.tie_break != "last":
            return _unigram_batch.in_groups(texts, _always, self._spm_group,
                                            self.encode_ids, _spm_ids.BATCH_BYTES)
        if self._identity is not None:
            return _unigram_batch.in_groups(texts, self._short_identity, self._identity_group, self.encode_ids,
                                            _unigram_batch.BATCH_BYTES)
        return [self.encode_ids(t) for t in texts]

    def _spm_group(self, group: list[bytes]) -> list[np.ndarray]:
        assert self._spm_model is not None
        ids, self._work.spm_ids = _spm_ids.ids_of_texts(self._ik, group, self._spm_model, self._work.spm_ids)
        return ids

    def _short_identity(self, text: str) -> bool:
        """Does ``text`` go to an HF batch group: shorter than ``_unigram_batch.BATCH_TEXT_MAX``
        characters, and left alone by the normalizer?"""
        plan = self._identity
        return plan is not None and str.__len__(text) < _unigram_batch.BATCH_TEXT_MAX and plan.applies(text)

    def _identity_group(self, group: list[bytes]) -> list[np.ndarray]:
        plan = self._identity
        assert plan is not None
        return _unigram_batch.ids_of_texts(self._bk, group, plan.marker_bytes, plan.prepend, plan.split,
                                           self._pretoken_args())

    def _pretoken_args(self) -> tuple[Any, ...]:
        """``encode_pretokens``' model arguments, ``use_hash`` .. ``contract`` (tie-break and offset
        mode read now: tests switch them)."""
        return (self.trie_kind == "hash", *self._da, *self._ht, self.scores, self.unk_score, self.model.unk_id,
                self.model.float32, self.tie_break == "last", self.reset, self.model.flavour == "hf",
                self.model.fuse_unk, self.byte_ids, self.offsets == "contract")

    def _encode_arrays(self, text: str) -> EncodingArrays:
        return EncodingArrays(*self._run(text, offsets=True))

    def _run(self, text: str, *, offsets: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """ids, starts, ends (the spans meaningful only with ``offsets``)."""
        data, bounds, (o_start, o_end, sp_start, sp_end) = self.normalized(text, alignment=offsets)
        ws, n = self._work, len(data)
        if not offsets:  # one buffer set, sized by the whole text (no scan for the longest pretoken)
            bufs = ws.ids_buffers(n, 4)
            bufs.grow_viterbi(n + 1)
            _, *viterbi = bufs.viterbi
            k = self._ek.encode_pretokens(
                data, bounds, *self._pretoken_args(), o_start, o_end, sp_start, sp_end, *viterbi, _NONE, False)
            return viterbi[5][:k].copy(), _NONE, _NONE
        width = int(np.diff(bounds).max(initial=0)) + 1
        scratch = [ws.get(name, width, np.int64) for name in ("bstart", "bid", "es", "eid")]
        outs = [ws.get(name, max(n, 1), np.int64) for name in ("ids", "ts", "te")]
        k = self._ek.encode_pretokens(
            data, bounds, *self._pretoken_args(), o_start, o_end, sp_start, sp_end,
            ws.get("best", width, np.float64), *scratch, *outs, ws.get("cob", n + 1, np.int64), offsets)
        ids, starts, ends = (a[:k].copy() for a in outs)  # the buffers are reused by the next call
        return ids, starts, ends


def _always(text: str) -> bool:
    return True


def interpreted_module(module: ModuleType) -> ModuleType:
    """A second copy of a kernel module whose ``@kernel`` functions are all plain Python, calls
    between kernels included (``tokspec._interpreted``: the one mechanism, shared with
    ``tokspec.fast.interpreted``, that the atheris harness instruments)."""
    return _interpreted.interpreted_module(module)


def _spm_arrays(norm: SpmNormalizer, kernels: ModuleType) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool, bool, bool]:
    """The arguments of ``spm_normalize`` after the text: charsmap units, pool, first bytes, flags."""
    cm = norm.charsmap
    units = np.asarray(cm.units if cm else (), dtype=np.int64)
    pool = np.frombuffer(cm.pool if cm else b"", dtype=np.uint8)
    return units, pool, kernels.ascii_copies(units), norm.add_dummy_prefix, norm.remove_extra, norm.space != " "


def _alignment_arrays(pres: list[Aligned]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per normalized character (all pretokens in order): contract origin and library span."""
    origins = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(p.origins for p in pres)),
                          dtype=np.int64).reshape(-1, 2)
    spans = np.fromiter(itertools.chain.from_iterable(itertools.chain.from_iterable(p.spans for p in pres)),
                        dtype=np.int64).reshape(-1, 2)
    return (np.ascontiguousarray(origins[:, 0]), np.ascontiguousarray(origins[:, 1]),
            np.ascontiguousarray(spans[:, 0]), np.ascontiguousarray(spans[:, 1]))


def datrie_encoder(arg: str, *, tie_break: TieBreak | None = None, trie: TrieKind = "double-array",
                   offsets: OffsetMode = "contract", jit: bool = True) -> DatrieUnigram:
    """``fast:ARG``: ``mon-unigram``, a Unigram ``tokenizer.json`` path, or a sentencepiece ``.model``."""
    from tokspec.fast.unigram_decode import decoder_or_none
    from tokspec.formats.spm_model import load_spm_model

    source: Any
    compiled = None
    if arg not in NAMED_FILES and Path(arg).suffix == ".model":
        model, source, identity = unigram_model_from_spm(arg), load_spm_model(arg), None
    else:
        named = NAMED_FILES.get(arg)
        tj = load_tokenizer_json(named_path(arg), named.sha256) if named else load_tokenizer_json(arg)
        model, source, identity = unigram_model_from_tokenizer_json(tj), tj.data, identity_plan(tj.data)
        compiled = compiled_plan(tj.data, *(() if jit else (interpreted_module(_hf_norm_kernels),
                                                            interpreted_module(_hf_pretok_kernels),
                                                            interpreted_module(_hf_precompiled))))
    engine = DatrieUnigram(model, f"fast:{arg}", tie_break=tie_break, trie=trie, offsets=offsets, jit=jit,
                           identity=identity, compiled=compiled)
    decoder = decoder_or_none(source)
    if decoder is not None:  # the optional contract of tokspec.decoding (decode, specials, n_vocab)
        engine.decode = decoder.decode  # type: ignore[attr-defined]
        engine.special_tokens = lambda: dict(decoder.specials)  # type: ignore[attr-defined]
        engine.n_vocab = decoder.n_vocab  # type: ignore[attr-defined]
    return engine
