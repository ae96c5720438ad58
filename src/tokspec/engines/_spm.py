"""Adapter for ``sentencepiece`` (any ``.model``: Unigram, BPE, word, char).

Called with no BOS/EOS, no sampling. Control symbols (``<s>``, ``</s>``) are never matched in the
input by sentencepiece itself, so special tokens are ordinary text here too; user-defined symbols
stay matched (they are part of the model's segmentation).

Offsets. sentencepiece 0.2.3 no longer returns ``immutable_proto`` (it raises ValueError) and its
``proto`` output needs the ``protobuf`` package; ``return_type="offset_mapping", return_bytes=True``
gives the same ``begin``/``end`` fields (UTF-8 byte spans into the ORIGINAL text; tests check them
against the ``serialized_proto`` output, parsed by tokspec's own wire reader). Those spans differ
from the contract whenever one input character yields several pieces: sentencepiece gives the
character to the LAST piece only (byte pieces of a byte-fallback character; ``f`` + ``i`` from NFKC
of ``ﬁ``; ``▁4`` + ``点`` from NFKC of ``㍜``, where ``▁4`` even ends before ``㍜``). Recorded in
``corpora/production/findings.json``.

So the contract spans are computed from sentencepiece's own normalizer alignment instead
(``SentencePieceNormalizer.normalize(text, with_offsets=True)``: for each normalized character, the
input character it starts at). Pieces are laid over the normalized text: an ordinary piece takes
its own characters, a byte piece one byte of a normalized character, an unknown piece the
characters up to where the next piece matches (:func:`_unk_end`). A piece covers the input
characters its normalized characters came from; a normalized character covers input from its own
offset up to the next larger offset, so characters the normalizer deletes or collapses (extra
whitespace) belong to the normalized character before them. The dummy prefix ``▁`` covers nothing.
If the pieces do not tile the normalized text (not seen in the tests; checked on every call), the
raw spans are used with the rule of :func:`contract_byte_spans`.

``encode_arrays`` does the same without a Python object per token: ids from sentencepiece's plain
``encode`` (its own encode time; as one int32 buffer where the release has ``return_type="numpy"``), the ordinary pieces' text from the vocabulary (sentencepiece's
pieces are the normalized text they matched, so they equal the vocabulary's), and the tiling by
the compiled :func:`tile_kernel` (:func:`aligned_spans` over arrays; tests check they agree);
when it does not tile, the list path above runs. The normalizer's alignment there costs the
library's ``with_offsets`` list (a Python int per character: as long as its whole encode) only
where the model's rules leave it open: where no charsmap key longer than one character can
match, every normalized character comes from one input character, so the normalized text and
its positions are rebuilt from the one-character rules (:mod:`tokspec.engines._spm_align`), and
taken as the library's when the library's pieces spell that text exactly (byte pieces byte by
byte; with an unknown piece, which spells nothing, when the library's plain ``normalize`` equals
it). ``tests/test_spm_align.py`` checks the rebuilt text and positions against the library's.

Older releases (0.2.0 to 0.2.2): ``return_type="offset_mapping"`` is missing (0.2.0, 0.2.1) or
gives other spans (0.2.2), so the same ids, pieces and byte spans are read from the
``serialized_proto`` output with tokspec's wire reader (:func:`proto_encode`), and 0.2.0's
``SentencePieceNormalizer``, whose keyword defaults override the model's ``add_dummy_prefix``,
``escape_whitespaces`` and ``remove_extra_whitespaces``, is given the model's own values; the
engine's description says so. Everything after that is the same.

Out of scope: sampling, n-best, BOS/EOS, ``reverse``, decoding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import sentencepiece

from tokspec._offsets import char_offsets_from_byte_spans
from tokspec._types import Encoder, Encoding, EncodingArrays, EngineInfo
from tokspec.formats._protowire import iter_fields
from tokspec.errors import EngineFault
from tokspec.formats.spm_model import SpmModel
from tokspec.formats.spm_normalize import CharsMap
from tokspec.engines._spm_align import OTHER, UNSEEN, char_class, rebuild_normalized, unseen_code_points
from tokspec.engines._spm_tile import _BYTE, _ORDINARY, _UNKNOWN, tile_kernel

__all__ = ["SpmEngine", "contract_byte_spans", "aligned_spans", "tile_kernel", "proto_encode", "OFFSET_MAPPING"]

_DUMMY_PREFIX = "\u2581"


def _version(text: str) -> tuple[int, ...]:
    """``"0.2.3"`` -> ``(0, 2, 3)``; a non-numeric part ends the tuple (``"0.2.1rc1"`` -> ``(0, 2)``)."""
    out: list[int] = []
    for part in text.split("."):
        if not part.isdigit():
            break
        out.append(int(part))
    return tuple(out)


#: The installed sentencepiece's ``offset_mapping`` output is the one the adapter reads (0.2.3 on).
OFFSET_MAPPING = _version(sentencepiece.__version__) >= (0, 2, 3)

#: The installed sentencepiece returns ids as one int32 buffer (``return_type="numpy"``): no Python
#: int per token. Older releases give the list only.
NUMPY_IDS = hasattr(getattr(getattr(sentencepiece, "_sentencepiece", None), "SentencePieceProcessor", None),
                    "_EncodeAsBuffer")


def proto_encode(processor: sentencepiece.SentencePieceProcessor, text: str) -> dict[str, list]:  # type: ignore[type-arg]
    """``ids``, ``pieces`` (bytes) and ``offsets`` (UTF-8 byte spans into ``text``) as 0.2.3's
    ``offset_mapping`` gives them, read from the ``serialized_proto`` output (any 0.2.x release):
    field 2 of SentencePieceText is a piece, whose fields 1, 2, 4, 5 are piece, id, begin, end
    (absent means 0). O(output size)."""
    proto = processor.encode(text, out_type="serialized_proto")
    ids: list[int] = []
    pieces: list[bytes] = []
    offsets: list[tuple[int, int]] = []
    for number, _, value in iter_fields(proto):
        if number != 2 or not isinstance(value, bytes):
            continue
        fields = {n: v for n, _, v in iter_fields(value)}
        piece = fields.get(1, b"")
        ids.append(int(fields.get(2, 0)))
        pieces.append(piece if isinstance(piece, bytes) else b"")
        offsets.append((int(fields.get(4, 0)), int(fields.get(5, 0))))
    return {"ids": ids, "pieces": pieces, "offsets": offsets}


def contract_byte_spans(pieces: list[str], spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Convert sentencepiece's byte spans to the contract's (module docstring). O(pieces)."""
    out = list(spans)
    pending: list[int] = []  # indices of empty-span pieces waiting for the piece that owns them
    for i, (b, e) in enumerate(spans):
        if b < e:
            for k in pending:
                if out[k][0] == b:
                    out[k] = (b, e)
            pending = []
        elif not (i == 0 and pieces[0] == _DUMMY_PREFIX):
            pending.append(i)
    return out


