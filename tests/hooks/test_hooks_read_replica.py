"""Closest-replica fetching (KIP-392) after a broker restart: kafka-python 3.0.x alone never
asks for fresh metadata when the preferred read replica its partition leader names is missing
from its metadata, so it fetches from the leader, is sent back to that replica, and loops
without records until the next periodic refresh; the hooks' fetcher patch
(:mod:`kafka_sticky_plugin.adapters.kafka_python.hooks.read_replica`) requests the update, as
Java does (KAFKA-14379).

A real ``KafkaConsumer`` (``client_rack`` set, no broker) builds its fetch requests from its
real ``ClusterMetadata``, fed a real Metadata response in which broker 2 (just restarted) is
absent, while its partition state caches broker 2 as the preferred read replica (what the
leader's fetch response set). The client-alone test is ``xfail(strict=True)``: it passes (and
so fails the suite) the day kafka-python fixes this, which is the signal to drop the patch.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from hooks_support import IS_V3, make_consumer
from kafka.structs import TopicPartition
from test_hooks_rack_changes import metadata_response

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.adapters.kafka_python.hooks.read_replica import needs_refresh_patch
from kafka_sticky_plugin.hooks import install_hooks

TP = TopicPartition("t", 0)
ONLINE = {1: "r0", 3: "r2"}  # broker 2 (rack r1) is restarting: absent from this metadata
PLACED = {0: [1, 2, 3]}


@pytest.fixture
def consumer() -> Iterator[Any]:
    if not IS_V3:
        pytest.skip("kafka-python 2.x has no client_rack: no closest-replica fetching")
    consumer = make_consumer([CooperativeStickyAssignor], client_rack="r1")
    yield consumer
    consumer.close()


def fetch_once_after_restart(consumer: Any) -> tuple[set[int], bool]:
    """The nodes the next fetch goes to, and whether a metadata update was requested."""
    cluster = consumer._fetcher._manager.cluster
    cluster.update_metadata(metadata_response(ONLINE, PLACED))
    consumer.assign([TP])
    consumer._subscription.seek(TP, 0)
    state = consumer._subscription.assignment[TP]
    state.update_preferred_read_replica(2, time.monotonic() + 300)  # the leader named 2
    cluster._need_update = False
    requests = consumer._fetcher._create_fetch_requests()
    return set(requests), bool(cluster._need_update)


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="kafka-python 3.0.x: a preferred read replica missing from the metadata does not"
    " request a metadata update (upstream report in docs/racks.md)",
)
def test_the_client_alone_asks_for_fresh_metadata(consumer: Any) -> None:
    nodes, requested = fetch_once_after_restart(consumer)
    assert nodes == {1}  # the leader, as before
    assert requested


def test_the_hooked_client_asks_for_fresh_metadata(consumer: Any) -> None:
    hooks = install_hooks(consumer)
    nodes, requested = fetch_once_after_restart(consumer)
    assert nodes == {1}  # the node chosen is the client's own choice
    assert requested
    assert hooks._impl.read_replica.refreshes == 1


def test_the_patch_is_gone_after_uninstall(consumer: Any) -> None:
    hooks = install_hooks(consumer)
    assert needs_refresh_patch(consumer._fetcher)
    hooks.uninstall()
    assert "_select_read_replica" not in vars(consumer._fetcher)
