"""The fuzz targets: a declarative list of engine pairs and properties, and their one-input checks.

A :class:`Target` is one of

- ``diff``: two engines must give equal Encodings (ids AND offsets) for every text, and both must
  reject the same out-of-domain texts (lone surrogates) with InvalidTextError;
- ``property``: one engine's output satisfies spec/ properties (offset partition and byte round
  trip for byte-level BPE, ordered cover for normalizing engines, greedy longest match for
  WordPiece);
- ``hypothesis``: a spec/ theorem over generated tiny vocabularies (see ``tokspec.fuzz.hyp_targets``).

``diff`` and ``property`` targets take text; :func:`text_from_bytes` turns fuzzer bytes into text per
the text domain (valid UTF-8 decodes with ``surrogatepass`` so encoded surrogates reach the engines
and must be rejected; invalid UTF-8 decodes with ``errors="replace"``).

A target is *available* when its engines load on this machine (:func:`available_targets`); the
list includes pairs whose engines are still being written, and they join as soon as they load.

Out of scope: engines outside the registry (use ``module:attr`` names for your own).
"""

from __future__ import annotations

import functools
import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tokspec import Encoder, Encoding, InvalidTextError, load_engine
from tokspec._hf_unicode import BERT_STRIPPED_EXTRA, in_ranges
from tokspec.fuzz._texts import (INTERPRETED_MAX_CHARS, LONG_MARK, REFERENCE_MAX_PRETOKEN_BYTES, _I,
                                 long_text_cap, long_text_meta, max_chars, pretoken_cap, text_for,
                                 text_from_bytes)
from tokspec.spec._verdict import Verdict, all_of, fails, holds

__all__ = [
    "Target",
    "TARGETS",
    "text_from_bytes",
    "text_for",
    "long_text_cap",
    "pretoken_cap",
    "INTERPRETED_MAX_CHARS",
    "REFERENCE_MAX_PRETOKEN_BYTES",
    "LONG_MARK",
    "max_chars",
    "run_engine",
    "diff_verdict",
    "make_checker",
    "target_by_name",
    "pair_target",
    "available_targets",
]

Kind = Literal["diff", "property", "hypothesis"]


@dataclass(frozen=True)
class Target:
    """One fuzz target. ``name`` is file-system safe (it names corpus and findings folders)."""

    name: str
    kind: Kind
    engines: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()
    description: str = ""
    meta: dict[str, Any] = field(default_factory=dict, compare=False)


_W = "tokspec.fuzz.wrapped:"  # fuzzing configurations of engines (small merge chunks)


def _safe(engine: str) -> str:
    return engine.replace(_W, "").replace(_I, "interpreted-").replace(":", "_")


def _diff(a: str, b: str, what: str) -> Target:
    name = "diff--" + _safe(a) + "--" + _safe(b)
    return Target(name, "diff", (a, b), (), what, long_text_meta((a, b)))


def _prop(engine: str, props: tuple[str, ...], what: str) -> Target:
    return Target("prop--" + engine.replace(":", "_"), "property", (engine,), props, what)


def _hyp(name: str, what: str) -> Target:
    return Target("hyp--" + name, "hypothesis", (), (name,), what)


