"""Adapter for HF ``tokenizers`` (any ``tokenizer.json``: BPE, WordPiece, Unigram).

The library is called with truncation and padding disabled, ``add_special_tokens=False`` and no
post-processor: a ByteLevel post-processor with ``trim_offsets`` moves offsets off the spaces a token
holds even without special tokens (``"ĠĠ"`` over two spaces gets an empty span), which is not the
contract; no post-processor changes ids when no special token is added.
Special tokens are ordinary text: added tokens marked ``"special": true`` are dropped from the
definition before loading, so ``"[CLS]"`` in the input is tokenized like any other text (non-special
added tokens stay: they are part of the tokenizer's segmentation).

Decoding (:mod:`tokspec.decoding`): ``decode(ids)`` is HF's ``Tokenizer.decode(ids,
skip_special_tokens=False)`` on the tokenizer as defined, special added tokens included (built on
first use), so its configured decoder runs and special tokens are kept; ``special_tokens()`` are the
added tokens flagged special; ``n_vocab`` is ``get_vocab_size(with_added_tokens=True)``.

Offsets. HF reports character offsets into the original text, through its normalizer's alignments,
and for byte-level BPE a token splitting a character already covers the whole character, as the
contract wants (checked by the tests). Two cases differ from the contract and are converted here
(both recorded in ``corpora/production/findings.json``):

1. *Inserted text.* A token made only of the space marker HF inserted (Metaspace's ``▁`` with a
   prepend scheme, ByteLevel's ``Ġ`` with ``add_prefix_space``), not produced by any space in the
   input, is reported with the span of the following character, e.g. ``"Hello"`` -> ``"▁"`` at
   ``(0, 1)`` overlapping ``"Hello"`` at ``(0, 5)``. It covers no input, so the contract gives it the
   empty span ``(s, s)``.
2. *Byte fallback.* All byte tokens ``<0xHH>`` of one unknown piece get the whole piece's span
   (``"本語"`` -> six tokens at ``(1, 3)``). The contract gives each byte token the characters whose
   UTF-8 bytes it holds. The bytes are aligned to characters by normalizing each character alone
   (the run may hold a prefix or suffix of the span's normalized bytes); when that does not
   reproduce the bytes (the normalizer composed or reordered across characters: NFC of ``X`` +
   U+0308, or U+05BA U+11134 reordered by combining class) the span, and if need be the span
   extended to the end of its cluster, is traced to true origins (see *Tracing* below); when even
   that fails the run keeps HF's whole-piece span: the finest alignment that can be justified.
3. *Composition.* When the normalizer composes characters (NFC: ``e`` + U+0301 -> ``é``), HF gives
   the composed token the span of the FIRST character only, and the combining mark is covered by no
   token (``"é"`` -> ``(0, 1)`` over a 2-character text). The contract covers every character the
   token's text came from: an uncovered character right after a token is added to it when it
   combines with it, i.e. when ``norm(text[s:j+1]) != norm(text[s:j]) + norm(text[j])``. Characters
   the normalizer deletes (soft hyphen, ZWJ...) still belong to no token.
4. *Reordering.* NFC/NFKC reorder combining marks by combining class, and HF then aligns by
   position: in ``i`` U+A8E8 U+0329 the token ``U+0329`` gets the span of U+A8E8. When a token (or
   run of byte tokens) is not found in the normalization of its span and the span touches a
   combining mark, the enclosing cluster (a starter and the characters around it that begin with
   a non-starter in HF's tables, e.g. U+0F81 -> U+0F71 U+0F80, or that the normalizer deletes) is
   re-aligned: each normalized character of the cluster is traced to its true origin (see
   *Tracing*) and the cluster's tokens get exact origins, so starts may decrease there, as
   ``tokspec._types`` allows; when tracing fails every token of the cluster gets the whole
   cluster, the finest alignment that can be justified. A WordPiece ``[UNK]`` has no text of its
   own but stands for one whole pre-tokenized word, so its text is taken from HF's own normalizer
   and pre-tokenizer (``word_ids``); it is re-traced as above, and also when its span starts or
   ends on a character the normalizer deletes (HF's positional alignment after reordering, e.g.
   U+1E024 U+11236 -> ``(1, 2)`` where the contract says ``(0, 1)``). Unigram's unknown piece
   has no known text and keeps HF's span.

*Tracing* (``HfEngine._trace``, in ``_hf_align``) derives origins from HF alone: HF's normalization of the span,
each character's own normalization by HF, and canonical decompositions by HF's own ``NFD``
normalizer (so HF's Unicode tables, not Python's). Each normalized character is decomposed and
every decomposed character is matched to the first source character still holding it; this is
exact because canonical reordering is stable and composition takes the first unblocked mark. When
the multisets differ (a normalizer step that is not canonical, e.g. a multi-character Replace),
tracing gives up. Shared with the reference layer: nothing from ``tokspec.reference`` or
``tokspec.formats.normalize``; only the data table ``tokspec._hf_unicode.CCC_ZERO`` (HF's combining-class
differences, which ``tokspec.formats.normalize`` also uses) decides which characters open a cluster.

Code layout: this module holds the engine; ``_hf_align`` cases 1-3 and tracing, ``_hf_reorder``
case 4, ``_hf_kernels`` the compiled bulk passes. ``encode_arrays`` (and ``encode_batch_arrays``,
which calls HF's ``encode_batch``: the library's own threads) takes HF's ids and offsets as int64
arrays and applies cases 1-3 in bulk: compiled passes find the few tokens a case may change, and
only those run the per-token code (with its normalizer calls memoized per engine); case 4 runs on
texts holding a character that leads with a non-starter. ``encode`` is the same with HF's token
strings as pieces.

Out of scope: pairs of sequences, post-processors, decoding.
"""


