"""Hypothesis strategies for tokenizer testing (public API: use them in your own ``@given`` tests).

Text strategies (all shrink towards short, simple text):

- :func:`unicode_text`: characters drawn category by category, so every Unicode general category
  is reached (Hypothesis' plain ``text()`` rarely produces, e.g., Me or Zl); no lone surrogates
  unless ``allow_surrogates=True`` (for text-domain tests: tokspec must *reject* them).
- :func:`shaped_text`: whitespace-, digit-, contraction- and CRLF-heavy text from fragments.
- :func:`repetitions`: long runs of one character, periodic patterns, repeated words/tokens, and
  (given ``chunk_len``) repetitions placed across chunk boundaries.
- :func:`boundary_text`: texts whose interesting fragments sit at chunk boundaries (merge tests).
- :func:`vocab_text` / :func:`single_token`: concatenations of real vocabulary tokens (get them
  with :func:`named_vocab_tokens`).
- :func:`mixed_text`: one of all the above.
- :func:`long_text`: long texts (1,000 characters to 2 MiB): heavy-tailed and boundary-targeted
  lengths (powers of two and ten, in characters and UTF-8 bytes, plus or minus a token), built by
  length-extension moves with seam fragments planted across boundaries (:mod:`tokspec.longtext`).
  Shrinks towards 1,000 characters. Use it as a fraction of draws: a long text costs ~1000 short ones.

Tiny generated vocabularies (so theorems are checked for many vocabularies, not just cl100k):
:func:`bpe_merge_ranks` (a proper merge table: each token is the merge of two earlier tokens),
:func:`bpe_any_ranks` (arbitrary multi-byte tokens and ranks), :func:`wordpiece_vocab`,
:func:`unigram_scores` (scores from a small set, so ties happen), and :func:`byte_strings`.

Out of scope: strategies for special tokens, and realistic word frequencies.
"""

from __future__ import annotations

import math
import random

from collections.abc import Sequence
from typing import Any

from hypothesis import strategies as st

__all__ = [
    "GENERAL_CATEGORIES",
    "unicode_char",
    "unicode_text",
    "shaped_text",
    "repetitions",
    "boundary_text",
    "vocab_text",
    "single_token",
    "named_vocab_tokens",
    "mixed_text",
    "long_text",
    "byte_strings",
    "bpe_merge_ranks",
    "bpe_any_ranks",
    "trained_bpe_ranks",
    "wordpiece_vocab",
    "unigram_scores",
]

#: Every Unicode general category except Cs (surrogates), which :func:`unicode_text` adds on request.
GENERAL_CATEGORIES: tuple[str, ...] = (
    "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi",
    "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Co", "Cn",
)

_FRAGMENTS: tuple[str, ...] = (
    " ", "  ", "   ", "\t", "\n", "\n\n", "\r\n", "\r", "\u00a0", "\u3000", "\u2028", "\x0b", "\x0c",
    "0", "1", "12", "123", "1234", "٣", "四", "x", "a", "Hello", "world", "the", "I", "É", "ß",
    "'s", "'S", "'t", "'re", "'ve", "'m", "'ll", "'LL", "'d", "’s", "'", "''", "don't", "O'Neil",
    ".", ",", "!", "?", "...", "-", "(", ")", "{", "}", "#", "$", "=", "==", "->", "//",
    "中文", "日本語", "한국어", "العربية", "עברית", "русский", "😀", "👩‍💻", "e\u0301", "\u200d",
)


def unicode_char(*, allow_surrogates: bool = False) -> st.SearchStrategy[str]:
    """One character: first a general category, then a character of it (so rare categories
    come up as often as common ones)."""
    cats = GENERAL_CATEGORIES + (("Cs",) if allow_surrogates else ())
    return st.sampled_from(cats).flatmap(lambda c: st.characters(categories=[c]))  # type: ignore[list-item]


def unicode_text(*, min_size: int = 0, max_size: int = 40, allow_surrogates: bool = False,
                 ascii_bias: bool = True) -> st.SearchStrategy[str]:
    """Text over every general category; with ``ascii_bias`` also plain ASCII runs, so category
    boundaries next to ordinary words and spaces are exercised."""
    char = unicode_char(allow_surrogates=allow_surrogates)
    if ascii_bias:
        char = st.one_of(char, st.characters(min_codepoint=0x20, max_codepoint=0x7E),
                         st.sampled_from(" \n\t'"))
    return st.lists(char, min_size=min_size, max_size=max_size).map("".join)


def shaped_text(*, max_fragments: int = 20) -> st.SearchStrategy[str]:
    """Whitespace-, digit-, contraction- and CRLF-heavy text built from fragments."""
    return st.lists(st.sampled_from(_FRAGMENTS), max_size=max_fragments).map("".join)