#: Every target, in run order (cheap and central first).
TARGETS: tuple[Target, ...] = (
    _diff("reference:cl100k_base", "tiktoken:cl100k_base", "reference BPE vs production"),
    _diff("fast:cl100k_base", "reference:cl100k_base", "fast backtracking BPE + Peek2 vs reference"),
    _diff("peek2:cl100k_base", "pretok:cl100k_base", "Peek2 pretokenizer vs regex"),
    # the kernels interpreted (coverage sees their branches), against production and compiled
    _diff(_I + "fast_cl100k", "tiktoken:cl100k_base", "interpreted BPE + Peek2 kernels vs tiktoken"),
    _diff(_I + "peek2_o200k", "pretok:o200k_base", "interpreted Peek2 (o200k) kernel vs regex"),
    _diff(_I + "fast_o200k", "fast:o200k_base", "BPE + Peek2 kernels: interpreted vs compiled"),
    _diff(_I + "peek2_cl100k", "peek2:cl100k_base", "Peek2 kernel: interpreted vs compiled"),
    _diff("bpe-openai:cl100k_base", "tiktoken:cl100k_base", "Rust backtracking encoder vs tiktoken"),
    _diff("reference:o200k_base", "tiktoken:o200k_base", "reference BPE vs production, o200k"),
    _diff("fast:o200k_base", "reference:o200k_base", "fast BPE vs reference, o200k"),
    _diff("peek2:o200k_base", "pretok:o200k_base", "Peek2 (o200k) vs regex"),
    _diff("hf-converted:cl100k_base", "tiktoken:cl100k_base", "HF BPE on recovered merges vs tiktoken"),
    _diff("reference:bert-base-uncased", "hf:bert-base-uncased", "reference WordPiece vs HF"),
    _diff("reference:mon-unigram", "hf:mon-unigram", "reference Unigram vs HF"),
    _diff(_W + "fast_mon_interpreted", "reference:mon-unigram", "double-array Viterbi (interpreted kernels) vs reference"),
    _diff("fast:mon-unigram", _W + "fast_mon_interpreted", "Unigram kernels compiled vs interpreted"),
    _diff(_W + "lopt_small_cl100k", "tiktoken:cl100k_base", "lossless merge (8-char chunks) vs serial, BPE"),
    _diff(_W + "lopt_small_bert", "hf:bert-base-uncased", "lossless merge (8-char chunks) vs serial, WordPiece"),
    _diff(_W + "lopt_small_mon", "hf:mon-unigram", "lossless merge (8-char chunks) vs serial, Unigram"),
    _diff(_W + "fast_blocks_o200k", "tiktoken:o200k_base", "fast BPE a block at a time (32-char blocks, "
          "the long-text path) vs tiktoken, o200k"),
    _diff(_W + "fast_ids_blocks_cl100k", "tiktoken:cl100k_base", "encode_ids a block at a time (32-char blocks, "
          "the fill kernel's path) vs tiktoken"),
    _diff(_W + "fast_ids_blocks_o200k", "tiktoken:o200k_base", "encode_ids a block at a time (32-char blocks, "
          "the fill kernel's path) vs tiktoken, o200k"),
    _diff(_W + "fast_ids_fused_cl100k", "tiktoken:cl100k_base", "encode_ids in one fused pass, non-ASCII parts "
          "as foreign segments (the mostly-ASCII path) vs tiktoken"),
    _prop("tiktoken:cl100k_base", ("bpe_offsets",), "offsets partition + byte round trip"),
    _prop("fast:cl100k_base", ("bpe_offsets",), "offsets partition + byte round trip"),
    _prop("hf:bert-base-uncased", ("cover", "wordpiece_greedy"), "ordered cover + greedy longest match"),
    _prop("hf:mon-unigram", ("cover",), "ordered cover"),
    _hyp("bpe_corollaries", "BPE definition: Corollaries II, IIa, III, IIIa on tiny vocabularies"),
    _hyp("bpe_backtrack_tiny", "backtracking BPE == BPE definition on tiny vocabularies"),
    _hyp("bpe_reference_tiny", "reference BPE (tiktoken semantics) == BPE definition, tiny vocabularies"),
    _hyp("peek2_table", "Peek2 Table 1 vs the cl100k regex, any two characters"),
    _hyp("unigram_viterbi_tiny", "reference Viterbi optimal vs brute force, tiny vocabularies"),
    _hyp("unigram_datrie_tiny", "double-array Viterbi optimal + tie-break vs brute force, tiny vocabularies"),
    _hyp("merge_claims", "spec/merge.py properties (engineer E) on generated texts"),
    _hyp("merge_structural", "lopt's structure-decided cut rules on tiny models of every family, "
         "random settings"),
)


def pair_target(a: str, b: str) -> Target:
    """A ``diff`` target for any two engine names (yours too: ``module:attr``, ``cmd:...``); its
    harness name is ``pair:`` + the JSON list ``[a, b]`` (:func:`target_by_name` accepts it)."""
    meta: dict[str, Any] = {"harness_name": "pair:" + json.dumps([a, b]), **long_text_meta((a, b))}
    return Target("diff--" + re.sub(r"[^A-Za-z0-9_.-]", "_", _safe(a) + "--" + _safe(b)), "diff", (a, b), (),
                  f"{a} vs {b}", meta)


