"""The closest-replica fetch fix (KIP-392) both Python clients need, without a client.

kafka-python 3.0.x and aiokafka 0.14+ cache the *preferred read replica* a partition leader
names for a consumer with ``client_rack``, and use it only while that broker is in the
consumer's metadata; otherwise they drop the cache and fetch from the leader, which names
the same replica again. Right after that broker restarts, the metadata (refreshed every
``metadata_max_age_ms``, 5 minutes by default) still lacks it and nothing asks for a refresh:
the partition is fetched in a loop that returns no records. Java asks for fresh metadata at
that point (``AbstractFetch.selectReadReplica``, KAFKA-14379). :class:`ReadReplicaPatch`
does the same on one consumer's fetcher *instance*; each adapter's subclass says how its
client finds a stale cached replica and how it asks for a metadata update
(``adapters/kafka_python/hooks/read_replica.py``, ``adapters/aiokafka/read_replica.py``).
"""

from __future__ import annotations

import logging
from typing import Any

__all__ = ["ReadReplicaPatch"]


class ReadReplicaPatch:
    """The patch of one fetcher instance's ``_select_read_replica`` (see the module
    docstring).

    Invariant: the node chosen is the client's own choice (its own ``_select_read_replica``
    answers); the patch only adds the metadata update request the client leaves out.
    """

    #: Where a requested metadata update is logged (DEBUG); each adapter names its own.
    log = logging.getLogger("kafka_sticky_plugin")

    def __init__(self, fetcher: Any) -> None:
        self.fetcher = fetcher
        self._original = fetcher._select_read_replica
        #: how many times a stale preferred read replica asked for fresh metadata
        self.refreshes = 0

    def install(self) -> None:
        vars(self.fetcher)["_select_read_replica"] = self.select_read_replica

    def uninstall(self) -> None:
        if vars(self.fetcher).get("_select_read_replica") == self.select_read_replica:
            del vars(self.fetcher)["_select_read_replica"]

    def stale_replica(self, tp: Any) -> Any | None:
        """The cached preferred read replica of ``tp`` the client is about to drop because
        its metadata does not know it (``None``: nothing cached, or a known replica)."""
        raise NotImplementedError

    def request_update(self) -> None:
        """Ask the client for fresh metadata, as its own fetcher does."""
        raise NotImplementedError

    def select_read_replica(self, tp: Any) -> Any:
        stale = self.stale_replica(tp)
        if stale is not None:
            self.refreshes += 1
            self.log.debug(
                "preferred read replica %s of %s is not in this consumer's metadata:"
                " requesting a metadata update",
                stale,
                tp,
            )
            self.request_update()
        return self._original(tp)