@st.composite
def repetitions(draw: st.DrawFn, *, chunk_len: int | None = None, max_repeat: int = 300) -> str:
    """Adversarial repetitions: a unit (a character, a short pattern, a word, a fragment) repeated
    many times; with ``chunk_len``, placed so the run crosses a multiple of ``chunk_len``."""
    unit = draw(st.one_of(
        unicode_char(), st.sampled_from(_FRAGMENTS),
        st.lists(st.sampled_from(_FRAGMENTS), min_size=1, max_size=3).map("".join),
        st.text(alphabet="ab ", min_size=1, max_size=4)))
    count = draw(st.integers(min_value=2, max_value=max_repeat))
    prefix = draw(st.sampled_from(["", " ", "a", "x ", "\n"]))
    suffix = draw(st.sampled_from(["", " ", "b", ".", "\n"]))
    if chunk_len is not None and chunk_len > 0:
        # start the run `before` characters before a chunk boundary, long enough to cross it
        before = draw(st.integers(min_value=0, max_value=chunk_len - 1))
        prefix = ("z" * chunk_len + prefix)[-(chunk_len - before):]
        count = max(count, before // len(unit) + 2)
    return prefix + unit * count + suffix


@st.composite
def boundary_text(draw: st.DrawFn, *, chunk_len: int = 64, max_chunks: int = 4) -> str:
    """Filler text with a fragment straddling each chunk boundary (at offset -3..+3 of it)."""
    chunks = draw(st.integers(min_value=1, max_value=max_chunks))
    filler = draw(st.sampled_from(["a", "ab ", "word ", "文", " ", "1"]))
    body = list((filler * (chunk_len * (chunks + 1)))[: chunk_len * (chunks + 1)])
    for k in range(1, chunks + 1):
        frag = draw(st.sampled_from(_FRAGMENTS) | unicode_text(min_size=1, max_size=6))
        at = k * chunk_len + draw(st.integers(min_value=-3, max_value=3)) - len(frag) // 2
        at = max(0, min(at, len(body)))
        body[at:at + len(frag)] = list(frag)
    return "".join(body)


def named_vocab_tokens(name: str) -> list[bytes] | list[str]:
    """The tokens of a named vocabulary (``tokspec.formats.vocab``), in id order, for :func:`vocab_text`
    and :func:`single_token`: bytes for rank files (cl100k_base, o200k_base, qwen), strings for
    tokenizer.json models (bert-base-uncased, mon-unigram). Raises VocabularyError if missing."""
    from tokspec.formats import vocab
    if name in ("cl100k_base", "o200k_base", "qwen"):
        ranks = vocab.load_named_tiktoken(name).ranks
        return sorted(ranks, key=ranks.__getitem__)
    model = vocab.load_tokenizer_json(vocab.named_path(name), vocab.NAMED_FILES[name].sha256).data["model"]
    if model["type"] == "Unigram":
        return [str(piece) for piece, _ in model["vocab"]]
    return sorted(model["vocab"], key=model["vocab"].__getitem__)


def single_token(tokens: Sequence[str]) -> st.SearchStrategy[str]:
    """One vocabulary token (as text); shrinks towards the first token of ``tokens``."""
    if not tokens:
        raise ValueError("tokens must be non-empty, got tokens=[]")
    return st.sampled_from(list(tokens))


def vocab_text(tokens: Sequence[str] | Sequence[bytes], *, max_tokens: int = 8,
               separators: Sequence[str] = ("", "", " ", "\n")) -> st.SearchStrategy[str]:
    """Concatenations of vocabulary tokens, sometimes separated. Byte tokens are joined as bytes
    and decoded with ``errors="replace"`` (so split UTF-8 sequences become U+FFFD, in-domain)."""
    if not tokens:
        raise ValueError("tokens must be non-empty, got tokens=[]")
    if isinstance(tokens[0], bytes):
        seps = [s.encode() for s in separators]
        pair: Any = st.tuples(st.sampled_from(list(tokens)), st.sampled_from(seps))
        return st.lists(pair, min_size=1, max_size=max_tokens).map(
            lambda ps: b"".join(t + s for t, s in ps).decode("utf-8", errors="replace"))
    pair = st.tuples(st.sampled_from(list(tokens)), st.sampled_from(list(separators)))
    return st.lists(pair, min_size=1, max_size=max_tokens).map(
        lambda ps: "".join(t + s for t, s in ps))


def mixed_text(*, max_size: int = 40) -> st.SearchStrategy[str]:
    """Any of the text strategies above (not vocabulary-aware)."""
    return st.one_of(unicode_text(max_size=max_size), shaped_text(),
                     repetitions(max_repeat=60), boundary_text(chunk_len=16, max_chunks=2))


@st.composite
def long_text(draw: st.DrawFn, *, min_size: int = 1000, max_size: int = 2 ** 21,
              pieces: Sequence[str] = ()) -> str:
    """A long text (module docstring): ``min_size <= len <= max_size`` characters, or that many UTF-8
    bytes for a byte-targeted length. ``pieces`` (e.g. corpus texts) feed the extension moves."""
    from tokspec.longtext import BOUNDARY_SIZES, grow_text

    if not 1 <= min_size <= max_size:
        raise ValueError(f"need 1 <= min_size <= max_size, got min_size={min_size!r}, max_size={max_size!r}")
    sizes = [s for s in BOUNDARY_SIZES if min_size <= s <= max_size]
    boundary = st.tuples(st.sampled_from(sizes), st.integers(min_value=-16, max_value=16)).map(
        lambda t: min(max_size, max(min_size, t[0] + t[1])))
    heavy = st.floats(min_value=math.log(min_size), max_value=math.log(max_size)).map(
        lambda x: min(max_size, max(min_size, int(math.exp(x)))))
    n = draw(st.one_of(heavy, boundary) if sizes else heavy)
    unit = draw(st.sampled_from(("chars", "bytes")))
    seed = draw(st.integers(min_value=0, max_value=2 ** 32 - 1))
    return grow_text(random.Random(seed), n, unit=unit, pieces=list(pieces))


def byte_strings(alphabet: bytes = b"abc", *, max_size: int = 10) -> st.SearchStrategy[bytes]:
    """Short byte strings over ``alphabet`` (inputs for tiny vocabularies)."""
    return st.lists(st.sampled_from(list(alphabet)), max_size=max_size).map(bytes)


@st.composite
def bpe_merge_ranks(draw: st.DrawFn, *, alphabet: bytes = b"abc", max_merges: int = 10) -> dict[bytes, int]:
    """A proper BPE vocabulary: the alphabet's bytes (ranks 0..k-1), then each merge joins two
    existing tokens into a new one (rank = merge order)."""
    tokens = [bytes([b]) for b in alphabet]
    for _ in range(draw(st.integers(min_value=0, max_value=max_merges))):
        left = draw(st.sampled_from(tokens))
        right = draw(st.sampled_from(tokens))
        if left + right not in tokens and len(left + right) <= 6:
            tokens.append(left + right)
    return {tok: rank for rank, tok in enumerate(tokens)}


def trained_bpe_ranks(seed: int, *, alphabet: bytes = b"abc", merges: int = 30, segments: int = 20,
                      segment_len: tuple[int, int] = (5, 30)) -> dict[bytes, int]:
    """A byte-level rank table learned the way BPE training learns one (deterministic, not a
    strategy): over ``segments`` random strings of ``segment_len`` bytes from ``alphabet``, merge a
    random adjacent pair of the current segmentation everywhere, give the new token the next rank,
    ``merges`` times. Unlike :func:`bpe_merge_ranks`, merges follow a corpus, as real tables do."""
    rng = random.Random(seed)
    ranks = {bytes([i]): i for i in range(256)}
    segs = [[bytes([rng.choice(alphabet)]) for _ in range(rng.randint(*segment_len))]
            for _ in range(segments)]
    for _ in range(merges):
        pairs = [(s[i], s[i + 1]) for s in segs for i in range(len(s) - 1) if s[i] + s[i + 1] not in ranks]
        if not pairs:
            break
        a, b = rng.choice(pairs)
        ranks[a + b] = len(ranks)
        for s in segs:
            i = 0
            while i < len(s) - 1:
                if s[i] == a and s[i + 1] == b:
                    s[i:i + 2] = [a + b]
                i += 1
    return ranks


@st.composite
def bpe_any_ranks(draw: st.DrawFn, *, alphabet: bytes = b"abc", max_tokens: int = 10) -> dict[bytes, int]:
    """Arbitrary multi-byte tokens over ``alphabet`` with arbitrary distinct ranks (tokens need
    not be reachable by merges), plus every single byte of the alphabet."""
    multi = draw(st.lists(byte_strings(alphabet, max_size=4).filter(lambda b: len(b) >= 2),
                          max_size=max_tokens, unique=True))
    tokens = [bytes([b]) for b in alphabet] + multi
    order = draw(st.permutations(range(len(tokens))))
    return {tok: order[i] for i, tok in enumerate(tokens)}


@st.composite
def wordpiece_vocab(draw: st.DrawFn, *, alphabet: str = "abc", max_entries: int = 12) -> frozenset[str]:
    """A tiny WordPiece vocabulary: word-initial entries and ``##`` continuations over
    ``alphabet`` (single characters may be missing, so ``[UNK]`` occurs)."""
    words = st.text(alphabet=alphabet, min_size=1, max_size=4)
    heads = draw(st.lists(words, max_size=max_entries))
    tails = draw(st.lists(words, max_size=max_entries))
    return frozenset(heads) | frozenset("##" + t for t in tails)


@st.composite
def unigram_scores(draw: st.DrawFn, *, alphabet: str = "abc", max_pieces: int = 10,
                   all_chars: bool = True) -> dict[str, float]:
    """Tiny Unigram pieces with scores drawn from a small set (so equal totals, i.e. ties, are
    common). With ``all_chars`` every alphabet character is a piece (a segmentation exists)."""
    score = st.sampled_from([-1.0, -2.0, -3.0, -0.5, -1.5, -4.0])
    pieces = draw(st.lists(st.text(alphabet=alphabet, min_size=2, max_size=4), max_size=max_pieces,
                           unique=True))
    singles = list(alphabet) if all_chars else draw(st.lists(st.sampled_from(list(alphabet)), unique=True))
    return {p: draw(score) for p in singles + pieces}
