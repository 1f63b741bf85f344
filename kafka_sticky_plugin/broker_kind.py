"""Which kind of broker answers, for the commands' one-line errors about a request the broker
does not serve (``migration-check``, ``conformance``).

The embedded Tansu broker names itself in its cluster id (``tansu_cluster``); any other
broker is named by its cluster id. The kind is only a hint in a message: reading it never
raises.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["broker_kind", "unserved_request"]


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
