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

__all__ = ["AioReadReplicaRefresh", "needs_refresh_patch"]

log = logging.getLogger("kafka_sticky_plugin.aiokafka")


def needs_refresh_patch(fetcher: Any) -> bool:
    """The fetcher has aiokafka 0.14+'s KIP-392 shape (a preferred read replica cache and
    ``_select_read_replica``)."""
    return callable(getattr(fetcher, "_select_read_replica", None)) and isinstance(
        getattr(fetcher, "_preferred_read_replica", None), dict
    )


class AioReadReplicaRefresh:
    """The patch of one fetcher instance (see the module docstring).

    Invariant: the node chosen is the client's own choice; the patch only adds the metadata
    update request the client leaves out.
    """

    def __init__(self, fetcher: Any) -> None:
        self.fetcher = fetcher
        self._original = fetcher._select_read_replica
        #: how many times a stale preferred read replica asked for fresh metadata
        self.refreshes = 0

    def install(self) -> None:
        vars(self.fetcher)["_select_read_replica"] = self.select_read_replica

    def select_read_replica(self, tp: Any) -> Any:
        fetcher = self.fetcher
        cached = fetcher._preferred_read_replica.get(tp)
        if cached is not None:
            node_id, expires_at = cached
            client = fetcher._client
            if time.monotonic() < expires_at and client.cluster.broker_metadata(node_id) is None:
                self.refreshes += 1
                log.debug(
                    "preferred read replica %s of %s is not in this consumer's metadata:"
                    " requesting a metadata update",
                    node_id,
                    tp,
                )
                client.force_metadata_update()  # as the client's own fetcher calls it
        return self._original(tp)
