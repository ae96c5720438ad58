"""HF Unigram pipelines on text their normalizer leaves unchanged: Metaspace straight to arrays.

Most text a Unigram ``tokenizer.json`` model sees is already normalized: NFC/NFKC text with plain
spaces and no characters a ``Replace`` removes. On such text the normalizer is the identity (every
original character is its own normalized character, aligned to itself), and the pretokenizer
``Metaspace`` only replaces each space by its marker, puts one marker in front, and cuts before each
marker. :class:`IdentityMetaspace` checks the first condition in C-level calls (regex searches,
``unicodedata.is_normalized``) and computes the second's output (normalized UTF-8 bytes, pretoken
byte bounds, per-character contract origins and HF spans) with numpy, with no Python object per
character. Written from HF's documented behaviour, separately from ``tokspec.formats.hf_pipeline`` (which
the reference engines use), so ``fast:`` and ``reference:`` are checked against each other and HF
(``tests/test_fast_hf_identity.py``, ``tests/test_fast_unigram_datrie.py``).

Identity conditions, per normalizer step, on the original text (a chain of identities is the
identity, so each step sees the original text): ``Replace``: every non-empty match is one character
equal to the content (``\\p{Zs}`` -> ``" "`` on plain spaces); ``NFC``/``NFD``/``NFKC``/``NFKD``:
Python calls the text normalized (HF's tables decompose and compose a subset of Python's: text
Python leaves alone, HF does too; ``tests/test_unigram_model.py`` probes the tables); ``Strip``: no
White_Space at the stripped end(s). Any other step (``Lowercase``, ``Prepend``, ``Precompiled``), or
a pretokenizer other than a single ``Metaspace`` with a one-character marker: no plan (None), and
the engine takes the general path.

Metaspace output on identity text ``t`` of ``n`` characters (scheme ``always``, or ``first``: the
whole text starts at offset 0): ``m = marker + t'`` where ``t'`` is ``t`` with spaces replaced, unless
``t'`` already starts with the marker (scheme ``never``: ``m = t'``). The inserted marker's contract
origin is the empty span ``(0, 0)``, its HF span that of the first character ``(0, 1)``; every other
character ``i`` maps to ``(i, i + 1)`` in both. With ``split``, a pretoken starts at every marker
but the first character. Cost: O(n) in C and numpy.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Any

import numpy as np
import regex

from tokspec.formats.normalize import WHITE_SPACE as _WHITE_SPACE  # what HF ``Strip`` removes

__all__ = ["IdentityMetaspace", "identity_plan"]


Check = Callable[[str], bool]
_EMPTY = np.zeros(0, dtype=np.int64)
_ASCII = "".join(map(chr, range(128)))


#: A pattern source that always matches exactly one character: one property or bracket class.
_ONE_CHAR_CLASS = regex.compile(r"\\[pP]\{[A-Za-z_ =]+\}|\[(?:\\.|[^\]\\\[])*\]")


def _replace_is_identity(pattern: regex.Pattern[str], content: str) -> Check:
    """Replace is the identity on text where every non-empty match is one character equal to
    ``content``. When the pattern is one character class and ``content`` at most one character,
    that is "no character of the class other than ``content``": one C-level search of the class
    minus ``content`` (a V1 set difference); otherwise the matches are walked."""
    source = pattern.pattern
    if len(content) <= 1 and _ONE_CHAR_CLASS.fullmatch(source) and not any(
            op in source for op in ("--", "&&", "||", "~~")):
        other = regex.compile(f"[{source}--[{regex.escape(content)}]]" if content else source, flags=regex.V1)

        def one_search(text: str) -> bool:
            return other.search(text) is None
        return _ascii_free(one_search) if other.search(_ASCII) is None else one_search

    def check(text: str) -> bool:
        return all(m.end() - m.start() == 1 and m.group() == content
                   for m in pattern.finditer(text) if m.end() > m.start())
    return check


def _ascii_free(check: Check) -> Check:
    """Mark ``check`` as true on every ASCII text (:meth:`IdentityMetaspace.applies` skips it there)."""
    check.ascii_free = True  # type: ignore[attr-defined]
    return check


def _strip_is_identity(left: bool, right: bool) -> Check:
    def check(text: str) -> bool:
        return not text or not ((left and text[0] in _WHITE_SPACE) or (right and text[-1] in _WHITE_SPACE))
    return check


def _step_checks(spec: dict[str, Any] | None) -> list[Check] | None:
    """Identity checks of a normalizer spec's steps, or None if a step has none (module docstring)."""
    if spec is None:
        return []
    kind = spec.get("type")
    if kind == "Sequence":
        out: list[Check] = []
        for step in spec.get("normalizers", []):
            checks = _step_checks(step)
            if checks is None:
                return None
            out += checks
        return out
    if kind in ("NFC", "NFD", "NFKC", "NFKD"):  # every ASCII character is stable under all four forms
        form: Any = kind
        return [_ascii_free(lambda text: unicodedata.is_normalized(form, text))]
    if kind == "Replace":
        pat = spec.get("pattern", {})
        if "Regex" in pat:
            pattern = regex.compile(pat["Regex"])
        elif "String" in pat:
            pattern = regex.compile(regex.escape(pat["String"]))
        else:
            return None
        return [_replace_is_identity(pattern, str(spec.get("content", "")))]
    if kind == "Strip":
        return [_strip_is_identity(bool(spec.get("strip_left", True)), bool(spec.get("strip_right", True)))]
    return None


