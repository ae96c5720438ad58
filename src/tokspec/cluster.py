"""Findings grouped by cause: one bug, one finding, named in a maintainer's words.

A fuzz run finds the same bug on many texts; their minimized texts differ (``'\\u00a0a'``,
``'x\\u2003y'``...), so de-duplicating by text leaves a hundred findings for one bug. A *cause* is a
signature computed from one disagreement (:func:`cause_of`), cheap enough to compute on every raw
finding before shrinking:

- the classification (:data:`tokspec.diff.CLASSES`);
- the *pivot*: the character where the two engines' first differing tokens begin to disagree, and
  its kind: whitespace (with its general category), non-ASCII digit, other number, combining
  mark, a character whose class drifts between Unicode versions (:mod:`tokspec.unicode_drift`), an
  English contraction (and its case), letter, punctuation, control;
- the pattern alternative of the pretoken holding the pivot (cl100k_base's pattern: contraction,
  letters, numbers, punctuation, line breaks, whitespace) and whether the pretoken is *long*
  (:data:`LONG_PIECE` characters or more: "long pieces take another path");
- for a different segmentation inside one pretoken: "merge order";
- the two contract classes that are not about segmentation, ``"decode differs"`` and ``"special
  token from text"``, get their own vocabulary (:mod:`tokspec.cluster_contract`: replacement
  characters, byte pieces, joining rules, leading spaces; which side promoted which special, verbatim
  or a near miss).

The key (:attr:`Cause.key`) holds kinds and categories, never the character itself, so ``U+00A0``
and ``U+2007`` are one cause (both Zs whitespace) while ``U+00A0`` and a combining mark are two.
:attr:`Cause.name` is the readable name, with the first example's character
(``"U+00A0 NO-BREAK SPACE (Zs) is whitespace to one engine only"``). Faults group by side and
fault message (the input text cut out, as :func:`tokspec.app.finder.finding_key` does, and
numbers read as ``N``: positions and lengths vary from text to text, the fault does not).
:class:`Clusters` counts members per cause.

Heuristic by nature: two bugs that fire on the same kind of character in the same alternative are
one cause (the record of the first still shows its text), and one bug may show as two causes when
its texts diverge at different kinds of character. Out of scope: aligning token sequences beyond
the first divergence.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Any

import regex

from tokspec._types import Encoder
from tokspec.unicode_drift import drift_reason

__all__ = ["Cause", "Clusters", "cause_of", "char_kind", "LONG_PIECE"]

#: A pretoken of at least this many characters is "long" (libraries switch algorithms for long pieces).
LONG_PIECE = 48

_LINE_BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"
_CONTRACTION = regex.compile(r"'(?:[sdmtSDMT]|ll|LL|Ll|lL|ve|VE|Ve|vE|re|RE|Re|rE)(?![\p{L}])")


@dataclass(frozen=True)
class Cause:
    """One cause: ``key`` groups findings, ``name`` says it in words; the rest is for records."""

    key: tuple[Any, ...]
    name: str
    classification: str
    pivot: str | None = None
    category: str | None = None
    alternative: str | None = None
    tokens: tuple[str | None, str | None] = (None, None)

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "key": list(self.key), "classification": self.classification,
                "pivot": None if self.pivot is None else f"U+{ord(self.pivot):04X}", "category": self.category,
                "alternative": self.alternative, "tokens": list(self.tokens)}


def _describe(ch: str) -> str:
    """``U+00A0 NO-BREAK SPACE (Zs)``."""
    name = unicodedata.name(ch, "")
    return f"U+{ord(ch):04X}{' ' + name if name else ''} ({unicodedata.category(ch)})"


def char_kind(text: str, i: int) -> tuple[str, str]:
    """(kind, general category) of ``text[i]``: the vocabulary of cause names."""
    ch = text[i]
    cat = unicodedata.category(ch)
    if drift_reason(ch) is not None and not ch.isascii():
        return "drift", cat
    if ch == "'" and _CONTRACTION.match(text, i):
        after = text[i + 1:i + 3]
        return ("contraction upper" if after[:1].isupper() else "contraction"), cat
    if ch in _LINE_BREAKS:
        return "line break", "line break"
    if ch.isspace() or cat[0] == "Z" or ch in "\u180e\u200b\ufeff":
        return ("whitespace" if ch in " \t\n\r" else "unusual whitespace"), cat
    if cat == "Nd":
        return ("digit" if ch.isascii() else "non-ASCII digit"), cat
    if cat[0] == "N":
        return "number", cat
    if cat[0] == "M":
        return "combining mark", cat
    if cat[0] == "L":
        return ("letter" if ch.isascii() else "non-ASCII letter"), cat
    if cat[0] == "C":
        return "control", cat
    return ("punctuation" if ch.isascii() else "non-ASCII symbol"), cat


def _top_level(pattern: str) -> list[str]:
    """The top-level alternatives of a regex pattern (``|`` outside groups and classes)."""
    parts, depth, in_class, i, start = [], 0, False, 0, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            parts.append(pattern[start:i])
            start = i + 1
        i += 1
    return parts + [pattern[start:]]


def _alternatives() -> list[tuple[str, Any]]:
    from tokspec.engines._bytelevel import PATTERNS

    out = []
    for alt in _top_level(PATTERNS["cl100k_base"]):
        if "'" in alt:
            label = "contraction"
        elif "\\p{L}++" in alt or alt.endswith("\\p{L}+"):
            label = "letters"
        elif alt.startswith("\\p{N}"):
            label = "numbers"
        elif "[^\\s\\p{L}\\p{N}]" in alt:
            label = "punctuation"
        elif "[\\r\\n]" in alt:
            label = "line breaks"
        else:
            label = "whitespace"
        out.append((label, regex.compile(alt)))
    return out


_ALTS: list[tuple[str, Any]] = []


def _pretoken(text: str, pos: int) -> tuple[int, int, str]:
    """The cl100k_base pretoken holding character ``pos``: (start, end, alternative label)."""
    if not _ALTS:
        _ALTS.extend(_alternatives())
    from tokspec.engines._bytelevel import PATTERNS

    lo = max(0, pos - _SCAN)  # pretokens are local: scan a window, not a 2 MB text
    for m in regex.finditer(PATTERNS["cl100k_base"], text, pos=lo, endpos=min(len(text), pos + _SCAN)):
        if m.start() <= pos < m.end():
            piece = m.group()
            label = next((lab for lab, alt in _ALTS if alt.fullmatch(piece)), "whitespace")
            return m.start(), m.end(), label
        if m.start() > pos:
            break
    return pos, pos + 1, "none"


_SCAN = 4096


def _token(outcome: Any, index: int) -> tuple[int, int] | None:
    arrays = outcome.arrays
    if arrays is None or index >= len(arrays):
        return None
    return int(arrays.starts[index]), int(arrays.ends[index])


def _end(outcome: Any) -> int:
    arrays = outcome.arrays
    return int(arrays.ends.max()) if arrays is not None and len(arrays) else 0


def _pivot(text: str, spans: list[tuple[int, int]]) -> int:
    """The character where the first differing tokens disagree: the first character of the region
    they cover that is not plain ASCII alphanumeric (the usual trigger), else the region's end
    boundary (where one token stops and the other goes on), else its start."""
    lo = min(s for s, _ in spans)
    hi = max(e for _, e in spans)
    for i in range(lo, min(hi, len(text))):
        if not (text[i].isascii() and text[i].isalnum()):
            return i
    ends = sorted({e for _, e in spans})
    return min(ends[0], len(text) - 1) if ends else lo


def cause_of(a: Encoder, b: Encoder, comparison: Any) -> Cause:
    """The cause of one disagreement (module docstring). O(text) for the pretoken scan."""
    cls = str(comparison.classification)
    text = comparison.text
    if cls in ("engine fault", "special refusal differs"):  # the refusing side raised
        side = "A" if comparison.a.fault is not None else "B"
        fault = comparison.a.fault if side == "A" else comparison.b.fault
        message = str(fault)
        for piece in (repr(text), *(repr(text)[:n] for n in (120, 100, 80, 60, 40)), text if len(text) >= 8 else None):
            message = message.replace(piece, "") if piece else message  # the input cut out, as finding_key does
        kind = message.split(":", 1)[0]
        shape = regex.sub(r"\d+", "N", message)[:300]  # "offset 3=(3, 5) outside length 4": one cause
        return Cause((cls, side, shape), f"{side} ({(a if side == 'A' else b).info.name}) raises "
                     f"{kind}: {message[len(kind) + 1:].strip()[:120]}", cls)
    if cls in ("decode differs", "special token from text"):
        from tokspec.cluster_contract import decode_cause, special_cause

        contract_key, name, pivot = (decode_cause if cls == "decode differs" else special_cause)(a, b, comparison)
        return Cause(contract_key, name, cls, pivot, None if pivot is None else unicodedata.category(pivot))
    index = comparison.index or 0
    spans = [s for s in (_token(comparison.a, index), _token(comparison.b, index)) if s is not None]
    if not text:
        return Cause((cls,), cls, cls)
    pos = _pivot(text, spans) if spans else len(text) - 1
    pos = max(0, min(pos, len(text) - 1))
    kind, cat = char_kind(text, pos)
    p0, p1, alt = _pretoken(text, pos)
    long = p1 - p0 >= LONG_PIECE
    token_texts = tuple(None if s is None else text[s[0]:s[1]]
                        for s in (_token(comparison.a, index), _token(comparison.b, index)))
    ch = text[pos]
    inside = bool(spans) and all(p0 <= s and e <= p1 for s, e in spans)
    ends = [_end(comparison.a), _end(comparison.b)]
    if cls == "decoded text differs" and ends[0] != ends[1]:  # one side stops early: its tail is lost
        side = "A" if ends[0] < ends[1] else "B"
        lost = text[min(ends):max(ends)]
        spaces = ("whitespace", "line break", "unusual whitespace")
        kinds = sorted({"whitespace" if k in spaces else k
                        for k in (char_kind(lost, i)[0] for i in range(min(len(lost), 64)))})
        return Cause((cls, "tail lost", side, tuple(kinds)), f"{side} loses the end of the text "
                     f"({', '.join(kinds)})", cls, lost[:1] or None, None, alt, token_texts)  # type: ignore[arg-type]
    if long and cls in ("different segmentation", "same segmentation, different ids", "different ids"):
        key: tuple[Any, ...] = (cls, "long pieces", alt)
        name = f"long pieces: a {p1 - p0}-character {alt} pretoken is split differently"
    elif cls == "same segmentation, different ids":
        key, name = (cls, alt), f"same pieces, different ids in a {alt} pretoken (vocabulary or id map)"
    elif cls == "different segmentation" and inside and kind in ("letter", "digit", "non-ASCII letter"):
        key, name = (cls, "merge order", alt), f"merge order: the same {alt} pretoken is merged differently"
    elif kind == "drift":
        key = (cls, kind, cat[0])
        name = f"{_describe(ch)} is classified differently by another Unicode version ({drift_reason(ch)})"
    elif kind == "line break":
        key, name = (cls, kind, alt), f"line breaks ({_describe(ch)}) in a {alt} pretoken are split differently"
    elif kind == "unusual whitespace":
        key, name = (cls, kind, cat), f"{_describe(ch)} is whitespace to one engine only"
    elif kind.startswith("contraction"):
        word = text[pos:pos + 3].rstrip()
        case = "upper case " if kind == "contraction upper" else ""
        key, name = (cls, kind), f"{case}contraction {word!r} is split differently"
    elif kind in ("non-ASCII digit", "number", "combining mark", "control", "non-ASCII symbol"):
        key, name = (cls, kind, cat), f"{kind} {_describe(ch)} in a {alt} pretoken"
    else:
        key, name = (cls, kind, alt), f"{kind} {_describe(ch)} in a {alt} pretoken"
    if cls not in ("different segmentation", "same segmentation, different ids"):
        name = f"{cls}: {name}"
    return Cause(key, name, cls, ch, cat, alt, token_texts)  # type: ignore[arg-type]


@dataclass
class Clusters:
    """Causes seen so far, in order of first sight, with their member counts."""

    members: dict[tuple[Any, ...], int] = field(default_factory=dict)
    names: dict[tuple[Any, ...], str] = field(default_factory=dict)
    aliases: dict[tuple[Any, ...], tuple[Any, ...]] = field(default_factory=dict)

    def key_of(self, cause: Cause) -> tuple[Any, ...]:
        """The cluster ``cause`` belongs to: its own key, or the key of the minimized finding its
        unminimized text led to (:meth:`alias`)."""
        return self.aliases.get(cause.key, cause.key)

    def alias(self, raw: Cause, minimized: Cause) -> None:
        """An unminimized text with cause ``raw`` shrank to one with cause ``minimized``: later raw
        findings with ``raw``'s key join ``minimized``'s cluster without shrinking."""
        if raw.key != minimized.key and raw.key not in self.members:
            self.aliases.setdefault(raw.key, self.key_of(minimized))

    def add(self, cause: Cause, count: int = 1) -> bool:
        """Count ``count`` findings of ``cause``; True if the cause is new."""
        key = self.key_of(cause)
        new = key not in self.members
        self.members[key] = self.members.get(key, 0) + count
        self.names.setdefault(key, cause.name)
        return new

    def __contains__(self, cause: object) -> bool:
        return isinstance(cause, Cause) and self.key_of(cause) in self.members

    def __len__(self) -> int:
        return len(self.members)

    @property
    def findings(self) -> int:
        return sum(self.members.values())

    def summary(self) -> str:
        """``N findings in K causes``."""
        n, k = self.findings, len(self)
        return f"{n} finding{'' if n == 1 else 's'} in {k} cause{'' if k == 1 else 's'}"
