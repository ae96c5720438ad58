"""Adapter for HF ``tokenizers`` (any ``tokenizer.json``: BPE, WordPiece, Unigram).

The library is called with truncation and padding disabled, ``add_special_tokens=False`` and no
post-processor: a ByteLevel post-processor with ``trim_offsets`` moves offsets off the spaces a token
holds even without special tokens (``"ĠĠ"`` over two spaces gets an empty span), which is not the
contract; no post-processor changes ids when no special token is added.
Special tokens are ordinary text: added tokens marked ``"special": true`` are dropped from the
definition before loading, so ``"[CLS]"`` in the input is tokenized like any other text (non-special
added tokens stay: they are part of the tokenizer's segmentation).

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

*Tracing* (``HfEngine._trace``) derives origins from HF alone: HF's normalization of the span,
each character's own normalization by HF, and canonical decompositions by HF's own ``NFD``
normalizer (so HF's Unicode tables, not Python's). Each normalized character is decomposed and
every decomposed character is matched to the first source character still holding it; this is
exact because canonical reordering is stable and composition takes the first unblocked mark. When
the multisets differ (a normalizer step that is not canonical, e.g. a multi-character Replace),
tracing gives up. Shared with the reference layer: nothing from ``tokspec.reference`` or
``tokspec.normalize``; only the data table ``tokspec._hf_unicode.CCC_ZERO`` (HF's combining-class
differences, which ``tokspec.normalize`` also uses) decides which characters open a cluster.

Out of scope: pairs of sequences, post-processors, decoding, HF's batch API.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from typing import Any

import tokenizers
import tokenizers.normalizers

from tokspec._hf_unicode import CCC_ZERO, in_ranges
from tokspec._types import Encoder, Encoding, EngineInfo, Span
from tokspec.errors import EngineFault, VocabularyError
from tokspec.vocab import TokenizerJson

__all__ = ["HfEngine", "strip_special_added_tokens"]

_BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")
_METASPACE = "\u2581"
_HF_NFD = tokenizers.normalizers.NFD()
_MAX_TRACED_WORD = 256  # longest [UNK] word whose span is re-traced for deleted edges


def strip_special_added_tokens(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a tokenizer.json dict without the added tokens flagged special and without the
    post-processor (which only adds special tokens, and, for ByteLevel with ``trim_offsets``,
    trims spaces out of offsets even when no special token is added). O(size)."""
    out = dict(data)
    out["added_tokens"] = [t for t in data.get("added_tokens") or [] if not t.get("special")]
    out["post_processor"] = None
    return out


