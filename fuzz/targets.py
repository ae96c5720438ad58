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
import os
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tokspec import Encoder, InvalidTextError, load_engine
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
_I = "tokspec.fast.interpreted:"  # fast engines with their compiled kernels run as plain Python


def _safe(engine: str) -> str:
    return engine.replace(_W, "").replace(_I, "interpreted-").replace(":", "_")


#: Long generated texts are capped at this many characters for targets with interpreted kernels
#: (plain Python, ~9 us per character: a 2M-character text took 18 s alone, past the harness's
#: 60 s call limit on a loaded machine) and for targets over a reference BPE (a 2 MiB text of
#: ordinary pretokens took the reference-vs-tiktoken check 3.8-8.4 s, uninstrumented: a few such
#: inputs used up a target's share of a CI run). Still past 100K, where seams and buffer regrowth
#: show; the compiled engines take the full 2 MiB in their own targets.
INTERPRETED_MAX_CHARS = 1 << 18


def long_text_cap(engines: tuple[str, ...]) -> int | None:
    """The cap on long generated texts of a target over ``engines``: :data:`INTERPRETED_MAX_CHARS`
    if one of them runs interpreted kernels or is a reference BPE (:func:`pretoken_cap`), else None
    (``tokspec diff --raw`` replays with it)."""
    interpreted = any(e.startswith(_I) or e.endswith("_interpreted") for e in engines)
    return INTERPRETED_MAX_CHARS if interpreted or pretoken_cap(engines) is not None else None


#: The reference BPE (``reference/bpe_naive.py``) is the definition's O(m^2) merge loop per
#: pretoken of m bytes: ``"a" * 16384`` (one pretoken) takes it 1.9 s, a 2 MiB one would take days.
#: A long generated text of a target over a reference BPE is therefore cut where its first pretoken
#: passes this many bytes (``"a" * 8192``: about 0.5 s). Texts of ordinary pretokens keep their full
#: length (2 MiB: seams, buffers), and pretokens up to this length are still generated. Without the
#: cut, the reference-vs-tiktoken targets starved in CI (245 inputs in their 30 s: one input was a
#: repeated letter run).
REFERENCE_MAX_PRETOKEN_BYTES = 8192


def pretoken_cap(engines: tuple[str, ...]) -> tuple[str, int] | None:
    """``(pattern name, bytes)``: the cut of long texts for a target over ``engines`` if one of them
    is a named reference BPE (``reference:cl100k_base``, ``reference:o200k_base``, ...; see
    :data:`REFERENCE_MAX_PRETOKEN_BYTES`), else None. A reference over a rank file
    (``reference:PATH.tiktoken``) is not recognized: cap such a target with ``--max-chars``."""
    from tokspec.reference.engines import TIKTOKEN_PATTERNS, U17

    for engine in engines:
        prefix, _, name = engine.partition(":")
        name = name[:-len(U17)] if name.endswith(U17) else name
        if prefix == "reference" and name in TIKTOKEN_PATTERNS:
            return TIKTOKEN_PATTERNS[name], REFERENCE_MAX_PRETOKEN_BYTES
    return None


def _diff(a: str, b: str, what: str) -> Target:
    name = "diff--" + _safe(a) + "--" + _safe(b)
    cap, pretokens = long_text_cap((a, b)), pretoken_cap((a, b))
    meta: dict[str, Any] = {} if cap is None else {"max_chars": cap}
    if pretokens is not None:
        meta["max_pretoken"] = pretokens
    return Target(name, "diff", (a, b), (), what, meta)


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
    meta: dict[str, Any] = {"harness_name": "pair:" + json.dumps([a, b])}
    pretokens = pretoken_cap((a, b))
    if pretokens is not None:
        meta["max_pretoken"] = pretokens
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


#: A first byte that never occurs in UTF-8: an input starting with it asks for a long text.
LONG_MARK = 0xF8


def max_chars() -> int:
    """The cap on generated long texts: ``$TOKSPEC_FUZZ_MAX_CHARS`` (a positive integer), else none."""
    raw = os.environ.get("TOKSPEC_FUZZ_MAX_CHARS", "")
    if not raw:
        return 1 << 62
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"TOKSPEC_FUZZ_MAX_CHARS={raw!r} must be a positive integer")
    return int(raw)


