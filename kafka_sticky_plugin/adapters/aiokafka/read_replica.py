"""Fetching from the closest replica (KIP-392) through broker restarts: aiokafka 0.14 and 0.15.

``Fetcher._select_read_replica`` (aiokafka 0.14, 0.15.0rc1) uses the cached preferred read
replica (named by the partition leader for a consumer with ``client_rack``) only while that
broker is in the consumer's metadata; otherwise it drops the cache and fetches from the leader,
which names the same replica again. Right after that broker restarts, the consumer's metadata
(refreshed every ``metadata_max_age_ms``, 5 minutes by default) still lacks it, and nothing
asks for a refresh: the partition is fetched in a loop that returns no records until the
periodic refresh (seen on Apache Kafka 4.4: records left unread for more than a minute after a
bounce). Java asks for fresh metadata at that point (``AbstractFetch.selectReadReplica``,
KAFKA-14379); :class:`AioReadReplicaRefresh` does the same on the one consumer's fetcher
*instance*, then the client's own method decides (unchanged choice). aiokafka 0.13 has no
KIP-392 fetching: nothing to patch there. The upstream report is in ``docs/racks.md``.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ...assignor.read_replica import ReadReplicaPatch

__all__ = ["AioReadReplicaRefresh", "needs_refresh_patch"]


def needs_refresh_patch(fetcher: Any) -> bool:
    """The fetcher has aiokafka 0.14+'s KIP-392 shape (a preferred read replica cache and
    ``_select_read_replica``)."""
    return callable(getattr(fetcher, "_select_read_replica", None)) and isinstance(
        getattr(fetcher, "_preferred_read_replica", None), dict
    )


class AioReadReplicaRefresh(ReadReplicaPatch):
    """The patch of one aiokafka fetcher instance (see the module docstring and
    :class:`~kafka_sticky_plugin.assignor.read_replica.ReadReplicaPatch`)."""

    log = logging.getLogger("kafka_sticky_plugin.aiokafka")

    def stale_replica(self, tp: Any) -> Any | None:
        cached = self.fetcher._preferred_read_replica.get(tp)
        if cached is None:
            return None
        node_id, expires_at = cached
        unknown = self.fetcher._client.cluster.broker_metadata(node_id) is None
        return node_id if time.monotonic() < expires_at and unknown else None

    def request_update(self) -> None:
        self.fetcher._client.force_metadata_update()
