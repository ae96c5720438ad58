"""Provider of prefix ``lopt``: ``lopt:ENGINE`` is ENGINE encoded by tokspec's lossless parallel
merge (``tokspec.fast.merge_lopt``), e.g. ``lopt:tiktoken:cl100k_base``, ``lopt:hf:bert-base-uncased``.

Also the table of every merge strategy (``STRATEGIES``) under one calling convention, used by
``tokspec merge-check`` and the ``parallel`` benchmark. Out of scope: ``lopt:`` over the published
lossy strategies (they are reachable through :func:`merge_text`, never as engines, since an engine
must be exact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tokspec import Encoder, EncodingArrays, EngineInfo, load_engine
from tokspec._types import check_text
from tokspec.concurrency import declared_thread_safe, thread_safety
from tokspec.errors import InvalidTextError, UnknownEngineError
from tokspec.fast import (merge_delimiter, merge_id_lcs, merge_lopt, merge_lopt_paper,
                          merge_overlap_filter)
from tokspec.fast._chunking import EncodeMany, MergeError, MergeResult
from tokspec.fast.parallel import Runner, default_chunk_len, ids_split

__all__ = ["STRATEGIES", "Strategy", "LoptEncoder", "merge_text", "load", "engines"]

DEFAULT_OVERLAP = 512  # ParallelTokenizer's default overlap, also used for lopt-paper


@dataclass(frozen=True)
class Strategy:
    name: str
    lossless: bool
    uses_overlap: bool
    run: Callable[[Encoder, str, int, int | None, EncodeMany | None], MergeResult]
    description: str


STRATEGIES: dict[str, Strategy] = {s.name: s for s in (
    Strategy("lopt", True, False,
             lambda e, t, c, o, m: merge_lopt.merge(e, t, chunk_len=c, encode_many=m),
             "tokspec: cuts only where a theorem makes encoding split (tokspec.spec.merge)"),
    Strategy("lopt-paper", False, True,
             lambda e, t, c, o, m: merge_lopt_paper.merge(
                 e, t, chunk_len=c, overlap=DEFAULT_OVERLAP if o is None else o, encode_many=m),
             "LoPT paper Algorithm 3: character-position match, threshold 2, doubling"),
    Strategy("overlap-filter", False, True,
             lambda e, t, c, o, m: merge_overlap_filter.merge(e, t, chunk_len=c, overlap=o,
                                                              encode_many=m),
             "blog: recursive halves, keep left < midpoint <= right, overlap 3x longest token"),
    Strategy("id-lcs", False, True,
             lambda e, t, c, o, m: merge_id_lcs.merge(
                 e, t, chunk_len=c, overlap=DEFAULT_OVERLAP if o is None else o, encode_many=m),
             "ParallelTokenizer: join on the longest common run of token ids"),
    Strategy("delimiter", False, False,
             lambda e, t, c, o, m: merge_delimiter.merge(e, t, chunk_len=c, delimiter="space",
                                                         encode_many=m),
             "split at the first whitespace after each chunk length, concatenate"),
    Strategy("delimiter-comma", False, False,
             lambda e, t, c, o, m: merge_delimiter.merge(e, t, chunk_len=c, delimiter="comma",
                                                         encode_many=m),
             "split after the first comma after each chunk length, concatenate"),
    Strategy("delimiter-period", False, False,
             lambda e, t, c, o, m: merge_delimiter.merge(e, t, chunk_len=c, delimiter="period",
                                                         encode_many=m),
             "split after the first period after each chunk length, concatenate"),
)}


def merge_text(engine: Encoder, text: str, *, strategy: str = "lopt", chunk_len: int | None = None,
               overlap: int | None = None, runner: Runner | None = None) -> MergeResult:
    """Encode ``text`` with ``engine`` through merge ``strategy``; defaults from size and cores."""
    try:
        strat = STRATEGIES[strategy]
    except KeyError:
        raise MergeError(f"unknown strategy={strategy!r}; choose one of {', '.join(STRATEGIES)}") from None
    run = runner or Runner("serial", 1)
    if chunk_len is None:
        chunk_len = default_chunk_len(len(text), run.workers, run.resolve(engine))
    result = strat.run(engine, text, chunk_len, overlap, run)
    note = _serial_note(run, engine)
    if note:
        result.trace.notes.append(note)
    return result


def _serial_note(runner: Runner, engine: Encoder) -> str:
    """Why ``auto`` encodes the pieces serially when the engine is not thread-safe ("" otherwise)."""
    if runner.backend != "auto" or runner.workers == 1 or thread_safety(engine).safe:
        return ""
    return f"pieces encoded serially: the engine {thread_safety(engine).describe()}"


class LoptEncoder(Encoder):
    """ENGINE through the lossless merge; same ids and offsets as ENGINE by construction."""

    def __init__(self, inner: Encoder, *, runner: Runner | None = None,
                 chunk_len: int | None = None) -> None:
        self.inner = inner
        self.runner = runner or Runner()
        self.chunk_len = chunk_len
        self.decision = merge_lopt.decision(inner)
        self.safety = thread_safety(inner)  # declared, or checked now: threads are never assumed
        i = inner.info
        note = _serial_note(self.runner, inner)
        self.info = EngineInfo(f"lopt:{i.name}", i.kind, i.library, i.library_version, i.vocab_sha256,
                               f"lossless parallel merge over {i.name}; {self.decision.describe()}"
                               + (f"; {note}" if note else ""), thread_safe=declared_thread_safe(inner))
        # decoding passes through (tokspec.decoding): the merge changes how ids are found, not what
        # they stand for; only what the inner engine offers is offered
        for optional in ("decode", "special_tokens", "n_vocab"):
            if hasattr(inner, optional):
                setattr(self, optional, getattr(inner, optional))
        if callable(getattr(inner, "encode_ids", None)):  # ids only, as the inner engine offers
            self.encode_ids = self._encode_ids

    def _encode_arrays(self, text: str) -> EncodingArrays:
        text = _exact(text)
        run = self.runner
        chunk_len = self.chunk_len or default_chunk_len(len(text), run.workers, run.resolve(self.inner))
        return merge_lopt.encode_arrays(self.inner, text, chunk_len=chunk_len, encode_many=run.arrays)

    def _encode_ids(self, text: str) -> np.ndarray:
        """The inner engine's ``encode_ids``, pieces between sound cuts on the runner's workers.
        A text outside the domain is named as a whole (a piece would name its own index)."""
        if not isinstance(text, str):
            check_text(text)
        text = _exact(text)
        run = self.runner
        chunk_len, targets = (self.chunk_len, None) if self.chunk_len else ids_split(text, run.workers)
        try:
            return merge_lopt.encode_ids(self.inner, text, chunk_len=chunk_len, encode_many=run.ids,
                                         targets=targets, encode_ranges=run.ids_ranges)
        except InvalidTextError:
            check_text(text)
            raise

    def token_piece(self, token_id: int) -> str:
        return self.inner.token_piece(token_id)

    def close(self) -> None:
        self.inner.close()


def _exact(text: str) -> str:
    """``text`` as a plain ``str`` (a subclass copied by ``str.__str__``): the split is planned with
    ``len`` and cut by slicing and searching, which a subclass may override (one whose ``__len__``
    undercounted had the tail past it dropped from the ids)."""
    return text if type(text) is str else str.__str__(text)


def load(prefix: str, arg: str) -> Encoder:
    """``lopt:ENGINE``: ENGINE (any registry name) behind the lossless merge."""
    if prefix != "lopt" or not arg:
        raise UnknownEngineError(
            f"engine name {prefix + ':' + arg!r}: lopt needs an inner engine, e.g. lopt:tiktoken:cl100k_base")
    return LoptEncoder(load_engine(arg))


def engines() -> list[tuple[str, str]]:
    return [("lopt:ENGINE", "any ENGINE through tokspec's lossless parallel merge "
             "(cuts where a theorem proved for the engine's structure allows; else serial)")]
