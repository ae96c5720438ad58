"""``delimiter``: split at a delimiter near each chunk boundary, encode the pieces, concatenate.

The delimiter-based baseline of the LoPT paper (section 3.2, Table 1): for each target position
``k * chunk_len`` the first delimiter at or after it is the cut ("the right first delimiter around
the chunk length"). Delimiters: ``space`` (any whitespace character; the piece to the right starts
with it, so BPE's " word" tokens stay whole), ``comma`` and ``period`` (the cut is just after the
mark). No overlap, no merge logic: the pieces' encodings are concatenated.

NOT lossless for any family: a whitespace run is one pretoken for byte-level BPE, "e.g." is one
WordPiece word after splitting, and a Unigram piece may span a comma. See ``corpora/merge/``.
Complexity: O(n) to find the cuts plus the encoding.
"""

from __future__ import annotations

import re

from tokspec import Encoder
from tokspec.fast._chunking import (Anchor, EncodeMany, MergeError, MergeResult, MergeTrace,
                                    check_positive, encode_spans, keep_slices)

__all__ = ["NAME", "DELIMITERS", "find_cuts", "merge"]

NAME = "delimiter"

#: delimiter name -> (pattern, cut after the match?)
DELIMITERS: dict[str, tuple[re.Pattern[str], bool]] = {
    "space": (re.compile(r"\s"), False),
    "comma": (re.compile(","), True),
    "period": (re.compile(r"\."), True),
}


def find_cuts(text: str, chunk_len: int, delimiter: str) -> list[int]:
    """Cut positions (strictly inside the text, increasing): the first delimiter at or after each
    target, the targets being ``chunk_len``, then one chunk length on or just past the last cut,
    whichever is later. O(n).

    Each search starts at a target >= 1 and past the previous cut, so cuts are positive and
    increasing by construction; only a cut at the very end (a final comma) is dropped.
    """
    check_positive("chunk_len", chunk_len)
    try:
        pattern, after = DELIMITERS[delimiter]
    except KeyError:
        raise MergeError(f"unknown delimiter={delimiter!r}; choose one of {sorted(DELIMITERS)}") from None
    cuts: list[int] = []
    target = chunk_len
    while target < len(text):
        m = pattern.search(text, target)
        if m is None:
            break
        cut = m.end() if after else m.start()
        if cut < len(text):
            cuts.append(cut)
        target = max(target + chunk_len, cut + 1)
    return cuts


def merge(engine: Encoder, text: str, *, chunk_len: int, delimiter: str = "space",
          encode_many: EncodeMany | None = None) -> MergeResult:
    """Split at delimiters near every ``chunk_len`` characters, encode, concatenate."""
    cuts = find_cuts(text, chunk_len, delimiter)
    bounds = [0, *cuts, len(text)]
    spans = list(zip(bounds, bounds[1:]))
    trace = MergeTrace(NAME, {"chunk_len": chunk_len, "delimiter": delimiter})
    trace.chunks = encode_spans(engine, text, spans, encode_many)
    trace.anchors = [Anchor(i, len(trace.chunks[i].encoding), 0, c, f"{delimiter} delimiter")
                     for i, c in enumerate(cuts)]
    return MergeResult(keep_slices(trace.chunks, [(0, None)] * len(spans)), trace)
