"""Which sound-cut rule an engine admits, decided from its structure (never from its vocabulary hash).

A *structure* is a plain dict describing what an engine does, in one of three forms:

- ``{"format": "tokenizer.json", "normalizer": ..., "pre_tokenizer": ..., "model": ...,
  "added_tokens": [...]}``: the HF ``tokenizer.json`` sections, as HF writes them;
- ``{"format": "sentencepiece", "model_type": ..., "add_dummy_prefix": ..., ...}``: the
  ``NormalizerSpec``/``TrainerSpec`` fields of a sentencepiece ``.model``, plus ``charsmap`` (a
  parsed :class:`~tokspec.formats.spm_normalize.CharsMap`, None for ``identity``) and ``user_symbols``;
- ``{"format": "regex-bpe", "pattern": REGEX}``: byte-level BPE over the pretokens of a regex
  scan (tiktoken, bpe-openai, ``fast:`` BPE).

:func:`decide` turns a structure into a :class:`Decision`: a :class:`CutRule` and the theorem of
``tokspec.spec.merge`` it instantiates, or no rule plus the unmet condition (the engine is then
encoded serially, and the decision says why). Every condition below is one of the theorems' stated
scope conditions; any setting this module does not know is a reason for serial encoding.

Rules (``tokspec.spec.merge`` states and proves each):

==================  ======================================================================  =====
rule                cut ``c`` of ``S`` when                                                 thm
==================  ======================================================================  =====
``space``           ``S[c] == " "``                                                         M3w
``space-after-      ``S[c] == " "`` and ``S[c-1]`` is a letter (``\\p{L}``)                   M2/M3u
letter``
``spm-space``       ``S[c] == " "``, ``S[c-1]`` and ``S[c+1]`` letters or digits whose      M5
                    charsmap output cannot vanish or turn into whitespace; with
                    ``add_dummy_prefix`` the right piece's first token starts at ``c``
                    (``widen``)
==================  ======================================================================  =====

Out of scope: HF ``Precompiled``/``Strip``/``Prepend`` normalizers, ``Split`` with other patterns,
``treat_whitespace_as_suffix``, BPE dropout (all: serial encoding). Complexity: O(structure size),
plus one O(trie units) scan of a sentencepiece charsmap (cached per charsmap).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import regex

__all__ = ["CutRule", "Decision", "RULES", "decide", "GPT2_PATTERN", "KNOWN_BPE_PATTERNS"]


@dataclass(frozen=True)
class CutRule:
    """A sound-cut rule: ``pattern`` matches (zero-width context aside) the space starting the right
    piece at a cut, reading at most one character after that space (``merge_lopt.find_cuts``
    searches windows that end there). ``widen``: after shifting, the right piece's first token
    gets start ``c``."""

    name: str
    theorem: str
    pattern: regex.Pattern[str]
    widen: bool = False

    def is_cut(self, text: str, c: int) -> bool:
        """True when ``c`` (0 < c < len(text)) satisfies the rule."""
        return 0 < c < len(text) and self.pattern.match(text, c) is not None


RULES: dict[str, CutRule] = {
    "space-after-letter": CutRule("space-after-letter", "M2/M3u", regex.compile(r"(?<=\p{L}) ")),
    "space": CutRule("space", "M3w", regex.compile(r"(?<=.) ", regex.DOTALL)),
}


@dataclass(frozen=True)
class Decision:
    """What :func:`decide` found: ``family`` (a readable summary of the structure), ``rule`` (None:
    encode serially) and ``why`` (the theorem applied, or the first unmet condition)."""

    family: str
    rule: CutRule | None
    why: str

    def describe(self) -> str:
        if self.rule is None:
            return f"{self.family}: serial encoding ({self.why})"
        return f"{self.family}: rule {self.rule.name} ({self.why})"


#: GPT-2's pattern, as HF's ByteLevel pre-tokenizer runs it with ``use_regex``.
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""


def _known_patterns() -> dict[str, str]:
    from tokspec.engines._bytelevel import PATTERNS  # core: the patterns the adapters run

    return {**{p: n for n, p in PATTERNS.items()}, GPT2_PATTERN: "gpt2"}


#: M2's scope: pretokenizer patterns checked against the proof (letter runs stop at a space, the
#: only look-around is ``\s+(?!\S)``, the only anchor ``\s++$``), by pattern text or Peek2 name.
KNOWN_BPE_PATTERNS = ("cl100k_base", "o200k_base", "gpt2", "qwen2", "llama3")


def _serial(family: str, why: str) -> Decision:
    return Decision(family, None, why)


def decide(structure: dict[str, Any] | None) -> Decision:
    """The rule ``structure`` admits (see the module docstring); never raises on odd input."""
    if not isinstance(structure, dict):
        return _serial("unknown structure", "the engine exposes no structure tokspec can read")
    fmt = structure.get("format")
    try:
        if fmt == "regex-bpe":
            return _regex_bpe(structure)
        if fmt == "tokenizer.json":
            return _tokenizer_json(structure)
        if fmt == "sentencepiece":
            return _sentencepiece(structure)
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        return _serial(f"{fmt} structure", f"malformed structure ({type(exc).__name__}: {exc})")
    return _serial("unknown structure", f"format={fmt!r} is not tokenizer.json, sentencepiece or regex-bpe")


def _regex_bpe(s: dict[str, Any]) -> Decision:
    pattern = s.get("pattern")
    name = pattern if pattern in KNOWN_BPE_PATTERNS else _known_patterns().get(str(pattern))
    if name is None:
        return _serial("regex-bpe (unknown pattern)", "M2 is proved only for the cl100k/o200k/"
                       "qwen2/llama3/gpt2 patterns")
    return Decision(f"regex-bpe {name}", RULES["space-after-letter"], "M2")


# -- HF tokenizer.json ------------------------------------------------------------------------

_SINGLE_CLASS = re.compile(r"\[(?:[^\\\]]|\\.)+\]|\\p\{\w+\}|\\P\{\w+\}")


def _normalizer_ok(n: dict[str, Any] | None) -> str | None:
    """None when normalizer ``n`` commutes with a cut at a space and keeps that space (M1 lemma
    N of ``tokspec.spec.merge``), else the reason it may not."""
    if n is None:
        return None
    t = n.get("type")
    if t == "Sequence":
        for step in n.get("normalizers") or []:
            bad = _normalizer_ok(step)
            if bad:
                return bad
        return None
    if t in ("BertNormalizer", "Lowercase", "NFC", "NFD", "NFKC", "NFKD", "StripAccents"):
        return None
    if t == "Replace":
        pat, content = n.get("pattern") or {}, n.get("content")
        if not isinstance(content, str):
            return "Replace without content"
        if "String" in pat and isinstance(pat["String"], str) and len(pat["String"]) == 1:
            probe = pat["String"]
        elif "Regex" in pat and isinstance(pat["Regex"], str) and _SINGLE_CLASS.fullmatch(pat["Regex"]):
            probe = pat["Regex"]
        else:
            return "Replace with a pattern longer than one character"
        try:
            if regex.compile(probe if "Regex" in pat else regex.escape(probe)).search(" ") \
                    and content != " ":
                return "Replace rewrites the space"
        except regex.error:
            return "Replace pattern this module cannot read"
        return None
    return f"normalizer {t!r} is not proved to commute with a cut at a space"


_LOCAL_SPLITS = ("Punctuation", "Digits")


def _pre_tokenizer_rule(p: dict[str, Any] | None) -> tuple[str | None, str]:
    """(rule name or None, family text or reason): which rule the pre-tokenizer admits."""
    if p is None:
        return None, "no pre-tokenizer: the model sees the whole text"
    steps = p.get("pretokenizers") if p.get("type") == "Sequence" else [p]
    if not steps:
        return None, "empty pre-tokenizer sequence"
    rule: str | None = None
    names = []
    for i, step in enumerate(steps):
        t, last = step.get("type"), i == len(steps) - 1
        names.append(str(t))
        if t in ("BertPreTokenizer", "Whitespace", "WhitespaceSplit"):
            rule = rule or "space"
        elif t == "Metaspace" and last:
            if step.get("split") is False:
                return None, "Metaspace(split=false): the model sees whole runs of words"
            if step.get("replacement", "\u2581") != "\u2581" or step.get("prepend_scheme", "always") \
                    not in ("always", "first", "never"):
                return None, "Metaspace with unknown replacement/prepend_scheme"
            rule = "space-after-letter"
        elif t == "ByteLevel" and last:
            if step.get("use_regex", True):
                rule = "space-after-letter"
            elif rule != "space-after-letter":  # only behind a proved Split
                return None, "ByteLevel(use_regex=false) without a proved Split before it"
        elif t == "Split":
            pat = (step.get("pattern") or {}).get("Regex")
            if (step.get("behavior") != "Isolated" or step.get("invert")
                    or (pat not in _known_patterns() and pat != GPT2_PATTERN)):
                return None, "Split with a pattern or behaviour outside M2's scope"
            rule = "space-after-letter"
        elif t in _LOCAL_SPLITS:
            continue
        else:
            return None, f"pre-tokenizer {t!r} is not in any theorem's scope"
    if rule is None:
        return None, "no step of the pre-tokenizer splits at spaces"
    return rule, "+".join(names)


def _tokenizer_json(s: dict[str, Any]) -> Decision:
    model = s.get("model") or {}
    mtype = model.get("type")
    pre = s.get("pre_tokenizer")
    norm = s.get("normalizer")
    family = f"{mtype} ({(norm or {}).get('type', 'no normalizer')}, {(pre or {}).get('type')})"
    if mtype not in ("WordPiece", "BPE", "Unigram", "WordLevel"):
        return _serial(family, f"model type {mtype!r} unknown")
    if mtype == "BPE" and model.get("dropout") not in (None, 0, 0.0):
        return _serial(family, "BPE dropout is random")
    for tok in s.get("added_tokens") or []:
        if tok.get("special"):
            continue  # the adapter encodes special tokens as text (they are not matched)
        content = tok.get("content", "")
        if any(ch.isspace() for ch in content) or tok.get("lstrip") or tok.get("rstrip"):
            return _serial(family, f"added token {content!r} may straddle a space")
    bad = _normalizer_ok(norm)
    if bad:
        return _serial(family, bad)
    rule, what = _pre_tokenizer_rule(pre)
    if rule is None:
        return _serial(family, what)
    family = f"{mtype} ({(norm or {}).get('type', 'no normalizer')}, {what})"
    if rule == "space-after-letter" and ("ByteLevel" in what or "Split" in what):
        if norm is not None:
            return _serial(family, "a regex pre-tokenizer behind a normalizer is outside M2's scope")
        return Decision(family, RULES[rule], "M2")
    return Decision(family, RULES[rule], "M3w" if rule == "space" else "M3u")


# -- sentencepiece ----------------------------------------------------------------------------

def _sentencepiece(s: dict[str, Any]) -> Decision:
    from tokspec.fast._charsmap import spm_cut_pattern  # numpy scan of the charsmap trie

    mtype = s.get("model_type")
    dummy, extra = bool(s.get("add_dummy_prefix")), bool(s.get("remove_extra_whitespaces"))
    family = (f"sentencepiece {mtype} ({s.get('normalizer_name', 'declared')}, "
              f"dummy_prefix={dummy}, remove_extra_whitespaces={extra}, "
              f"byte_fallback={bool(s.get('byte_fallback'))})")
    if mtype == "unigram":
        return _serial(family, "sentencepiece's Unigram adds path scores in float32 over the whole "
                       "text, so a word's segmentation depends on the score before it (M6: "
                       "witnessed past ~370K characters); no cut is sound")
    if mtype != "bpe":
        return _serial(family, f"model_type={mtype!r} outside M5")
    for key, want in (("split_by_whitespace", True), ("escape_whitespaces", True),
                      ("treat_whitespace_as_suffix", False), ("allow_whitespace_only_pieces", False)):
        if bool(s.get(key)) != want:
            return _serial(family, f"{key}={s.get(key)!r} is outside M5 (needs {want})")
    if dummy != extra:
        return _serial(family, "add_dummy_prefix and remove_extra_whitespaces differ: a piece "
                       "starting with a space encodes differently")
    if any("\u2581" in p or " " in p for p in s.get("user_symbols") or ()):
        return _serial(family, "a user-defined symbol holds a space")
    if dummy and not s.get("space_piece"):
        return _serial(family, "no normal piece '\u2581': the dummy prefix's token is not known")
    pattern, why = spm_cut_pattern(s.get("charsmap"))
    if pattern is None:
        return _serial(family, why)
    return Decision(family, CutRule("spm-space", "M5", pattern, widen=dummy), f"M5 ({why})")
