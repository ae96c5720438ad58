"""The hf: adapter's correction 4 (canonical reordering, and WordPiece ``[UNK]`` words): clusters
of combining marks re-aligned to their true origins; see ``tokspec.engines._hf`` for the rules.
Runs only on texts holding a character that leads with a non-starter; per-token Python.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tokspec._types import Span
from tokspec.engines._hf_align import BYTE_TOKEN, METASPACE, leads_with_nonstarter

__all__ = ["HfReorder"]

_MAX_TRACED_WORD = 256  # longest [UNK] word whose span is re-traced for deleted edges


class HfReorder:
    """Correction 4 as methods of ``HfEngine`` (which sets the attributes below and provides
    ``_normalize``, ``_trace`` from ``HfAlign``)."""

    library_tokenizer: Any
    _prefix: str
    _metaspace: bool
    _wordpiece: bool
    _unk_id: int | None
    _normalize: Callable[[str], str]
    _trace: Callable[[str, int, int], tuple[str, list[Span]] | None]

    def _unit_surface(self, piece: str) -> bytes:
        """The UTF-8 text a (non-byte) token stands for, as the normalizer produced it."""
        if self._prefix and piece.startswith(self._prefix):
            piece = piece[len(self._prefix):]
        if self._metaspace:
            piece = piece.replace(METASPACE, " ").lstrip(" ")
        return piece.encode("utf-8")

    def _widen_reordered(self, text: str, tokens: list[str], ids: list[int],
                         offsets: list[Span], word_ids: list[int | None]) -> list[Span]:
        """Case 4 of the module docstring. O(tokens) steps; a normalizer call per distinct (span
        text, surface) pair.

        A WordPiece ``[UNK]`` stands for one whole pre-tokenized word, so its normalized text is
        that word's (``_unk_surfaces``); any other unknown token (Unigram's) has no known text and
        keeps HF's span."""
        unk = self._unk_surfaces(text, tokens, ids, word_ids)
        pieces = [unk[k] if k in unk else self._run_piece(t) for k, t in enumerate(tokens)]
        clusters: dict[Span, list[int]] = {}  # cluster -> indices of tokens that must be widened
        # A normalizer call per token dominated (about 4.5 us a character on " \u0c4dEo" * N, 5x
        # HF's own encode); the answer depends only on the text span and the surface, which
        # repeat in real and adversarial text alike: one call per distinct pair (this call only).
        explained: dict[tuple[str, bytes], bool] = {}
        surfaces: dict[str, bytes] = {}

        def explains(s: int, e: int, surface: bytes) -> bool:
            key = (text[s:e], surface)
            known = explained.get(key)
            if known is None:
                known = explained[key] = self._explains(text, s, e, surface)
            return known

        i = 0
        while i < len(tokens):
            j = i + 1
            m = BYTE_TOKEN.match(tokens[i])
            while m and j < len(tokens) and BYTE_TOKEN.match(tokens[j]) and offsets[j] == offsets[i]:
                j += 1
            s, e = offsets[i]
            surface: bytes | None
            if m:
                surface = bytes(int(BYTE_TOKEN.match(t).group(1), 16) for t in tokens[i:j])  # type: ignore[union-attr]
            elif ids[i] == self._unk_id:
                surface = unk[i].encode("utf-8") if i in unk else None
            else:
                surface = surfaces.get(tokens[i])
                if surface is None:
                    surface = surfaces[tokens[i]] = self._unit_surface(tokens[i])
            if s < e and surface is not None and (not explains(s, e, surface)
                                                  or self._unk_overreaches(text, i, unk, s, e)):
                cluster = self._cluster(text, s, e)
                if explains(*cluster, surface):
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
        m = BYTE_TOKEN.match(token)
        if m:
            return int(m.group(1), 16)
        if self._prefix and token.startswith(self._prefix):
            return token[len(self._prefix):]
        return token

    def _cluster(self, text: str, s: int, e: int) -> Span:
        """Widen ``[s, e)`` to whole clusters: back to a non-combining character, on over combining
        marks, stepping over characters the normalizer deletes (they do not block reordering)."""
        def inside(ch: str) -> bool:
            return leads_with_nonstarter(ch) or self._normalize(ch) == ""

        while s > 0 and inside(text[s]):
            s -= 1
        while e < len(text) and inside(text[e]):
            e += 1
        return s, e

    def _explains(self, text: str, s: int, e: int, surface: bytes) -> bool:
        return surface in self._normalize(text[s:e]).encode("utf-8")



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
        if piece.startswith(METASPACE) and not norm.startswith(METASPACE, pos):
            piece = piece[1:]  # the marker HF inserted: covers nothing
        if not norm.startswith(piece, pos):
            return None
        chars = origin[pos:pos + len(piece)]
        out.append((min(o[0] for o in chars), max(o[1] for o in chars)) if chars else None)
        pos += len(piece)
    if not byte:
        pos = skip(pos)
    return out if pos == len(norm) and not byte else None