class HfEngine(Encoder):
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
        self._metaspace = _METASPACE in json.dumps([data.get("normalizer"), data.get("pre_tokenizer")],
                                                  ensure_ascii=False)
        # Characters that stand for an inserted space: Metaspace's marker, ByteLevel's "Ġ" when
        # add_prefix_space is on (case 1 of the module docstring).
        self._inserted_marks = {_METASPACE} if self._metaspace else set()
        if _has_bytelevel_prefix_space(data.get("pre_tokenizer")):
            self._inserted_marks.add("\u0120")
        model = data["model"]
        self._prefix = model.get("continuing_subword_prefix") or "" if model["type"] == "WordPiece" else ""
        self._wordpiece = model["type"] == "WordPiece"
        self._unk_id = model.get("unk_id") if model["type"] == "Unigram" else (
            self.library_tokenizer.token_to_id(model.get("unk_token") or ""))
        self._text_pieces = "ByteLevel" not in json.dumps(data.get("pre_tokenizer"))
        self.info = EngineInfo(name, "tokenizer", "tokenizers", tokenizers.__version__, tj.sha256,
                               description or f"HF {tj.model_type} from {tj.path}")

    def library_encode(self, text: str) -> tokenizers.Encoding:
        """HF's own output for ``text`` (no special tokens, no truncation, no padding)."""
        try:
            return self.library_tokenizer.encode(text, add_special_tokens=False)
        except Exception as exc:
            raise EngineFault(f"{self.info.name}: HF encode failed on text={text!r:.80}: {exc}") from exc

    def _encode(self, text: str) -> Encoding:
        """Encode; O(n) beyond HF's own encode (plus normalizer calls on byte-fallback runs)."""
        enc = self.library_encode(text)
        offsets = list(enc.offsets)
        if self._inserted_marks:
            offsets = self._empty_inserted(text, enc.tokens, offsets)
        if self._byte_fallback:
            offsets = self._split_byte_runs(text, enc.tokens, offsets)
        if self.library_tokenizer.normalizer is not None:
            offsets = self._absorb_composed(text, offsets)
            if self._text_pieces and any(_leads_with_nonstarter(ch) for ch in text):
                offsets = self._widen_reordered(text, enc.tokens, enc.ids, offsets, enc.word_ids)
        return Encoding.of(enc.ids, offsets, enc.tokens).validate(text, self.info.name)

    def _normalize(self, s: str) -> str:
        norm = self.library_tokenizer.normalizer
        return s if norm is None else norm.normalize_str(s)

    def _surface(self, ch: str) -> str:
        """What one input character becomes before the model sees it (metaspace included)."""
        out = self._normalize(ch)
        return out.replace(" ", _METASPACE) if self._metaspace else out

    def _empty_inserted(self, text: str, tokens: list[str], offsets: list[Span]) -> list[Span]:
        """Case 1 of the module docstring: a token made only of an inserted-space marker whose span
        holds no space -> empty span."""
        out = list(offsets)
        for i, (tok, (s, e)) in enumerate(zip(tokens, offsets)):
            if tok and len(set(tok)) == 1 and tok[0] in self._inserted_marks:
                surface = self._surface(text[s:e])
                if " " not in surface and _METASPACE not in surface:
                    out[i] = (s, s)
        return out

    def _split_byte_runs(self, text: str, tokens: list[str], offsets: list[Span]) -> list[Span]:
        """Case 2 of the module docstring. O(run length) per run of byte tokens."""
        out = list(offsets)
        i = 0
        while i < len(tokens):
            j = i
            while j < len(tokens) and _BYTE_TOKEN.match(tokens[j]) and offsets[j] == offsets[i]:
                j += 1
            if j == i:
                i += 1
                continue
            run = bytes(int(_BYTE_TOKEN.match(t).group(1), 16) for t in tokens[i:j])  # type: ignore[union-attr]
            owners = self._byte_owners(text, offsets[i], run)
            if owners is not None:
                s = offsets[i][0]
                out[i:j] = [(s, s) if o is None else o for o in owners]
            i = j
        return out

    def _byte_owners(self, text: str, span: Span, run: bytes) -> list[Span | None] | None:
        """For each byte of ``run``, the original characters it came from (None: inserted), or
        None when no alignment of the span's normalized bytes reproduces ``run``.

        ``run`` may be the whole normalized span, or a prefix or suffix of it (when a character's
        normalized form is split between this run and a neighbouring token, e.g. U+0344 -> U+0308
        U+0301 with only U+0308 in the run); a prepended metaspace marker counts as inserted.
        Characters are first normalized one at a time; when that does not reproduce the bytes (the
        normalizer composed or reordered across characters) the span is traced (``_trace``).
        """
        s, e = span
        surfaces = [self._surface(text[c]) for c in range(s, e)]
        owners = self._bytes_with_origins("".join(surfaces), [(c, c + 1) for c, sf in
                                                              zip(range(s, e), surfaces) for _ in sf])
        found = self._match_run(*owners, run)
        if found is not None:
            return found
        for end in dict.fromkeys([e, self._cluster(text, e - 1, e)[1]]):
            # HF gives a composed character the span of its first source only, so the marks it
            # absorbed may lie after the span: trace up to the end of the cluster as well
            traced = self._trace(text, s, end)
            found = None if traced is None else self._match_run(*self._bytes_with_origins(*traced), run)
            if found is not None:
                return found
        return None

    def _match_run(self, whole: bytes, origins: list[Span], run: bytes) -> list[Span | None] | None:
        """Per-byte origins of ``run`` as the whole of ``whole``, a prefix or a suffix, after an
        optional metaspace marker HF inserted (origin None); None if it is none of these."""
        marker = _METASPACE.encode("utf-8")
        if self._metaspace and run.startswith(marker) and not whole.startswith(marker):
            rest = self._match_run(whole, origins, run[len(marker):]) if len(run) > len(marker) else []
            inserted: list[Span | None] = [None] * len(marker)
            return None if rest is None else inserted + rest
        if whole.startswith(run):
            return list(origins[:len(run)])
        if whole.endswith(run):
            return list(origins[len(origins) - len(run):])
        return None

    @staticmethod
    def _bytes_with_origins(norm: str, origins: list[Span]) -> tuple[bytes, list[Span]]:
        """UTF-8 of ``norm`` and, per byte, the origin of the character holding it. O(len)."""
        per_byte = [o for ch, o in zip(norm, origins) for _ in ch.encode("utf-8")]
        return norm.encode("utf-8"), per_byte

    def _trace(self, text: str, s: int, e: int) -> tuple[str, list[Span]] | None:
        """HF's normalization of ``text[s:e]`` and each normalized character's true origin (the
        hull of the input characters its canonical decomposition came from), or None when the
        normalization is not a canonical rearrangement of the characters' own normalized forms.

        Derived only from HF itself: each character's own normalized form (HF's normalizer), and
        canonical decompositions by HF's ``NFD`` normalizer (HF's Unicode tables). Nothing is
        shared with ``tokspec.reference`` or ``tokspec.normalize``. Why it is exact: the
        decomposition of a normalized string is the canonical reordering of its sources'
        decompositions, which is stable (equal characters have equal combining classes and keep
        their order), so the k-th occurrence of a decomposed character comes from the k-th
        occurrence among the sources, in text order. O(cluster^2) per span.
        """
        norm = self._surface(text[s:e])
        pools = [list(_nfd(self._surface(text[c]))) for c in range(s, e)]
        origins: list[Span] = []
        for ch in norm:
            picked: list[int] = []
            for d in _nfd(ch):
                c = next((c for c, pool in enumerate(pools) if d in pool), None)
                if c is None:
                    return None
                pools[c].remove(d)
                picked.append(s + c)
            if not picked:
                return None
            origins.append((min(picked), max(picked) + 1))
        return (norm, origins) if not any(pools) else None

    def _absorb_composed(self, text: str, offsets: list[Span]) -> list[Span]:
        """Case 3 of the module docstring. O(n + tokens) plus 3 normalizer calls per character
        that follows a token but is covered by none (e.g. each space in BERT text)."""
        covered = [False] * (len(text) + 1)
        by_end: dict[int, list[int]] = {}
        for k, (s, e) in enumerate(offsets):
            covered[s:e] = [True] * (e - s)
            if s < e:
                by_end.setdefault(e, []).append(k)
        out = list(offsets)
        for a, ks in by_end.items():
            if a >= len(text) or covered[a]:
                continue
            s, j = offsets[ks[-1]][0], a
            while j < len(text) and not covered[j] and self._combines(text, s, j):
                j += 1
            for k in ks:  # the last token and any byte tokens sharing its span
                if offsets[k] == offsets[ks[-1]]:
                    out[k] = (offsets[k][0], j)
        return out

    def _combines(self, text: str, s: int, j: int) -> bool:
        """Does character ``j`` merge with ``text[s:j]`` under the normalizer?"""
        return self._normalize(text[s:j + 1]) != self._normalize(text[s:j]) + self._normalize(text[j])

    def _unit_surface(self, piece: str) -> bytes:
        """The UTF-8 text a (non-byte) token stands for, as the normalizer produced it."""
        if self._prefix and piece.startswith(self._prefix):
            piece = piece[len(self._prefix):]
        if self._metaspace:
            piece = piece.replace(_METASPACE, " ").lstrip(" ")
        return piece.encode("utf-8")

    def _widen_reordered(self, text: str, tokens: list[str], ids: list[int],
                         offsets: list[Span], word_ids: list[int | None]) -> list[Span]:
        """Case 4 of the module docstring. O(tokens) normalizer calls.

        A WordPiece ``[UNK]`` stands for one whole pre-tokenized word, so its normalized text is
        that word's (``_unk_surfaces``); any other unknown token (Unigram's) has no known text and
        keeps HF's span."""
        unk = self._unk_surfaces(text, tokens, ids, word_ids)
        pieces = [unk[k] if k in unk else self._run_piece(t) for k, t in enumerate(tokens)]
        clusters: dict[Span, list[int]] = {}  # cluster -> indices of tokens that must be widened
        i = 0
        while i < len(tokens):
            j = i + 1
            m = _BYTE_TOKEN.match(tokens[i])
            while m and j < len(tokens) and _BYTE_TOKEN.match(tokens[j]) and offsets[j] == offsets[i]:
                j += 1
            s, e = offsets[i]
            if m:
                surface = bytes(int(_BYTE_TOKEN.match(t).group(1), 16) for t in tokens[i:j])  # type: ignore[union-attr]
            elif ids[i] == self._unk_id:
                surface = unk[i].encode("utf-8") if i in unk else None
            else:
                surface = self._unit_surface(tokens[i])
            if s < e and surface is not None and (not self._explains(text, s, e, surface)
                                                  or self._unk_overreaches(text, i, unk, s, e)):
                cluster = self._cluster(text, s, e)
                if self._explains(text, *cluster, surface):
                    clusters.setdefault(cluster, []).extend(range(i, j))
            i = j
        out = list(offsets)
        for (cs, ce), widened in clusters.items():
            run = _cluster_tokens(offsets, cs, ce, min(widened), max(widened))
            if self._trace_cluster(text, pieces, offsets, run, (cs, ce), out):
                continue
            for k in run:
                s, e = offsets[k]
                if s == e:  # inserted text stays empty, moved to where the order allows
                    out[k] = (ce, ce) if k > max(widened) else (cs, cs)
                elif _needs_cluster(k, s, e, cs, ce, widened):
                    out[k] = (cs, ce)
        return out

    def _trace_cluster(self, text: str, pieces: list[str | int], offsets: list[Span], run: range,
                       cluster: Span, out: list[Span]) -> bool:
        """Give the tokens ``run`` (whose normalized texts are ``pieces``, see ``_run_piece``) of ``cluster`` (and the neighbouring tokens whose spans overlap
        it, e.g. ``"▁a"`` before the marks of ``a``) their exact origins in ``out``; False (and
        ``out`` untouched) when they cannot be traced. O(region^2)."""
        cs, ce = cluster
        lo, hi = run.start, run.stop - 1
        while lo > 0 and offsets[lo - 1][1] > cs and offsets[lo - 1][0] < ce:
            lo -= 1
        while hi + 1 < len(offsets) and offsets[hi + 1][0] < ce and offsets[hi + 1][1] > cs:
            hi += 1
        region = (min(cs, offsets[lo][0]), max(ce, offsets[hi][1]))
        exact = self._exact_origins(text, *region, pieces[lo:hi + 1])
        if exact is None:
            return False
        for k, traced in zip(range(lo, hi + 1), exact):
            out[k] = traced if traced is not None else (offsets[k][0], offsets[k][0])
        return True

    def _exact_origins(self, text: str, cs: int, ce: int,
                       run: list[str | int]) -> list[Span | None] | None:
        """Exact origins of the tokens whose pieces (``_run_piece``) are ``run`` that tile cluster ``[cs, ce)``, traced by
        ``_trace`` (canonical reordering and composition); None when the cluster cannot be traced
        or the tokens do not tile its normalization. O(cluster^2)."""
        traced = self._trace(text, cs, ce)
        if traced is None:
            return None
        return _tile(*traced, run, self._dropped if self._wordpiece else None)

    def _unk_surfaces(self, text: str, tokens: list[str], ids: list[int],
                      word_ids: list[int | None]) -> dict[int, str]:
        """For a WordPiece model, the normalized text of each ``[UNK]`` token (by index): the
        whole pre-tokenized word it replaces, as HF itself normalizes and pre-tokenizes ``text``
        (HF's ``word_ids`` index those words). Empty when not WordPiece, no ``[UNK]``, or when the
        words cannot be trusted: every other token of a word must spell the word, in order, and a
        ``[UNK]`` must be its word's only token. O(n) plus one normalizer and pre-tokenizer call."""
        if not self._wordpiece or self._unk_id is None or self._unk_id not in ids:
            return {}
        pre = self.library_tokenizer.pre_tokenizer
        norm = self._normalize(text)
        words = [w for w, _ in pre.pre_tokenize_str(norm)] if pre is not None else [norm]
        spelled: dict[int, list[int]] = {}
        for k, w in enumerate(word_ids):
            if w is None or not 0 <= w < len(words):
                return {}
            spelled.setdefault(w, []).append(k)
        out: dict[int, str] = {}
        for w, ks in spelled.items():
            if any(ids[k] == self._unk_id for k in ks):
                if len(ks) != 1:
                    return {}
                out[ks[0]] = words[w]
            elif "".join(str(self._run_piece(tokens[k])) for k in ks) != words[w]:
                return {}
        return out

    def _unk_overreaches(self, text: str, i: int, unk: dict[int, str], s: int, e: int) -> bool:
        """Does the WordPiece ``[UNK]`` token ``i`` (span ``[s, e)``) start or end on a character the
        normalizer deletes? After reordering HF may align a word's edge to a deleted mark, which
        belongs to no token; such a span is re-traced (words up to ``_MAX_TRACED_WORD`` characters,
        tracing is quadratic; longer ones keep HF's span). O(1) normalizer calls."""
        if i not in unk or e - s > _MAX_TRACED_WORD:
            return False
        return self._normalize(text[s]) == "" or self._normalize(text[e - 1]) == ""

    def _dropped(self, ch: str) -> bool:
        """Does HF's pre-tokenizer drop the normalized character ``ch`` (BERT: whitespace), so
        that no token covers it? O(1)."""
        pre = self.library_tokenizer.pre_tokenizer
        return pre is not None and not pre.pre_tokenize_str(ch)

    def _run_piece(self, token: str) -> str | int:
        """A token's normalized text (str), or its byte value for a byte-fallback token (int)."""
        m = _BYTE_TOKEN.match(token)
        if m:
            return int(m.group(1), 16)
        if self._prefix and token.startswith(self._prefix):
            return token[len(self._prefix):]
        return token

    def _cluster(self, text: str, s: int, e: int) -> Span:
        """Widen ``[s, e)`` to whole clusters: back to a non-combining character, on over combining
        marks, stepping over characters the normalizer deletes (they do not block reordering)."""
        def inside(ch: str) -> bool:
            return _leads_with_nonstarter(ch) or self._normalize(ch) == ""

        while s > 0 and inside(text[s]):
            s -= 1
        while e < len(text) and inside(text[e]):
            e += 1
        return s, e

    def _explains(self, text: str, s: int, e: int, surface: bytes) -> bool:
        return surface in self._normalize(text[s:e]).encode("utf-8")

    def token_piece(self, token_id: int) -> str:
        piece = self.library_tokenizer.id_to_token(token_id)
        return str(token_id) if piece is None else piece


