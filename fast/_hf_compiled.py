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
(``[...]``, ``\\p{...}``), a run of one (``X{k,}``, ``X+``; X a class or one literal character,
as in ``" {2,}"``) or a ``String``, ``Strip``, ``Prepend``, ``Lowercase``, ``StripAccents``, ``Nmt``
(tables of ``tokspec.fast._hf_char_maps``), ``Precompiled`` (``tokspec.fast._hf_precompiled``,
run between the other steps with the grapheme clusters of ``tokspec.fast._hf_clusters``);
pretokenizer one ``Metaspace`` with a one-character marker, or ``Split``/``Whitespace``/
``WhitespaceSplit`` steps with an optional final ``Metaspace`` (``tokspec.fast._hf_split_plan``, run
by ``tokspec.fast._hf_pretok_split``). Out of scope: other regexes, other pretokenizers. Cost per
text: O(n) kernel work, a UTF-32 encode, one kernel call with a Metaspace pretokenizer and no
``Precompiled`` (else two, and two more per ``Precompiled``, plus a regex search for joining
characters); building a plan costs the tables of ``tokspec.fast._hf_norm_tables`` (about 0.5 s,
once per process) and 0.3 s per character-map table.
"""

from __future__ import annotations

import base64
import binascii
import functools
from types import ModuleType
from typing import Any

import numpy as np
import regex

from tokspec._interpreted import interpreted_module
from tokspec.fast import _hf_clusters, _hf_norm_forms, _hf_norm_kernels, _hf_precompiled, _hf_pretok_kernels, _hf_pretok_split
from tokspec.fast._hf_char_maps import MAPS, stacked
from tokspec.fast._hf_identity import _ONE_CHAR_CLASS
from tokspec.fast._hf_norm_tables import class_bits, unicode_tables
from tokspec.fast._hf_split_plan import SplitPlan, split_plan
from tokspec.formats.normalize import WHITE_SPACE
from tokspec.formats.spm_normalize import CharsMap

__all__ = ["CompiledPipeline", "compiled_plan"]

_FORMS = {"NFD": 0, "NFC": 1, "NFKD": 2, "NFKC": 3}  # bit 0: compose, bit 1: compatibility
_WHITE = sorted(map(ord, WHITE_SPACE))
_NONE = np.zeros(0, dtype=np.int64)
PRECOMPILED = -1  # a program row run by the Precompiled kernel, between run_steps calls
#: ``X{k,}`` or ``X+`` for X one class, one literal character or one escaped punctuation character.
_RUN = regex.compile(r"(?P<atom>" + _ONE_CHAR_CLASS.pattern + r"|[^\\.^$|?*+()\[\]{}]|\\[^A-Za-z0-9])"
                     r"(?:\{(?P<k>[1-9][0-9]*),\}|(?P<plus>\+))")


class _Program:
    """Rows ``(kind, a, b, c, d)`` of ``run_chain``, the strings they point into, the class patterns."""

    def __init__(self) -> None:
        self.rows: list[tuple[int, int, int, int, int]] = []
        self.strs: list[int] = []
        self.classes: list[regex.Pattern[str]] = []
        self.maps: list[str] = []
        self.charsmaps: list[tuple[np.ndarray, np.ndarray, int, np.ndarray, int]] = []

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
        if kind in MAPS:
            if kind not in self.maps:
                self.maps.append(kind)
            self.rows.append((_hf_norm_kernels.MAP, self.maps.index(kind), 0, 0, 0))
            return True
        if kind == "Precompiled":
            return self._precompiled(spec)
        return False

    def _precompiled(self, spec: dict[str, Any]) -> bool:
        """A Precompiled row; an empty charsmap is the identity; no plan when the blob does not
        parse or its pool is not UTF-8 (the general path then reports the error or the bytes)."""
        try:
            blob = base64.b64decode(str(spec.get("precompiled_charsmap") or ""), validate=True)
            cm = CharsMap.parse(blob, "plan")
            if cm is not None:
                [part.decode("utf-8") for part in cm.pool.split(b"\x00")]
        except (binascii.Error, ValueError):
            return False
        if cm is not None:
            units = np.asarray(cm.units, dtype=np.int64)
            root = int((units[0] >> 10) << ((units[0] & 512) >> 6)) if len(units) else 0
            self.rows.append((PRECOMPILED, len(self.charsmaps), 0, 0, 0))
            memo = np.full(0x110000, -2, dtype=np.int32)  # per code point: its own lookup (-2: not yet)
            most = max(1, *map(len, cm.pool.split(b"\x00")))  # the longest replacement, in bytes
            self.charsmaps.append((units, np.frombuffer(cm.pool, dtype=np.uint8), root, memo, most))
        return True

    def _replace(self, pattern: dict[str, Any], content: str) -> bool:
        if "String" in pattern:
            literal = str(pattern["String"])
            if literal:  # an empty literal matches only the empty string: Replace is the identity
                self.rows.append((_hf_norm_kernels.REPLACE_STRING, *self.string(literal), *self.string(content)))
            return True
        source = pattern.get("Regex")
        if source is None or any(op in source for op in ("--", "&&", "||", "~~")):
            return False
        run = _RUN.fullmatch(source)
        if run is not None:
            least = 1 if run.group("plus") else int(run.group("k"))
            self.rows.append((_hf_norm_kernels.REPLACE_RUNS, len(self.classes), least, *self.string(content)))
            self.classes.append(regex.compile(run.group("atom")))
            return True
        if not _ONE_CHAR_CLASS.fullmatch(source):
            return False
        self.rows.append((_hf_norm_kernels.REPLACE_CLASS, len(self.classes), *self.string(content), 0))
        self.classes.append(regex.compile(source))
        return True


class CompiledPipeline:
    """One pipeline's program and tables (module docstring): :meth:`arrays`."""

    def __init__(self, program: _Program, classes: np.ndarray, marker: str, prepend: bool, split: bool,
                 kernels: ModuleType = _hf_norm_kernels, pretok: ModuleType = _hf_pretok_kernels,
                 precompiled: ModuleType = _hf_precompiled, splits: SplitPlan | None = None) -> None:
        self.splits = splits  # not None: the pretokenizer is split steps (tokspec.fast._hf_split_plan)
        self.prog = np.array(program.rows, dtype=np.int64).reshape(-1, 5)
        # the program cut at its Precompiled rows: [steps, charsmap, steps, charsmap, ..., steps]
        cuts = [i for i, row in enumerate(program.rows) if row[0] == PRECOMPILED]
        bounds = [-1, *cuts, len(program.rows)]
        self.parts = [self.prog[s + 1:e] for s, e in zip(bounds, bounds[1:])]
        self.charsmaps = [program.charsmaps[program.rows[i][1]] for i in cuts]
        self.strs = np.array(program.strs, dtype=np.int32)
        t = unicode_tables()
        forms = tuple(sorted({row[1] for row in program.rows if row[0] == _hf_norm_kernels.FORM}))
        self.tables = (_form_info(forms), t.dec_start, t.dec_flat, t.pair_keys, t.pair_vals, *stacked(program.maps))
        self.classes = classes
        self.marker, self.prepend, self.split = ord(marker), prepend, split
        self.kernels, self.pretok, self.precompiled = kernels, pretok, precompiled
        # no Precompiled step, a Metaspace pretokenizer, and pretok's run_chain is kernels': one kernel call
        self.fused = not cuts and splits is None and getattr(pretok, "run_chain", None) is kernels.run_chain

    def arrays(self, text: str, alignment: bool = True) -> tuple[np.ndarray, np.ndarray, tuple[np.ndarray, ...]]:
        """(normalized UTF-8 bytes, pretoken byte bounds, (origin starts, origin ends, HF span
        starts, HF span ends) per normalized character) of ``text`` (a str of scalar values).
        ``alignment=False``: the four alignment arrays are empty."""
        cps = np.frombuffer(str.encode(text, "utf-32-le"), dtype=np.int32)  # a str subclass cannot lie
        if self.fused:
            data, bounds, *aligned = self.pretok.chain_metaspace(
                cps, self.prog, self.strs, self.classes, *self.tables, self.marker, self.prepend, self.split, alignment)
            return (data, bounds, tuple(aligned)) if alignment else (data, bounds, (_NONE, _NONE, _NONE, _NONE))
        state = self.kernels.run_chain(cps, self.parts[0], self.strs, self.classes, *self.tables)
        for charsmap, part in zip(self.charsmaps, self.parts[1:]):
            joined = _hf_clusters.joined_cps(state[0], self.precompiled)
            state = self.precompiled.precompiled_step(
                *state, np.zeros(len(state[0]), dtype=np.bool_) if joined is None else joined, *charsmap)
            if len(part):
                state = self.kernels.run_steps(*state, part, self.strs, self.classes, *self.tables)
        if self.splits is not None:
            data, bounds, *aligned = self.splits.arrays(state, alignment)
        else:
            data, bounds, *aligned = self.pretok.metaspace_arrays(*state, self.marker, self.prepend, self.split,
                                                                 alignment)
        if not alignment:
            return data, bounds, (_NONE, _NONE, _NONE, _NONE)
        return data, bounds, tuple(aligned)


