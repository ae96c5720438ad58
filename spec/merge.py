"""Chunked parallel encoding: when does "encode the pieces, then merge" equal serial encoding?

Notation: ``F`` is an engine's ``encode`` (ids AND character offsets); ``F(S)[a:b]`` a token slice;
``shift(E, d)`` moves every offset of ``E`` by ``d``; ``++`` concatenates token lists.

**Definition M1 (sound cut).** ``c`` (0 < c < len(S)) is a sound cut of ``S`` for ``F`` when
``F(S) == F(S[:c]) ++ shift(F(S[c:]), c)``. :func:`split_equation` checks it on one input.

**Theorem M2 (byte-level BPE behind a cl100k/o200k/Qwen-style regex).** If ``S[c] == " "`` and
``S[c-1]`` is a letter (category L*), ``c`` is a sound cut. Proof: such engines encode
``S`` as the concatenation of BPE(p) over the pretokens p the regex scan (leftmost, alternatives in
order, no look-behind or anchors in these patterns) produces, so it is enough that (a) the scan of
``S`` has a pretoken boundary at ``c``, (b) the scan of ``S[:c]`` equals the scan of ``S`` before
``c``, (c) the scan of ``S[c:]`` equals the scan of ``S`` after ``c``. (a) The pretoken holding the
letter ``S[c-1]`` comes from a letter alternative (``\\p{L}+``-like runs, the contractions); these
stop at the space because no such alternative matches a space after a letter, so it ends at ``c``.
(b) Every alternative that can read past ``c-1`` must first consume the letter at ``c-1``; each such
alternative then stops on the space in ``S`` and on the end of ``S[:c]`` alike; the one look-ahead
``\\s+(?!\\S)`` is only tried at whitespace, which ``S[c-1]`` is not, so no decision changes. (c) With
a boundary at ``c`` and no look-behind, the scan from ``c`` reads only ``S[c:]``. Special-token
strings of these vocabularies contain no space, so tiktoken's special handling (if enabled) never
straddles ``c``. Caveat: "letter" is decided by this Python's Unicode tables, possibly older than
the library's; a letter unknown to one side only makes the rule skip a cut, except for a
character that is a letter here and not there (none known).

**Theorem M3w (BERT WordPiece: BertNormalizer + BertPreTokenizer).** If ``S[c] == " "``, ``c`` is a
sound cut. Proof: every normalizer step (clean_text, CJK padding, lowercasing, NFD + mark removal)
acts per character, except NFD's canonical reordering, which only reorders runs of combining marks
and cannot cross the space (a starter); the pretokenizer splits at whitespace (dropped) and
isolates punctuation, both per character; WordPiece then runs per word. Added tokens contain no
space, so their matching cannot straddle ``c``. Offsets map back per character, hence shift by ``c``.

**Theorem M3u (Unigram behind Metaspace(split=True), mon-unigram's normalizer).** If
``S[c] == " "`` and ``S[c-1]`` is a letter, ``c`` is a sound cut. Proof: the normalizer removes
zero-width characters, maps Zs to " " and applies NFC; a space is NFC-stable and composes with
nothing, so normalization commutes with the cut; the letter keeps ``S[:c]``'s normalization
non-empty, so Metaspace's prepended "▁" is the same for ``S`` and ``S[:c]`` and absent for ``S[c:]``
(which already starts with "▁"). Metaspace splits before every "▁", so ``c`` starts a word in
``S`` and words are encoded by Viterbi independently. Why not cut inside a word: Viterbi is global
over the word and compares cumulative float scores, so even a cut no vocabulary piece straddles
could change tie-breaking; this rule never cuts inside a word.

**Theorem M4 (composition).** For a rule that only reads ``S[c-1]`` and ``S[c]``, cuts
``c_1 < ... < c_k`` satisfying it are sound together: ``F(S)`` is the concatenation of the pieces'
encodings shifted to their starts. Proof: induction on k; the rule holds for ``c_2 - c_1`` in
``S[c_1:]`` because it reads the same two characters. :func:`pieces_equation` checks it.

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

Out of scope: proving the rules for other normalizers or pretokenizers (engines of other
families are encoded serially by ``lopt``), and special-token handling that matches spaces.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from tokspec import Encoder, Encoding, load_engine
from tokspec.errors import VocabularyError
from tokspec.spec._verdict import Claim, Verdict, fails, holds, register

__all__ = [
    "split_equation", "pieces_equation", "rule_space", "rule_space_after_letter", "lopt_cut_theorem",
    "lopt_theorem_4_1", "lopt_lemma_7_1", "lopt_lemma_7_3", "blog_overlap_theorem",
    "parallel_tokenizer_claim", "max_token_chars",
]

Tok = tuple[int | None, tuple[int, int]]


def _engine(engine: Encoder | str) -> Encoder:
    return load_engine(engine) if isinstance(engine, str) else engine


def _toks(enc: Encoding, delta: int = 0) -> list[Tok]:
    """(id, global span) per token."""
    ids = enc.ids if enc.ids is not None else (None,) * len(enc)
    return [(i, (s + delta, e + delta)) for i, (s, e) in zip(ids, enc.offsets)]


def _ids(toks: list[Tok]) -> list[int | None]:
    return [t[0] for t in toks]


def pieces_equation(engine: Encoder | str, text: str, cuts: list[int]) -> Verdict:
    """M1/M4: F(text) equals the concatenation of F over the pieces between ``cuts``."""
    eng = _engine(engine)
    bounds = [0, *cuts, len(text)]
    merged: list[Tok] = []
    for a, b in zip(bounds, bounds[1:]):
        merged += _toks(eng.encode(text[a:b]), a)  # each piece alone, offsets made global
    serial = _toks(eng.encode(text))
    if merged == serial:
        return holds(f"{len(cuts)} cuts: pieces concatenate to the serial encoding")
    k = next((i for i, (x, y) in enumerate(zip(serial, merged)) if x != y), min(len(serial), len(merged)))
    return fails("pieces do not concatenate to the serial encoding", text=text, cuts=cuts,
                 first_divergence=k, serial=serial[k:k + 5], merged=merged[k:k + 5])


def split_equation(engine: Encoder | str, text: str, c: int) -> Verdict:
    """M1: ``c`` is a sound cut of ``text`` (checked on this input)."""
    return pieces_equation(engine, text, [c])


def rule_space(text: str, c: int) -> bool:
    """M3w's rule: a space starts the right piece."""
    return 0 < c < len(text) and text[c] == " "


