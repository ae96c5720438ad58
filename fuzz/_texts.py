"""Fuzzer bytes to text for the ``diff`` and ``property`` targets (``tokspec.fuzz.targets``).

The text domain: valid UTF-8 decodes with ``surrogatepass`` (encoded surrogates reach the engines,
which must reject them), invalid UTF-8 with ``errors="replace"``. A first byte :data:`LONG_MARK`
asks for a long text (up to 2 MiB) built from the rest, so libFuzzer's short inputs reach chunk
seams and buffer sizes. Long texts are capped per target: interpreted kernels and reference BPEs
are plain Python (:func:`long_text_cap`), and the reference BPE is quadratic in a pretoken's
length (:func:`pretoken_cap`). ``tokspec diff --raw`` replays a crash file through the same
functions, so a replayed text is the one the harness ran.

Out of scope: the targets themselves and their checks (``tokspec.fuzz.targets``).
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["LONG_MARK", "INTERPRETED_MAX_CHARS", "MANY_CALLS", "REFERENCE_MAX_PRETOKEN_BYTES", "long_text_cap", "pretoken_cap",
           "long_text_meta", "max_chars", "text_for", "text_from_bytes"]

_I = "tokspec.fast.interpreted:"  # fast engines with their compiled kernels run as plain Python


#: Long generated texts are capped at this many characters for targets with interpreted kernels
#: (plain Python, ~9 us per character: a 2M-character text took 18 s alone, past the harness's
#: 60 s call limit on a loaded machine) and for targets over a reference BPE (a 2 MiB text of
#: ordinary pretokens took the reference-vs-tiktoken check 3.8-8.4 s, uninstrumented: a few such
#: inputs used up a target's share of a CI run). 2**18 was still too long: 262,144 U+FFFD took
#: the compiled-vs-interpreted Unigram check 2.9 s uninstrumented and 10 s under atheris, and that
#: target starved in CI (687 inputs in its 31 s). Still past 100K, where seams and buffer regrowth
#: show; the compiled engines take the full 2 MiB in their own targets.
INTERPRETED_MAX_CHARS = 1 << 17


#: fuzzing configurations that make one compiled call per few characters (``tokspec.fuzz.wrapped``:
#: 32-character blocks, about 38 us each): capped like interpreted kernels (a 2 MiB text took 2.4 s)
MANY_CALLS = ("tokspec.fuzz.wrapped:fast_blocks_o200k", "tokspec.fuzz.wrapped:fast_ids_blocks_cl100k",
              "tokspec.fuzz.wrapped:fast_ids_blocks_o200k")


def long_text_cap(engines: tuple[str, ...]) -> int | None:
    """The cap on long generated texts of a target over ``engines``: :data:`INTERPRETED_MAX_CHARS`
    if one of them runs interpreted kernels, is a reference BPE (:func:`pretoken_cap`) or one of
    :data:`MANY_CALLS`, else None (``tokspec diff --raw`` replays with it)."""
    interpreted = any(e.startswith(_I) or e.endswith("_interpreted") or e in MANY_CALLS for e in engines)
    return INTERPRETED_MAX_CHARS if interpreted or pretoken_cap(engines) is not None else None


#: The reference BPE (``reference/bpe_naive.py``) is the definition's O(m^2) merge loop per
#: pretoken of m bytes: ``"a" * 16384`` (one pretoken) takes it 1.9 s, a 2 MiB one would take days.
#: A long generated text of a target over a reference BPE is therefore cut where its first pretoken
#: passes this many bytes (``"a" * 8192``: about 0.5 s). Texts of ordinary pretokens keep their full
#: length (2 MiB: seams, buffers), and pretokens up to this length are still generated. Without the
#: cut, the reference-vs-tiktoken targets starved in CI (245 inputs in their 30 s: one input was a
#: repeated letter run).
REFERENCE_MAX_PRETOKEN_BYTES = 8192


def pretoken_cap(engines: tuple[str, ...]) -> tuple[str, int] | None:
    """``(pattern name, bytes)``: the cut of long texts for a target over ``engines`` if one of them
    is a named reference BPE (``reference:cl100k_base``, ``reference:o200k_base``, ...; see
    :data:`REFERENCE_MAX_PRETOKEN_BYTES`), else None. A reference over a rank file
    (``reference:PATH.tiktoken``) is not recognized: cap such a target with ``--max-chars``."""
    from tokspec.reference.engines import TIKTOKEN_PATTERNS, U17

    for engine in engines:
        prefix, _, name = engine.partition(":")
        name = name[:-len(U17)] if name.endswith(U17) else name
        if prefix == "reference" and name in TIKTOKEN_PATTERNS:
            return TIKTOKEN_PATTERNS[name], REFERENCE_MAX_PRETOKEN_BYTES
    return None


#: A first byte that never occurs in UTF-8: an input starting with it asks for a long text.
LONG_MARK = 0xF8


def max_chars() -> int:
    """The cap on generated long texts: ``$TOKSPEC_FUZZ_MAX_CHARS`` (a positive integer), else none."""
    raw = os.environ.get("TOKSPEC_FUZZ_MAX_CHARS", "")
    if not raw:
        return 1 << 62
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"TOKSPEC_FUZZ_MAX_CHARS={raw!r} must be a positive integer")
    return int(raw)


def long_text_meta(engines: tuple[str, ...]) -> dict[str, Any]:
    """A target's caps on long texts, as :func:`text_for` reads them from its ``meta``:
    ``max_chars`` (:func:`long_text_cap`) and ``max_pretoken`` (:func:`pretoken_cap`), each only if
    it applies; the same caps ``tokspec diff --raw`` replays with."""
    cap, pretokens = long_text_cap(engines), pretoken_cap(engines)
    return {**({} if cap is None else {"max_chars": cap}),
            **({} if pretokens is None else {"max_pretoken": pretokens})}


def text_for(target: Any, data: bytes) -> str:
    """:func:`text_from_bytes` under ``target``'s own cap on long texts (``meta["max_chars"]``)."""
    meta = getattr(target, "meta", None) or {}
    return text_from_bytes(data, cap=meta.get("max_chars"), pretokens=meta.get("max_pretoken"))