def _needs_cluster(k: int, s: int, e: int, cs: int, ce: int, widened: list[int]) -> bool:
    """Must token ``k`` (span ``[s, e)`` inside cluster ``[cs, ce)``) take the whole cluster?

    Yes if it must be widened itself, lies between two widened tokens, or would otherwise break
    the order of starts (before the widened ones: ``s > cs``) or of ends (after: ``e < ce``).
    """
    if min(widened) <= k <= max(widened):
        return True
    return s > cs if k < min(widened) else e < ce


def _cluster_tokens(offsets: list[Span], cs: int, ce: int, first: int, last: int) -> range:
    """Indices of the run of tokens around ``first..last`` whose spans lie inside ``[cs, ce)``
    (empty spans included). O(run length)."""
    def inside(k: int) -> bool:
        return cs <= offsets[k][0] and offsets[k][1] <= ce

    lo, hi = first, last
    while lo > 0 and inside(lo - 1):
        lo -= 1
    while hi + 1 < len(offsets) and inside(hi + 1):
        hi += 1
    return range(lo, hi + 1)


def _has_bytelevel_prefix_space(pre_tokenizer: Any) -> bool:
    """Is there a ByteLevel pre-tokenizer with ``add_prefix_space`` (possibly inside a Sequence)?"""
    if not isinstance(pre_tokenizer, dict):
        return False
    if pre_tokenizer.get("type") == "ByteLevel":
        return bool(pre_tokenizer.get("add_prefix_space"))
    return any(_has_bytelevel_prefix_space(p) for p in pre_tokenizer.get("pretokenizers") or [])


