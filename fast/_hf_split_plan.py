"""The compiled plan of an HF pre_tokenizer made of ``Split``, ``Whitespace``, ``WhitespaceSplit`` and
a final ``Metaspace``: the step rows and class table that ``tokspec.fast._hf_pretok_split`` runs.

:func:`split_plan` reads a tokenizer.json ``pre_tokenizer`` (one object, or a ``Sequence``, nested
ones flattened: HF runs them one after the other either way) and returns a :class:`SplitPlan`, or
None when a step cannot be compiled exactly (then the engine takes the general path, never a guess):

- ``Whitespace``: HF's ``\\w+|[^\\w\\s]+``; ``\\w`` and ``\\s`` are Unicode 16.0's
  (``tokspec._unicode16``), probed equal to HF's at every code point by ``tests/test_fast_hf_split.py``
  (Unicode's ``\\w``, not the Oniguruma one of HF's Split regexes: finding ``hf-onig-word-class``);
- ``WhitespaceSplit``: Rust's ``char::is_whitespace`` (White_Space), ``Removed``;
- ``Split`` with a non-empty ``String``, or a ``Regex`` that is one character class ``X``
  (``\\p{GC}`` of a general category, ``\\s \\S \\w \\W \\d \\D``, one literal or escaped
  character, or a bracket class of those without nesting or set operations), alone, ``X+`` or
  ``X{k,}``; any behavior, ``invert`` or not. Classes mean what ``tokspec.formats.hf_split``'s
  ``compile_split_regex`` makes of them (Unicode 16.0), at most 8 distinct classes;
- ``Metaspace`` (one-character marker) only as the last step; a pipeline without one is fine.

Out of scope (None): other regexes (alternations, lookarounds, case-insensitive groups...),
``Metaspace`` before a split, other pretokenizers. Cost of a plan: a class table of 1.1M entries,
about 0.1-0.3 s per class (``tokspec.fast._hf_norm_tables.class_bits``), once per plan.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np
import regex

from tokspec._unicode16 import GENERAL_CATEGORIES
from tokspec.fast import _hf_pretok_split as _kernels
from tokspec.fast._hf_norm_tables import class_bits
from tokspec.formats.hf_split import Dialect, compile_split_regex
from tokspec.formats.normalize import WHITE_SPACE

__all__ = ["SplitPlan", "split_plan"]

_BEHAVIOR = {"Isolated": _kernels.ISOLATED, "Removed": _kernels.REMOVED,
             "MergedWithPrevious": _kernels.MERGED_WITH_PREVIOUS, "MergedWithNext": _kernels.MERGED_WITH_NEXT,
             "Contiguous": _kernels.CONTIGUOUS}
_PROP = r"\\[pP]\{(?P<gc>[A-Z][a-z]?)\}"
_ESC = r"\\[sSwWdD]|\\[^A-Za-z0-9]"
_ITEM = rf"(?:\\[pP]\{{[A-Z][a-z]?\}}|{_ESC}|[^\]\\\[])"
#: One character class (the regex's only atom), then nothing, ``+`` or ``{k,}``.
_CLASS_REGEX = regex.compile(rf"(?P<atom>{_PROP}|{_ESC}|\[\^?{_ITEM}+\]|[^\\.^$|?*+()\[\]{{}}])"
                             r"(?:(?P<plus>\+)|\{(?P<k>[1-9][0-9]*),\})?")
_GC_NAME = regex.compile(r"\{([^}]*)\}")


@dataclass(frozen=True)
class SplitPlan:
    """Step rows ``(kind, a, b, behavior, invert)``, literal code points, the class table (bit j:
    class j), and the final Metaspace (``prepend`` 0 never, 1 always, 2 first), if any."""

    rows: np.ndarray
    strs: np.ndarray
    bits: np.ndarray
    metaspace: bool
    marker: int
    prepend: int
    split: bool
    kernels: ModuleType = _kernels

    def arrays(self, state: tuple[np.ndarray, ...], alignment: bool = True) -> tuple[np.ndarray, ...]:
        """(bytes, bounds, origin starts, origin ends, span starts, span ends) of a normalized state
        (``alignment=False``: the last four empty)."""
        cp = state[0]
        starts, ends = self.kernels.split_pieces(cp, self.bits, self.rows, self.strs)
        out: tuple[np.ndarray, ...] = self.kernels.pieces_arrays(
            *state, starts, ends, self.metaspace, self.marker, self.prepend, self.split, len(self.rows) == 0, alignment)
        return out


class _Builder:
    def __init__(self) -> None:
        self.rows: list[tuple[int, int, int, int, int]] = []
        self.strs: list[int] = []
        self.classes: list[tuple[str, Dialect]] = []

    def klass(self, source: str, dialect: Dialect = "oniguruma") -> int:
        """The bit of the class regex ``source`` read as ``dialect`` (added once)."""
        if (source, dialect) not in self.classes:
            self.classes.append((source, dialect))
        return self.classes.index((source, dialect))

    def add(self, spec: dict[str, Any]) -> bool:
        kind = spec.get("type")
        if kind == "Whitespace":
            word, space = self.klass(r"\w", "regex"), self.klass(r"\s", "regex")  # HF's own, not Oniguruma's
            self.rows.append((_kernels.WORDS, word, space, 0, 0))
            return True
        if kind == "WhitespaceSplit":
            white = "[" + "".join(regex.escape(c) for c in WHITE_SPACE) + "]"
            self.rows.append((_kernels.CLASS, self.klass(white), 1, _kernels.REMOVED, 0))
            return True
        if kind != "Split" or spec.get("behavior") not in _BEHAVIOR:
            return False
        behavior, invert = _BEHAVIOR[str(spec["behavior"])], int(bool(spec.get("invert")))
        pattern = spec.get("pattern", {})
        if "String" in pattern:
            literal = [ord(c) for c in str(pattern["String"])]
            if not literal:
                return False
            self.rows.append((_kernels.STRING, len(self.strs), len(literal), behavior, invert))
            self.strs += literal
            return True
        source = pattern.get("Regex")
        m = None if not isinstance(source, str) or any(op in source for op in ("--", "&&", "||", "~~")) \
            else _CLASS_REGEX.fullmatch(source)
        if m is None or any(name not in GENERAL_CATEGORIES for name in _GC_NAME.findall(m["atom"])):
            return False
        least = 1 if m["plus"] else int(m["k"] or 0)
        self.rows.append((_kernels.CLASS, self.klass(m["atom"]), least, behavior, invert))
        return True


def split_plan(pre: dict[str, Any] | None, kernels: ModuleType = _kernels) -> SplitPlan | None:
    """The compiled plan of ``pre`` (a tokenizer.json ``pre_tokenizer``), or None (module docstring)."""
    steps = _flatten(pre)
    if steps is None:
        return None
    meta = steps[-1] if steps and steps[-1].get("type") == "Metaspace" else None
    build = _Builder()
    if not all(build.add(step) for step in (steps[:-1] if meta else steps)):
        return None
    marker, prepend, split = 0x2581, 0, True
    if meta is not None:
        rep = str(meta.get("replacement", "\u2581"))
        scheme = meta.get("prepend_scheme")
        if scheme is None:  # older files: add_prefix_space
            scheme = "always" if meta.get("add_prefix_space", True) else "never"
        if len(rep) != 1 or scheme not in ("always", "first", "never"):
            return None
        marker, prepend, split = ord(rep), ("never", "always", "first").index(scheme), bool(meta.get("split", True))
    bits = np.zeros(0x110000, dtype=np.uint8)
    for j, (source, dialect) in enumerate(build.classes):
        column = None if j >= 8 else _class_column(source, dialect)
        if column is None:
            return None
        bits |= column << np.uint8(j)
    rows = np.array(build.rows, dtype=np.int64).reshape(-1, 5)
    return SplitPlan(rows, np.array(build.strs, dtype=np.int64), bits, meta is not None, marker, prepend, split,
                     kernels)


@functools.lru_cache(maxsize=64)
def _class_column(source: str, dialect: Dialect) -> np.ndarray | None:
    """uint8 0/1 over all code points: where the class regex ``source`` matches (None: it can match
    other than one character). Cached: a class costs 0.1-0.3 s."""
    column = class_bits([compile_split_regex(source, dialect)])
    if column is not None:
        column.flags.writeable = False  # shared by every plan of this process
    return column


def _flatten(pre: dict[str, Any] | None) -> list[dict[str, Any]] | None:
    """The steps of ``pre`` in order (Sequences flattened), or None if it is not a JSON object."""
    if pre is None:
        return []
    if not isinstance(pre, dict):
        return None
    if pre.get("type") != "Sequence":
        return [pre]
    out: list[dict[str, Any]] = []
    for item in pre.get("pretokenizers", []):
        inner = _flatten(item)
        if inner is None:
            return None
        out += inner
    return out
