r"""Chunked parallel encoding: when does "encode the pieces, then merge" equal serial encoding?

Notation: ``F`` is an engine's ``encode`` (ids AND character offsets); ``F(S)[a:b]`` a token slice;
``shift(E, d)`` moves every offset of ``E`` by ``d``; ``++`` concatenates token lists.

**Definition M1 (sound cut).** ``c`` (0 < c < len(S)) is a sound cut of ``S`` for ``F`` when
``F(S) == F(S[:c]) ++ shift(F(S[c:]), c)``. :func:`split_equation` checks it on one input.

**Scope is structure, not a vocabulary.** Each theorem below is stated for every tokenizer whose
*settings* meet its conditions; ``tokspec.fast.merge_rules`` reads the settings (tokenizer.json
sections, sentencepiece's NormalizerSpec/TrainerSpec and charsmap, a tiktoken pattern, or a
structure an engine declares) and applies a theorem only when every condition is met; otherwise,
or for a setting it does not know, ``lopt`` encodes serially and says why.

**Lemma N (normalizers that commute with a cut at a space).** Call a normalizer *space-local* if
``norm(A + " " + B) == norm(A) + " " + norm(B)`` for all A, B. Space-local: any per-character map
that sends " " to " " (HF Lowercase; Replace whose pattern is one character or one character class,
when it leaves " " alone or rewrites it to " "; BertNormalizer's clean_text (whitespace to " ",
controls dropped), CJK padding, lowercasing); NFD/NFKD (decomposition is per character, canonical
reordering only permutes runs of non-starters, and " " is a starter); NFC/NFKC (those plus
composition, which never crosses " ": no primary composite has " " as a component); StripAccents
after NFD; a Sequence of space-local steps (induction). Not space-local (out of scope): Strip,
Prepend, Replace with longer patterns, Precompiled.

**Theorem M2 (byte-level BPE behind a proved regex).** Settings: pretokens from the scan of one of
the cl100k/o200k/qwen2/llama3 patterns or GPT-2's (tiktoken, bpe-openai, ``fast:`` BPE; HF
``ByteLevel(use_regex=true)`` with either ``add_prefix_space``, or ``Split(pattern, Isolated)``
then ``ByteLevel``), no normalizer, no BPE dropout, no non-special added token holding whitespace
or stripping it. Rule: ``S[c] == " "`` and ``S[c-1]`` is a letter (category L*). Proof: such
engines encode ``S`` as the concatenation of BPE(p) over the pretokens p of the scan (leftmost,
alternatives in order), so it is enough that (a) the scan of ``S`` has a pretoken boundary at
``c``, (b) the scan of ``S[:c]`` equals the scan of ``S`` before ``c``, (c) the scan of ``S[c:]``
equals the scan of ``S`` after ``c``. (a) The pretoken holding the letter ``S[c-1]`` comes from a
letter alternative (letter runs, the contractions), and none of these matches a space after a
letter, so it ends at ``c``. (b) An alternative that reads past ``c-1`` must first consume the
letter; each then stops on the space in ``S`` and on the end of ``S[:c]`` alike; the look-ahead
``\s+(?!\S)`` and the anchor ``\s++$`` are only tried at whitespace, which ``S[c-1]`` is not.
(c) With a boundary at ``c`` and no look-behind, the scan from ``c`` reads only ``S[c:]``, which
has the same end as ``S``. ``add_prefix_space`` inserts a space only before a text not starting
with one: ``S`` and ``S[:c]`` start alike, ``S[c:]`` starts with " ". Special tokens are never
matched (adapters encode them as text). Caveat: "letter" is decided by this Python's Unicode
tables; a character that is a letter here but not for the library is the one risk (none known).

**Theorem M3w (space-splitting pre-tokenizers).** Settings: a space-local normalizer (Lemma N);
a pre-tokenizer (or Sequence) with at least one of BertPreTokenizer, Whitespace, WhitespaceSplit
and otherwise only Punctuation/Digits (which split inside a pretoken by its own characters); model
WordPiece, WordLevel, BPE without dropout or Unigram, each run per pretoken; no non-special added
token holding whitespace or with ``lstrip``/``rstrip``. Rule: ``S[c] == " "``. Proof: by Lemma N
the normalized text is the normalized pieces joined at a space; whitespace splitting drops it and
puts a boundary there; the other steps split each pretoken by its own characters; the model runs
per pretoken (WordPiece's ``max_input_chars_per_word`` too). Added tokens are matched on text
without a space, so none straddles ``c``. Offsets map back per character, hence shift by ``c``.

**Theorem M3u (Metaspace).** Settings: a space-local normalizer; ``Metaspace(replacement="▁",
split=true)`` as the last pre-tokenizer step (any ``prepend_scheme``), the other steps as in M3w;
model as in M3w; added tokens as in M3w. Rule: ``S[c] == " "`` and ``S[c-1]`` is a letter (the
letter is not needed by the proof; it is kept as the rule the six known vocabularies used). Proof:
by Lemma N normalization commutes with the cut and keeps the space, so the right piece starts with
"▁" and gets no prepended marker, while ``S[:c]`` and ``S`` start alike (or ``S[:c]`` normalizes
to nothing and encodes to nothing); Metaspace(split=true) starts a word at every "▁", so ``c``
starts a word in ``S`` and words are encoded independently. Never inside a word: Viterbi compares
cumulative float scores over the word, so a cut there could change tie-breaking.

**Theorem M5 (sentencepiece BPE).** Settings: ``model_type=bpe``, ``split_by_whitespace``,
``escape_whitespaces``, not ``treat_whitespace_as_suffix``, not ``allow_whitespace_only_pieces``,
``add_dummy_prefix == remove_extra_whitespaces``, no user-defined symbol holding a space, with a
dummy prefix a normal piece "▁"; a charsmap (checked over all its rules) with no key holding a space
after its first character and no key starting with a space other than " " -> " ". Rule:
``S[c] == " "``, ``S[c-1]`` and ``S[c+1]`` letters or digits, ``S[c-1]`` not the last character of
a rule whose output is empty or ends with a space, ``S[c+1]`` not the first character of a rule
whose output is empty or only spaces. Equation: ``F(S) == F(S[:c]) ++ W(shift(F(S[c:]), c))`` where
``W`` sets the start of the first token to ``c`` when ``add_dummy_prefix`` (else W is identity).
Proof: no charsmap rule spans ``c``, so normalization is the pieces' normalizations joined at the
space; the left piece's output ends with a non-space, so no trailing whitespace is removed and its
last character covers up to ``c`` in both; the right piece's output starts with " " then a
non-space: with the dummy prefix and whitespace removal its leading spaces are dropped and a "▁"
inserted, without them the space is kept; either way the symbols are those of ``S`` after ``c``.
With ``split_by_whitespace`` no BPE merge crosses a "▁", so merges inside different words never
interact. Offsets: the adapter gives a dummy "▁" no origin, while in ``S`` that "▁" is the space at
``c`` (plus collapsed whitespace after it, which both give to it): only the first token's start
differs, and ``W`` restores it. M4's induction holds with ``W``: every piece but the last is
non-empty and starts with a "▁".

**Finding M6 (sentencepiece Unigram is not word-local).** sentencepiece's Unigram adds piece
scores in float32 along the whole text; near-ties inside a word are decided differently at large
accumulated scores, so a word's segmentation depends on everything before it. Witnessed on a model
trained here (``corpora/merge/spm_unigram_float32.json``): a 110-character window at character
374,151 of a generated text encodes the same alone and from 250K characters before, but differs
when the text is encoded from its start. No cut is sound, so ``lopt`` encodes sentencepiece Unigram
serially (HF's Unigram runs per Metaspace word in float64: M3u).

**Theorem M4 (composition).** For a rule that reads only ``S[c-1..c+1]``, cuts ``c_1 < ... < c_k``
satisfying it are sound together: ``F(S)`` is the concatenation of the pieces' encodings shifted
to their starts (and widened, for M5). Proof: induction on k; the rule holds for ``c_2 - c_1`` in
``S[c_1:]`` because it reads the same characters. :func:`pieces_equation` checks it; the fuzz
targets check every structural rule on generated tiny models with random settings.

Published statements, kept EXACTLY as stated and checked as predicates (all falsified here,
counterexamples in ``CLAIMS`` and ``corpora/merge/``):

- LoPT Theorem 4.1 (:func:`lopt_theorem_4_1`). Gap: the premise ``n_i > 0`` says one token has the
  same span in both chunks, but both chunks may be wrong there (WordPiece's 100-character [UNK]
  rule, BPE over a pretoken cut short), and keeping the left chunk's tokens up to the match assumes
  they equal serial output, which needs unbounded right context.
- LoPT Lemma 7.1 (:func:`lopt_lemma_7_1`): same gap even with a matched run longer than the longest
  token. Its proof relies on Lemma 7.3, "F of the text of tokens l..r is tokens l..r", which is
  false for WordPiece (a word-internal "##" piece re-encoded alone loses its prefix)
  (:func:`lopt_lemma_7_3`), and for BPE merges depend on the whole pretoken.
- The blog's overlap theorem (:func:`blog_overlap_theorem`): Claim 3's premise "the token is
  completely determined by S[s : s+len(t)]" is false; a token depends on context beyond its span.
- ParallelTokenizer's README (:func:`parallel_tokenizer_claim`): an overlap no shorter than the
  longest token lets the longest common id run locate the overlap; equal ids need not be at equal
  positions, and the run can be wrong in both chunks.

Out of scope: settings outside the theorems' conditions (``lopt`` encodes those serially).
The published statements' checkers live in ``tokspec.spec.merge_published`` (re-exported here).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from tokspec import Encoder
from tokspec.spec._verdict import Claim, Verdict, holds, register
from tokspec.spec.merge_core import pieces_equation
from tokspec.spec.merge_published import (blog_overlap_theorem, lopt_lemma_7_1, lopt_lemma_7_3,
                                          lopt_theorem_4_1, max_token_chars,
                                          parallel_tokenizer_claim)

__all__ = [
    "split_equation", "pieces_equation", "rule_space", "rule_space_after_letter", "rule_spm_space",
    "lopt_cut_theorem", "sound_cuts_theorem", "lopt_theorem_4_1", "lopt_lemma_7_1",
    "lopt_lemma_7_3", "blog_overlap_theorem", "parallel_tokenizer_claim", "max_token_chars",
]


def split_equation(engine: Encoder | str, text: str, c: int, *, widen: bool = False) -> Verdict:
    """M1: ``c`` is a sound cut of ``text`` (checked on this input); ``widen`` as in M5."""
    return pieces_equation(engine, text, [c], widen=widen)


def rule_space(text: str, c: int) -> bool:
    """M3w's rule: a space starts the right piece."""
    return 0 < c < len(text) and text[c] == " "


