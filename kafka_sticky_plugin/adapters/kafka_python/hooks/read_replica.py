"""Fetching from the closest replica (KIP-392) through broker restarts: kafka-python 3.0.x.

A consumer with ``client_rack`` sends its rack in every Fetch; a broker with
``replica.selector.class=...RackAwareReplicaSelector`` then answers a fetch sent to the
partition leader with no records and the *preferred read replica* (a broker on the
consumer's rack). kafka-python 3.0.x (3.0.9 to 3.0.12 at least) caches that replica and, in
``Fetcher._select_read_replica``, uses it only while ``ClusterMetadata.is_replica_node`` says
it is a replica in the consumer's metadata. Right after that broker restarts, the consumer's
metadata (refreshed every ``metadata_max_age_ms``, 5 minutes by default) still lacks it: the
fetcher clears the cache and fetches from the leader, the leader names the same replica again,
the fetcher clears it again... the partition is fetched in a loop that returns no records
until the next metadata refresh, which nothing requests. Java asks for fresh metadata at that
point (``AbstractFetch.selectReadReplica``, KAFKA-14379); :class:`ReadReplicaRefresh` does the
same on the one consumer's fetcher *instance*: when the cached preferred replica is unknown or
no longer a replica in the metadata, a metadata update is requested, then the client's own
method decides (it clears the cache and answers the leader, as before).

kafka-python 2.x has no ``client_rack`` (no KIP-392 fetching): nothing to patch there.
The upstream report is in ``docs/racks.md``.
"""

from __future__ import annotations

import logging
from typing import Any

from ....assignor.read_replica import ReadReplicaPatch

__all__ = ["ReadReplicaRefresh", "needs_refresh_patch"]


def needs_refresh_patch(fetcher: Any) -> bool:
    """The fetcher has the 3.0.x shape this patch is written for: ``_select_read_replica``
    and a ``_manager.cluster`` with ``is_replica_node`` (kafka-python 3.0.9 and later)."""
    manager = getattr(fetcher, "_manager", None)
    cluster = getattr(manager, "cluster", None)
    return callable(getattr(fetcher, "_select_read_replica", None)) and callable(
        getattr(cluster, "is_replica_node", None)
    )


class ReadReplicaRefresh(ReadReplicaPatch):
    """The patch of one kafka-python fetcher instance (see the module docstring and
    :class:`~kafka_sticky_plugin.assignor.read_replica.ReadReplicaPatch`)."""

    log = logging.getLogger("kafka_sticky_plugin.hooks")

    def stale_replica(self, tp: Any) -> Any | None:
        state = self.fetcher._subscriptions.assignment.get(tp)
        preferred = state.preferred_read_replica() if state is not None else None
        if preferred is None or self.fetcher._manager.cluster.is_replica_node(tp, preferred):
            return None
        return preferred

    def request_update(self) -> None:
        self.fetcher._manager.cluster.request_update()