@functools.lru_cache(maxsize=16)
def _form_info(forms: tuple[int, ...]) -> np.ndarray:
    """The tables' ``info`` with the bits of :func:`tokspec.fast._hf_norm_forms.mark_form_bits`
    for ``forms`` (a copy; computed by this process's kernels, once per set of forms)."""
    t = unicode_tables()
    info = t.info.copy()
    for form in forms:
        _hf_norm_forms.mark_form_bits(info, form, t.dec_start, t.dec_flat, t.pair_keys, t.pair_vals)
    info.setflags(write=False)
    return info


def compiled_plan(data: dict[str, Any], kernels: ModuleType = _hf_norm_kernels,
                  pretok: ModuleType = _hf_pretok_kernels,
                  precompiled: ModuleType = _hf_precompiled,
                  split_kernels: ModuleType | None = None) -> CompiledPipeline | None:
    """The compiled pipeline of a tokenizer.json's ``normalizer`` + ``pre_tokenizer``, or None
    (module docstring: what is supported). ``split_kernels`` (default: the compiled
    ``_hf_pretok_split``, or its interpreted copy when ``pretok`` is not the compiled module)."""
    program = _Program()
    pre = data.get("pre_tokenizer")
    if not program.add(data.get("normalizer")):
        return None
    if not isinstance(pre, dict) or pre.get("type") != "Metaspace":
        if split_kernels is None:
            split_kernels = _hf_pretok_split if pretok is _hf_pretok_kernels else \
                interpreted_module(_hf_pretok_split)
        splits = split_plan(pre, split_kernels)
        classes = class_bits(program.classes)
        if splits is None or classes is None:
            return None
        return CompiledPipeline(program, classes, "\u2581", False, False, kernels, pretok, precompiled, splits)
    marker = str(pre.get("replacement", "\u2581"))
    scheme = pre.get("prepend_scheme")
    if scheme is None:  # older files: add_prefix_space
        scheme = "always" if pre.get("add_prefix_space", True) else "never"
    classes = class_bits(program.classes)
    if len(marker) != 1 or scheme not in ("always", "first", "never") or classes is None:
        return None
    return CompiledPipeline(program, classes, marker, scheme != "never", bool(pre.get("split", True)),
                            kernels, pretok, precompiled)
