"""Bounds-checked big-endian primitives of the Kafka protocol (stdlib :mod:`struct` only).

Invariants:

- A :class:`Reader` never reads past the end of its buffer: every read checks the bytes
  remaining first and raises :class:`~kafka_sticky_plugin.errors.CodecError` naming the
  message, the expected field and the byte offset where that field starts. No
  ``struct.error``, ``IndexError`` or ``UnicodeDecodeError`` escapes.
- An array count is checked against the bytes after it (at the smallest element size)
  *before* anything is allocated, so a hostile count (``0x7fffffff``) costs nothing.
- A null array (count -1) is decided by :meth:`Reader.nullable_count` alone: it reads as
  no elements; a writer never writes one (it writes its list's length).
- An array of int32s reads as an ``array("i")`` (C ints, 4 bytes, in native order): one
  copy of its bytes, no Python object per element.
- A :class:`Writer` refuses values its wire type cannot hold (a value of the wrong type, a
  string longer than 32,767 UTF-8 bytes, an int32 out of range) with a :class:`CodecError`
  at the offset it would have been written to.
"""

from __future__ import annotations

import struct
import sys
from array import array

from ..errors import CodecError

__all__ = [
    "INT16_MAX",
    "INT32_MAX",
    "INT32_MIN",
    "MIN_INT32_SIZE",
    "MIN_STRING_SIZE",
    "Reader",
    "Writer",
    "string_bytes",
]

INT16_MAX = 2**15 - 1
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

if array("i").itemsize != 4:  # pragma: no cover (every platform CPython supports here)
    raise ImportError("kafka-sticky-plugin needs a 4-byte C int for int32 arrays")
_SWAP = sys.byteorder == "little"  # the wire is big-endian

#: Smallest encodings, used to bound array counts before allocating.
MIN_STRING_SIZE = 2  # int16 length, empty string
MIN_INT32_SIZE = 4


class Reader:
    """Reads one message from ``data``, field by field from offset ``pos``; ``what`` names
    the message in errors. Each method reads its field with its checks inline, moving ``pos``
    past it only when it was read."""

    __slots__ = ("data", "pos", "what")

    def __init__(self, data: bytes | bytearray | memoryview, what: str) -> None:
        self.data = bytes(data)
        self.pos = 0
        self.what = what

    def short(self, size: int, expected: str, pos: int) -> CodecError:
        """The error of a field of ``size`` bytes at ``pos`` that does not fit."""
        left = len(self.data) - pos
        return CodecError(self.what, f"{expected} ({size} bytes, {left} left)", pos)

    def int16(self, expected: str = "int16") -> int:
        """Read a signed big-endian int16."""
        pos = self.pos
        if len(self.data) - pos < 2:
            raise self.short(2, expected, pos)
        self.pos = pos + 2
        value: int = _INT16.unpack_from(self.data, pos)[0]
        return value

    def int32(self, expected: str = "int32") -> int:
        """Read a signed big-endian int32."""
        pos = self.pos
        if len(self.data) - pos < 4:
            raise self.short(4, expected, pos)
        self.pos = pos + 4
        value: int = _INT32.unpack_from(self.data, pos)[0]
        return value

    def string(self, expected: str = "string", lowest: int = 0) -> str:
        """Read an int16-length-prefixed UTF-8 string; every error of it is reported at its
        start, a negative length as below ``lowest`` (-1 for :meth:`nullable_string`)."""
        data, start = self.data, self.pos
        pos = start + 2
        if pos > len(data):
            raise self.short(2, f"{expected} length", start)
        length: int = _INT16.unpack_from(data, start)[0]
        end = pos + length
        if length < 0 or end > len(data):
            if length < 0:
                raise CodecError(self.what, f"{expected} length >= {lowest}, got {length}", start)
            left = len(data) - pos
            raise CodecError(self.what, f"{expected} of {length} bytes ({left} left)", start)
        try:
            text = data[pos:end].decode()
        except UnicodeDecodeError:
            raise CodecError(self.what, f"{expected} in UTF-8", start) from None
        self.pos = end
        return text

    def nullable_string(self, expected: str = "nullable string") -> str | None:
        """Read a string; length -1 is ``None``."""
        pos = self.pos
        if self.data[pos : pos + 2] == b"\xff\xff":
            self.pos = pos + 2
            return None
        return self.string(expected, -1)

    def nullable_bytes(self, expected: str = "nullable bytes") -> bytes | None:
        """Read int32-length-prefixed bytes; length -1 is ``None``."""
        start = self.pos
        length = self.int32(f"{expected} length")
        if length == -1:
            return None
        if length < 0:
            raise CodecError(self.what, f"{expected} length >= -1, got {length}", start)
        pos = self.pos
        if len(self.data) - pos < length:
            raise self.short(length, f"{expected} of {length} bytes", pos)
        self.pos = pos + length
        return self.data[pos : pos + length]

    def nullable_count(self, min_element_size: int, expected: str = "array") -> int | None:
        """Read an int32 array count, checked against the bytes after it before anything is
        allocated; ``None`` for a null array (count -1)."""
        data, start = self.data, self.pos
        if len(data) - start < 4:
            raise self.short(4, f"{expected} count", start)
        count: int = _INT32.unpack_from(data, start)[0]
        self.pos = start + 4
        if count == -1:
            return None
        left = len(data) - start - 4
        if count < 0:
            raise CodecError(self.what, f"{expected} count >= -1, got {count}", start)
        if count * min_element_size > left:
            at_least = f"at least {count * min_element_size} bytes, {left} left"
            raise CodecError(self.what, f"{expected} of {count} elements ({at_least})", start)
        return count

    def string_array(self, expected: str = "strings") -> list[str]:
        """Read an array of non-null strings (a null array is empty)."""
        count = self.nullable_count(MIN_STRING_SIZE, expected) or 0
        string, element = self.string, f"{expected} element"
        return [string(element) for _ in range(count)]

    def int32_array(self, expected: str = "int32 array") -> array[int]:
        """Read an array of int32s (a null array is empty)."""
        count = self.nullable_count(MIN_INT32_SIZE, expected) or 0
        pos = self.pos
        self.pos = pos + 4 * count
        values = array("i", self.data[pos : self.pos])
        if _SWAP:
            values.byteswap()
        return values


