"""Hypothesis-based fuzz targets: spec/ theorems over generated tiny vocabularies.

Each target is built by a factory returning a ``@given`` test function; the test raises
:class:`PropertyFailed` (an AssertionError carrying the :class:`Verdict`) when a property fails.
The same functions serve three callers:

- ``tests/property/test_hyp_*.py`` call them under pytest with the active hypothesis profile;
- the atheris harness feeds fuzzer bytes to ``test.hypothesis.fuzz_one_input`` (coverage-guided);
- ``tokspec.fuzz.run`` replays stored findings through :func:`check_example`.

Out of scope: real vocabularies (those are ``diff``/``property`` targets in ``tokspec.fuzz.targets``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tokspec.fuzz import strategies as ts
from tokspec.spec import bpe, pretok, unigram
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.spec._verdict import Verdict, all_of, holds

__all__ = ["PropertyFailed", "FACTORIES", "make_test", "unavailable_reason", "check_example",
           "bpe_corollaries", "bpe_engine_check", "peek2_cell", "tiny_unigram_check", "merge_cut_check",
           "MERGE_CASES"]


class PropertyFailed(AssertionError):
    """A spec/ property failed; ``verdict.witness`` describes the input."""

    def __init__(self, verdict: Verdict, example: dict[str, Any]) -> None:
        super().__init__(f"{verdict.explanation}: {verdict.witness}")
        self.verdict = verdict
        self.example = example


def _require(v: Verdict, example: dict[str, Any]) -> None:
    if not v.holds:
        raise PropertyFailed(v, example)


def _hex(ranks: dict[bytes, int]) -> dict[str, int]:
    return {k.hex(): r for k, r in ranks.items()}


# -- plain checks (called by the @given wrappers and by replay) ----------------------------------

def bpe_corollaries(ranks: dict[bytes, int], data: bytes, token: bytes, right: bytes) -> Verdict:
    """Corollaries II, IIa, III, IIIa of the BPE definition for one tiny vocabulary and input."""
    return all_of([
        bpe.prop_substrings_valid(ranks, data),
        bpe.prop_last_token_determines(ranks, data),
        bpe.prop_shared_token_concat(ranks, data, token, right),
        bpe.prop_compatible_extension(ranks, data, token),
    ], "BPE corollaries")


def bpe_engine_check(engine: str, ranks: dict[bytes, int], data: bytes) -> Verdict:
    """An engine built on ``ranks`` equals the BPE definition on ``data``.

    An engine that refuses the vocabulary with a VocabularyError or UnsupportedComponentError (the backtracking encoder states
    the seed's precondition "rank = merge time" and checks it at build) passes vacuously.
    """
    if engine == "reference":
        lost = [t for t in ranks if bpe.bpe_encode(ranks, t) != [t]]
        if lost:  # outside the reference's stated precondition (falsified claim bpe.whole_piece_shortcut)
            return holds(f"vocabulary has unreachable tokens {lost[:3]!r}: tiktoken semantics differ "
                         "from BPE there by design (see spec claim bpe.whole_piece_shortcut)")
    try:
        encode = _tiny_bpe_encoder(engine, ranks)
    except (VocabularyError, UnsupportedComponentError) as exc:
        return holds(f"engine refuses this vocabulary (stated precondition): {exc}"[:200])
    return bpe.prop_engine_is_bpe(ranks, data, encode)


def _tiny_bpe_encoder(engine: str, ranks: dict[bytes, int]) -> bpe.BytesEncoder:
    if engine == "backtrack":
        from tokspec.fast.bpe_backtrack import BacktrackBPE
        bt = BacktrackBPE(ranks, self_check=False)
        return lambda d: [bt.tokens[i] for i in bt.encode(d)]
    if engine == "reference":
        from tokspec.reference.bpe_naive import bpe_pieces
        return lambda d: bpe_pieces(d, ranks) if d else []
    raise ValueError(f"unknown tiny BPE engine={engine!r}")


def peek2_cell(c0: str, c1: str, rest: str) -> Verdict:
    """Peek2's Table 1 on one pair of characters (plus context)."""
    return pretok.prop_peek2_cell(c0, c1, rest)


def _tiny_model(scores: dict[str, float]) -> Any:
    from tokspec.formats.unigram_model import UnigramModel
    pieces = ("<unk>",) + tuple(scores)
    unk = min(scores.values(), default=0.0) - 10.0
    return UnigramModel(
        pieces=pieces, scores=(unk,) + tuple(scores.values()), matchable=(False,) + (True,) * len(scores),
        unk_id=0, unk_score=unk, byte_fallback=False, byte_ids=(), fuse_unk=False, flavour="hf",
        float32=False, pretokenizer=lambda t: [], source="<tiny>")


def _tiny_segment(engine: str, scores: dict[str, float], text: str, tie_break: str) -> list[str] | None:
    """Segment ``text`` (ASCII) with a Viterbi engine built on a tiny model; None if it used an
    unknown edge. ``engine``: "reference" (engineer C) or "datrie" (engineer D, double array)."""
    model = _tiny_model(scores)
    if engine == "reference":
        from tokspec.reference.unigram_viterbi import viterbi
        index = {p: i for i, p in enumerate(model.pieces)}
        edges = viterbi(model, index, max(map(len, scores), default=1), text, tie_break)  # type: ignore[arg-type]
    elif engine == "datrie":
        from tokspec.fast.unigram_datrie import DatrieUnigram
        # jit=False: the kernels run as Python, so a coverage-guided fuzzer sees their branches
        edges = DatrieUnigram(model, "tiny", tie_break=tie_break, jit=False).viterbi(text.encode())  # type: ignore[arg-type]
    else:
        raise ValueError(f"unknown tiny Unigram engine={engine!r}")
    return None if any(e[3] for e in edges) else [model.pieces[e[2]] for e in edges]


def tiny_unigram_check(scores: dict[str, float], text: str, tie_break: str = "hf",
                       engine: str = "reference") -> Verdict:
    """A Viterbi engine on a tiny model is optimal by brute force, and picks the libraries'
    tie-break segmentation among optimal ones (spec/unigram.py)."""
    got = _tiny_segment(engine, scores, text, tie_break)
    return all_of([unigram.prop_viterbi_optimal(scores, text, got),
                   unigram.prop_tie_break(scores, text, got)], f"tiny Viterbi ({engine})")


# -- @given factories ----------------------------------------------------------------------------

def _t_bpe_corollaries() -> Callable[..., None]:
    @given(ranks=st.one_of(ts.bpe_merge_ranks(), ts.bpe_any_ranks()), data=ts.byte_strings(max_size=8),
           token=ts.byte_strings(max_size=3), right=ts.byte_strings(max_size=4))
    def test(ranks: dict[bytes, int], data: bytes, token: bytes, right: bytes) -> None:
        _require(bpe_corollaries(ranks, data, token, right),
                 {"ranks": _hex(ranks), "data": data.hex(), "token": token.hex(), "right": right.hex()})
    return test


def _t_bpe_engine(engine: str) -> Callable[[], Callable[..., None]]:
    def factory() -> Callable[..., None]:
        @given(ranks=st.one_of(ts.bpe_merge_ranks(), ts.bpe_any_ranks()), data=ts.byte_strings(max_size=10))
        def test(ranks: dict[bytes, int], data: bytes) -> None:
            _require(bpe_engine_check(engine, ranks, data),
                     {"engine": engine, "ranks": _hex(ranks), "data": data.hex()})
        return test
    return factory


def _t_peek2() -> Callable[..., None]:
    @given(c0=ts.unicode_char(), c1=ts.unicode_char(), rest=ts.unicode_text(max_size=3))
    def test(c0: str, c1: str, rest: str) -> None:
        _require(peek2_cell(c0, c1, rest), {"c0": c0, "c1": c1, "rest": rest})
    return test


def _t_unigram(engine: str) -> Callable[[], Callable[..., None]]:
    def factory() -> Callable[..., None]:
        @given(scores=ts.unigram_scores(), text=st.text(alphabet="abc", max_size=8))
        def test(scores: dict[str, float], text: str) -> None:
            _require(tiny_unigram_check(scores, text, engine=engine),
                     {"scores": scores, "text": text, "engine": engine})
        return test
    return factory


#: (engine, rule) pairs of spec/merge.py's proved cut theorems M2 (BPE), M3w (WordPiece), M3u (Unigram).
MERGE_CASES: tuple[tuple[str, str], ...] = (
    ("tiktoken:cl100k_base", "space-after-letter"),
    ("hf:bert-base-uncased", "space"),
    ("hf:mon-unigram", "space-after-letter"),
)


def merge_cut_check(engine: str, rule: str, text: str) -> Verdict:
    """spec/merge.py (engineer E) Theorems M2/M3w/M3u + M4: cutting ``text`` at EVERY position
    where ``rule`` holds gives pieces whose encodings concatenate to the serial encoding."""
    from tokspec import load_engine
    from tokspec.spec import merge
    rule_fn = merge.rule_space if rule == "space" else merge.rule_space_after_letter
    cuts = [c for c in range(1, len(text)) if rule_fn(text, c)]
    return merge.pieces_equation(_cached_engine(engine, load_engine), text, cuts)


_ENGINES: dict[str, Any] = {}


def _cached_engine(name: str, load: Callable[[str], Any]) -> Any:
    if name not in _ENGINES:
        _ENGINES[name] = load(name)
    return _ENGINES[name]


def _t_merge_claims() -> Callable[..., None]:
    importlib.import_module("tokspec.spec.merge")

    @given(case=st.sampled_from(MERGE_CASES), text=st.one_of(ts.mixed_text(), ts.boundary_text(chunk_len=8)))
    def test(case: tuple[str, str], text: str) -> None:
        _require(merge_cut_check(case[0], case[1], text), {"engine": case[0], "rule": case[1], "text": text})
    return test


def _t_merge_structural() -> Callable[..., None]:
    from tokspec.fuzz import merge_models as mm

    @given(engine=mm.tiny_tokenizer(), text=mm.merge_text())
    def test(engine: Any, text: str) -> None:
        _require(mm.structural_rule_check(engine, text), {"engine": mm.describe(engine), "text": text})
    return test


#: target property name -> factory of the @given test; the modules each needs, for availability.
FACTORIES: dict[str, tuple[Callable[[], Callable[..., None]], tuple[str, ...]]] = {
    "bpe_corollaries": (_t_bpe_corollaries, ()),
    "bpe_backtrack_tiny": (_t_bpe_engine("backtrack"), ("tokspec.fast.bpe_backtrack",)),
    "bpe_reference_tiny": (_t_bpe_engine("reference"), ("tokspec.reference.bpe_naive",)),
    "peek2_table": (_t_peek2, ()),
    "unigram_viterbi_tiny": (_t_unigram("reference"), ("tokspec.reference.unigram_viterbi",)),
    "unigram_datrie_tiny": (_t_unigram("datrie"), ("tokspec.fast.unigram_datrie",)),
    "merge_claims": (_t_merge_claims, ("tokspec.spec.merge",)),
    "merge_structural": (_t_merge_structural, ("tokspec.fast.merge_structure", "sentencepiece",
                                               "tiktoken", "tokenizers")),
}


def _factory(name: str) -> tuple[Callable[[], Callable[..., None]], tuple[str, ...]]:
    if name.startswith("mutant_"):
        from tokspec.fuzz.mutants import HYP_MUTANTS
        return HYP_MUTANTS[name], ()
    return FACTORIES[name]


def unavailable_reason(name: str) -> str | None:
    """None if target ``name`` can run here, else why not."""
    try:
        factory, modules = _factory(name)
    except KeyError:
        return f"unknown hypothesis target {name!r}"
    try:
        for mod in modules:
            importlib.import_module(mod)
        factory()
    except Exception as exc:  # noqa: BLE001 - a layer not written yet is reported, not fatal
        return f"{type(exc).__name__}: {exc}"[:200]
    return None


def make_test(name: str) -> Callable[..., None]:
    """The ``@given`` test of hypothesis target ``name`` (``mutant_*``: a mutant's test)."""
    return _factory(name)[0]()


def check_example(name: str, example: dict[str, Any]) -> Verdict:
    """Replay one stored example (the ``example`` dict of a PropertyFailed) deterministically."""
    def ranks() -> dict[bytes, int]:
        return {bytes.fromhex(k): int(r) for k, r in example["ranks"].items()}
    if name == "bpe_corollaries":
        return bpe_corollaries(ranks(), bytes.fromhex(example["data"]), bytes.fromhex(example["token"]),
                               bytes.fromhex(example["right"]))
    if name in ("bpe_backtrack_tiny", "bpe_reference_tiny"):
        return bpe_engine_check(example["engine"], ranks(), bytes.fromhex(example["data"]))
    if name == "peek2_table":
        return peek2_cell(example["c0"], example["c1"], example["rest"])
    if name == "merge_claims":
        return merge_cut_check(example["engine"], example["rule"], example["text"])
    if name in ("unigram_viterbi_tiny", "unigram_datrie_tiny", "mutant_viterbi_wrong_tiebreak"):
        return tiny_unigram_check(example["scores"], example["text"], example.get("tie_break", "hf"),
                                  example.get("engine", "reference"))
    raise ValueError(f"no replay for hypothesis target name={name!r}")
