"""Bounds-checked big-endian primitives of the Kafka protocol (stdlib :mod:`struct` only).

Invariants:

- A :class:`Reader` never reads past the end of its buffer: every read checks the bytes
  remaining first and raises :class:`~kafka_sticky_plugin.errors.CodecError` naming the
  message, the expected field and the byte offset where it starts. No ``struct.error``,
  ``IndexError`` or ``UnicodeDecodeError`` escapes. The one loop that reads the buffer itself
  (:meth:`Reader.window`: the partition array of :mod:`._topic_partitions`) keeps the same
  checks and reports through :meth:`Reader.fail_at`.
- An array count is checked against the bytes remaining divided by the smallest element
  size *before* anything is allocated, so a hostile count (``0x7fffffff``) costs nothing.
- A :class:`Writer` refuses values its wire type cannot hold (a value of the wrong type, a
  string longer than 32,767 UTF-8 bytes, an int32 out of range) with a :class:`CodecError`
  at the offset it would have been written to.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from ..errors import CodecError

__all__ = [
    "INT16_MAX",
    "INT32_MAX",
    "INT32_MIN",
    "MIN_INT32_SIZE",
    "MIN_STRING_SIZE",
    "Reader",
    "Writer",
]

INT16_MAX = 2**15 - 1
INT32_MIN = -(2**31)
INT32_MAX = 2**31 - 1

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")

#: Smallest encodings, used to bound array counts before allocating.
MIN_STRING_SIZE = 2  # int16 length, empty string
MIN_INT32_SIZE = 4


class Reader:
    """Reads one message from ``data``; ``what`` names the message in errors."""

    __slots__ = ("_data", "_pos", "what")

    def __init__(self, data: bytes | bytearray | memoryview, what: str) -> None:
        self._data = bytes(data)
        self._pos = 0
        self.what = what

    @property
    def offset(self) -> int:
        """Byte offset of the next read."""
        return self._pos

    @property
    def remaining(self) -> int:
        """Bytes not read yet."""
        return len(self._data) - self._pos

    def at_end(self) -> bool:
        """True when every byte has been read."""
        return self._pos >= len(self._data)

    def take_prefix(self, block: bytes) -> bool:
        """Consume ``block`` if the unread bytes start with it (a C-level compare)."""
        if self._data.startswith(block, self._pos):
            self._pos += len(block)
            return True
        return False

    def peek_int32(self) -> int | None:
        """The int32 at the current offset without consuming it, or ``None`` if fewer than
        4 bytes remain."""
        if len(self._data) - self._pos < 4:
            return None
        value: int = _INT32.unpack_from(self._data, self._pos)[0]
        return value

    def unpack_ahead(self, layout: struct.Struct, skip: int) -> tuple[Any, ...] | None:
        """``layout`` unpacked ``skip`` bytes past the current offset, without consuming
        anything; ``None`` when the bytes remaining are too few (never a ``struct.error``)."""
        pos = self._pos + skip
        if skip < 0 or len(self._data) - pos < layout.size:
            return None
        return layout.unpack_from(self._data, pos)

    def advance(self, size: int) -> None:
        """Consume ``size`` bytes that the caller has already validated (e.g. with
        :meth:`unpack_ahead`); a :class:`CodecError` if fewer remain."""
        self._need(size, f"{size} bytes")

    def bytes_since(self, start: int) -> bytes:
        """The bytes read from offset ``start`` up to the current offset."""
        return self._data[start : self._pos]

    def window(self) -> tuple[bytes, int]:
        """The whole buffer and the offset of the next read, for a caller's own loop over many
        small elements (the partition array's hot path): that loop must check every bound
        itself, then :meth:`seek` past what it read or raise :meth:`fail_at`."""
        return self._data, self._pos

    def seek(self, pos: int) -> None:
        """Move to offset ``pos``, which a :meth:`window` loop has validated (never past the
        end: a :class:`CodecError` otherwise)."""
        if not 0 <= pos <= len(self._data):
            raise CodecError(self.what, f"an offset within {len(self._data)} bytes", pos)
        self._pos = pos

    def fail_at(self, pos: int, expected: str) -> CodecError:
        """The error of a :meth:`window` loop that found no ``expected`` at ``pos``; the reader
        is left at ``pos``."""
        self._pos = pos
        return CodecError(self.what, expected, pos)

    def _need(self, size: int, expected: str) -> int:
        pos = self._pos
        if len(self._data) - pos < size:
            raise CodecError(self.what, f"{expected} ({size} bytes, {self.remaining} left)", pos)
        self._pos = pos + size
        return pos

    def int16(self, expected: str = "int16") -> int:
        """Read a signed big-endian int16."""
        pos = self._need(2, expected)
        value: int = _INT16.unpack_from(self._data, pos)[0]
        return value

    def int32(self, expected: str = "int32") -> int:
        """Read a signed big-endian int32."""
        pos = self._need(4, expected)
        value: int = _INT32.unpack_from(self._data, pos)[0]
        return value

    def _text(self, length: int, start: int, expected: str) -> str:
        pos = self._need(length, f"{expected} of {length} bytes")
        try:
            return self._data[pos : pos + length].decode("utf-8")
        except UnicodeDecodeError:
            raise CodecError(self.what, f"{expected} in UTF-8", start) from None

    def string(self, expected: str = "string") -> str:
        """Read a non-null int16-length-prefixed UTF-8 string."""
        start = self._pos
        length = self.int16(f"{expected} length")
        if length < 0:
            raise CodecError(self.what, f"{expected} length >= 0, got {length}", start)
        return self._text(length, start, expected)

    def string_array(
        self,
        expected: str = "strings",
        names: dict[bytes, str] | None = None,
        uniform: dict[tuple[int, int], struct.Struct] | None = None,
    ) -> list[str]:
        """Read an int32 count followed by that many non-null strings.

        One tight loop with the same checks as :meth:`string` (the hot path of a
        subscription: hundreds of topic names per member); ``names`` interns the strings by
        their raw bytes (one dict per batch, as the partition array's reader does). With
        ``uniform`` (one dict per batch), an array whose strings all have the first one's
        byte length is read in one ``struct`` call (:meth:`_uniform_strings`): the same
        strings, and anything else takes the loop.
        """
        count = self.array_count(MIN_STRING_SIZE, expected)
        names = {} if names is None else names
        if uniform is not None and count > 1:
            found = self._uniform_strings(count, names, uniform)
            if found is not None:
                return found
        data, pos, end = self._data, self._pos, len(self._data)
        unpack_int16 = _INT16.unpack_from
        out: list[str] = []
        append = out.append
        for _ in range(count):
            if end - pos < 2:
                self._pos = pos
                raise CodecError(self.what, f"{expected} element length (2 bytes)", pos)
            length = unpack_int16(data, pos)[0]
            start, pos = pos, pos + 2
            if length < 0 or end - pos < length:
                self._pos = start
                raise CodecError(
                    self.what, f"{expected} element of {length} bytes ({end - pos} left)", start
                )
            raw = data[pos : pos + length]
            text = names.get(raw)
            if text is None:
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError:
                    self._pos = start
                    raise CodecError(self.what, f"{expected} element in UTF-8", start) from None
                names[raw] = text
            append(text)
            pos += length
        self._pos = pos
        return out

    #: Structs kept per ``uniform`` table (:meth:`_uniform_strings`).
    UNIFORM_CAPACITY = 64

    def _uniform_strings(
        self, count: int, names: dict[bytes, str], uniform: dict[tuple[int, int], struct.Struct]
    ) -> list[str] | None:
        """The ``count`` strings at the current offset (consumed) when every one has the
        byte length of the first, all known to ``names`` or valid UTF-8: one ``struct``
        call (``>`` then ``h{length}s`` per string) reads them, a C-level count checks the
        lengths. ``None`` (nothing consumed) otherwise: the caller's loop then reads them
        with every check."""
        data, pos = self._data, self._pos
        if len(data) - pos < 2:
            return None
        length = data[pos] << 8 | data[pos + 1]
        if length >= 0x8000 or len(data) - pos < count * (2 + length):
            return None
        layout = uniform.get((count, length))
        if layout is None:
            layout = struct.Struct(">" + f"h{length}s" * count)
            if len(uniform) < self.UNIFORM_CAPACITY:
                uniform[(count, length)] = layout
        values = layout.unpack_from(data, pos)
        if values[0::2].count(length) != count:
            return None
        raws = values[1::2]
        out = list(map(names.get, raws))
        if None in out:
            try:
                for i in [i for i, text in enumerate(out) if text is None]:
                    out[i] = names[raws[i]] = raws[i].decode("utf-8")
            except UnicodeDecodeError:
                return None
        self._pos = pos + layout.size
        return out  # type: ignore[return-value]

    def _nullable_length(self, length: int, start: int, expected: str) -> bool:
        """Whether a nullable field's ``length`` (read at ``start``) says a value follows:
        ``False`` for -1 (null); a :class:`CodecError` below -1."""
        if length == -1:
            return False
        if length < 0:
            raise CodecError(self.what, f"{expected} length >= -1, got {length}", start)
        return True

    def nullable_string(self, expected: str = "nullable string") -> str | None:
        """Read an int16-length-prefixed UTF-8 string; length -1 is ``None``."""
        start = self._pos
        length = self.int16(f"{expected} length")
        if not self._nullable_length(length, start, expected):
            return None
        return self._text(length, start, expected)

    def nullable_bytes(self, expected: str = "nullable bytes") -> bytes | None:
        """Read int32-length-prefixed bytes; length -1 is ``None``."""
        start = self._pos
        length = self.int32(f"{expected} length")
        if not self._nullable_length(length, start, expected):
            return None
        pos = self._need(length, f"{expected} of {length} bytes")
        return self._data[pos : pos + length]

    def array_count(self, min_element_size: int, expected: str = "array") -> int:
        """Read an int32 array count, bounded by what the remaining bytes can hold.

        A count of -1 (a null array, which some writers use for "none") reads as 0.
        """
        start = self._pos
        count = self.int32(f"{expected} count")
        if count == -1:
            return 0
        if count < 0:
            raise CodecError(self.what, f"{expected} count >= -1, got {count}", start)
        if count * min_element_size > self.remaining:
            raise CodecError(
                self.what,
                f"{expected} of {count} elements (at least {count * min_element_size} bytes, "
                f"{self.remaining} left)",
                start,
            )
        return count

    def int32_array(self, expected: str = "int32 array") -> tuple[int, ...]:
        """Read an int32 count followed by that many int32 values (one ``unpack`` call)."""
        count = self.array_count(MIN_INT32_SIZE, expected)
        pos = self._need(4 * count, expected)
        return struct.unpack_from(f">{count}i", self._data, pos)


class Writer:
    """Accumulates one message; ``what`` names the message in errors."""

    __slots__ = ("_parts", "_size", "what")

    def __init__(self, what: str) -> None:
        self._parts: list[bytes] = []
        self._size = 0
        self.what = what

    def _put(self, chunk: bytes) -> None:
        self._parts.append(chunk)
        self._size += len(chunk)

    @property
    def size(self) -> int:
        """Bytes written so far (the offset of the next write)."""
        return self._size

    def int16(self, value: int, expected: str = "int16") -> None:
        """Write a signed big-endian int16."""
        if type(value) is not int or not -(2**15) <= value <= INT16_MAX:
            raise CodecError(self.what, f"{expected} as an int16, got {value!r}", self._size)
        self._put(_INT16.pack(value))

    def int32(self, value: int, expected: str = "int32") -> None:
        """Write a signed big-endian int32."""
        if type(value) is not int or not INT32_MIN <= value <= INT32_MAX:
            raise CodecError(self.what, f"{expected} as an int32, got {value!r}", self._size)
        self._put(_INT32.pack(value))

    def string(self, value: str, expected: str = "string") -> None:
        """Write an int16-length-prefixed UTF-8 string."""
        if not isinstance(value, str):
            raise CodecError(self.what, f"{expected} as a str, got {value!r}", self._size)
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError:
            raise CodecError(self.what, f"{expected} encodable as UTF-8", self._size) from None
        if len(raw) > INT16_MAX:
            raise CodecError(
                self.what,
                f"{expected} of at most {INT16_MAX} UTF-8 bytes, got {len(raw)}",
                self._size,
            )
        self._put(_INT16.pack(len(raw)) + raw)

    def nullable_string(self, value: str | None, expected: str = "nullable string") -> None:
        """Write a string, or length -1 for ``None``."""
        if value is None:
            self._put(_INT16.pack(-1))
        else:
            self.string(value, expected)

    def nullable_bytes(self, value: bytes | None, expected: str = "nullable bytes") -> None:
        """Write int32-length-prefixed bytes, or length -1 for ``None``."""
        if value is None:
            self._put(_INT32.pack(-1))
            return
        if not isinstance(value, (bytes, bytearray, memoryview)):
            raise CodecError(self.what, f"{expected} as bytes or None, got {value!r}", self._size)
        if len(value) > INT32_MAX:
            raise CodecError(self.what, f"{expected} shorter than 2**31 bytes", self._size)
        self._put(_INT32.pack(len(value)) + bytes(value))

    def array_count(self, count: int, expected: str = "array") -> None:
        """Write an int32 array count."""
        self.int32(count, f"{expected} count")

    def int32_array(self, values: Sequence[int], expected: str = "int32 array") -> None:
        """Write an int32 count followed by the values."""
        self.array_count(len(values), expected)
        try:
            self._put(struct.pack(f">{len(values)}i", *values))
        except struct.error:
            bad = next(
                (v for v in values if type(v) is not int or not INT32_MIN <= v <= INT32_MAX),
                values,
            )
            raise CodecError(
                self.what, f"{expected} values that are int32, got {bad!r}", self._size
            ) from None

    def raw(self, chunk: bytes) -> None:
        """Append bytes that are already encoded."""
        self._put(chunk)

    def getvalue(self) -> bytes:
        """The bytes written so far."""
        return b"".join(self._parts)