def rule_space_after_letter(text: str, c: int) -> bool:
    """M2/M3u's rule: a space after a letter (Unicode category L*) starts the right piece."""
    return rule_space(text, c) and unicodedata.category(text[c - 1]).startswith("L")


def rule_spm_space(text: str, c: int, bad_last: frozenset[str] = frozenset(),
                   bad_first: frozenset[str] = frozenset()) -> bool:
    """M5's rule, for a charsmap whose suspicious rules start/end with the given characters."""
    def alnum(ch: str) -> bool:
        return unicodedata.category(ch)[0] in "LN"
    return (rule_space(text, c) and c + 1 < len(text) and alnum(text[c - 1]) and alnum(text[c + 1])
            and text[c - 1] not in bad_last and text[c + 1] not in bad_first)


_RULES = {"space": rule_space, "space-after-letter": rule_space_after_letter}


def sound_cuts_theorem(engine: Encoder | str, text: str, is_cut: Callable[[str, int], bool],
                       widen: bool = False) -> Verdict:
    """M2/M3w/M3u/M5 + M4 for a rule decided from an engine's structure: cutting ``text`` at EVERY
    position where ``is_cut`` holds gives pieces whose encodings stitch to the serial encoding."""
    cuts = [c for c in range(1, len(text)) if is_cut(text, c)]
    return pieces_equation(engine, text, cuts, widen=widen)