from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import tokenizers

from tokspec._types import Encoder, Encoding, EncodingArrays, EngineInfo
from tokspec.engines._hf_align import METASPACE, HfAlign, leads_with_nonstarter
from tokspec.engines._hf_reorder import HfReorder
from tokspec.errors import EngineFault, VocabularyError
from tokspec.formats.vocab import TokenizerJson

__all__ = ["HfEngine", "strip_special_added_tokens"]


def strip_special_added_tokens(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a tokenizer.json dict without the added tokens flagged special and without the
    post-processor (which only adds special tokens, and, for ByteLevel with ``trim_offsets``,
    trims spaces out of offsets even when no special token is added). O(size)."""
    out = dict(data)
    out["added_tokens"] = [t for t in data.get("added_tokens") or [] if not t.get("special")]
    out["post_processor"] = None
    return out


class HfEngine(HfAlign, HfReorder, Encoder):
    """One HF ``tokenizers.Tokenizer`` with contract offsets (see module docstring)."""

    def __init__(self, name: str, tj: TokenizerJson, description: str = "") -> None:
        data = strip_special_added_tokens(tj.data)
        try:
            self.library_tokenizer = tokenizers.Tokenizer.from_str(json.dumps(data))
        except Exception as exc:  # the Rust loader raises a bare Exception
            raise VocabularyError(f"{tj.path!r}: HF tokenizers cannot load it: {exc}") from exc
        self.library_tokenizer.no_truncation()
        self.library_tokenizer.no_padding()
        self._byte_fallback = bool(data["model"].get("byte_fallback"))
        self._metaspace = METASPACE in json.dumps([data.get("normalizer"), data.get("pre_tokenizer")],
                                                  ensure_ascii=False)
        # Characters that stand for an inserted space: Metaspace's marker, ByteLevel's "Ġ" when
        # add_prefix_space is on (case 1 of the module docstring).
        self._inserted_marks = {METASPACE} if self._metaspace else set()
        if _has_bytelevel_prefix_space(data.get("pre_tokenizer")):
            self._inserted_marks.add("\u0120")
        model = data["model"]
        self._prefix = model.get("continuing_subword_prefix") or "" if model["type"] == "WordPiece" else ""
        self._wordpiece = model["type"] == "WordPiece"
        self._unk_id = model.get("unk_id") if model["type"] == "Unigram" else (
            self.library_tokenizer.token_to_id(model.get("unk_token") or ""))
        self._text_pieces = "ByteLevel" not in json.dumps(data.get("pre_tokenizer"))
        self._id_fix = _added_id_fix(self.library_tokenizer, data)
        self.info = EngineInfo(name, "tokenizer", "tokenizers", tokenizers.__version__, tj.sha256,
                               description or f"HF {tj.model_type} from {tj.path}",
                               thread_safe=True)  # never reconfigured after __init__; checked (issue 24)
        self._init_tables()
        self._full_data = tj.data
        self._full_tokenizer: tokenizers.Tokenizer | None = None

    def _decoder_tokenizer(self) -> tokenizers.Tokenizer:
        """The tokenizer as defined (special added tokens kept), for decoding; built once."""
        if self._full_tokenizer is None:
            self._full_tokenizer = tokenizers.Tokenizer.from_str(json.dumps(self._full_data))
            self._full_tokenizer.no_truncation()
            self._full_tokenizer.no_padding()
        return self._full_tokenizer

    def decode(self, ids: list[int]) -> str:
        """HF's ``decode`` with special tokens kept (module docstring)."""
        return str(self._decoder_tokenizer().decode(ids, skip_special_tokens=False))

    def encode_special(self, text: str, *, post_process: bool = False) -> Encoding:
        """Special mode (``tokspec.special_mode``): HF's ``encode`` on the tokenizer as defined
        (special added tokens matched with their flags), ``add_special_tokens=post_process``; offsets
        converted as in text mode, and a token the post-processor appends gets ``(n, n)`` (HF: (0, 0))."""
        try:
            enc = self._decoder_tokenizer().encode(text, add_special_tokens=post_process)
        except Exception as exc:
            raise EngineFault(f"{self.info.name}: HF encode failed on text={text!r:.80}: {exc}") from exc
        arrays = self._contract_arrays(text, enc)
        specials = set(self.special_tokens().values())
        ids, starts, ends = arrays.ids.tolist(), arrays.starts.tolist(), arrays.ends.tolist()  # type: ignore[union-attr]
        k = len(ids)
        while post_process and k > 0 and ids[k - 1] in specials and (starts[k - 1], ends[k - 1]) == (0, 0) and text:
            starts[k - 1] = ends[k - 1] = len(text)
            k -= 1
        return Encoding.of(ids, list(zip(starts, ends)))

    def special_tokens(self) -> dict[str, int]:
        """The added tokens flagged special (content -> id)."""
        return {t["content"]: int(t["id"]) for t in self._full_data.get("added_tokens") or [] if t.get("special")}

    @property
    def n_vocab(self) -> int:
        return int(self._decoder_tokenizer().get_vocab_size(with_added_tokens=True))

    def library_encode(self, text: str) -> tokenizers.Encoding:
        """HF's own output for ``text`` (no special tokens, no truncation, no padding)."""
        try:
            got: tokenizers.Encoding = self.library_tokenizer.encode(text, add_special_tokens=False)
            return got
        except Exception as exc:
            raise EngineFault(f"{self.info.name}: HF encode failed on text={text!r:.80}: {exc}") from exc

    def library_encode_batch(self, texts: list[str]) -> list[tokenizers.Encoding]:
        """HF's own ``encode_batch`` output (the library's threads; same settings)."""
        try:
            return self.library_tokenizer.encode_batch(texts, add_special_tokens=False)  # type: ignore[no-any-return]
        except Exception as exc:
            raise EngineFault(f"{self.info.name}: HF encode_batch failed on {len(texts)} texts: {exc}") from exc

    def _encode_arrays(self, text: str) -> EncodingArrays:
        """Encode as arrays. O(n + tokens) compiled beyond HF's own encode, plus per-token Python
        only where a correction may apply (see module docstring)."""
        return self._contract_arrays(text, self.library_encode(text))

    def _encode_batch_arrays(self, texts: list[str]) -> list[EncodingArrays]:
        """Encode with HF's ``encode_batch``, then correct each text's offsets."""
        return [self._contract_arrays(t, enc) for t, enc in zip(texts, self.library_encode_batch(texts))]

    def _encode(self, text: str) -> Encoding:
        """Encode with HF's token strings as pieces (same ids and offsets as :meth:`_encode_arrays`)."""
        enc = self.library_encode(text)
        arrays = self._contract_arrays(text, enc).to_encoding()
        return Encoding(arrays.ids, arrays.offsets, tuple(enc.tokens)).validate(text, self.info.name)

    def _contract_arrays(self, text: str, enc: tokenizers.Encoding) -> EncodingArrays:
        """HF's output converted to contract offsets: cases 1-4 of the module docstring."""
        raw_ids = enc.ids
        ids = np.fromiter(raw_ids, dtype=np.int64, count=len(raw_ids))
        starts, ends = _span_arrays(enc.offsets)
        bval, marks = self._token_kinds(ids, lambda: enc.tokens)
        if self._inserted_marks:
            self._empty_inserted_arrays(text, marks, starts, ends)
        if self._byte_fallback:
            starts, ends = self._split_byte_runs_arrays(text, bval, starts, ends)
        if self.library_tokenizer.normalizer is not None:
            self._absorb_composed_arrays(text, starts, ends)
            if self._text_pieces and self._has_nonstarter(text):
                offsets = self._widen_reordered(text, enc.tokens, enc.ids,
                                                list(zip(starts.tolist(), ends.tolist())), enc.word_ids)
                starts, ends = _span_arrays(offsets)
        if self._id_fix:
            ids = np.where(np.isin(ids, list(self._id_fix)), [self._id_fix.get(int(i), -1) for i in ids], ids)
        return EncodingArrays(ids, starts, ends).validate(text, self.info.name)

    def _encode_lists(self, text: str) -> Encoding:
        """The per-token definition of every case (lists of spans, no bulk pass): the oracle the
        bulk path is tested against. Same result as :meth:`_encode`."""
        enc = self.library_encode(text)
        offsets = list(enc.offsets)
        if self._inserted_marks:
            offsets = self._empty_inserted(text, enc.tokens, offsets)
        if self._byte_fallback:
            offsets = self._split_byte_runs(text, enc.tokens, offsets)
        if self.library_tokenizer.normalizer is not None:
            offsets = self._absorb_composed(text, offsets)
            if self._text_pieces and any(leads_with_nonstarter(ch) for ch in text):
                offsets = self._widen_reordered(text, enc.tokens, enc.ids, offsets, enc.word_ids)
        ids = [self._id_fix.get(i, i) for i in enc.ids]
        return Encoding.of(ids, offsets, enc.tokens).validate(text, self.info.name)

    def token_piece(self, token_id: int) -> str:
        back = {file_id: hf_id for hf_id, file_id in self._id_fix.items()}
        piece = self.library_tokenizer.id_to_token(back.get(token_id, token_id))
        return str(token_id) if piece is None else piece




def _added_id_fix(tok: tokenizers.Tokenizer, data: dict[str, Any]) -> dict[int, int]:
    """HF id -> the file's id, for added tokens HF renumbered. Loading ignores an added token's
    ``id`` when it is not the next free id and numbers it in list order instead, so dropping the
    special tokens (DeepSeek's file: specials at 128000.., non-special tokens at 128800..) shifts
    the others; their ids are mapped back to the file's."""
    fix: dict[int, int] = {}
    for token in data.get("added_tokens") or []:
        got = tok.token_to_id(token["content"])
        if got is not None and got != token["id"]:
            fix[got] = token["id"]
    return fix


def _has_bytelevel_prefix_space(pre_tokenizer: Any) -> bool:
    """Is there a ByteLevel pre-tokenizer with ``add_prefix_space`` (possibly inside a Sequence)?"""
    if not isinstance(pre_tokenizer, dict):
        return False
    if pre_tokenizer.get("type") == "ByteLevel":
        return bool(pre_tokenizer.get("add_prefix_space"))
    return any(_has_bytelevel_prefix_space(p) for p in pre_tokenizer.get("pretokenizers") or [])


def _span_arrays(offsets: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    """(starts, ends) int64 arrays of a list of spans (flattened in C). O(tokens)."""
    flat = np.fromiter(itertools.chain.from_iterable(offsets), dtype=np.int64, count=2 * len(offsets))
    return flat[0::2].copy(), flat[1::2].copy()