class IdentityMetaspace:
    """The plan for one pipeline (module docstring): :meth:`applies` then :meth:`arrays`."""

    def __init__(self, checks: list[Check], marker: str, prepend: bool, split: bool) -> None:
        self.checks, self.marker, self.prepend, self.split = checks, marker, prepend, split
        self.ascii_checks = [check for check in checks if not getattr(check, "ascii_free", False)]
        self.marker_bytes = np.frombuffer(marker.encode("utf-8"), dtype=np.uint8)

    def applies(self, text: str) -> bool:
        """Is the normalizer the identity on ``text`` (non-empty)? ASCII text (a flag CPython keeps,
        O(1)) runs only the checks not marked true on all ASCII text (``ascii_checks``)."""
        return bool(text) and all(check(text) for check in (self.ascii_checks if text.isascii() else self.checks))

    def arrays(self, text: str, alignment: bool = True) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """(normalized UTF-8 bytes, pretoken byte bounds, (origin starts, origin ends, HF span
        starts, HF span ends) per normalized character) of ``text``, on which :meth:`applies`.
        ``alignment=False`` (ids only): the four alignment arrays are empty."""
        body = text.replace(" ", self.marker)
        lead = self.prepend and not body.startswith(self.marker)
        data = np.frombuffer(((self.marker if lead else "") + body).encode("utf-8"), dtype=np.uint8)
        if self.split:
            cuts = _starts_of(data, self.marker_bytes)
            cuts = cuts[cuts > 0]
        else:
            cuts = np.zeros(0, dtype=np.int64)
        bounds = np.concatenate(([0], cuts, [len(data)])).astype(np.int64)
        if not alignment:
            return data, bounds, (_EMPTY, _EMPTY, _EMPTY, _EMPTY)
        n = len(text)
        starts = np.arange(n, dtype=np.int64)
        ends = starts + 1
        if lead:  # the inserted marker: contract origin (0, 0), HF span (0, 1)
            o_start = np.concatenate(([0], starts))
            o_end = np.concatenate(([0], ends))
            s_start = o_start
            s_end = np.concatenate(([1], ends))
            return data, bounds, (o_start, o_end, s_start, s_end)
        return data, bounds, (starts, ends, starts.copy(), ends.copy())


def _starts_of(data: np.ndarray, needle: np.ndarray) -> np.ndarray:
    """Byte positions where ``needle`` (one whole UTF-8 character) starts in ``data``. UTF-8 is
    self-synchronizing: a match of a character's full encoding is always that character."""
    k = len(needle)
    if len(data) < k:
        return np.zeros(0, dtype=np.int64)
    hit = data[:len(data) - k + 1] == needle[0]
    for j in range(1, k):
        hit &= data[j:len(data) - k + 1 + j] == needle[j]
    return np.flatnonzero(hit).astype(np.int64)


def identity_plan(data: dict[str, Any]) -> IdentityMetaspace | None:
    """The plan for a tokenizer.json's ``normalizer`` + ``pre_tokenizer``, or None (module docstring)."""
    checks = _step_checks(data.get("normalizer"))
    pre = data.get("pre_tokenizer")
    if checks is None or not isinstance(pre, dict) or pre.get("type") != "Metaspace":
        return None
    marker = str(pre.get("replacement", "\u2581"))
    scheme = pre.get("prepend_scheme")
    if scheme is None:  # older files: add_prefix_space
        scheme = "always" if pre.get("add_prefix_space", True) else "never"
    if len(marker) != 1 or scheme not in ("always", "first", "never"):
        return None
    return IdentityMetaspace(checks, marker, scheme != "never", bool(pre.get("split", True)))