def text_for(target: Any, data: bytes) -> str:
    """:func:`text_from_bytes` under ``target``'s own cap on long texts (``meta["max_chars"]``)."""
    meta = getattr(target, "meta", None) or {}
    return text_from_bytes(data, cap=meta.get("max_chars"), pretokens=meta.get("max_pretoken"))


def _cut_long_pretoken(text: str, pattern_name: str, limit: int) -> str:
    """``text`` up to where its first pretoken (under the named pattern) passes ``limit`` UTF-8
    bytes; the whole text if none does. O(len(text)) (one regex pass)."""
    from tokspec.reference.pretok_regex import compiled

    for m in compiled(pattern_name).finditer(text):
        start, end = m.span()
        if end - start > limit // 4 and len(m.group().encode("utf-8", "surrogatepass")) > limit:
            size, stop = 0, start
            while size + len(text[stop].encode("utf-8", "surrogatepass")) <= limit:
                size, stop = size + len(text[stop].encode("utf-8", "surrogatepass")), stop + 1
            return text[:stop]
    return text


def text_from_bytes(data: bytes, cap: int | None = None, pretokens: tuple[str, int] | None = None) -> str:
    """Fuzzer bytes to text (module docstring): may contain lone surrogates, on purpose.

    Length extension: ``LONG_MARK, k, d, body...`` gives ``body`` (decoded the same way) repeated
    to ``BOUNDARY_SIZES[k % len] + (d - 128) // 8`` characters (a power of two or ten, +-16), so
    libFuzzer's short inputs (``-max_len``) still reach chunk seams and buffer sizes up to 2 MiB.
    ``$TOKSPEC_FUZZ_MAX_CHARS`` (``python -m tokspec.fuzz.run --max-chars N``) and ``cap`` (a
    target's, :func:`text_for`) cap that length; ``pretokens`` (``(pattern name, bytes)``, a
    target's :func:`pretoken_cap`) cuts it where its first pretoken passes that many bytes."""
    if len(data) >= 3 and data[0] == LONG_MARK:
        from tokspec.longtext import BOUNDARY_SIZES
        size = max(1, BOUNDARY_SIZES[data[1] % len(BOUNDARY_SIZES)] + (data[2] - 128) // 8)
        size = min(size, max_chars(), cap or size)
        body = text_from_bytes(data[3:]) or "a"
        text = (body * (size // len(body) + 1))[:size]
        return text if pretokens is None else _cut_long_pretoken(text, *pretokens)
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


@functools.lru_cache(maxsize=None)
def _engine(name: str) -> Encoder:
    return load_engine(name)


def run_engine(engine: Encoder, text: str) -> dict[str, Any]:
    """Run one engine; JSON-able outcome: ``{"ids", "offsets"}``, ``{"invalid": msg}`` for
    InvalidTextError, or ``{"crash": repr}`` for anything else (a crash is always a finding)."""
    try:
        enc = engine.encode(text)
    except InvalidTextError as exc:
        return {"invalid": str(exc)[:200]}
    except Exception as exc:  # noqa: BLE001 - any crash of the engine under test is data
        return {"crash": f"{type(exc).__name__}: {exc}"[:500]}
    return {"ids": None if enc.ids is None else list(enc.ids), "offsets": [list(s) for s in enc.offsets]}


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
    combining marks stripped with accents, U+FFFD and NUL)."""
    return ch.isspace() or ch in "\ufffd\x00" or unicodedata.category(ch) in (
        "Cc", "Cf", "Mn", "Me", "Cn", "Co", "Zs", "Zl", "Zp")


def _property_verdict(prop: str, engine: Encoder, text: str) -> Verdict:
    from tokspec.spec import bpe, offsets, wordpiece
    enc = engine.encode(text)
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
            if "invalid" in run_engine(engine, text):
                return holds("text outside the domain, rejected")
            crashed = run_engine(engine, text)
            if "crash" in crashed:
                return fails("engine crashed", text=text, outputs={target.engines[0]: crashed})
            verdicts = [_property_verdict(p, engine, text) for p in target.properties]
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