def rule_space_after_letter(text: str, c: int) -> bool:
    """M2/M3u's rule: a space after a letter (Unicode category L*) starts the right piece."""
    return rule_space(text, c) and unicodedata.category(text[c - 1]).startswith("L")


_RULES = {"space": rule_space, "space-after-letter": rule_space_after_letter}


def lopt_cut_theorem(engine: Encoder | str, text: str, c: int, rule: str) -> Verdict:
    """M2/M3w/M3u: where ``rule`` holds at ``c``, ``c`` is a sound cut (vacuous elsewhere)."""
    if not _RULES[rule](text, c):
        return holds(f"vacuous: rule {rule} does not hold at c={c}")
    return split_equation(engine, text, c)


def max_token_chars(engine: Encoder) -> int:
    """An upper bound on the characters of one token: its vocabulary's longest entry in UTF-8
    bytes (without the WordPiece "##"). Raises VocabularyError for an unknown vocabulary."""
    from tokspec import vocab

    sha = engine.info.vocab_sha256
    for name, entry in vocab.NAMED_FILES.items():
        if entry.sha256 == sha and not name.endswith(".vocab"):
            path = vocab.named_path(name)
            if ".tiktoken" in path.name:
                return max(len(t) for t in vocab.load_tiktoken(path, sha).ranks)
            table = vocab.load_tokenizer_json(path, sha).data["model"]["vocab"]
            words = [w[0] for w in table] if isinstance(table, list) else list(table)
            return max(len(w.removeprefix("##").encode("utf-8")) for w in words)
    raise VocabularyError(f"engine {engine.info.name!r}: vocabulary sha256={sha!r} is not a named one")


def _chunk_spans(n: int, chunk_len: int, overlap: int) -> list[tuple[int, int]]:
    """LoPT eq. 1 / ParallelTokenizer: ``[k*Lc, k*Lc + Lc + Lo)`` clipped, for k*Lc < n."""
    return [(s, min(n, s + chunk_len + overlap)) for s in range(0, n, chunk_len)] or [(0, 0)]


def _match(left: list[Tok], right: list[Tok], lo: int, hi: int) -> tuple[int, int, int]:
    """LoPT's Match: longest run of consecutive tokens with equal global spans inside [lo, hi);
    the first longest (by right index) wins. Plain O(a * b * run) search."""
    def inside(t: Tok) -> bool:
        return lo <= t[1][0] and t[1][1] <= hi

    best = (0, 0, 0)
    for r in range(len(right)):
        for l in range(len(left)):
            n = 0
            while (l + n < len(left) and r + n < len(right) and inside(left[l + n])
                   and inside(right[r + n]) and left[l + n][1] == right[r + n][1]):
                n += 1
            if n > best[2]:
                best = (l, r, n)
    return best