def _leads_with_nonstarter(ch: str) -> bool:
    """Does ``ch``'s canonical decomposition start with a non-starter, by HF's tables (so
    canonical reordering may move marks across it; e.g. U+0F81 -> U+0F71 U+0F80)? O(1)."""
    if not unicodedata.combining(ch) and not unicodedata.decomposition(ch):
        return False
    first = _nfd(ch)[:1]
    return bool(first) and not in_ranges(ord(first), CCC_ZERO) and unicodedata.combining(first) > 0


def _nfd(s: str) -> str:
    """Canonical decomposition by HF's own Unicode tables."""
    return _HF_NFD.normalize_str(s)


def _tile(norm: str, origin: list[Span], pieces: list[str | int],
          dropped: Callable[[str], bool] | None = None) -> list[Span | None] | None:
    """Lay ``pieces`` (text, or one byte) over ``norm`` in order; each gets [min, max + 1) of its
    characters' origins; a piece that is only an inserted metaspace marker gets None (it keeps its
    empty span). Characters for which ``dropped`` holds (text the pre-tokenizer removes, e.g.
    BERT's whitespace) may lie between text pieces, covered by none. None if the pieces do not
    tile ``norm``."""
    def skip(pos: int) -> int:
        while dropped is not None and pos < len(norm) and dropped(norm[pos]):
            pos += 1
        return pos

    out: list[Span | None] = []
    pos = byte = 0
    for piece in pieces:
        if not isinstance(piece, int) and not byte and not norm.startswith(piece, pos):
            pos = skip(pos)
        if isinstance(piece, int):
            if pos >= len(norm) or norm[pos].encode("utf-8")[byte] != piece:
                return None
            out.append(origin[pos])
            byte += 1
            if byte == len(norm[pos].encode("utf-8")):
                pos, byte = pos + 1, 0
            continue
        if byte:
            return None
        if piece.startswith(_METASPACE) and not norm.startswith(_METASPACE, pos):
            piece = piece[1:]  # the marker HF inserted: covers nothing
        if not norm.startswith(piece, pos):
            return None
        chars = origin[pos:pos + len(piece)]
        out.append((min(o[0] for o in chars), max(o[1] for o in chars)) if chars else None)
        pos += len(piece)
    if not byte:
        pos = skip(pos)
    return out if pos == len(norm) and not byte else None
