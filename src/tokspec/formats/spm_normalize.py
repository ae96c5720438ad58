"""sentencepiece normalization with alignment (and HF's ``Precompiled`` reading of the same charsmap).

Shared on purpose by the reference and the fast Unigram engines: ``tokspec.formats.unigram_model`` builds
the ``"spm"``-flavour model on it (this module does not import that one).

The normalizer (sentencepiece ``normalizer.cc``, reimplemented from its documented behaviour):

1. The *precompiled charsmap* of a ``.model`` (e.g. ``nmt_nfkc``) is a blob: a little-endian
   uint32 ``n``, then a darts-clone double-array trie of ``n`` bytes (uint32 units), then a pool
   of NUL-terminated replacement strings. At each input position the LONGEST trie key that is a
   prefix of the remaining UTF-8 bytes is replaced by the pool string at the key's value; with no
   match one UTF-8 character is copied (an empty charsmap copies everything: ``identity``).
2. ``remove_extra_whitespaces``: leading spaces are skipped, a space directly after a space is
   dropped, trailing spaces are removed. ``add_dummy_prefix``: a ``▁`` is prepended.
   ``escape_whitespaces``: every space becomes ``▁``.

Alignment: like sentencepiece's ``norm_to_orig`` every normalized character records the original
position consumed so far; its library span is ``(n2o[i], n2o[i+1])`` so a piece over normalized
characters ``[s, e)`` is reported ``(n2o[s], n2o[e])``, as sentencepiece does. Its contract origin is
the original characters of the rule application that produced it, plus any input dropped right
after it (deleted characters, collapsed spaces), as sentencepiece does; the dummy prefix covers
nothing (an empty span where it is inserted), so input dropped before the first real character
belongs to no token.

Out of scope: user-defined symbols (their prefix matcher and score bonus), ``treat_whitespace_as
_suffix``, BPE/word/char models, sampling. They raise UnsupportedComponentError.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import regex

from tokspec._types import Span
from tokspec.formats._protowire import iter_fields
from tokspec.formats._protowire import write_varint as _varint
from tokspec.errors import UnsupportedComponentError, VocabularyError
from tokspec.formats.normalize import Aligned, apply_edits
from tokspec.formats.spm_model import SpmModel

__all__ = ["CharsMap", "SpmNormalizer", "synthesize_spm_model", "hf_precompiled"]

_SPACE = "\u2581"


@dataclass(frozen=True)
class CharsMap:
    """A parsed precompiled charsmap: darts-clone ``units`` and the replacement ``pool``."""

    units: tuple[int, ...]
    pool: bytes

    @classmethod
    def parse(cls, blob: bytes, where: str) -> CharsMap | None:
        """None for an empty blob (identity). O(len(blob))."""
        if not blob:
            return None
        if len(blob) < 4:
            raise VocabularyError(f"{where}: precompiled charsmap of {len(blob)} bytes is truncated")
        (trie_size,) = struct.unpack_from("<I", blob, 0)
        if trie_size % 4 or 4 + trie_size > len(blob):
            raise VocabularyError(f"{where}: precompiled charsmap trie size {trie_size} is invalid")
        units = struct.unpack_from(f"<{trie_size // 4}I", blob, 4)
        return cls(units, blob[4 + trie_size:])

    def prefix_matches(self, data: bytes, pos: int) -> list[tuple[int, bytes]]:
        """(length, replacement) of every key that is a prefix of ``data[pos:]``, shortest first.

        darts-clone's common-prefix search: from the root, XOR the node position with each byte,
        check the label, follow the offset; a unit with ``has_leaf`` marks the end of a key whose
        value sits in the unit reached next. O(key length)."""
        units = self.units
        node = _offset(units[0])
        found: list[tuple[int, bytes]] = []
        for i in range(pos, len(data)):
            node ^= data[i]
            if node >= len(units) or _label(units[node]) != data[i]:
                break
            unit = units[node]
            node ^= _offset(unit)
            if (unit >> 8) & 1 and node < len(units):   # has_leaf: a key ends here
                found.append((i + 1 - pos, self._pool_string(units[node] & 0x7FFFFFFF)))
        return found

    def longest_match(self, data: bytes, pos: int) -> tuple[int, bytes] | None:
        """The longest key at ``data[pos:]`` (sentencepiece's rule), or None."""
        found = self.prefix_matches(data, pos)
        return found[-1] if found else None

    def _pool_string(self, at: int) -> bytes:
        end = self.pool.find(b"\x00", at)
        return self.pool[at:] if end < 0 else self.pool[at:end]


def _offset(unit: int) -> int:
    return (unit >> 10) << ((unit & (1 << 9)) >> 6)


def _label(unit: int) -> int:
    return unit & ((1 << 31) | 0xFF)


class SpmNormalizer:
    """sentencepiece's ``Normalizer`` for one model (see module docstring). O(n * key length)."""

    def __init__(self, model: SpmModel) -> None:
        if model.treat_whitespace_as_suffix:
            raise UnsupportedComponentError(f"{model.path}: treat_whitespace_as_suffix is not supported")
        self.charsmap = CharsMap.parse(model.precompiled_charsmap, model.path)
        self.add_dummy_prefix = model.add_dummy_prefix
        self.remove_extra = model.remove_extra_whitespaces
        self.space = _SPACE if model.escape_whitespaces else " "

    def _prefix(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """(replacement, consumed bytes) at ``pos``: the longest rule, else one UTF-8 character."""
        match = self.charsmap.longest_match(data, pos) if self.charsmap else None
        if match is not None:
            return match[1], match[0]
        n = 1 if data[pos] < 0x80 else 2 if data[pos] < 0xE0 else 3 if data[pos] < 0xF0 else 4
        return data[pos:pos + n], n

    def normalize(self, text: str) -> Aligned:
        """The normalized text with library spans and contract origins (character offsets)."""
        data = text.encode("utf-8")
        out: list[tuple[str, int, int, int]] = []   # (char, n2o byte, rule start, rule end)
        pos = self._skip_leading_spaces(data)
        if pos == len(data):
            return Aligned("", (), ())
        if self.add_dummy_prefix:
            out.append((self.space, pos, pos, pos))
        prev_space = self.remove_extra
        while pos < len(data):
            rep, n = self._prefix(data, pos)
            if prev_space:
                rep = rep.lstrip(b" ")
            if rep:
                out.extend((self.space if c == " " else c, pos, pos, pos + n) for c in rep.decode("utf-8"))
                prev_space = rep.endswith(b" ")
            pos += n
            if not self.remove_extra:
                prev_space = False
        while self.remove_extra and out and out[-1][0] == self.space:
            pos = out.pop()[1]           # trailing spaces: the end goes back to where they began
        return _aligned(text, out, pos)

    def _skip_leading_spaces(self, data: bytes) -> int:
        pos = 0
        while self.remove_extra and pos < len(data):
            rep, n = self._prefix(data, pos)
            if rep != b" ":
                break
            pos += n
        return pos


def _aligned(text: str, out: list[tuple[str, int, int, int]], end: int) -> Aligned:
    """Character-level Aligned from per-character (char, n2o, rule start, rule end) in bytes."""
    from tokspec._offsets import byte_to_char_index
    table = byte_to_char_index(text)
    n2o = [table[o] for _, o, _, _ in out] + [table[end]]
    spans = tuple((n2o[i], n2o[i + 1]) for i in range(len(out)))
    origins: list[Span] = []
    for i, (_, _, r0, r1) in enumerate(out):
        if r0 == r1:                 # the dummy prefix covers no input (not even dropped input)
            origins.append((table[r0], table[r0]))
            continue
        # the rule's characters, plus input dropped right after the rule's LAST output character
        # (all characters of one rule application share it)
        last = i
        while last + 1 < len(out) and out[last + 1][2:] == (r0, r1) and r0 < r1:
            last += 1
        origins.append((table[r0], max(table[r1], n2o[last + 1])))
    return Aligned("".join(c for c, _, _, _ in out), spans, tuple(origins))


# -- writing small .model files (tests and findings need models with chosen pieces and scores) ---

def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


_TYPE_NUMBERS = {"normal": 1, "unknown": 2, "control": 3, "user": 4, "unused": 5, "byte": 6}


def synthesize_spm_model(path: str | Path, pieces: list[tuple[str, float, str]], *,
                         specs_from: str | Path) -> Path:
    """Write a ``.model`` whose pieces are exactly ``pieces`` (text, score, type name), with the
    trainer and normalizer specs copied from the model at ``specs_from``. Scores are stored as
    float32, as sentencepiece does. O(size)."""
    raw = Path(specs_from).read_bytes()
    specs = b"".join(_field(n, v) for n, _, v in iter_fields(raw) if n in (2, 3) and isinstance(v, bytes))
    body = b"".join(
        _field(1, _field(1, text.encode("utf-8")) + _varint(2 << 3 | 5) + struct.pack("<f", score)
               + _varint(3 << 3) + _varint(_TYPE_NUMBERS[kind]))
        for text, score, kind in pieces)
    out = Path(path)
    out.write_bytes(body + specs)
    return out


# -- HF tokenizers' ``Precompiled`` normalizer (same charsmap, different algorithm) ---------------

_GRAPHEME = regex.compile(r"\X")


def _hf_transform(cm: CharsMap, chunk: str) -> str | None:
    """HF ``Precompiled::transform``: the replacement of the SHORTEST key that is a prefix of
    ``chunk`` (not necessarily all of it), or None."""
    found = cm.prefix_matches(chunk.encode("utf-8"), 0)
    return found[0][1].decode("utf-8") if found else None


def _hf_replace(edits: list[tuple[str, int]], old: str, new: str) -> None:
    """HF's ``replace`` helper: new chars replace old ones; extra new chars are insertions;
    fewer new chars fold the difference into the LAST edit so far (even an earlier grapheme's)."""
    diff = len(new) - len(old)
    edits.extend((c, 0) for c in new)
    if diff > 0:
        for k in range(len(edits) - diff, len(edits)):
            edits[k] = (edits[k][0], 1)
    elif diff < 0 and edits:
        edits[-1] = (edits[-1][0], edits[-1][1] + diff)


def hf_precompiled(a: Aligned, cm: CharsMap) -> Aligned:
    """HF ``Precompiled`` normalizer: per extended grapheme cluster, if it is under 6 UTF-8
    bytes and a key is a prefix of it, the WHOLE cluster becomes that key's replacement (so
    ``"Ａ\u0301"`` -> ``"A"``: the mark is lost; sentencepiece gives ``"Á"``); otherwise each
    character is looked up alone. HF's spans are positional: a deletion with no earlier edit to
    fold into shifts every later span left (``"\x7fy"``: ``y`` is reported at ``(0, 1)``); the
    contract origins track each character's true source. O(n * key length)."""
    edits: list[tuple[str, int]] = []
    sources: list[tuple[int, int]] = []          # old-character range of each emitted char
    for match in _GRAPHEME.finditer(a.text):
        cluster, start = match.group(), match.start()
        rep = _hf_transform(cm, cluster) if len(cluster.encode("utf-8")) < 6 else None
        if rep is not None:
            _hf_replace(edits, cluster, rep)
            sources.extend([(start, match.end())] * len(rep))
            continue
        for k, c in enumerate(cluster):
            rep = _hf_transform(cm, c)
            if rep is None:
                edits.append((c, 0))
                sources.append((start + k, start + k + 1))
            else:
                _hf_replace(edits, c, rep)
                sources.extend([(start + k, start + k + 1)] * len(rep))
    result = apply_edits(a, edits, strict=False)
    origins = tuple((a.origins[lo][0], max(o[1] for o in a.origins[lo:hi])) for lo, hi in sources)
    return Aligned(result.text, result.spans, origins)