def lopt_cut_theorem(engine: Encoder | str, text: str, c: int, rule: str) -> Verdict:
    """M2/M3w/M3u: where ``rule`` holds at ``c``, ``c`` is a sound cut (vacuous elsewhere)."""
    if not _RULES[rule](text, c):
        return holds(f"vacuous: rule {rule} does not hold at c={c}")
    return split_equation(engine, text, c)


def _claims() -> None:
    """Register the published statements (falsified, with minimized witnesses found by
    ``corpora/merge/search_witnesses.py``; witnesses for every family are in
    ``corpora/merge/witnesses.jsonl``) and tokspec's own theorems."""
    lopt = "LoPT (Shao et al.), seeds/lopt-lossless-parallel-tokenization.txt"
    blog = "blog '3.3x Faster HuggingFace Tokenizers', seeds/parallel-single-sequence-hf-tokenizers.txt"
    register(Claim("merge.lopt_theorem_4_1", f"{lopt}, Theorem 4.1",
                   "If n_i^o > 0 for 1 <= i <= N-1 then T = Tokenizer(S).", "falsified", lopt_theorem_4_1,
                   {"engine": "tiktoken:cl100k_base", "text": "a" * 28 + "0" + "a" * 16 + " ",
                    "chunk_len": 2, "overlap": 40}))
    register(Claim("merge.lopt_lemma_7_1", f"{lopt}, Lemma 7.1",
                   "Equal spans over a run longer than the longest vocabulary word give "
                   "F(S) = t^l_1..t^l_{i1+k}, t^r_{i2+k+1}..t^r_n.", "falsified", lopt_lemma_7_1,
                   {"engine": "hf:bert-base-uncased", "s1": "a" * 74, "so": "a0" + "a" * 23, "s2": "aa"}))
    register(Claim("merge.lopt_lemma_7_3", f"{lopt}, Lemma 7.3 (used by the proof of 7.1)",
                   "If F(S) = (t_1..t_n) then F([s_l..s_r]) = (t_l..t_r) for 1 <= l < r <= n.",
                   "falsified", lopt_lemma_7_3,
                   {"engine": "hf:bert-base-uncased", "text": "affbe", "l": 2, "r": 3}))
    register(Claim("merge.blog_overlap_theorem", f"{blog}, Correctness Proof",
                   "With overlap >= max_token_length, keeping left tokens starting before the midpoint "
                   "and right tokens from it reproduces serial encoding, offsets included.",
                   "falsified", blog_overlap_theorem,
                   {"engine": "hf:bert-base-uncased", "text": "a" * 20, "mid": 19, "overlap": 18}))
    register(Claim("merge.parallel_tokenizer_overlap", "OpenLMLab/ParallelTokenizer README",
                   "An overlap no less than the longest token (in chars) lets the longest common token "
                   "run merge adjacent chunks into the serial result.", "falsified",
                   parallel_tokenizer_claim,
                   {"engine": "hf:bert-base-uncased", "text": "a" * 16, "chunk_len": 15, "overlap": 24}))
    for name, rule, family in (("M2", "space-after-letter", "byte-level BPE behind a proved regex"),
                               ("M3w", "space", "space-splitting pre-tokenizer, space-local normalizer"),
                               ("M3u", "space-after-letter", "Metaspace(split=True), space-local normalizer")):
        register(Claim(f"merge.{name}", "tokspec (this module's docstring)",
                       f"{family}: a cut where rule {rule!r} holds is sound (Definition M1).",
                       "proved", lopt_cut_theorem))


_claims()