def target_by_name(name: str) -> Target:
    """The target called ``name`` (or ``pair:["A", "B"]``, see :func:`pair_target`); ValueError
    listing the names otherwise."""
    if name.startswith("pair:"):
        pair = json.loads(name[5:])
        if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(x, str) for x in pair)):
            raise ValueError(f"pair target name={name!r}: expected pair:[\"ENGINE_A\", \"ENGINE_B\"]")
        return pair_target(pair[0], pair[1])
    for t in TARGETS:
        if t.name == name:
            return t
    raise ValueError(f"unknown fuzz target name={name!r}; known: {', '.join(t.name for t in TARGETS)}")


@functools.lru_cache(maxsize=None)
def _engine(name: str) -> Encoder:
    return load_engine(name)


def run_engine(engine: Encoder, text: str) -> dict[str, Any]:
    """Run one engine; JSON-able outcome: ``{"ids", "offsets"}``, ``{"invalid": msg}`` for
    InvalidTextError, or ``{"crash": repr}`` for anything else (a crash is always a finding)."""
    enc = _encode_or_outcome(engine, text)
    if isinstance(enc, dict):
        return enc
    return {"ids": None if enc.ids is None else list(enc.ids), "offsets": [list(s) for s in enc.offsets]}


def _encode_or_outcome(engine: Encoder, text: str) -> Encoding | dict[str, Any]:
    """``engine.encode(text)``, or :func:`run_engine`'s ``{"invalid"}`` / ``{"crash"}`` outcome."""
    try:
        return engine.encode(text)
    except InvalidTextError as exc:
        return {"invalid": str(exc)[:200]}
    except Exception as exc:  # noqa: BLE001 - any crash of the engine under test is data
        return {"crash": f"{type(exc).__name__}: {exc}"[:500]}


def _first_divergence(a: dict[str, Any], b: dict[str, Any]) -> int:
    ia, ib = a.get("ids") or [None] * len(a["offsets"]), b.get("ids") or [None] * len(b["offsets"])
    pairs_a, pairs_b = list(zip(ia, a["offsets"])), list(zip(ib, b["offsets"]))
    for k, (x, y) in enumerate(zip(pairs_a, pairs_b)):
        if x != y:
            return k
    return min(len(pairs_a), len(pairs_b))


def _same_arrays(engines: tuple[Encoder, Encoder], text: str) -> int | None:
    """Token count if both engines accept ``text`` and agree exactly (ids or both none, offsets),
    compared as arrays (no Python object per token); None otherwise (also if one raises: the caller
    runs :func:`run_engine` for the details). Long byte-fallback texts made the list form outgrow
    libFuzzer's ``-rss_limit_mb`` (exit 71): 2 MiB of U+9FA5 is 6.3M tokens per engine."""
    try:
        x = engines[0].encode_arrays(text)
        y = engines[1].encode_arrays(text)
    except Exception:  # noqa: BLE001 - rejected or crashed: run_engine records which
        return None
    if (x.ids is None) != (y.ids is None) or not x.same_as(y):
        return None
    return len(x.starts)


def diff_verdict(names: tuple[str, str], engines: tuple[Encoder, Encoder], text: str) -> Verdict:
    """Two engines agree on ``text`` (ids and offsets, or both reject it)."""
    agreed = _same_arrays(engines, text)
    if agreed is not None:
        return holds(f"{names[0]} and {names[1]} agree on {agreed} tokens")
    out = [run_engine(e, text) for e in engines]
    a, b = out
    if "invalid" in a and "invalid" in b:
        return holds("both reject the text (outside the text domain)")
    if a == b and "crash" not in a:
        return holds(f"{names[0]} and {names[1]} agree on {len(a['offsets'])} tokens")
    if "offsets" in a and "offsets" in b:
        k = _first_divergence(a, b)
        same_ids = a["ids"] == b["ids"]
        kind = "same ids, different offsets" if same_ids else "different tokens"
        return fails(f"{kind} from token {k}", text=text, engines=list(names),
                     outputs={names[0]: a, names[1]: b}, first_divergence=k, classification=kind)
    return fails("one engine crashed or rejected a text the other accepted", text=text,
                 engines=list(names), outputs={names[0]: a, names[1]: b},
                 classification="crash or rejection")


@functools.lru_cache(maxsize=None)
def _cl100k_token_bytes() -> dict[int, bytes]:
    from tokspec.formats.vocab import load_named_tiktoken
    return {rank: tok for tok, rank in load_named_tiktoken("cl100k_base").ranks.items()}


