"""A consumer-group member that speaks the group protocol over a bare socket, with no client.

Used to put a member with arbitrary JoinGroup metadata (garbage, a foreign tool's format) into
a real group and check that the rest of the group is unaffected. It joins, syncs as a follower
(it never assigns: a group it would lead gets empty assignments from it), heartbeats, rejoins
when the broker starts a rebalance, and leaves on :meth:`RawGroupMember.stop`. Loopback only.

Wire format (Kafka protocol, big-endian; request header v1: ``int16 api_key | int16
api_version | int32 correlation_id | string client_id``; response header: ``int32
correlation_id``):

- JoinGroup v1 (api 11): ``string group_id | int32 session_timeout_ms | int32
  rebalance_timeout_ms | string member_id | string protocol_type | array[string name, bytes
  metadata]`` -> ``int16 error | int32 generation | string protocol | string leader | string
  member_id | array[string member_id, bytes metadata]``;
- SyncGroup v0 (api 14): ``string group_id | int32 generation | string member_id |
  array[string member_id, bytes assignment]`` -> ``int16 error | bytes assignment``;
- Heartbeat v0 (api 12): ``string group_id | int32 generation | string member_id`` ->
  ``int16 error``; LeaveGroup v0 (api 13): ``string group_id | string member_id`` ->
  ``int16 error``.

MEMBER_ID_REQUIRED (79) is answered by joining again with the given member id (some brokers
send it to every JoinGroup version).
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from dataclasses import dataclass, field

from kafka_sticky_plugin.errors import CodecError

__all__ = ["RawGroupMember", "SyncedGeneration"]

_JOIN_GROUP, _HEARTBEAT, _LEAVE_GROUP, _SYNC_GROUP = 11, 12, 13, 14
_REBALANCE_IN_PROGRESS = 27
_UNKNOWN_MEMBER_ID = 25
_ILLEGAL_GENERATION = 22
_MEMBER_ID_REQUIRED = 79
_CLIENT_ID = b"kafka-sticky-plugin-raw-member"


def _string(value: str) -> bytes:
    data = value.encode()
    return struct.pack(">h", len(data)) + data


def _bytes(value: bytes) -> bytes:
    return struct.pack(">i", len(value)) + value


class _Reader:
    """Reads one response body; a short or malformed body raises :class:`CodecError`."""

    def __init__(self, data: bytes, what: str) -> None:
        self._data = data
        self._offset = 0
        self._what = what

    def _take(self, size: int, expected: str) -> bytes:
        if size < 0 or self._offset + size > len(self._data):
            raise CodecError(self._what, expected, self._offset)
        out = self._data[self._offset : self._offset + size]
        self._offset += size
        return out

    def int16(self) -> int:
        return int(struct.unpack(">h", self._take(2, "int16"))[0])

    def int32(self) -> int:
        return int(struct.unpack(">i", self._take(4, "int32"))[0])

    def string(self) -> str:
        return self._take(self.int16(), "string").decode()

    def bytes(self) -> bytes:
        size = self.int32()
        return b"" if size < 0 else self._take(size, "bytes")


@dataclass(frozen=True)
class SyncedGeneration:
    """One completed join: the generation, whether this member led it, the assignment bytes
    the leader sent it and the member ids the broker listed (to the leader only)."""

    generation: int
    leader: bool
    assignment: bytes
    members: tuple[str, ...]


@dataclass
class RawGroupMember:
    """A group member driven by raw requests in its own thread (see the module docstring).

    ``synced`` lists every completed join in order; ``error`` is what stopped the thread, if
    anything did. ``protocols`` are the ``(name, metadata)`` pairs sent with every JoinGroup.
    """

    host: str
    port: int
    group_id: str
    protocols: list[tuple[str, bytes]]
    session_timeout_ms: int = 6000
    rebalance_timeout_ms: int = 10000
    heartbeat_s: float = 1.0
    synced: list[SyncedGeneration] = field(default_factory=list)
    error: BaseException | None = None

    def __post_init__(self) -> None:
        if self.host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError(f"RawGroupMember only talks to loopback, got {self.host!r}")
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._correlation = 0
        self._member_id = ""
        self._generation = -1
        self._sock: socket.socket | None = None
        self._thread = threading.Thread(target=self._run, name="raw-member", daemon=True)

    # -- transport -------------------------------------------------------------------------
    def _call(self, api_key: int, version: int, body: bytes, what: str) -> _Reader:
        assert self._sock is not None
        self._correlation += 1
        header = struct.pack(">hhi", api_key, version, self._correlation) + _string(
            _CLIENT_ID.decode()
        )
        payload = header + body
        self._sock.sendall(struct.pack(">i", len(payload)) + payload)
        (size,) = struct.unpack(">i", self._recv(4))
        reader = _Reader(self._recv(size), what)
        if reader.int32() != self._correlation:
            raise CodecError(what, f"correlation id {self._correlation}", 0)
        return reader

    def _recv(self, size: int) -> bytes:
        assert self._sock is not None
        chunks = bytearray()
        while len(chunks) < size:
            chunk = self._sock.recv(size - len(chunks))
            if not chunk:
                raise ConnectionError("broker closed the connection")
            chunks += chunk
        return bytes(chunks)

    # -- group protocol ------------------------------------------------------------------
    def _join(self) -> SyncedGeneration | None:
        """JoinGroup then SyncGroup; ``None`` when the broker asks to start over."""
        body = (
            _string(self.group_id)
            + struct.pack(">ii", self.session_timeout_ms, self.rebalance_timeout_ms)
            + _string(self._member_id)
            + _string("consumer")
            + struct.pack(">i", len(self.protocols))
            + b"".join(_string(name) + _bytes(meta) for name, meta in self.protocols)
        )
        reader = self._call(_JOIN_GROUP, 1, body, "JoinGroup v1 response")
        error = reader.int16()
        generation = reader.int32()
        reader.string()  # the group's protocol
        leader = reader.string()
        member_id = reader.string()
        members: list[str] = []
        for _ in range(max(reader.int32(), 0)):
            members.append(reader.string())
            reader.bytes()  # that member's metadata: this member never assigns
        if error == _MEMBER_ID_REQUIRED:
            self._member_id = member_id
            return None
        if error == _UNKNOWN_MEMBER_ID:
            self._member_id = ""
            return None
        if error:
            raise RuntimeError(f"JoinGroup failed with error {error}")
        self._member_id, self._generation = member_id, generation
        body = (
            _string(self.group_id)
            + struct.pack(">i", generation)
            + _string(member_id)
            + struct.pack(">i", 0)  # a follower's assignments (and ours as a leader: none)
        )
        reader = self._call(_SYNC_GROUP, 0, body, "SyncGroup v0 response")
        error = reader.int16()
        assignment = reader.bytes()
        if error in (_REBALANCE_IN_PROGRESS, _ILLEGAL_GENERATION, _UNKNOWN_MEMBER_ID):
            return None
        if error:
            raise RuntimeError(f"SyncGroup failed with error {error}")
        return SyncedGeneration(generation, leader == member_id, assignment, tuple(members))

    def _heartbeat(self) -> int:
        body = _string(self.group_id) + struct.pack(">i", self._generation)
        body += _string(self._member_id)
        return self._call(_HEARTBEAT, 0, body, "Heartbeat v0 response").int16()

    def _run(self) -> None:
        timeout = (self.rebalance_timeout_ms + self.session_timeout_ms) / 1000 + 5
        try:
            with socket.create_connection((self.host, self.port), timeout=timeout) as sock:
                self._sock = sock
                need_join = True
                while not self._stop.is_set():
                    if need_join:
                        synced = self._join()
                        if synced is not None:
                            with self._lock:
                                self.synced.append(synced)
                            need_join = False
                        continue
                    self._stop.wait(self.heartbeat_s)
                    error = self._heartbeat()
                    if error == _UNKNOWN_MEMBER_ID:
                        self._member_id = ""
                    need_join = error != 0
                if self._member_id:
                    body = _string(self.group_id) + _string(self._member_id)
                    self._call(_LEAVE_GROUP, 0, body, "LeaveGroup v0 response").int16()
        except BaseException as exc:  # surfaced by stop()
            self.error = exc
        finally:
            self._sock = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> RawGroupMember:
        self._thread.start()
        return self

    def generations(self) -> list[SyncedGeneration]:
        with self._lock:
            return list(self.synced)

    def wait_synced(self, count: int = 1, timeout_s: float = 60.0) -> list[SyncedGeneration]:
        """Block until ``count`` joins completed; raise ``TimeoutError`` otherwise."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.error is not None:
                raise AssertionError(f"raw member failed: {self.error!r}") from self.error
            done = self.generations()
            if len(done) >= count:
                return done
            time.sleep(0.1)
        raise TimeoutError(f"raw member completed {len(self.generations())} joins, not {count}")

    def stop(self, timeout_s: float = 30.0) -> None:
        """Leave the group and end the thread; raise what stopped it early, if anything."""
        self._stop.set()
        self._thread.join(timeout_s)
        if self.error is not None:
            raise AssertionError(f"raw member failed: {self.error!r}") from self.error
