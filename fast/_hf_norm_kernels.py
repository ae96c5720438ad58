"""HF ``tokenizers`` normalizers as compiled kernels over aligned code point arrays.

The state between steps is five arrays of one length ``m``: code points ``cp``, HF's span per
character (``ss``, ``se``: what HF reports) and the tokspec contract's origin (``os``, ``oe``: the
original characters it really came from), as ``tokspec.formats.normalize.Aligned`` defines them.
Every step is HF's documented behaviour seen as an edit list walked over the old characters
(that module's alignment model): an emitted character takes the span of the next old character
and consumes ``1 - change`` of them; an inserted one (``change > 0``) takes the span of the last
consumed one. Steps (:func:`run_chain` runs a program of them, one row per step):

- ``REPLACE_CLASS`` (pattern one character class, bit ``a`` of ``classes``): each member becomes
  ``content`` (all its characters take the member's span and origin; ``""`` deletes it);
- ``REPLACE_STRING`` (a literal, non-overlapping left to right): the match's characters but the
  last are consumed, the first content character takes the last one's span and the hull of all
  their origins, the rest are inserted after it (an empty content deletes the match);
- ``REPLACE_RUNS`` (a pattern ``X{k,}`` or ``X+``, X one character class: bit ``a``, ``k`` in ``b``):
  the same, for every maximal run of at least ``k`` members (greedy, left to right, these are
  exactly the matches);
- ``MAP`` (Lowercase, StripAccents: row ``a`` of the per-code-point tables of
  ``tokspec.fast._hf_char_maps``): each character becomes its mapping, all of whose characters take
  its span and origin (an empty mapping deletes it);
- ``FORM`` (NFC, NFD, NFKC, NFKD; UAX #15 over ``tokspec.fast._hf_norm_tables``): each character
  is replaced by its decomposition (first kept, rest inserted), runs of non-starters are stably
  sorted by combining class, and with composition each character not blocked from the last starter
  composes with it (the composite's change is the sum of both minus one; its origin is the hull of
  the two sources); HF's spans are positional, so a reordered mark takes its slot's span;
- ``STRIP``: leading / trailing White_Space deleted; ``PREPEND``: ``content`` inserted before a
  non-empty text, spans of the first character, origins empty at its span start.

FORM is :func:`tokspec.fast._hf_norm_forms._form` (that module: the theorem it relies on to skip
work). Checked against ``tokspec.formats.normalize`` and HF by ``tests/test_fast_hf_norm.py``.
Cost: O(n) for n characters, plus FORM's (that module). Out of scope: regex patterns other than
these, Precompiled (a separate kernel, ``tokspec.fast._hf_precompiled``, between :func:`run_steps`
calls: it needs grapheme clusters).
"""

from __future__ import annotations

import numpy as np

from tokspec._jit import kernel
from tokspec.fast._hf_norm_forms import _form, _state

__all__ = ["FORM", "MAP", "PREPEND", "REPLACE_CLASS", "REPLACE_RUNS", "REPLACE_STRING", "STRIP", "run_chain",
           "run_steps"]

REPLACE_CLASS, REPLACE_STRING, FORM, STRIP, PREPEND, REPLACE_RUNS, MAP = 1, 2, 3, 4, 5, 6, 7


