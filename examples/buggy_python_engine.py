"""A deliberately buggy Python engine for the tutorial (docs/tutorial.md): do not use it for real.

It wraps ``tiktoken:cl100k_base`` but, "to keep memory flat on long documents", encodes the text
one line at a time and concatenates the results. That is wrong: cl100k_base's pretokenizer lets a
run of newlines (and whitespace before a newline) form one token, so splitting at each ``\\n``
changes the segmentation whenever two line ends meet, e.g. ``"\\n\\n"`` is one token (271) for
the real encoder but two (198, 198) here. ``tokspec diff`` finds and minimizes it.

Use it as a ``module:attr`` engine (the module must be importable, hence ``PYTHONPATH``)::

    PYTHONPATH=examples tokspec diff tiktoken:cl100k_base buggy_python_engine:engine --fuzz --time 10
"""

from __future__ import annotations

from dataclasses import replace

from tokspec import Encoder, Encoding, EngineInfo, load_engine

__all__ = ["LineByLineEngine", "engine"]


class LineByLineEngine(Encoder):
    """cl100k_base applied to each line separately (the bug), offsets shifted back into the text."""

    def __init__(self) -> None:
        self.inner = load_engine("tiktoken:cl100k_base")
        self.info: EngineInfo = replace(self.inner.info, name="buggy_python_engine:engine",
                                        description="cl100k_base line by line (deliberately buggy)")

    def _encode(self, text: str) -> Encoding:
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        start = 0
        for line in text.splitlines(keepends=True):  # BUG: lines are not independent
            if line:
                enc = self.inner.encode(line)
                assert enc.ids is not None
                ids.extend(enc.ids)
                offsets.extend((start + s, start + e) for s, e in enc.offsets)
            start += len(line)
        return Encoding.of(ids, offsets)

    def token_piece(self, token_id: int) -> str:
        return self.inner.token_piece(token_id)


def engine() -> LineByLineEngine:
    """Zero-argument factory: what the engine name ``buggy_python_engine:engine`` resolves to."""
    return LineByLineEngine()
