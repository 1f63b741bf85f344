"""Whether a broker answers at all, and which kind, for the commands' one-line errors: an
address nobody listens on, said at once (``migration-check``, ``conformance``, ``demo
--bootstrap``), and a request the broker does not serve (``migration-check``,
``conformance``).

The embedded Tansu broker names itself in its cluster id (``tansu_cluster``); any other
broker is named by its cluster id. The kind is only a hint in a message: reading it never
raises.
"""

from __future__ import annotations

import re
import socket
from collections.abc import Sequence
from typing import Any

__all__ = ["broker_kind", "refusals", "unreachable", "unserved_request"]


def refusals(
    endpoints: Sequence[tuple[str, int]], timeout_s: float = 5.0
) -> list[tuple[str, int, str]] | None:
    """None when one of ``endpoints`` accepts a TCP connection (the ones after it are not
    tried), else every address with why it did not (``Connection refused``, ``timed out``)."""
    failed: list[tuple[str, int, str]] = []
    for host, port in endpoints:
        try:
            socket.create_connection((host, port), timeout=timeout_s).close()
        except OSError as exc:
            failed.append((host, port, exc.strerror or str(exc) or type(exc).__name__))
        else:
            return None
    return failed


def unreachable(endpoints: Sequence[tuple[str, int]], timeout_s: float = 5.0) -> str | None:
    """None when one of ``endpoints`` accepts a TCP connection, else why the last did not
    (``Connection refused``): said at once, not after a client's bootstrap timeout."""
    failed = refusals(endpoints, timeout_s)
    if failed is None:
        return None
    return failed[-1][2] if failed else "no address"


def broker_kind(admin: Any) -> str:
    """``Tansu (cluster id tansu_cluster)`` or ``a Kafka broker (cluster id X)``, read with a
    kafka-python ``KafkaAdminClient``."""
    try:
        cluster_id = str(admin.describe_cluster().get("cluster_id") or "")
    except Exception:  # a hint only: never fail on it
        cluster_id = ""
    if cluster_id.lower().startswith("tansu"):
        return f"Tansu (cluster id {cluster_id})"
    return f"a Kafka broker (cluster id {cluster_id or 'unknown'})"


_NOT_SUPPORTED = re.compile(r"does not support the '(\w+?)(?:Request)?' Kafka protocol")


def unserved_request(exc: BaseException) -> str | None:
    """The request kafka-python refused to send because the broker does not advertise it
    (``IncompatibleBrokerVersion``: "CreatePartitions"), else None."""
    found = _NOT_SUPPORTED.search(str(exc))
    return found.group(1) if found else None
