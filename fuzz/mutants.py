"""Deliberately broken engines: the harness self-test ("does the fuzzing catch a real bug?").

Each mutant is built at run time from a *copy* of a real engine (a private re-import of the module,
or a rebuilt production object), never by editing another engineer's file:

=========================  ======================================================  =================
mutant                     the break                                               caught by
=========================  ======================================================  =================
bpe_dropped_merge          cl100k ranks without its first merge, two spaces  diff vs tiktoken
peek2_wrong_cell           Peek2 Table 1 cell (space, other) = 4 instead of 3       diff vs regex
viterbi_wrong_tiebreak     Viterbi keeps the *last* best predecessor on ties        spec tie-break
merge_without_soundness    lopt cuts at every 8th character, no sound-cut check     diff vs serial
offset_off_by_one          a token ending in a non-ASCII character ends 1 too far   diff vs tiktoken
=========================  ======================================================  =================

Engines are reachable by registry name ``tokspec.fuzz.mutants:NAME``; :func:`mutant_target` gives
the fuzz target that must catch each one. Out of scope: mutants of engines not built yet.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from typing import Any

from tokspec import Encoder, Encoding, EngineInfo, load_engine
from tokspec._jit import kernel as _REAL_KERNEL
from tokspec._offsets import char_offsets_from_byte_lengths
from tokspec.fuzz.targets import Target

__all__ = ["Mutant", "MUTANTS", "mutant_target", "HYP_MUTANTS", "bpe_dropped_merge", "peek2_wrong_cell",
           "merge_without_soundness", "offset_off_by_one", "DROPPED_TOKEN"]

DROPPED_TOKEN = b"  "  # rank 256: the first merge of cl100k (two spaces)
_ME = "tokspec.fuzz.mutants:"


@dataclass(frozen=True)
class Mutant:
    """``engine`` (a registry name) must be told apart from ``against`` by fuzzing; a
    ``hypothesis`` mutant names a factory in :data:`HYP_MUTANTS` instead. ``seed_from`` is the
    real target whose seed corpus the mutant run reads."""

    name: str
    description: str
    kind: str
    engine: str = ""
    against: str = ""
    seed_from: str = ""


MUTANTS: tuple[Mutant, ...] = (
    Mutant("bpe_dropped_merge", "cl100k without its first merge (two spaces)", "diff",
           _ME + "bpe_dropped_merge", "tiktoken:cl100k_base", "diff--reference_cl100k_base--tiktoken_cl100k_base"),
    Mutant("peek2_wrong_cell", "Peek2 table cell (1, 0) = 4", "diff", _ME + "peek2_wrong_cell",
           "pretok:cl100k_base", "diff--peek2_cl100k_base--pretok_cl100k_base"),
    Mutant("viterbi_wrong_tiebreak", "reference Viterbi with tie_break='last'", "hypothesis"),
    Mutant("merge_without_soundness", "lopt cutting at fixed 8-char boundaries", "diff",
           _ME + "merge_without_soundness", "tiktoken:cl100k_base",
           "diff--lopt_small_cl100k--tiktoken_cl100k_base"),
    Mutant("offset_off_by_one", "tiktoken with one end offset too far", "diff", _ME + "offset_off_by_one",
           "tiktoken:cl100k_base", "diff--reference_cl100k_base--tiktoken_cl100k_base"),
)


def _by_name(name: str) -> Mutant:
    for m in MUTANTS:
        if m.name == name:
            return m
    raise ValueError(f"unknown mutant name={name!r}; known: {', '.join(m.name for m in MUTANTS)}")


def mutant_target(name: str) -> Target:
    """The fuzz target that must catch mutant ``name`` (target name ``mutant--NAME``)."""
    m = _by_name(name)
    if m.kind == "hypothesis":
        return Target("mutant--" + name, "hypothesis", (), ("mutant_" + name,), m.description)
    return Target("mutant--" + name, "diff", (m.engine, m.against), (), m.description,
                  {"seed_from": m.seed_from})


def _uncached_kernel(fn: Any = None, *, inline: bool = False, cache: bool = False, lean: bool = False) -> Any:
    """``tokspec._jit.kernel`` (``@kernel``, ``@kernel(inline=True)``, ``@kernel(lean=True)``) with
    ``cache=False``: a mutant's kernels share their source file with the real ones, so cached
    machine code (with the mutant's globals baked in) would be loaded by the real engine later, in
    any process using the same cache. ``cache`` is accepted and ignored (always off). Bound to the
    real ``kernel`` at import, since :func:`_module_copy` swaps it."""
    return _REAL_KERNEL(fn, inline=inline, cache=False, lean=lean)


def _module_copy(module_name: str) -> Any:
    """A private, independent copy of ``module_name`` (same file, fresh globals; kernels compiled
    without the disk cache, see :func:`_uncached_kernel`), made by ``tokspec._interpreted.exec_copy``."""
    from tokspec._interpreted import exec_copy

    spec = importlib.util.find_spec(module_name)
    assert spec is not None and spec.origin is not None, module_name
    return exec_copy(spec.origin, module_name + "__mutant", _uncached_kernel)


class _Mutant(Encoder):
    def __init__(self, name: str, kind: str, fn: Any) -> None:
        self.info = EngineInfo(name, kind, "tokspec.fuzz.mutants", "0", None, "deliberately broken")  # type: ignore[arg-type]
        self._fn = fn

    def _encode(self, text: str) -> Encoding:
        result: Encoding = self._fn(text)
        return result


def bpe_dropped_merge() -> Encoder:
    """tiktoken's cl100k with :data:`DROPPED_TOKEN` removed from the ranks (a dropped merge rule)."""
    import tiktoken

    from tokspec.spec.pretok import cl100k_pattern
    from tokspec.formats.vocab import load_named_tiktoken
    ranks = dict(load_named_tiktoken("cl100k_base").ranks)
    del ranks[DROPPED_TOKEN]
    enc = tiktoken.Encoding("cl100k_mutant", pat_str=cl100k_pattern(), mergeable_ranks=ranks, special_tokens={})

    def run(text: str) -> Encoding:
        ids = enc.encode_ordinary(text)
        lengths = [len(enc.decode_single_token_bytes(i)) for i in ids]
        return Encoding.of(ids, char_offsets_from_byte_lengths(text, lengths))
    return _Mutant("mutant:bpe_dropped_merge", "tokenizer", run)


def peek2_wrong_cell() -> Encoder:
    """A copy of the fast Peek2 module whose Table 1 has cell (space, other) = 4 instead of 3."""
    peek2 = _module_copy("tokspec.fast.pretok_peek2")
    table = [list(row) for row in peek2.CL100K_TABLE]
    table[1][0] = 4
    peek2.CL100K_TABLE = tuple(tuple(row) for row in table)
    return _Mutant("mutant:peek2_wrong_cell", "pretokenizer",
                   lambda text: Encoding.of(None, peek2.split(text, "cl100k_base")))


def merge_without_soundness() -> Encoder:
    """A copy of the lopt merge whose cut finder skips the soundness rule (cuts every 8 chars)."""
    lopt = _module_copy("tokspec.fast.merge_lopt")

    def unchecked_cuts(text: str, rule: Any, chunk_len: int) -> list[int]:
        return list(range(chunk_len, len(text), chunk_len))
    lopt.find_cuts = unchecked_cuts
    inner = load_engine("tiktoken:cl100k_base")
    return _Mutant("mutant:merge_without_soundness", "tokenizer",
                   lambda text: lopt.merge(inner, text, chunk_len=8).encoding)


def offset_off_by_one() -> Encoder:
    """tiktoken cl100k, but a token whose last character is non-ASCII ends one character late."""
    inner = load_engine("tiktoken:cl100k_base")

    def run(text: str) -> Encoding:
        enc = inner.encode(text)
        offsets = [(s, e + 1) if e < len(text) and ord(text[e - 1]) > 127 else (s, e) for s, e in enc.offsets]
        return Encoding.of(enc.ids, offsets)
    return _Mutant("mutant:offset_off_by_one", "tokenizer", run)


def _hyp_wrong_tiebreak() -> Any:
    from hypothesis import given
    from hypothesis import strategies as st

    from tokspec.fuzz import strategies as ts
    from tokspec.fuzz.hyp_targets import PropertyFailed, tiny_unigram_check

    @given(scores=ts.unigram_scores(), text=st.text(alphabet="abc", max_size=8))
    def test(scores: dict[str, float], text: str) -> None:
        v = tiny_unigram_check(scores, text, tie_break="last")
        if not v.holds:
            raise PropertyFailed(v, {"scores": scores, "text": text, "tie_break": "last"})
    return test


#: hypothesis mutant name (as used in targets: ``mutant_<name>``) -> factory of its @given test.
HYP_MUTANTS: dict[str, Any] = {"mutant_viterbi_wrong_tiebreak": _hyp_wrong_tiebreak}