def lopt_theorem_4_1(engine: Encoder | str, text: str, chunk_len: int, overlap: int) -> Verdict:
    """LoPT Theorem 4.1, as stated: with ``s_i = S[Lc(i-1) : Lc*i + Lo]``, ``(T_i, P_i) =
    Tokenizer(s_i)``, ``(l_i, r_i, n_i) = Match(P_i, P_{i+1})`` and ``T = T_1[:l_1+n_1] ++
    T_2[r_1+n_1 : l_2+n_2] ++ ... ++ T_N[r_{N-1}+n_{N-1}:]``: if every ``n_i > 0`` then
    ``T = Tokenizer(S)`` (token ids). Vacuous when some ``n_i == 0``."""
    eng = _engine(engine)
    spans = _chunk_spans(len(text), chunk_len, overlap)
    chunks = [_toks(eng.encode(text[a:b]), a) for a, b in spans]
    matches = [_match(chunks[i], chunks[i + 1], spans[i + 1][0], spans[i][1]) for i in range(len(chunks) - 1)]
    if any(n == 0 for _, _, n in matches):
        return holds("vacuous: some n_i = 0 (the theorem assumes a match for every pair)")
    merged: list[Tok] = []
    for i, chunk in enumerate(chunks):
        lo = matches[i - 1][1] + matches[i - 1][2] if i > 0 else 0
        hi = matches[i][0] + matches[i][2] if i < len(matches) else len(chunk)
        merged += chunk[lo:hi]  # eq. 4, Python slicing as published
    serial = _toks(eng.encode(text))
    if _ids(merged) == _ids(serial):
        return holds(f"T = Tokenizer(S) with {len(chunks)} chunks")
    return fails("Theorem 4.1's premise holds (every n_i > 0) but T != Tokenizer(S)", text=text,
                 chunk_len=chunk_len, overlap=overlap, matches=matches, serial_ids=_ids(serial),
                 merged_ids=_ids(merged))


def _runs(left: list[Tok], right: list[Tok]) -> list[tuple[int, int, int]]:
    """Maximal runs (i1, i2, length) of consecutive tokens with equal spans."""
    out = []
    for i1 in range(len(left)):
        for i2 in range(len(right)):
            if left[i1][1] != right[i2][1] or (i1 and i2 and left[i1 - 1][1] == right[i2 - 1][1]):
                continue
            k = 0
            while i1 + k < len(left) and i2 + k < len(right) and left[i1 + k][1] == right[i2 + k][1]:
                k += 1
            out.append((i1, i2, k))
    return out


def lopt_lemma_7_1(engine: Encoder | str, s1: str, so: str, s2: str) -> Verdict:
    """LoPT Lemma 7.1, as stated: ``S = S1 + So + S2``, ``F(S1+So) = t^l``, ``F(So+S2) = t^r``; if
    tokens ``t^l_{i1..i1+k}`` and ``t^r_{i2..i2+k}`` have equal spans in S and their text is longer
    than T (the longest vocabulary word; bounded here by its UTF-8 bytes, which only makes the
    premise harder), then ``F(S) = t^l_1..t^l_{i1+k}, t^r_{i2+k+1}..t^r_n`` (ids). Vacuous without
    such a run."""
    eng = _engine(engine)
    left, right = _toks(eng.encode(s1 + so)), _toks(eng.encode(so + s2), len(s1))
    serial = _ids(_toks(eng.encode(s1 + so + s2)))
    t_max = max_token_chars(eng)
    checked = 0
    for i1, i2, k in _runs(left, right):
        for j in range(k):  # the run t^l_{i1..i1+j}
            if left[i1 + j][1][1] - left[i1][1][0] <= t_max:
                continue
            checked += 1
            predicted = _ids(left[:i1 + j + 1]) + _ids(right[i2 + j + 1:])
            if predicted != serial:
                return fails("Lemma 7.1's premise holds but F(S) differs from the merge", s1=s1, so=so,
                             s2=s2, run=(i1, i2, j), T=t_max, serial_ids=serial, merged_ids=predicted)
    return holds(f"{checked} qualifying runs, each gives F(S)" if checked else "vacuous: no run longer than T")


