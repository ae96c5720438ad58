"""The character classes of Peek2 (``tokspec.fast.pretok_peek2``): one category per code point.

The Unicode classes the patterns use (letters, numbers, ``\\s``, case classes, marks) are the Unicode
16.0 tables of the production libraries, read from HF tokenizers' regex engine (tiktoken's tables
are 16.0 too; the ``regex`` module ships 17.0, with 4644 letters more), see :func:`flags`. The case
folds of the contraction letters come from the ``regex`` module. Every table is a numpy array
indexed by code point, built once per process (the flags are cached on disk: deriving them takes a
few seconds) and handed to the compiled kernels as arguments.

Out of scope: anything but the cl100k family and o200k (see ``pretok_peek2``).
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

import numpy as np
import regex

from tokspec.fast._cache import cache_dir, load_arrays, save_arrays

__all__ = ["OTHER", "SPACE", "QUOTE", "CRLF", "LETTER", "WHITESPACE", "NUMBER",
           "O_OTHER", "O_SPACE", "O_CRLF", "O_WS", "O_UP", "O_LO", "O_BOTH", "O_MARK", "O_NUMBER",
           "flags", "folds", "fold_table", "cl100k_category_table", "o200k_category_table", "code_points"]

# Character flags (bits).
_F_L, _F_N, _F_WS, _F_UP, _F_LO, _F_M = 1, 2, 4, 8, 16, 32

# The seven Peek2 categories of the cl100k family (seed figure 2): smaller sets take precedence.
OTHER, SPACE, QUOTE, CRLF, LETTER, WHITESPACE, NUMBER = range(7)

# The nine o200k categories: the word classes of o200k's two word alternatives
#   A1 = X? [Lu Lt Lm Lo M]* [Ll Lm Lo M]+ C?     A2 = X? [Lu Lt Lm Lo M]+ [Ll Lm Lo M]* C?
# (X = [^\r\n\p{L}\p{N}], C = an English contraction) need upper-only (Lu, Lt), lower-only (Ll),
# both (Lm, Lo) and mark (M: a word character that is *not* \p{L}, so it is also in X and in the
# punctuation class).
O_OTHER, O_SPACE, O_CRLF, O_WS, O_UP, O_LO, O_BOTH, O_MARK, O_NUMBER = range(9)

#: Unicode property -> flag bit, as probed in HF ``tokenizers``' regex engine (Unicode 16.0).
_PROBES = ((_F_L, r"\p{L}"), (_F_N, r"\p{N}"), (_F_WS, r"\s"), (_F_UP, r"[\p{Lu}\p{Lt}]"),
           (_F_LO, r"\p{Ll}"), (_F_M, r"\p{M}"))

#: One class holding every probe's class: ``[\p{L}\p{N}\s\p{Lu}\p{Lt}\p{Ll}\p{M}]``.
_UNION = "[" + "".join(prop[1:-1] if prop.startswith("[") else prop for _, prop in _PROBES) + "]"


@functools.lru_cache(maxsize=1)
def flags() -> np.ndarray:
    """uint8 flags for every code point 0..0x10FFFF (surrogates: 0).

    Derived once per ``tokenizers`` version (a few seconds) by letting its ``Split`` pre-tokenizer
    remove each class from a string of all code points; cached under ``<cache root>/peek2``
    (``tokspec.fast._cache``: a digest bound to the tokenizers version and this module's code,
    then shape and type, are checked on load; rebuilt otherwise).
    """
    import tokenizers
    folder = cache_dir("peek2")
    path = None if folder is None else folder / f"flags-tokenizers-{tokenizers.__version__}-{_code_key()}.npz"
    loaded = None if path is None else load_arrays(path, path.stem)  # digest-verified
    if loaded is not None and set(loaded) == {"flags"}:
        cached = loaded["flags"]
        if cached.shape == (0x110000,) and cached.dtype == np.uint8:
            return cached
    derived = _derive_flags()
    if path is not None:
        save_arrays(path, path.stem, {"flags": derived})
    return derived


def _code_key() -> str:
    """Hash of this module's source: the flags' cache key is bound to the code deriving them."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:16]


