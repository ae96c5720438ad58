"""The hf: adapter's offset corrections 1-3 (inserted text, byte fallback, composition) and the
tracing they share with case 4; see ``tokspec.engines._hf`` for what each case is and why.

Each correction has a per-token form (lists of spans; the definition) and a bulk form over int64
arrays (``*_arrays``) that finds, with compiled kernels (``_hf_kernels``) and numpy, the few tokens
a correction may change and runs the per-token code on those only, memoizing the normalizer calls
(they are pure functions of their argument). Both forms give the same spans
(tests/test_hf_fast_offsets.py).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

import numpy as np
import tokenizers.normalizers

from tokspec._hf_unicode import CCC_ZERO, in_ranges
from tokspec._offsets import utf8_array
from tokspec._types import Span
from tokspec.engines._hf_kernels import CharTable, char_byte_starts, code_points, coverage, split_byte_runs

__all__ = ["HfAlign", "BYTE_TOKEN", "METASPACE", "leads_with_nonstarter", "nfd"]

BYTE_TOKEN = re.compile(r"<0x([0-9A-Fa-f]{2})>\Z")
METASPACE = "\u2581"
_HF_NFD = tokenizers.normalizers.NFD()
_MEMO_LIMIT = 1 << 16  # entries per memo before it is cleared (bounds memory on long runs)


def _memo_get(memo: dict[str, Any], key: str, fn: Any) -> Any:
    out = memo.get(key)
    if out is None:
        if len(memo) >= _MEMO_LIMIT:
            memo.clear()
        out = memo[key] = fn(key)
    return out


class HfAlign:
    """Corrections 1-3 as methods of ``HfEngine`` (which sets the attributes below)."""

    library_tokenizer: Any
    _metaspace: bool
    _inserted_marks: set[str]
    _cluster: Any  # HfReorder._cluster

    def _init_tables(self) -> None:
        """Per-id tables for the bulk forms: the byte of each byte-fallback token (-1 for others),
        and whether a token is made only of one inserted-space mark. O(vocab)."""
        vocab = self.library_tokenizer.get_vocab(with_added_tokens=True)
        size = max(vocab.values(), default=-1) + 1
        self._byte_of_id = np.full(size, -1, dtype=np.int64)
        self._marks_only = np.zeros(size, dtype=np.bool_)
        for tok, i in vocab.items():
            m = BYTE_TOKEN.match(tok)
            if m:
                self._byte_of_id[i] = int(m.group(1), 16)
            if tok and len(set(tok)) == 1 and tok[0] in self._inserted_marks:
                self._marks_only[i] = True
        self._identity = CharTable(lambda ch: self._surface(ch) == ch)
        self._nonstarter = CharTable(leads_with_nonstarter)
        self._memo_surface: dict[str, str] = {}
        self._memo_combines: dict[str, bool] = {}

    def _normalize(self, s: str) -> str:
        norm = self.library_tokenizer.normalizer
        return s if norm is None else norm.normalize_str(s)

    def _surface(self, ch: str) -> str:
        """What one input character becomes before the model sees it (metaspace included)."""
        out = self._normalize(ch)
        return out.replace(" ", METASPACE) if self._metaspace else out

    def _empty_inserted(self, text: str, tokens: list[str], offsets: list[Span]) -> list[Span]:
        """Case 1 of the module docstring: a token made only of an inserted-space marker whose span
        holds no space -> empty span."""
        out = list(offsets)
        for i, (tok, (s, e)) in enumerate(zip(tokens, offsets)):
            if tok and len(set(tok)) == 1 and tok[0] in self._inserted_marks:
                surface = self._surface(text[s:e])
                if " " not in surface and METASPACE not in surface:
                    out[i] = (s, s)
        return out

    def _split_byte_runs(self, text: str, tokens: list[str], offsets: list[Span]) -> list[Span]:
        """Case 2 of the module docstring. O(run length) per run of byte tokens."""
        out = list(offsets)
        i = 0
        while i < len(tokens):
            j = i
            while j < len(tokens) and BYTE_TOKEN.match(tokens[j]) and offsets[j] == offsets[i]:
                j += 1
            if j == i:
                i += 1
                continue
            run = bytes(int(BYTE_TOKEN.match(t).group(1), 16) for t in tokens[i:j])  # type: ignore[union-attr]
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
        marker = METASPACE.encode("utf-8")
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
        shared with ``tokspec.reference`` or ``tokspec.formats.normalize``. Why it is exact: the
        decomposition of a normalized string is the canonical reordering of its sources'
        decompositions, which is stable (equal characters have equal combining classes and keep
        their order), so the k-th occurrence of a decomposed character comes from the k-th
        occurrence among the sources, in text order. O(cluster^2) per span.
        """
        norm = self._surface(text[s:e])
        pools = [list(nfd(self._surface(text[c]))) for c in range(s, e)]
        origins: list[Span] = []
        for ch in norm:
            picked: list[int] = []
            for d in nfd(ch):
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

    # --- bulk forms ------------------------------------------------------------------------------

    def _token_kinds(self, ids: np.ndarray, tokens: Callable[[], list[str]]) -> tuple[np.ndarray, np.ndarray]:
        """Per token: the byte of a byte-fallback token (-1 for others) and whether it is made only
        of an inserted-space mark, as the per-token path decides them from HF's token strings. By
        id, except for unknown tokens, whose string is the text they cover (Unigram): those are
        read from ``tokens()`` (called only when an unknown token is present). O(tokens)."""
        bval, marks = self._byte_of_id[ids], self._marks_only[ids]
        unk = getattr(self, "_unk_id", None)
        if unk is not None and 0 <= unk and (ids == unk).any():
            strings = tokens()
            for k in np.flatnonzero(ids == unk).tolist():
                m = BYTE_TOKEN.match(strings[k])
                bval[k] = int(m.group(1), 16) if m else -1
                tok = strings[k]
                marks[k] = bool(tok) and len(set(tok)) == 1 and tok[0] in self._inserted_marks
        return bval, marks

    def _empty_inserted_arrays(self, text: str, marks: np.ndarray, starts: np.ndarray,
                               ends: np.ndarray) -> None:
        """:meth:`_empty_inserted` in place on arrays: only mark-only tokens are looked at."""
        cand = np.flatnonzero(marks)
        emptied = []
        for k, s, e in zip(cand.tolist(), starts[cand].tolist(), ends[cand].tolist()):
            surface = _memo_get(self._memo_surface, text[s:e], self._surface)
            if " " not in surface and METASPACE not in surface:
                emptied.append(k)
        ends[emptied] = starts[emptied]

    def _split_byte_runs_arrays(self, text: str, bval: np.ndarray, starts: np.ndarray,
                                ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_split_byte_runs` on arrays: runs over characters the normalizer leaves as they
        are are split by the compiled ``split_byte_runs``; the others by ``_byte_owners``."""
        if not (bval >= 0).any():
            return starts, ends
        cps = code_points(text)
        ident = self._identity.lookup(cps)
        out_s, out_e, todo = split_byte_runs(bval, starts, ends, utf8_array(text), char_byte_starts(cps),
                                             ident, self._metaspace)
        for i, j in todo.reshape(-1, 2).tolist():
            span = (int(starts[i]), int(ends[i]))
            owners = self._byte_owners(text, span, bytes(bval[i:j].tolist()))
            if owners is not None:
                for k, o in zip(range(i, j), owners):
                    out_s[k], out_e[k] = (span[0], span[0]) if o is None else o
        return out_s, out_e

    def _absorb_composed_arrays(self, text: str, starts: np.ndarray, ends: np.ndarray) -> None:
        """:meth:`_absorb_composed` in place on arrays: only the characters right after a token
        and covered by none are tried (memoized ``_combines`` on the token's text + character)."""
        n = len(text)
        covered, last_by_end = coverage(starts, ends, n)
        cand = np.flatnonzero((last_by_end[:n] >= 0) & ~covered[:n])
        memo = self._memo_combines
        grown: dict[int, int] = {}
        for a, s in zip(cand.tolist(), starts[last_by_end[cand]].tolist()):
            first = memo.get(text[s:a + 1])  # the first step of the loop below, memoized inline
            if first is None:
                first = _memo_get(memo, text[s:a + 1], self._combines_str)
            if not first:
                continue
            j = a + 1
            while j < n and not covered[j] and _memo_get(memo, text[s:j + 1], self._combines_str):
                j += 1
            grown[a] = j
        if grown:
            for k in np.flatnonzero(np.isin(ends, list(grown)) & (starts < ends)).tolist():
                a = int(ends[k])
                if starts[k] == starts[last_by_end[a]]:
                    ends[k] = grown[a]

    def _combines_str(self, piece: str) -> bool:
        """:meth:`_combines` for ``piece = text[s:j + 1]``."""
        return self._normalize(piece) != self._normalize(piece[:-1]) + self._normalize(piece[-1])

    def _has_nonstarter(self, text: str) -> bool:
        """Does any character of ``text`` lead with a non-starter (``leads_with_nonstarter``)?"""
        return bool(self._nonstarter.lookup(code_points(text)).any())


def leads_with_nonstarter(ch: str) -> bool:
    """Does ``ch``'s canonical decomposition start with a non-starter, by HF's tables (so
    canonical reordering may move marks across it; e.g. U+0F81 -> U+0F71 U+0F80)? O(1)."""
    if not unicodedata.combining(ch) and not unicodedata.decomposition(ch):
        return False
    first = nfd(ch)[:1]
    return bool(first) and not in_ranges(ord(first), CCC_ZERO) and unicodedata.combining(first) > 0


def nfd(s: str) -> str:
    """Canonical decomposition by HF's own Unicode tables."""
    return _HF_NFD.normalize_str(s)