@functools.lru_cache(maxsize=None)
def _bert_pieces() -> dict[int, str]:
    from tokspec.formats.vocab import load_tokenizer_json, named_path
    vocab = load_tokenizer_json(named_path("bert-base-uncased")).data["model"]["vocab"]
    return {int(i): str(p) for p, i in vocab.items()}


def _bert_skippable(ch: str) -> bool:
    """Characters BERT's normalizer removes or folds into a neighbour (whitespace, controls,
    combining marks stripped with accents, U+FFFD and NUL). The marks are HF's: its older Unicode
    tables call U+1734 nonspacing (Mc since Unicode 14), so ``strip_accents`` removes it
    (``tokspec._hf_unicode.BERT_STRIPPED_EXTRA``; finding dd235c913ad50da8 of this target)."""
    return ch.isspace() or ch in "\ufffd\x00" or unicodedata.category(ch) in (
        "Cc", "Cf", "Mn", "Me", "Cn", "Co", "Zs", "Zl", "Zp") or in_ranges(ord(ch), BERT_STRIPPED_EXTRA)


def _property_verdict(prop: str, enc: Encoding, text: str) -> Verdict:
    """Property ``prop`` of the engine's output ``enc`` for ``text``."""
    from tokspec.spec import bpe, offsets, wordpiece
    if prop == "bpe_offsets":
        table = _cl100k_token_bytes()
        toks = [table[i] for i in enc.ids or ()]
        return all_of([offsets.prop_contiguous_partition(text, enc.offsets),
                       bpe.prop_byte_roundtrip(text, enc.ids or (), table.__getitem__),
                       offsets.prop_offsets_match_bytes(text, enc.offsets, toks)], "bpe offsets")
    if prop == "cover":
        return offsets.prop_monotone_cover(text, enc.offsets, _bert_skippable)
    if prop == "wordpiece_greedy":
        vocab = _bert_pieces()
        return wordpiece.prop_greedy_pieces(frozenset(vocab.values()), [vocab[i] for i in enc.ids or ()])
    raise ValueError(f"unknown property prop={prop!r}")


def make_checker(target: Target) -> Callable[[str], Verdict]:
    """Load the target's engines (may raise UnknownEngineError etc.) and return its text check."""
    if target.kind == "diff":
        names = (target.engines[0], target.engines[1])
        engines = (_engine(names[0]), _engine(names[1]))
        return lambda text: diff_verdict(names, engines, text)
    if target.kind == "property":
        engine = _engine(target.engines[0])

        def check(text: str) -> Verdict:
            # one encode per input, its Encoding read by every property: the old check encoded three
            # times and copied the output into Python lists twice, 96% of its time on a 2 MiB text
            # of 2M one-byte tokens (4.2 s uninstrumented, about 10 s under atheris: the few such
            # long inputs used up prop--fast_cl100k_base's share of a CI run, 356 inputs)
            enc = _encode_or_outcome(engine, text)
            if isinstance(enc, dict) and "invalid" in enc:
                return holds("text outside the domain, rejected")
            if isinstance(enc, dict):
                return fails("engine crashed", text=text, outputs={target.engines[0]: enc})
            verdicts = [_property_verdict(p, enc, text) for p in target.properties]
            v = all_of(verdicts, target.name)
            if not v.holds and v.witness is not None:
                v.witness.setdefault("text", text)
                v.witness["outputs"] = {target.engines[0]: run_engine(engine, text)}
            return v
        return check
    raise ValueError(f"target {target.name!r} is a {target.kind} target: use tokspec.fuzz.hyp_targets")


def available_targets(targets: tuple[Target, ...] = TARGETS) -> list[tuple[Target, str | None]]:
    """Each target with None if it can run here, or the reason it cannot (engine fails to load)."""
    from tokspec.fuzz import hyp_targets
    out: list[tuple[Target, str | None]] = []
    for t in targets:
        if t.kind == "hypothesis":
            out.append((t, hyp_targets.unavailable_reason(t.properties[0])))
            continue
        try:
            for name in t.engines:
                _engine(name)
            out.append((t, None))
        except Exception as exc:  # noqa: BLE001 - report why, keep going
            out.append((t, f"{type(exc).__name__}: {exc}"[:200]))
    return out
