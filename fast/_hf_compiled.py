"""HF Unigram pipelines on any text, compiled: a tokenizer.json's normalizer as a kernel program.

:func:`compiled_plan` turns a ``tokenizer.json``'s ``normalizer`` and ``pre_tokenizer`` into a
:class:`CompiledPipeline` whose :meth:`~CompiledPipeline.arrays` gives what
``DatrieUnigram.normalized`` returns (normalized UTF-8 bytes, pretoken byte bounds, per-character
contract origins and HF spans) with no Python step per character: the text's code points go
through ``tokspec.fast._hf_norm_kernels.run_chain`` (one row per normalizer step) and
``tokspec.fast._hf_pretok_kernels.metaspace_arrays``. Written from HF's documented behaviour,
separately from ``tokspec.formats.hf_pipeline`` (the reference engines' path, the oracle:
``tests/test_fast_hf_norm.py`` checks both agree, and HF).

Supported (else no plan, None, and the engine takes the general path): normalizer steps
``Sequence``, ``NFC``/``NFD``/``NFKC``/``NFKD``, ``Replace`` whose pattern is one character class
(``[...]``, ``\\p{...}``) or a ``String``, ``Strip``, ``Prepend``; pretokenizer one ``Metaspace``
with a one-character marker. Out of scope: ``Lowercase``, ``Precompiled``, other regexes, other
pretokenizers (``WhitespaceSplit``, ``Split``, ``Whitespace``). Cost per text: O(n) kernel work, a
UTF-32 encode, two kernel calls; building a plan costs the tables of ``tokspec.fast._hf_norm_tables``
(about 0.5 s, once per process).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import numpy as np
import regex

from tokspec.fast import _hf_norm_kernels, _hf_pretok_kernels
from tokspec.fast._hf_identity import _ONE_CHAR_CLASS
from tokspec.fast._hf_norm_tables import class_bits, unicode_tables
from tokspec.formats.normalize import WHITE_SPACE

__all__ = ["CompiledPipeline", "compiled_plan"]

_FORMS = {"NFD": 0, "NFC": 1, "NFKD": 2, "NFKC": 3}  # bit 0: compose, bit 1: compatibility
_WHITE = sorted(map(ord, WHITE_SPACE))
_NONE = np.zeros(0, dtype=np.int64)


class _Program:
    """Rows ``(kind, a, b, c, d)`` of ``run_chain``, the strings they point into, the class patterns."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, int, int, int]] = []
        self.strs: list[int] = []
        self.classes: list[regex.Pattern[str]] = []

    def string(self, s: str | list[int]) -> tuple[int, int]:
        """(offset, length) of ``s``'s code points appended to ``strs``."""
        cps = [ord(c) for c in s] if isinstance(s, str) else s
        self.strs += cps
        return len(self.strs) - len(cps), len(cps)

    def add(self, spec: dict[str, Any] | None) -> bool:
        """Append the rows of one normalizer spec; False if a step is not supported."""
        if spec is None:
            return True
        kind = spec.get("type")
        if kind == "Sequence":
            return all(self.add(step) for step in spec.get("normalizers", []))
        if kind in _FORMS:
            self.rows.append((_hf_norm_kernels.FORM, _FORMS[kind], 0, 0, 0))
            return True
        if kind == "Strip":
            self.rows.append((_hf_norm_kernels.STRIP, int(spec.get("strip_left", True)),
                              int(spec.get("strip_right", True)), *self.string(_WHITE)))
            return True
        if kind == "Prepend":
            self.rows.append((_hf_norm_kernels.PREPEND, *self.string(str(spec["prepend"])), 0, 0))
            return True
        if kind == "Replace":
            return self._replace(spec["pattern"], str(spec["content"]))
        return False

    def _replace(self, pattern: dict[str, Any], content: str) -> bool:
        if "String" in pattern:
            literal = str(pattern["String"])
            if literal:  # an empty literal matches only the empty string: Replace is the identity
                self.rows.append((_hf_norm_kernels.REPLACE_STRING, *self.string(literal), *self.string(content)))
            return True
        source = pattern.get("Regex")
        if source is None or not _ONE_CHAR_CLASS.fullmatch(source) or any(op in source for op in ("--", "&&", "||", "~~")):
            return False
        self.rows.append((_hf_norm_kernels.REPLACE_CLASS, len(self.classes), *self.string(content), 0))
        self.classes.append(regex.compile(source))
        return True


class CompiledPipeline:
    """One pipeline's program and tables (module docstring): :meth:`arrays`."""

    def __init__(self, program: _Program, classes: np.ndarray, marker: str, prepend: bool, split: bool,
                 kernels: ModuleType = _hf_norm_kernels, pretok: ModuleType = _hf_pretok_kernels) -> None:
        self.prog = np.array(program.rows, dtype=np.int64).reshape(-1, 5)
        self.strs = np.array(program.strs, dtype=np.int32)
        t = unicode_tables()
        self.tables = (t.info, t.dec_start, t.dec_flat, t.pair_keys, t.pair_vals)
        self.classes = classes
        self.marker, self.prepend, self.split = ord(marker), prepend, split
        self.kernels, self.pretok = kernels, pretok

    def arrays(self, text: str, alignment: bool = True) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """(normalized UTF-8 bytes, pretoken byte bounds, (origin starts, origin ends, HF span
        starts, HF span ends) per normalized character) of ``text`` (a str of scalar values).
        ``alignment=False``: the four alignment arrays are empty."""
        cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.int32)
        state = self.kernels.run_chain(cps, self.prog, self.strs, self.classes, *self.tables)
        data, bounds, *aligned = self.pretok.metaspace_arrays(*state, self.marker, self.prepend, self.split)
        if not alignment:
            return data, bounds, (_NONE, _NONE, _NONE, _NONE)
        return data, bounds, tuple(aligned)


def compiled_plan(data: dict[str, Any], kernels: ModuleType = _hf_norm_kernels,
                  pretok: ModuleType = _hf_pretok_kernels) -> CompiledPipeline | None:
    """The compiled pipeline of a tokenizer.json's ``normalizer`` + ``pre_tokenizer``, or None
    (module docstring: what is supported)."""
    program = _Program()
    pre = data.get("pre_tokenizer")
    if not program.add(data.get("normalizer")) or not isinstance(pre, dict) or pre.get("type") != "Metaspace":
        return None
    marker = str(pre.get("replacement", "\u2581"))
    scheme = pre.get("prepend_scheme")
    if scheme is None:  # older files: add_prefix_space
        scheme = "always" if pre.get("add_prefix_space", True) else "never"
    classes = class_bits(program.classes)
    if len(marker) != 1 or scheme not in ("always", "first", "never") or classes is None:
        return None
    return CompiledPipeline(program, classes, marker, scheme != "never", bool(pre.get("split", True)),
                            kernels, pretok)
