"""A hooked aiokafka member refused one of its own topics, without a broker (real aiokafka
metadata responses on a stopped coordinator): the topic is left out of JoinGroup, said once,
a rejoin is requested, and the topic comes back when a Metadata response lists it again. The
real-broker side: ``integration_tests/security/test_security_acl_aiokafka.py``."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest
from aio_support import Recorder, close, consumer, coordinator_for, metadata_response
from aiokafka.protocol.metadata import MetadataResponse_v1

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, install_hooks
from kafka_sticky_plugin.codec import decode_subscription

TOPIC_AUTHORIZATION_FAILED = 29


def refusing(partitions: dict[str, int], refused: str) -> MetadataResponse_v1:
    """``partitions`` as :func:`metadata_response` gives them, plus ``refused`` answered
    TOPIC_AUTHORIZATION_FAILED."""
    ok = metadata_response(partitions)
    topics = [*ok.topics, (TOPIC_AUTHORIZATION_FAILED, refused, False, [])]
    return MetadataResponse_v1(ok.brokers, ok.controller_id, topics)


def joined_topics(hooks: Any, topics: set[str]) -> tuple[str, ...]:
    return tuple(sorted(decode_subscription(hooks.group_protocols(topics)[0][1]).topics))


def test_a_refused_own_topic_is_left_out_until_granted(caplog: pytest.LogCaptureFixture) -> None:
    async def scenario() -> None:
        c = consumer(partition_assignment_strategy=[CooperativeStickyAssignor])
        hooks = install_hooks(c)._impl
        c.subscribe(["mine", "hidden"], listener=Recorder())
        coordinator = await coordinator_for(c)
        cluster = c._client.cluster
        subscribed = set(c._subscription.topics)
        assert joined_topics(hooks, subscribed) == ("hidden", "mine")
        coordinator._rejoin_needed_fut = asyncio.get_running_loop().create_future()
        with caplog.at_level(logging.INFO, logger="kafka_sticky_plugin.aiokafka"):
            for _ in range(3):  # the refusal repeats at every refresh: said once
                cluster.update_metadata(refusing({"mine": 2}, "hidden"))
            assert hooks.topic_authorization.refused_own == {"hidden"}
            assert coordinator._rejoin_needed_fut.done(), "the group must hear the new topics"
            assert joined_topics(hooks, subscribed) == ("mine",)
            assert not hooks.topic_authorization.stale()
            cluster.update_metadata(metadata_response({"mine": 2, "hidden": 1}))
            assert hooks.topic_authorization.stale(), "granted during the join: rejoin after it"
            assert joined_topics(hooks, subscribed) == ("hidden", "mine")
        said = [r.getMessage() for r in caplog.records if r.name == "kafka_sticky_plugin.aiokafka"]
        refused = [m for m in said if "not authorized to describe subscribed topic(s)" in m]
        assert len(refused) == 1 and "'hidden'" in refused[0], said
        assert sum("authorized again" in m for m in said) == 1, said
        await close(c)

    asyncio.run(scenario())


def test_a_member_refused_every_topic_still_joins_with_its_subscription() -> None:
    async def scenario() -> None:
        c = consumer(partition_assignment_strategy=[CooperativeStickyAssignor])
        hooks = install_hooks(c)._impl
        c.subscribe(["hidden"], listener=Recorder())
        await coordinator_for(c)
        c._client.cluster.update_metadata(refusing({}, "hidden"))
        assert hooks.topic_authorization.refused_own == {"hidden"}
        assert joined_topics(hooks, {"hidden"}) == ("hidden",)
        await close(c)

    asyncio.run(scenario())


def test_start_waits_for_every_topic_and_does_not_fail_on_a_refused_one() -> None:
    """aiokafka's ``start()`` raised TopicAuthorizationFailedError for a constructor topic
    the consumer may not describe; hooked, it waits for the others and goes on."""
    import aiokafka.errors as errors

    async def scenario() -> None:
        c = consumer("mine", "hidden", partition_assignment_strategy=[CooperativeStickyAssignor])
        install_hooks(c)
        waited: list[str] = []

        async def wait_on_metadata(topic: str) -> set[int]:
            waited.append(topic)
            if topic == "hidden":
                raise errors.TopicAuthorizationFailedError(topic)
            return {0}

        c._client._wait_on_metadata = wait_on_metadata
        await c._wait_topics()
        assert sorted(waited) == ["hidden", "mine"]
        unhooked = type(c)._kafka_sticky_plugin_unhooked
        with pytest.raises(errors.TopicAuthorizationFailedError):
            await unhooked._wait_topics(c)  # the client alone
        await c.stop()

    asyncio.run(scenario())
