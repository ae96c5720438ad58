"""A minimal reader of the protobuf wire format: enough to parse sentencepiece's ``.model``
(``ModelProto``) and ``SentencePieceText`` messages without the ``protobuf`` package.

Grammar (https://protobuf.dev/programming-guides/encoding/)::

    message := field*
    field   := key value          key = varint(field_number << 3 | wire_type)
    value   := varint (type 0) | fixed64 (type 1) | varint-length bytes (type 2) | fixed32 (type 5)

Out of scope: groups (wire types 3 and 4, deprecated), packed repeated fields (sentencepiece's
messages have none), writing. Malformed input raises :class:`WireError`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

__all__ = ["WireError", "Field", "iter_fields", "iter_field_slices", "read_varint", "write_varint",
           "as_float", "as_signed"]

#: (field_number, wire_type, value): value is an int for types 0, 1, 5 and bytes for type 2.
Field = tuple[int, int, "int | bytes"]


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """Decode a base-128 varint at ``data[pos:]``; return (value, next position). O(10)."""
    value = 0
    for shift in range(0, 70, 7):
        if pos >= len(data):
            raise WireError(f"truncated varint at byte {pos}")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
    raise WireError(f"varint longer than 10 bytes ending at byte {pos}")


def _read_value(data: bytes, pos: int, wire_type: int) -> tuple[int | bytes, int]:
    """Read one value of ``wire_type`` at ``pos``; return (value, next position)."""
    if wire_type == 0:
        return read_varint(data, pos)
    sizes = {1: 8, 5: 4}
    if wire_type in sizes:
        end = pos + sizes[wire_type]
        if end > len(data):
            raise WireError(f"truncated fixed{8 * sizes[wire_type]} at byte {pos}")
        return int.from_bytes(data[pos:end], "little"), end
    if wire_type == 2:
        n, pos = read_varint(data, pos)
        if pos + n > len(data):
            raise WireError(f"length {n} at byte {pos} runs past the end ({len(data)} bytes)")
        return data[pos:pos + n], pos + n
    raise WireError(f"unsupported wire type {wire_type} at byte {pos}")


def iter_field_slices(data: bytes) -> Iterator[tuple[int, int, int | bytes, bytes]]:
    """Like :func:`iter_fields`, plus each field's raw bytes (key included). O(len(data))."""
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = read_varint(data, pos)
        number, wire_type = key >> 3, key & 7
        if number == 0:
            raise WireError(f"field number 0 at byte {pos}")
        value, pos = _read_value(data, pos, wire_type)
        yield number, wire_type, value, data[start:pos]


def iter_fields(data: bytes) -> Iterator[Field]:
    """Yield every field of a message in order. O(len(data))."""
    for number, wire_type, value, _ in iter_field_slices(data):
        yield number, wire_type, value


def write_varint(value: int) -> bytes:
    """Encode a non-negative int as a base-128 varint (the inverse of :func:`read_varint`)."""
    if value < 0:
        raise WireError(f"write_varint needs value >= 0, got value={value}")
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def as_float(value: int | bytes) -> float:
    """Reinterpret a fixed32 value as an IEEE float."""
    assert isinstance(value, int)
    result: float = struct.unpack("<f", value.to_bytes(4, "little"))[0]
    return result


def as_signed(value: int | bytes) -> int:
    """Reinterpret a varint as a two's-complement int32/int64 (negative ids such as pad_id=-1)."""
    assert isinstance(value, int)
    return value - (1 << 64) if value >= 1 << 63 else value
