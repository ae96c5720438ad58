"""WordPiece: greedy longest-match-first, as a definition and as a property of engine output.

Source: the task brief (issue 6, "WordPiece greedy longest match") and the behaviour of BERT's
WordPiece as implemented by HF ``tokenizers`` (``continuing_subword_prefix="##"``, a word with no
complete segmentation becomes one ``[UNK]``, words longer than ``max_input_chars_per_word`` too).

The definition works on one *normalized, pretokenized word*. The engine-level property
(:func:`prop_greedy_pieces`) regroups an engine's pieces into words (a piece without the prefix
starts a word), rebuilds each word from its pieces and checks the definition reproduces them.

Out of scope: the BERT normalizer and pretokenizer (they belong to the engines and are checked by
conformance against HF), special tokens.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from tokspec.spec._verdict import Claim, Verdict, all_of, fails, holds, register

__all__ = ["wordpiece_word", "prop_greedy_word", "prop_greedy_pieces"]


def wordpiece_word(vocab: Collection[str], word: str, *, unk: str = "[UNK]", prefix: str = "##",
                   max_chars: int = 100) -> list[str]:
    """Greedy longest-match-first segmentation of one word.

    At each position take the longest vocabulary entry (with ``prefix`` after the first piece);
    if none matches, the whole word is ``[unk]``. O(m^2) look-ups for m characters.

    >>> wordpiece_word({"un", "##aff", "##able"}, "unaffable")
    ['un', '##aff', '##able']
    """
    if len(word) > max_chars:
        return [unk]
    pieces: list[str] = []
    start = 0
    while start < len(word):
        lead = prefix if start > 0 else ""
        end = len(word)
        while end > start and lead + word[start:end] not in vocab:
            end -= 1  # shrink until the candidate is a vocabulary entry
        if end == start:
            return [unk]
        pieces.append(lead + word[start:end])
        start = end
    return pieces


def prop_greedy_word(vocab: Collection[str], word: str, pieces: Sequence[str], *,
                     unk: str = "[UNK]", prefix: str = "##", max_chars: int = 100) -> Verdict:
    """An engine's pieces for ``word`` equal the greedy longest-match definition."""
    want = wordpiece_word(vocab, word, unk=unk, prefix=prefix, max_chars=max_chars)
    if list(pieces) == want:
        return holds(f"{word!r}: greedy longest match")
    return fails("pieces are not the greedy longest-match segmentation", word=word,
                 got=list(pieces), expected=want)


def _words(pieces: Sequence[str], prefix: str) -> list[list[str]]:
    words: list[list[str]] = []
    for p in pieces:
        if p.startswith(prefix) and words:
            words[-1].append(p)
        else:
            words.append([p])
    return words


def prop_greedy_pieces(vocab: Collection[str], pieces: Sequence[str], *, unk: str = "[UNK]",
                       prefix: str = "##", max_chars: int = 100) -> Verdict:
    """Every word an engine produced (regrouped from its pieces) is segmented greedily.

    A lone ``[unk]`` word is skipped (its text cannot be rebuilt from the pieces); a word whose
    pieces are not all in the vocabulary fails (greedy gives ``[unk]`` for it). O(total m^2).
    """
    checks = []
    for word_pieces in _words(pieces, prefix):
        if word_pieces == [unk]:
            continue
        word = word_pieces[0] + "".join(p[len(prefix):] for p in word_pieces[1:])
        checks.append(prop_greedy_word(vocab, word, word_pieces, unk=unk, prefix=prefix,
                                       max_chars=max_chars))
    return all_of(checks, "WordPiece greedy longest match")


register(Claim("wordpiece.greedy_longest_match", "task brief issue 6; BERT WordPiece (HF tokenizers)",
               "Each word is split greedily, longest vocabulary match first; no match gives [UNK].",
               "checked", prop_greedy_word))
