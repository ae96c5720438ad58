"""Checking a chunker against what it promises (``tokspec chunk-check``; plugin: :func:`check_chunker`).

Given a text, the chunks a chunker returned, the tokenizer it states and its limit N, the checks
(each a violation *kind*):

- ``over-limit``: a chunk encodes to more than N tokens by the stated tokenizer (re-encoded alone,
  the count of ``tokspec.spec.counting`` D1).
- ``not-in-text``: a chunk is not a piece of the text where it should be (after the previous
  chunk's start, and at the previous chunk's end unless an overlap is declared). When the chunk
  holds U+FFFD that the text does not, the kind is ``split-inside-character``: a boundary fell
  inside a character and the chunker decoded half a character.
- ``lost-text``: the chunks do not reassemble the text: text between chunks (or before the first,
  after the last) is missing; with ``trim`` declared, only whitespace may be missing.
- ``overlap``: consecutive chunks overlap although no overlap is declared.
- ``error``: the chunker raised an exception on the text.
- ``not-maximal`` (only when the chunker claims it, ``maximal=True``): a chunk (not the last)
  extended by the next character of the text still has at most N tokens.

Chunks are placed in the text by a search over their occurrences (periodic text makes the first
occurrence a wrong guess); a violation of reassembly means that no placement works. Empty chunks
are ignored. A finding is minimized (:func:`tokspec.minimize.minimize_text`, keeping the kind) and
written atomically as JSON into the report folder before anything else can fail.
Out of scope: semantic quality of chunk boundaries; chunkers that rewrite text (normalizers).
"""

from __future__ import annotations

import functools
import hashlib
import json
import random
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tokspec._atomic import write_atomic
from tokspec.errors import TokspecError
from tokspec.minimize import minimize_text

__all__ = ["Violation", "ChunkClaims", "check_text", "fuzz_texts", "Finding", "search",
           "check_chunker"]

_FFFD = "\ufffd"


@dataclass(frozen=True)
class Violation:
    kind: str
    chunk: int
    detail: str


@dataclass(frozen=True)
class ChunkClaims:
    """What a chunker promises: ``limit`` tokens by ``tokenizer`` (an engine name), overlap between
    consecutive chunks allowed (``overlap``), whitespace at chunk edges dropped (``trim``),
    chunks that cannot grow by a character (``maximal``)."""

    tokenizer: str
    limit: int
    overlap: bool = False
    trim: bool = False
    maximal: bool = False


def _dropped_ok(piece: str, claims: ChunkClaims) -> bool:
    return piece == "" or (claims.trim and piece.strip() == "")


def _occurrences(text: str, chunk: str) -> list[int]:
    out, at = [], text.find(chunk)
    while at >= 0:
        out.append(at)
        at = text.find(chunk, at + 1)
    return out


def _placement(text: str, chunks: list[str], claims: ChunkClaims) -> list[int] | None:
    """Start of every chunk (-1 for empty ones) in a placement that reassembles the text within
    the claims (no lost text, overlap only if declared), or None if there is none. Layered search
    over the occurrences of each chunk, keeping per reached end the smallest last start (the least
    constrained): O(chunks * occurrences * ends)."""
    layer: dict[int, tuple[int, list[int]]] = {0: (-1, [])}  # end -> (last start, starts so far)
    for chunk in chunks:
        if not chunk:
            layer = {e: (st, starts + [-1]) for e, (st, starts) in layer.items()}
            continue
        nxt: dict[int, tuple[int, list[int]]] = {}
        occ = _occurrences(text, chunk)
        for end, (last, starts) in layer.items():
            for at in occ:
                if at <= last or (at < end and not claims.overlap):
                    continue
                if at > end and not _dropped_ok(text[end:at], claims):
                    break
                reach = max(end, at + len(chunk))
                if reach not in nxt or at < nxt[reach][0]:
                    nxt[reach] = (at, starts + [at])
        layer = nxt
    for end, (_, starts) in sorted(layer.items()):
        if _dropped_ok(text[end:], claims):
            return starts
    return None