@kernel
def _replace_class(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray,
                   classes: np.ndarray, bit: int, content: np.ndarray
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each character of class bit ``bit`` becomes ``content``, with its span and origin."""
    hits = 0
    for i in range(len(cp)):
        hits += (classes[cp[i]] >> bit) & 1
    if hits == 0:  # nothing to replace: the state itself (no step writes into its input)
        return cp, ss, se, os_, oe
    ncp, nss, nse, nos, noe = _state(len(cp) + hits * (len(content) - 1))
    k = 0
    for i in range(len(cp)):
        if (classes[cp[i]] >> bit) & 1:
            for q in range(len(content)):
                ncp[k], nss[k], nse[k], nos[k], noe[k] = content[q], ss[i], se[i], os_[i], oe[i]
                k += 1
        else:
            ncp[k], nss[k], nse[k], nos[k], noe[k] = cp[i], ss[i], se[i], os_[i], oe[i]
            k += 1
    return ncp, nss, nse, nos, noe


@kernel
def _replace_string(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray,
                    pattern: np.ndarray, content: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Non-overlapping matches of the literal ``pattern`` (non-empty), left to right, become
    ``content`` (:func:`_emit_matches`)."""
    m, n = len(cp), len(pattern)
    lens = np.zeros(m, np.int64)  # lens[i]: a match of that length begins at i
    i = 0
    while i + n <= m:
        hit = True
        for q in range(n):
            hit = hit and cp[i + q] == pattern[q]
        lens[i] = n if hit else 0
        i += n if hit else 1
    return _emit_matches(cp, ss, se, os_, oe, lens, content)


@kernel
def _replace_runs(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray,
                  classes: np.ndarray, bit: int, least: int, content: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``X{least,}`` for X the class bit ``bit`` (greedy, left to right): the matches are exactly
    the maximal runs of members of at least ``least`` characters; they become ``content``."""
    m = len(cp)
    lens = np.zeros(m, np.int64)
    i = 0
    while i < m:
        j = i
        while j < m and (classes[cp[j]] >> bit) & 1:
            j += 1
        if j - i >= least:
            lens[i] = j - i
        i = max(j, i + 1)
    return _emit_matches(cp, ss, se, os_, oe, lens, content)


@kernel
def _emit_matches(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray,
                  lens: np.ndarray, content: np.ndarray
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each match ``[i, i + lens[i])`` (disjoint, non-empty) becomes ``content``: every content
    character takes the match's last character's span and the hull of the match's origins."""
    m = len(cp)
    ncp, nss, nse, nos, noe = _state(m + int((lens > 0).sum()) * len(content) - int(lens.sum()))
    k = 0
    i = 0
    while i < m:
        n = lens[i]
        if n == 0:
            ncp[k], nss[k], nse[k], nos[k], noe[k] = cp[i], ss[i], se[i], os_[i], oe[i]
            k += 1
            i += 1
            continue
        lo, hi = os_[i:i + n].min(), oe[i:i + n].max()
        for q in range(len(content)):
            ncp[k], nss[k], nse[k], nos[k], noe[k] = content[q], ss[i + n - 1], se[i + n - 1], lo, hi
            k += 1
        i += n
    return ncp, nss, nse, nos, noe


@kernel
def _map_chars(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray,
               start: np.ndarray, flat: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Each character ``c`` becomes its mapping (``start[c]`` indexes ``flat``: the length, then the
    code points; -1: ``c`` itself): every new character takes ``c``'s span and origin, an empty
    mapping deletes ``c`` (Lowercase, StripAccents: ``tokspec.formats.normalize._per_char``)."""
    size = 0
    for i in range(len(cp)):
        at = start[cp[i]]
        size += 1 if at < 0 else flat[at]
    ncp, nss, nse, nos, noe = _state(size)
    k = 0
    for i in range(len(cp)):
        at = start[cp[i]]
        n = 1 if at < 0 else flat[at]
        for q in range(n):
            ncp[k] = cp[i] if at < 0 else flat[at + 1 + q]
            nss[k], nse[k], nos[k], noe[k] = ss[i], se[i], os_[i], oe[i]
            k += 1
    return ncp, nss, nse, nos, noe


@kernel
def run_chain(text: np.ndarray, prog: np.ndarray, strs: np.ndarray, classes: np.ndarray, info: np.ndarray,
              dec_start: np.ndarray, dec_flat: np.ndarray, keys: np.ndarray, vals: np.ndarray,
              map_start: np.ndarray, map_flat: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The normalizer program ``prog`` (rows ``(kind, a, b, c, d)``, strings in ``strs``) over the
    code points ``text``, from the identity alignment: the final state (module docstring)."""
    cp = text.astype(np.int32)
    ss = np.arange(len(cp), dtype=np.int64)
    se = ss + 1
    return run_steps(cp, ss, se, ss.copy(), se.copy(), prog, strs, classes, info, dec_start, dec_flat, keys, vals,
                     map_start, map_flat)


@kernel
def run_steps(cp: np.ndarray, ss: np.ndarray, se: np.ndarray, os_: np.ndarray, oe: np.ndarray, prog: np.ndarray,
              strs: np.ndarray, classes: np.ndarray, info: np.ndarray, dec_start: np.ndarray, dec_flat: np.ndarray,
              keys: np.ndarray, vals: np.ndarray, map_start: np.ndarray, map_flat: np.ndarray
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The program ``prog`` over a state (module docstring): the final state."""
    for r in range(len(prog)):
        kind, a, b, c, d = prog[r, 0], prog[r, 1], prog[r, 2], prog[r, 3], prog[r, 4]
        if kind == REPLACE_CLASS:
            cp, ss, se, os_, oe = _replace_class(cp, ss, se, os_, oe, classes, a, strs[b:b + c])
        elif kind == REPLACE_STRING:
            cp, ss, se, os_, oe = _replace_string(cp, ss, se, os_, oe, strs[a:a + b], strs[c:c + d])
        elif kind == REPLACE_RUNS:
            cp, ss, se, os_, oe = _replace_runs(cp, ss, se, os_, oe, classes, a, b, strs[c:c + d])
        elif kind == MAP:
            cp, ss, se, os_, oe = _map_chars(cp, ss, se, os_, oe, map_start[a], map_flat)
        elif kind == FORM:
            cp, ss, se, os_, oe = _form(cp, ss, se, os_, oe, a, info, dec_start, dec_flat, keys, vals)
        elif kind == STRIP:
            s, e = 0, len(cp)
            while a and s < e and _member(strs[c:c + d], cp[s]):
                s += 1
            while b and e > s and _member(strs[c:c + d], cp[e - 1]):
                e -= 1
            cp, ss, se, os_, oe = cp[s:e].copy(), ss[s:e].copy(), se[s:e].copy(), os_[s:e].copy(), oe[s:e].copy()
        elif len(cp):  # PREPEND: content before a non-empty text, empty origins at its first span
            first, end = np.full(b, ss[0]), np.full(b, se[0])
            cp = np.concatenate((strs[a:a + b], cp))
            ss, se = np.concatenate((first, ss)), np.concatenate((end, se))
            os_, oe = np.concatenate((first, os_)), np.concatenate((first, oe))
    return cp, ss, se, os_, oe


@kernel
def _member(sorted_cps: np.ndarray, c: int) -> bool:
    i = np.searchsorted(sorted_cps, c)
    return bool(i < len(sorted_cps) and sorted_cps[i] == c)
