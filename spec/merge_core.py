"""Shared helpers of ``tokspec.spec.merge`` and ``tokspec.spec.merge_published``: token lists with
global spans, and Definition M1's equation (:func:`pieces_equation`)."""

from __future__ import annotations

from tokspec import Encoder, Encoding, load_engine
from tokspec.spec._verdict import Verdict, fails, holds

__all__ = ["Tok", "pieces_equation"]

Tok = tuple[int | None, tuple[int, int]]


def _engine(engine: Encoder | str) -> Encoder:
    return load_engine(engine) if isinstance(engine, str) else engine


def _toks(enc: Encoding, delta: int = 0) -> list[Tok]:
    """(id, global span) per token."""
    ids = enc.ids if enc.ids is not None else (None,) * len(enc)
    return [(i, (s + delta, e + delta)) for i, (s, e) in zip(ids, enc.offsets)]


def _ids(toks: list[Tok]) -> list[int | None]:
    return [t[0] for t in toks]


def pieces_equation(engine: Encoder | str, text: str, cuts: list[int], *, widen: bool = False
                    ) -> Verdict:
    """M1/M4: F(text) equals the concatenation of F over the pieces between ``cuts``; with
    ``widen`` (M5) the first token of every piece after the first starts at its piece's start."""
    eng = _engine(engine)
    bounds = [0, *cuts, len(text)]
    merged: list[Tok] = []
    for a, b in zip(bounds, bounds[1:]):
        piece = _toks(eng.encode(text[a:b]), a)  # each piece alone, offsets made global
        if widen and a > 0 and piece:
            piece[0] = (piece[0][0], (a, piece[0][1][1]))
        merged += piece
    serial = _toks(eng.encode(text))
    if merged == serial:
        return holds(f"{len(cuts)} cuts: pieces concatenate to the serial encoding")
    k = next((i for i, (x, y) in enumerate(zip(serial, merged)) if x != y), min(len(serial), len(merged)))
    return fails("pieces do not concatenate to the serial encoding", text=text, cuts=cuts,
                 first_divergence=k, serial=serial[k:k + 5], merged=merged[k:k + 5])