def lopt_lemma_7_3(engine: Encoder | str, text: str, l: int, r: int) -> Verdict:
    """LoPT Lemma 7.3, as stated: if ``F(S) = (t_1..t_n)`` then for ``1 <= l < r <= n``,
    F(the text of ``t_l..t_r``) = ``(t_l..t_r)`` (ids). Vacuous outside ``1 <= l < r <= n``."""
    eng = _engine(engine)
    toks = _toks(eng.encode(text))
    if not 1 <= l < r <= len(toks):
        return holds(f"vacuous: need 1 <= l < r <= {len(toks)}")
    a, b = toks[l - 1][1][0], toks[r - 1][1][1]
    want, got = _ids(toks[l - 1:r]), _ids(_toks(eng.encode(text[a:b])))
    if want == got:
        return holds(f"F(S[{a}:{b}]) = tokens {l}..{r}")
    return fails("F of the tokens' text is not the tokens", text=text, l=l, r=r, piece=text[a:b],
                 expected=want, got=got)


def blog_overlap_theorem(engine: Encoder | str, text: str, mid: int, overlap: int) -> Verdict:
    """The blog's theorem, as stated: with ``w >= max_token_length``, ``L = T(S[0 : m+w])``,
    ``R = T(S[m-w : n])`` shifted by ``m-w``, keeping L's tokens starting ``< m`` and R's starting
    ``>= m`` gives ``T(S)`` "in the correct order with correct offsets" (ids and offsets).
    Vacuous when ``w`` is below the longest token or ``m`` is outside the text."""
    eng = _engine(engine)
    if overlap < max_token_chars(eng) or not 0 < mid < len(text):
        return holds("vacuous: overlap below the longest token, or midpoint outside the text")
    lo = max(0, mid - overlap)
    left = [t for t in _toks(eng.encode(text[:mid + overlap])) if t[1][0] < mid]
    right = [t for t in _toks(eng.encode(text[lo:]), lo) if t[1][0] >= mid]
    serial = _toks(eng.encode(text))
    if left + right == serial:
        return holds("filtered halves concatenate to T(S)")
    return fails("overlap >= longest token, yet the filtered merge differs from T(S)", text=text,
                 mid=mid, overlap=overlap, serial=serial, merged=left + right)


def _longest_common_ids(a: list[int | None], b: list[int | None]) -> tuple[int, int, int]:
    """Longest common contiguous id run over the whole lists; ties: ending last in ``a``."""
    best = (len(a), 0, 0)
    for i in range(len(a)):
        for j in range(len(b)):
            n = 0
            while i + n < len(a) and j + n < len(b) and a[i + n] == b[j + n]:
                n += 1
            if n > best[2] or (n == best[2] and n > 0 and i > best[0]):
                best = (i, j, n)
    return best


def parallel_tokenizer_claim(engine: Encoder | str, text: str, chunk_len: int, overlap: int) -> Verdict:
    """ParallelTokenizer's README: with an overlap no shorter than the longest token (in chars),
    joining adjacent chunks on their longest common token-id run gives the serial ids. Vacuous
    for a shorter overlap."""
    eng = _engine(engine)
    if overlap < max_token_chars(eng):
        return holds("vacuous: overlap shorter than the longest token")
    ids = [_ids(_toks(eng.encode(text[a:b]))) for a, b in _chunk_spans(len(text), chunk_len, overlap)]
    merged: list[int | None] = []
    start = 0
    for i in range(len(ids) - 1):
        a, b, n = _longest_common_ids(ids[i], ids[i + 1])
        merged += ids[i][start:a + n]
        start = b + n
    merged += ids[-1][start:]
    serial = _ids(_toks(eng.encode(text)))
    if merged == serial:
        return holds("longest-common-id merge gives the serial ids")
    return fails("overlap >= longest token, yet the id-run merge differs from serial", text=text,
                 chunk_len=chunk_len, overlap=overlap, serial_ids=serial, merged_ids=merged)


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
                   {"engine": "hf:bert-base-uncased", "text": "unaffable", "l": 2, "r": 3}))
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
    for name, rule, family in (("M2", "space-after-letter", "byte-level BPE, cl100k/o200k/Qwen regex"),
                               ("M3w", "space", "BERT WordPiece"),
                               ("M3u", "space-after-letter", "Unigram behind Metaspace(split=True)")):
        register(Claim(f"merge.{name}", "tokspec (this module's docstring)",
                       f"{family}: a cut where rule {rule!r} holds is sound (Definition M1).",
                       "proved", lopt_cut_theorem))


_claims()