def _next_offsets(offs: list[int]) -> list[int] | None:
    """``nxt[i]``: the first offset after normalized character ``i`` larger than ``offs[i]``
    (its exclusive end in the input); None if ``offs`` is not non-decreasing. O(n)."""
    n = len(offs) - 1
    if any(offs[i] > offs[i + 1] for i in range(n)):
        return None
    nxt = [0] * n
    bound = offs[n]
    for i in range(n - 1, -1, -1):
        if offs[i + 1] > offs[i]:
            bound = offs[i + 1]
        nxt[i] = max(bound, offs[i])
    return nxt


def _unk_end(norm: str, pos: int, next_piece: str | None) -> int:
    """Where an unknown piece starting at normalized character ``pos`` ends: at least one
    character, then up to where the next (ordinary) piece matches, or the end. sentencepiece merges
    runs of unknown characters into one piece, and a known piece cannot start inside such a run."""
    end = pos + 1
    while end < len(norm) and (next_piece is None or not norm.startswith(next_piece, end)):
        end += 1
    return end


def aligned_spans(norm: str, offs: list[int], pieces: list[str], kinds: list[str],
                  dummy: int | None) -> list[tuple[int, int]] | None:
    """Lay pieces over the normalized text (module docstring); None if they do not tile it.

    ``kinds[k]`` is ``byte``, ``unknown`` or anything else (an ordinary piece); ``dummy`` is the
    index of the inserted dummy-prefix character in ``norm`` (or None). O(len(norm) + pieces).
    """
    nxt = _next_offsets(offs)
    if nxt is None:
        return None
    out: list[tuple[int, int]] = []
    pos = byte = 0
    for k, piece in enumerate(pieces):
        if byte and kinds[k] != "byte" or pos >= len(norm):
            return None
        if kinds[k] == "byte":
            out.append((offs[pos], nxt[pos]))
            byte += 1
            if byte == len(norm[pos].encode("utf-8")):
                pos, byte = pos + 1, 0
            continue
        if kinds[k] == "unknown":
            following = pieces[k + 1] if k + 1 < len(pieces) and kinds[k + 1] not in ("byte", "unknown") else None
            end = _unk_end(norm, pos, following)
        elif norm.startswith(piece, pos):
            end = pos + len(piece)
        else:
            return None
        real = [i for i in range(pos, end) if i != dummy]
        out.append((offs[real[0]], max(nxt[i] for i in real)) if real else (offs[pos], offs[pos]))
        pos = end
    return out if pos == len(norm) and not byte else None