def check_text(text: str, chunks: list[str], count: Callable[[str], int],
               claims: ChunkClaims) -> list[Violation]:
    """Every violation of ``claims`` by ``chunks`` of ``text`` (module docstring): the token
    limit of each chunk; if no placement of the chunks reassembles the text (:func:`_placement`),
    what the first-occurrence placement shows; with ``maximal``, growth by one character. One
    encode per chunk (two with ``maximal``)."""
    out: list[Violation] = []
    for k, chunk in enumerate(chunks):
        n = count(chunk) if chunk else 0
        if n > claims.limit:
            out.append(Violation("over-limit", k, f"{n} tokens > limit {claims.limit}: {chunk!r:.60}"))
    starts = _placement(text, chunks, claims)
    if starts is None:
        return out + _greedy_violations(text, chunks, claims)
    for k, (chunk, start) in enumerate(zip(chunks, starts)):
        end = start + len(chunk)
        if claims.maximal and chunk and k + 1 < len(chunks) and end < len(text):
            grown = count(text[start:end + 1])
            if grown <= claims.limit:
                out.append(Violation("not-maximal", k, f"chunk {k} plus the next character "
                                     f"{text[end]!r} has {grown} <= {claims.limit} tokens"))
    return out


def _greedy_violations(text: str, chunks: list[str], claims: ChunkClaims) -> list[Violation]:
    """Why the chunks do not reassemble the text, placing each at its first occurrence."""
    out: list[Violation] = []
    prev_start, prev_end = -1, 0
    for k, chunk in enumerate(chunks):
        if not chunk:
            continue
        lo = prev_start + 1 if claims.overlap else prev_end
        start = text.find(chunk, max(lo, 0))
        if start < 0 and not claims.overlap:  # perhaps it overlaps the previous chunk
            lo = prev_start + 1
            start = text.find(chunk, lo)
        if start < 0:
            kind = "split-inside-character" if _FFFD in chunk and _FFFD not in text else "not-in-text"
            out.append(Violation(kind, k, f"chunk {chunk!r:.60} is not in the text after position {lo}"))
            continue
        if start > prev_end and not _dropped_ok(text[prev_end:start], claims):
            out.append(Violation("lost-text", k, f"text[{prev_end}:{start}]={text[prev_end:start]!r:.60} "
                                 "is in no chunk"))
        if start < prev_end and not claims.overlap:
            out.append(Violation("overlap", k, f"chunk {k} starts at {start} inside chunk {k - 1} "
                                 f"(ends at {prev_end}); no overlap declared"))
        prev_start, prev_end = start, max(start + len(chunk), prev_end)
    if not _dropped_ok(text[prev_end:], claims):
        out.append(Violation("lost-text", len(chunks), f"text[{prev_end}:]={text[prev_end:]!r:.60} is in no chunk"))
    if not out:  # the greedy placement works where the search found none: cannot happen
        out.append(Violation("lost-text", -1, "no placement of the chunks reassembles the text"))
    return out


#: Pieces the fuzzer strings together: words, whitespace runs, multi-byte scripts, and the
#: characters whose repetition encodes as a loop of tokens inside characters
#: (``corpora/counting/collapse-*.json``).
_PIECES = ("hello", " world", "Chunk", ",", ".", "!", " ", "  ", "\n", "\n\n", "\t", "naïve", "café",
           "日本語", "のテキスト", "😀", "👍🏽", "ｈｅｌｌｏ", "\uff41" * 7, "\u1792" * 7, "\u0c02" * 5,
           "ру́сский", "٣٤٥", "𝔘𝔫𝔦", "1234567", "'s", "don't", "<|endoftext|>", "x" * 40)


def fuzz_texts(seed: int) -> Iterator[str]:
    """Endless random texts of 1-60 pieces (deterministic for a seed)."""
    rng = random.Random(seed)
    while True:
        yield "".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 60)))


@dataclass
class Finding:
    kind: str
    text: str
    chunks: list[str]
    violations: list[Violation]
    original_length: int
    path: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def _checked(chunker: Callable[[str], list[str]], count: Callable[[str], int], claims: ChunkClaims,
             text: str) -> tuple[list[str], list[Violation]]:
    """The chunks and violations; a chunker that raises is violation ``error`` (its type and
    message; tokspec's own errors, e.g. a chunker returning no list, propagate)."""
    try:
        chunks = chunker(text)
    except TokspecError:
        raise
    except Exception as exc:  # noqa: BLE001 - the chunker under test is untrusted
        return [], [Violation("error", -1, f"{type(exc).__name__}: {str(exc)[:200]}")]
    return chunks, check_text(text, chunks, count, claims)