def _derive_flags() -> np.ndarray:
    """The six probes of :data:`_PROBES`, run where they can match.

    Each probe costs HF about a microsecond per character scanned whatever it matches, and 1.1M
    code points are scanned. So one pass of the union of the probes' classes first picks out the
    ~150K characters in any class (every probe's class is inside the union by construction, so a
    character outside it has no flag), and the six probes then run on those characters only. Class
    membership is per character (``prop+`` runs, nothing looks around), so the flags are what the
    six probes give over all code points, in about a quarter of the time.
    """
    cps = _all_code_points()
    candidates = cps[_inside(_UNION, _all_chars())]
    text = candidates.tobytes().decode("utf-32-le")
    out = np.zeros(0x110000, dtype=np.uint8)
    for bit, prop in _PROBES:
        out[candidates[_inside(prop, text)]] |= bit
    return out


def _inside(prop: str, text: str) -> np.ndarray:
    """Mask over the characters of ``text``: which are in the class ``prop`` in HF's regex engine.

    HF's ``Split`` pre-tokenizer removes the runs ``prop+``; what is left is outside the class.
    """
    from tokenizers import Regex, pre_tokenizers
    inside = np.ones(len(text), dtype=bool)
    split = pre_tokenizers.Split(Regex(prop + "+"), behavior="removed")
    for _piece, (start, end) in split.pre_tokenize_str(text):
        inside[start:end] = False
    return inside


@functools.lru_cache(maxsize=None)
def folds(letter: str) -> frozenset[str]:
    """Characters ``(?i:letter)`` matches in the regex module (e.g. 's' -> s, S, U+017F)."""
    return frozenset(m.group() for m in regex.finditer(f"(?i:{letter})", _all_chars()))


@functools.lru_cache(maxsize=1)
def fold_table() -> tuple[np.ndarray, np.ndarray]:
    """The contraction letters' case folds as two parallel arrays: code point -> ASCII lower letter.

    Covers every character ``(?i:x)`` matches for x in ``sdmtlver`` (``ſ`` U+017F folds to s).
    A kernel scans the ~17 pairs linearly, only right after a quote.
    """
    pairs = sorted({(ord(ch), ord(x)) for x in "sdmtlver" for ch in folds(x)})
    cps = [c for c, _ in pairs]
    assert len(set(cps)) == len(cps), "a character folds to two contraction letters"
    return np.array(cps, dtype=np.int64), np.array([x for _, x in pairs], dtype=np.int64)


def _all_code_points() -> np.ndarray:
    """Every code point but the surrogates, ascending (little-endian uint32)."""
    return np.concatenate([np.arange(0, 0xD800), np.arange(0xE000, 0x110000)]).astype("<u4")


@functools.lru_cache(maxsize=1)
def _all_chars() -> str:
    return _all_code_points().tobytes().decode("utf-32-le")


@functools.lru_cache(maxsize=1)
def cl100k_category_table() -> np.ndarray:
    """Code point -> Peek2 category of the cl100k family (seed figure 2), uint8."""
    f = flags()
    cat = np.full(0x110000, OTHER, dtype=np.uint8)
    cat[(f & _F_WS) != 0] = WHITESPACE
    cat[(f & _F_L) != 0] = LETTER
    cat[(f & _F_N) != 0] = NUMBER
    cat[[0x0D, 0x0A]] = CRLF
    cat[ord("'")] = QUOTE
    cat[ord(" ")] = SPACE
    return cat


@functools.lru_cache(maxsize=1)
def o200k_category_table() -> np.ndarray:
    """Code point -> o200k category (``O_*``), uint8."""
    f = flags()
    cat = np.full(0x110000, O_OTHER, dtype=np.uint8)
    cat[(f & _F_WS) != 0] = O_WS
    cat[(f & _F_M) != 0] = O_MARK
    cat[(f & _F_L) != 0] = O_BOTH
    cat[(f & _F_UP) != 0] = O_UP
    cat[(f & _F_LO) != 0] = O_LO
    cat[(f & _F_N) != 0] = O_NUMBER
    cat[[0x0D, 0x0A]] = O_CRLF
    cat[ord(" ")] = O_SPACE
    return cat


def code_points(text: str) -> np.ndarray:
    """The code points of ``text`` as a uint32 array (one C-level copy)."""
    return np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
