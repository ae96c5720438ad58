"""The published merge statements of ``tokspec.spec.merge``, as checkable predicates (kept EXACTLY
as stated; each is falsified, witnesses in ``tokspec.spec.merge``'s claims and ``corpora/merge/``).

Split from ``tokspec.spec.merge`` along the seam "their claims / our theorems"; that module
re-exports every name here. Notation and helpers as there.
"""

from __future__ import annotations

from tokspec import Encoder
from tokspec.errors import VocabularyError
from tokspec.spec._verdict import Verdict, fails, holds
from tokspec.spec.merge_core import Tok, _engine, _ids, _toks

__all__ = ["lopt_theorem_4_1", "lopt_lemma_7_1", "lopt_lemma_7_3", "blog_overlap_theorem",
           "parallel_tokenizer_claim", "max_token_chars"]


def max_token_chars(engine: Encoder) -> int:
    """An upper bound on the characters of one token: its vocabulary's longest entry in UTF-8
    bytes (without the WordPiece "##"). Raises VocabularyError for an unknown vocabulary."""
    from tokspec.formats import vocab

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
