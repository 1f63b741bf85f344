"""A readiness probe that speaks the Kafka protocol: one Metadata v0 request over a socket.

Used to decide that a broker is *ready* (it answered a real Metadata request and advertised at
least one broker), not merely that its port accepts connections. Needs no Kafka client.

Wire format (Kafka protocol, all big-endian):

- request: ``int32 size | int16 api_key=3 | int16 api_version=0 | int32 correlation_id |
  string client_id | array[string] topics`` (an empty array asks for every topic in v0);
- response: ``int32 size | int32 correlation_id | array[broker]`` where
  ``broker = int32 node_id | string host | int32 port``, then the topics, which are ignored.
"""

from __future__ import annotations

import socket
import struct
from dataclasses import dataclass

from ..errors import CodecError

__all__ = ["AdvertisedBroker", "metadata_brokers"]

_METADATA_API_KEY = 3
_CLIENT_ID = b"kafka-sticky-plugin-probe"


@dataclass(frozen=True)
class AdvertisedBroker:
    """One entry of a Metadata response's broker list."""

    node_id: int
    host: str
    port: int


def _encode_request(correlation_id: int) -> bytes:
    body = struct.pack(">hhih", _METADATA_API_KEY, 0, correlation_id, len(_CLIENT_ID))
    body += _CLIENT_ID + struct.pack(">i", 0)
    return struct.pack(">i", len(body)) + body


def _recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            raise ConnectionError(f"broker closed the connection after {len(chunks)}/{size} bytes")
        chunks += chunk
    return bytes(chunks)


def _decode_brokers(payload: bytes, correlation_id: int) -> list[AdvertisedBroker]:
    offset = 0

    def take(fmt: str, what: str) -> tuple[int, ...]:
        nonlocal offset
        size = struct.calcsize(fmt)
        if offset + size > len(payload):
            raise CodecError(what, f"{size} bytes", offset)
        values = struct.unpack_from(fmt, payload, offset)
        offset += size
        return values

    (got_correlation,) = take(">i", "metadata response correlation id")
    if got_correlation != correlation_id:
        raise CodecError("metadata response", f"correlation id {correlation_id}", 0)
    (count,) = take(">i", "metadata broker count")
    brokers: list[AdvertisedBroker] = []
    for _ in range(count):
        (node_id,) = take(">i", "broker node id")
        (host_len,) = take(">h", "broker host length")
        if host_len < 0 or offset + host_len > len(payload):
            raise CodecError("broker host", f"{host_len} bytes", offset)
        host = payload[offset : offset + host_len].decode("utf-8")
        offset += host_len
        (port,) = take(">i", "broker port")
        brokers.append(AdvertisedBroker(node_id=node_id, host=host, port=port))
    return brokers


def metadata_brokers(
    host: str, port: int, timeout_s: float = 2.0, correlation_id: int = 7
) -> list[AdvertisedBroker]:
    """Send one Metadata v0 request to ``host:port`` and return the advertised brokers.

    Raises ``OSError`` (connection refused, timeout) while the broker is not listening, and
    :class:`~kafka_sticky_plugin.errors.CodecError` if the reply is not a Metadata response.
    """
    with socket.create_connection((host, port), timeout=timeout_s) as sock:
        sock.sendall(_encode_request(correlation_id))
        (size,) = struct.unpack(">i", _recv_exact(sock, 4))
        if size < 8 or size > 64 * 1024 * 1024:
            raise CodecError("metadata response", "a size between 8 bytes and 64 MiB", 0)
        return _decode_brokers(_recv_exact(sock, size), correlation_id)