class SpmEngine(Encoder):
    """One ``sentencepiece.SentencePieceProcessor`` loaded from tokspec's verified bytes."""

    def __init__(self, name: str, model: SpmModel) -> None:
        self.model = model
        proto = Path(model.path).read_bytes()
        self.library_processor = sentencepiece.SentencePieceProcessor()
        self.library_processor.LoadFromSerializedProto(proto)
        if OFFSET_MAPPING:
            self.library_normalizer = sentencepiece.SentencePieceNormalizer(model_proto=proto)
        else:  # 0.2.0's keyword defaults (False) override the model's own normalizer flags: pass them
            self.library_normalizer = sentencepiece.SentencePieceNormalizer(
                model_proto=proto, add_dummy_prefix=model.add_dummy_prefix,
                escape_whitespaces=model.escape_whitespaces,
                remove_extra_whitespaces=model.remove_extra_whitespaces)
        self.info = EngineInfo(
            name, "tokenizer", "sentencepiece", sentencepiece.__version__, model.sha256,
            f"sentencepiece {model.model_type} ({model.normalizer_name}, "
            f"byte_fallback={model.byte_fallback}) from {model.path}"
            + ("" if OFFSET_MAPPING else f"; sentencepiece {sentencepiece.__version__} < 0.2.3: spans "
               "read from its serialized_proto output"),
            thread_safe=True)  # sentencepiece's Encode is const; tables read-only (issue 24)
        self._init_tables()
        # the derived alignment (tokspec.engines._spm_align): a class per code point, filled as met
        self._charsmap = CharsMap.parse(model.precompiled_charsmap, model.path)
        rebuildable = OFFSET_MAPPING and model.escape_whitespaces and not model.treat_whitespace_as_suffix
        self._align_table = np.full(0x110000, UNSEEN, dtype=np.int32) if rebuildable else None
        self._align_after = np.full(0x110000 if rebuildable else 0, -1, dtype=np.int32)
        self._charsmap_units = np.asarray(() if self._charsmap is None else self._charsmap.units, dtype=np.uint32)

    def _init_tables(self) -> None:
        """Per-id kinds and the ordinary pieces' code points (flattened) for :func:`tile_kernel`."""
        kinds = {"byte": _BYTE, "unknown": _UNKNOWN}
        self._kind_of_id = np.array([kinds.get(t, _ORDINARY) for t in self.model.types], dtype=np.int64)
        size = self.library_processor.get_piece_size()
        pieces = [str(self.library_processor.id_to_piece(i)) for i in range(size)]
        lens = np.array([len(p) for p in pieces], dtype=np.int64)
        self._piece_at = np.zeros(size + 1, dtype=np.int64)
        np.cumsum(lens, out=self._piece_at[1:])
        self._byte_of_id = np.array([int(p[3:5], 16) if t == "byte" else -1
                                     for p, t in zip(pieces, self.model.types)], dtype=np.int64)
        self._unknown_ids = np.flatnonzero(self._kind_of_id == _UNKNOWN)
        self._piece_flat = np.frombuffer("".join(pieces).encode("utf-32-le"), dtype=np.uint32).astype(np.int64)

    def library_encode(self, text: str) -> dict[str, list]:  # type: ignore[type-arg]
        """sentencepiece's own ``offset_mapping`` output with byte offsets."""
        try:
            if not OFFSET_MAPPING:
                return proto_encode(self.library_processor, text)
            out: dict[str, list] = self.library_processor.encode(  # type: ignore[type-arg]
                text, return_type="offset_mapping", return_bytes=True)
        except Exception as exc:
            raise EngineFault(f"{self.info.name}: sentencepiece failed on text={text!r:.80}: {exc}") from exc
        return out

    def _encode(self, text: str) -> Encoding:
        """Encode; O(n) beyond sentencepiece's own encode and normalization."""
        out = self.library_encode(text)
        ids: list[int] = list(out["ids"])
        pieces = [p.decode("utf-8", "replace") for p in out["pieces"]]
        norm, offs = self.library_normalizer.normalize(text, with_offsets=True)
        offsets = aligned_spans(norm, list(offs), pieces, [self.model.types[i] for i in ids],
                                self._dummy_index(np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)))
        if offsets is None:
            spans = contract_byte_spans(pieces, [tuple(s) for s in out["offsets"]])
            offsets = char_offsets_from_byte_spans(text, spans)
        return Encoding.of(ids, offsets, pieces).validate(text, self.info.name)

    def _encode_arrays(self, text: str) -> EncodingArrays:
        """Encode as arrays (module docstring); O(n + tokens) compiled beyond sentencepiece's
        encode and normalization, the list path when the pieces do not tile."""
        try:
            if NUMPY_IDS:  # the same ids as encode's list (tests/test_adapter_arrays.py)
                ids = np.asarray(self.library_processor.encode(text, return_type="numpy"), dtype=np.int64)
            else:
                raw = self.library_processor.encode(text)
                ids = np.fromiter(raw, dtype=np.int64, count=len(raw))
        except Exception as exc:
            raise EngineFault(f"{self.info.name}: sentencepiece failed on text={text!r:.80}: {exc}") from exc
        if len(ids) and (int(ids.min()) < 0 or int(ids.max()) >= len(self._kind_of_id)):
            raise EngineFault(f"{self.info.name}: sentencepiece returned an id outside the vocabulary")
        rebuilt = self._rebuilt(text)
        if rebuilt is not None:
            norm_cps, offs = rebuilt
            if not self._has_unknown(ids):
                # sentencepiece's pieces are its normalized text in order: if they spell the
                # rebuilt text (tile_kernel checks every character, byte pieces byte by byte),
                # that text is the library's; an unknown piece spells nothing, so then ask
                spans = self._tile(norm_cps, offs, ids)
                if spans is not None:
                    return EncodingArrays(ids, *spans).validate(text, self.info.name)
            library_cps = np.frombuffer(self.library_normalizer.normalize(text).encode("utf-32-le"), dtype=np.uint32)
            if not np.array_equal(norm_cps, library_cps):
                rebuilt = None
        if rebuilt is None:
            norm, offs_list = self.library_normalizer.normalize(text, with_offsets=True)
            norm_cps = np.frombuffer(norm.encode("utf-32-le"), dtype=np.uint32)
            offs = np.fromiter(offs_list, dtype=np.int64, count=len(offs_list))
        spans = self._tile(norm_cps, offs, ids)
        if spans is None:
            return EncodingArrays.from_encoding(self._encode(text))
        return EncodingArrays(ids, *spans).validate(text, self.info.name)

    def _has_unknown(self, ids: np.ndarray) -> bool:
        if len(self._unknown_ids) == 1:  # sentencepiece models have one <unk>: a compare, not isin
            return bool((ids == self._unknown_ids[0]).any())
        return bool(np.isin(ids, self._unknown_ids).any())

    def _tile(self, norm_cps: np.ndarray, offs: np.ndarray, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """:func:`tile_kernel`'s spans, or None when the pieces do not tile the normalized text."""
        dummy = self._dummy_index(norm_cps)
        starts, ends, tiled = tile_kernel(norm_cps, offs, ids, self._kind_of_id, self._piece_flat,
                                          self._piece_at, -1 if dummy is None else dummy, self._byte_of_id)
        return (starts, ends) if tiled else None

    def _confirmed(self, ch: str, klass: int) -> bool:
        """Does the library normalize the text ``ch`` alone as the class read from the charsmap
        says (text and positions)? One library call per code point the engine meets."""
        if klass == OTHER:
            return False
        norm = np.empty(3, dtype=np.uint32)
        offs = np.empty(3, dtype=np.int64)
        m = rebuild_normalized(np.zeros(1, dtype=np.uint32), np.array([klass], dtype=np.int32),
                               np.array([-1], dtype=np.int32), self._charsmap_units, self.model.add_dummy_prefix,
                               self.model.remove_extra_whitespaces, norm, offs)
        want, want_offs = self.library_normalizer.normalize(ch, with_offsets=True)
        return m >= 0 and norm[:m].tobytes().decode("utf-32-le") == want and offs[:m + 1].tolist() == list(want_offs)

    def _rebuilt(self, text: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The library's normalized text (code points) and ``norm_to_orig`` character positions as
        the model's one-character rules imply them (:mod:`tokspec.engines._spm_align`), or None
        where they do not decide them."""
        if self._align_table is None:
            return None
        cps = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32)
        norm = np.empty(len(cps) + 2, dtype=np.uint32)
        offs = np.empty(len(cps) + 2, dtype=np.int64)
        args = (cps, self._align_table, self._align_after, self._charsmap_units,
                self.model.add_dummy_prefix, self.model.remove_extra_whitespaces, norm, offs)
        m = rebuild_normalized(*args)
        if m == UNSEEN:
            for cp in unseen_code_points(cps, self._align_table).tolist():
                klass, node = char_class(self._charsmap, chr(cp))
                self._align_after[cp] = node  # first: a kernel in another thread trusts `after` once the class is set
                self._align_table[cp] = klass if self._confirmed(chr(cp), klass) else OTHER
            m = rebuild_normalized(*args)
        return None if m < 0 else (norm[:m], offs[:m + 1])

    def _dummy_index(self, norm_cps: np.ndarray) -> int | None:
        """Where the normalizer inserted the dummy prefix (suffix) ``▁`` in the normalized text
        (code points), if it did."""
        n = len(norm_cps)
        if not self.model.add_dummy_prefix or not n:
            return None
        blank = (0x2581, 0x20)
        if norm_cps[0] in blank and norm_cps[-1] in blank and not np.any((norm_cps != 0x2581) & (norm_cps != 0x20)):
            return None  # only spaces
        if self.model.treat_whitespace_as_suffix:
            return n - 1 if norm_cps[-1] == 0x2581 else None
        return 0 if norm_cps[0] == 0x2581 else None

    def decode(self, ids: list[int]) -> str:
        """sentencepiece's own ``DecodeIds`` (byte pieces joined, invalid UTF-8 replaced, ``▁`` to
        space, the dummy prefix's space removed, control pieces dropped)."""
        return str(self.library_processor.DecodeIds(ids))

    def special_tokens(self) -> dict[str, int]:
        """The control pieces (``<s>``, ``</s>``: never produced from text)."""
        return {self.model.pieces[i]: i
                for i, kind in enumerate(self.model.types) if kind == "control"}

    @property
    def n_vocab(self) -> int:
        return int(self.library_processor.get_piece_size())

    def token_piece(self, token_id: int) -> str:
        if 0 <= token_id < self.library_processor.get_piece_size():
            return str(self.library_processor.id_to_piece(token_id))
        return str(token_id)