def _cut_long_pretoken(text: str, pattern_name: str, limit: int) -> str:
    """``text`` up to where its first pretoken (under the named pattern) passes ``limit`` UTF-8
    bytes; the whole text if none does. O(len(text)) (one regex pass)."""
    from tokspec.reference.pretok_regex import compiled

    for m in compiled(pattern_name).finditer(text):
        start, end = m.span()
        if end - start > limit // 4 and len(m.group().encode("utf-8", "surrogatepass")) > limit:
            size, stop = 0, start
            for ch in m.group():  # the pretoken's characters while they fit in ``limit`` bytes
                size += len(ch.encode("utf-8", "surrogatepass"))
                if size > limit:
                    return text[:stop]
                stop += 1
    return text


def text_from_bytes(data: bytes, cap: int | None = None, pretokens: tuple[str, int] | None = None) -> str:
    """Fuzzer bytes to text (module docstring): may contain lone surrogates, on purpose.

    Length extension: ``LONG_MARK, k, d, body...`` gives ``body`` (decoded the same way) repeated
    to ``BOUNDARY_SIZES[k % len] + (d - 128) // 8`` characters (a power of two or ten, +-16), so
    libFuzzer's short inputs (``-max_len``) still reach chunk seams and buffer sizes up to 2 MiB.
    ``$TOKSPEC_FUZZ_MAX_CHARS`` (``python -m tokspec.fuzz.run --max-chars N``) and ``cap`` (a
    target's, :func:`text_for`) cap that length; ``pretokens`` (``(pattern name, bytes)``, a
    target's :func:`pretoken_cap`) cuts it where its first pretoken passes that many bytes."""
    if len(data) >= 3 and data[0] == LONG_MARK:
        from tokspec.longtext import BOUNDARY_SIZES
        size = max(1, BOUNDARY_SIZES[data[1] % len(BOUNDARY_SIZES)] + (data[2] - 128) // 8)
        size = min(size, max_chars(), cap or size)
        body = text_from_bytes(data[3:]) or "a"
        text = (body * (size // len(body) + 1))[:size]
        return text if pretokens is None else _cut_long_pretoken(text, *pretokens)
    try:
        return data.decode("utf-8", errors="surrogatepass")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")