def _kinds(chunker: Callable[[str], list[str]], count: Callable[[str], int], claims: ChunkClaims,
           text: str) -> set[str]:
    return {v.kind for v in _checked(chunker, count, claims, text)[1]}


def _has_kind(kind: str, chunker: Callable[[str], list[str]], count: Callable[[str], int],
              claims: ChunkClaims, text: str) -> bool:
    return kind in _kinds(chunker, count, claims, text)


#: built-in chunker name -> the distributions whose versions a record states
_DISTRIBUTIONS = {"langchain-token": ("langchain-text-splitters", "tiktoken"),
                  "semantic-text-splitter": ("semantic-text-splitter",), "chonkie-token": ("chonkie", "tiktoken")}


def _versions(name: str) -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version
    out = {}
    for dist in _DISTRIBUTIONS.get(name, ()):
        try:
            out[dist] = version(dist)
        except PackageNotFoundError:
            out[dist] = "not installed"
    return out


def _store(finding: Finding, name: str, claims: ChunkClaims, folder: Path) -> str:
    digest = hashlib.sha256(f"{name}\0{claims}\0{finding.text}".encode("utf-8")).hexdigest()[:12]
    safe = "".join(c if c.isalnum() or c in "-_" else "_" for c in name)[:40]
    path = folder / f"{safe}--{finding.kind}--{digest}.json"
    write_atomic(path, json.dumps({
        "chunker": name, "claims": asdict(claims), "kind": finding.kind, "text": finding.text,
        "chunks": finding.chunks, "violations": [asdict(v) for v in finding.violations],
        "original_length": finding.original_length, "versions": _versions(name),
    }, indent=1, ensure_ascii=False) + "\n")
    return str(path)


def search(chunker: Callable[[str], list[str]], name: str, count: Callable[[str], int],
           claims: ChunkClaims, *, texts: Iterator[str], seconds: float, max_texts: int | None = None,
           folder: Path | None = None, minimize_seconds: float = 10.0) -> tuple[int, list[Finding]]:
    """Check texts until ``seconds`` pass (or ``max_texts``); one minimized finding per kind.
    Returns (texts checked, findings); each finding is stored in ``folder`` when given."""
    deadline, checked, found = time.monotonic() + seconds, 0, {}
    for text in texts:
        if time.monotonic() > deadline or (max_texts is not None and checked >= max_texts):
            break
        checked += 1
        first_chunks, violations = _checked(chunker, count, claims, text)
        for v in violations:
            if v.kind in found:
                continue
            if folder is not None:  # the unminimized witness first: nothing below may lose it
                raw = Finding(v.kind, text, first_chunks, [v], len(text))
                raw.path = _store(raw, name, claims, folder / "unminimized")
            small = minimize_text(text, functools.partial(_has_kind, v.kind, chunker, count, claims),
                                  seconds=minimize_seconds)
            chunks, again = _checked(chunker, count, claims, small)
            f = Finding(v.kind, small, chunks, [w for w in again if w.kind == v.kind], len(text))
            if folder is not None:
                f.path = _store(f, name, claims, folder)
            found[v.kind] = f
    return checked, list(found.values())


def check_chunker(chunker: Callable[[str], list[str]], tokenizer: str, limit: int, *,
                  overlap: bool = False, trim: bool = False, maximal: bool = False, seed: int = 0,
                  max_texts: int = 300, seconds: float = 60.0) -> None:
    """Plugin helper: fuzz ``chunker`` (a callable ``text -> list[str]``) against its claims;
    AssertionError with the minimized texts if any is violated."""
    from tokspec import load_engine
    from tokspec.app.chunkers import _texts
    enc = load_engine(tokenizer)
    user = chunker

    def checked(text: str) -> list[str]:  # the user's, checked to return str chunks
        return _texts(user(text))
    claims = ChunkClaims(tokenizer, limit, overlap, trim, maximal)
    _, findings = search(checked, getattr(user, "__name__", "chunker"),
                         lambda s: len(enc.encode(s).ids or ()), claims, texts=fuzz_texts(seed),
                         seconds=seconds, max_texts=max_texts)
    if findings:
        lines = [f"{f.kind}: text={f.text!r:.120} chunks={f.chunks!r:.200} ({f.violations[0].detail})"
                 for f in findings]
        raise AssertionError("chunker violates its claims:\n" + "\n".join(lines))
