"""Topic administration for tests and the demo: unique names, create, grow, delete.

Every helper opens its own short-lived ``KafkaAdminClient`` and closes it: no client is
shared between tests. Names made by :func:`unique_name` carry a random suffix, so tests never
collide, and the embedded broker's "protocol fixed per group id forever" rule never leaks from
one test into the next.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..client_security import SecurityLike, kafka_python_settings

__all__ = [
    "admin_client",
    "create_topic",
    "delete_topic",
    "grow_topic",
    "partition_count",
    "unique_name",
]


def unique_name(prefix: str) -> str:
    """``prefix`` (made safe for a topic or group name) plus a random 8-hex-digit suffix."""
    safe = re.sub(r"[^A-Za-z0-9._-]+", "-", prefix).strip("-")[:150] or "x"
    return f"{safe}-{uuid.uuid4().hex[:8]}"


@contextmanager
def admin_client(bootstrap: str, security: SecurityLike = None) -> Iterator[Any]:
    """A ``KafkaAdminClient`` that is closed at the end of the block (``security``: see
    :mod:`..client_security`)."""
    from kafka import KafkaAdminClient

    client = KafkaAdminClient(
        bootstrap_servers=bootstrap, request_timeout_ms=15000, **kafka_python_settings(security)
    )
    try:
        yield client
    finally:
        client.close()


def partition_count(bootstrap: str, topic: str, security: SecurityLike = None) -> int:
    """How many partitions the cluster metadata lists for ``topic`` (0: unknown topic)."""
    with admin_client(bootstrap, security) as admin:
        described = admin.describe_topics([topic])
    for entry in described:
        if entry.get("name", entry.get("topic")) == topic and not entry.get("error_code"):
            return len(entry.get("partitions") or ())
    return 0


def _wait_for_count(
    bootstrap: str, topic: str, expected: int, timeout_s: float, security: SecurityLike = None
) -> None:
    deadline = time.monotonic() + timeout_s
    seen = -1
    while time.monotonic() < deadline:
        seen = partition_count(bootstrap, topic, security)
        if seen == expected:
            return
        time.sleep(0.1)
    raise TimeoutError(f"topic {topic!r} shows {seen} partitions, expected {expected}")


def create_topic(
    bootstrap: str,
    name: str,
    partitions: int,
    timeout_s: float = 15.0,
    replication: int = 1,
    security: SecurityLike = None,
) -> str:
    """Create ``name`` with ``partitions`` partitions (``replication`` replicas each); wait
    until visible."""
    from kafka.admin import NewTopic

    with admin_client(bootstrap, security) as admin:
        admin.create_topics([NewTopic(name, partitions, replication)])
    _wait_for_count(bootstrap, name, partitions, timeout_s, security)
    return name


def grow_topic(
    bootstrap: str,
    name: str,
    total_partitions: int,
    timeout_s: float = 15.0,
    security: SecurityLike = None,
) -> None:
    """CreatePartitions: raise ``name``'s partition count to ``total_partitions``.

    Raises what the client raises when the broker (or the client) refuses.
    """
    with admin_client(bootstrap, security) as admin:
        admin.create_partitions({name: total_partitions})
    _wait_for_count(bootstrap, name, total_partitions, timeout_s, security)


def delete_topic(bootstrap: str, name: str, security: SecurityLike = None) -> None:
    """Delete ``name``."""
    with admin_client(bootstrap, security) as admin:
        admin.delete_topics([name])