def string_bytes(value: object, what: str, expected: str, offset: int) -> bytes:
    """``value`` as an int16-length-prefixed UTF-8 string, or a :class:`CodecError` at
    ``offset`` when it is not a ``str`` of at most 32,767 UTF-8 bytes."""
    if not isinstance(value, str):
        raise CodecError(what, f"{expected} as a str, got {value!r}", offset)
    try:
        raw = value.encode("utf-8")
    except UnicodeEncodeError:
        raise CodecError(what, f"{expected} encodable as UTF-8", offset) from None
    if len(raw) > INT16_MAX:
        raise CodecError(
            what, f"{expected} of at most {INT16_MAX} UTF-8 bytes, got {len(raw)}", offset
        )
    return _INT16.pack(len(raw)) + raw


class Writer:
    """Accumulates one message; ``what`` names the message in errors, ``size`` counts the
    bytes written so far (the offset of the next write)."""

    __slots__ = ("_parts", "size", "what")

    def __init__(self, what: str) -> None:
        self._parts: list[bytes] = []
        self.size = 0
        self.what = what

    def raw(self, chunk: bytes) -> None:
        """Append bytes that are already encoded."""
        self._parts.append(chunk)
        self.size += len(chunk)

    def int32(self, value: int, expected: str = "int32") -> None:
        """Write a signed big-endian int32."""
        if type(value) is not int or not INT32_MIN <= value <= INT32_MAX:
            raise CodecError(self.what, f"{expected} as an int32, got {value!r}", self.size)
        self.raw(_INT32.pack(value))

    def string(self, value: str, expected: str = "string") -> None:
        """Write an int16-length-prefixed UTF-8 string."""
        self.raw(string_bytes(value, self.what, expected, self.size))

    def nullable_string(self, value: str | None, expected: str = "nullable string") -> None:
        """Write a string, or length -1 for ``None``."""
        if value is None:
            self.raw(_INT16.pack(-1))
        else:
            self.string(value, expected)

    def nullable_bytes(self, value: bytes | None, expected: str = "nullable bytes") -> None:
        """Write int32-length-prefixed bytes, or length -1 for ``None``."""
        if value is None:
            self.raw(_INT32.pack(-1))
            return
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise CodecError(self.what, f"{expected} as bytes or None, got {value!r}", self.size)
        if len(value) > INT32_MAX:
            raise CodecError(self.what, f"{expected} shorter than 2**31 bytes", self.size)
        self.raw(_INT32.pack(len(value)) + bytes(value))

    def getvalue(self) -> bytes:
        """The bytes written so far."""
        return b"".join(self._parts)
