"""Issue 24 on the real broker: our assignor *class* given to aiokafka without install_hooks
fails with the one clear line (pass an instance, or install the hooks), not with aiokafka's
``TypeError: metadata() missing 1 required positional argument`` on every getmany(). aiokafka
wraps it in its ``KafkaError("Unexpected error during coordination ...")`` and logs its own
traceback: the first moment our code runs is inside aiokafka's coordination task."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from aiokafka import AIOKafkaConsumer
from hooks_harness import create_topics, unique

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.errors import ConfigurationError


@pytest.mark.timeout(90)
@pytest.mark.parametrize("cls", [StickyAssignor, CooperativeStickyAssignor])
def test_a_class_without_the_hooks_fails_with_one_clear_line(broker: Any, cls: Any) -> None:
    topic = unique("t-misuse")
    create_topics(broker.bootstrap, {topic: 2})

    async def scenario() -> BaseException | None:
        consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=broker.bootstrap,
            group_id=unique("g-misuse"),
            partition_assignment_strategy=[cls],
        )
        caught: BaseException | None = None
        coordinator = None
        try:
            await consumer.start()
            coordinator = consumer._coordinator
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                await consumer.getmany(timeout_ms=200)
        except Exception as exc:  # what the user sees
            caught = exc
        finally:
            coordinator = coordinator or consumer._coordinator
            await consumer.stop()
        # aiokafka's finished coordination task holds the error too: retrieve it, or its
        # "never retrieved" line is logged at garbage collection, inside whatever runs then.
        task = getattr(coordinator, "_coordination_task", None)
        if task is not None and task.done() and not task.cancelled():
            task.exception()
        return caught

    caught = asyncio.run(scenario())
    print(f"caught: {caught!r}")
    assert caught is not None, "a class without the hooks consumed for 30 s"
    # aiokafka wraps whatever its coordination task raised in KafkaError("Unexpected error
    # during coordination <repr>"); ours is the repr inside, where the TypeError used to be.
    assert isinstance(caught, ConfigurationError) or "ConfigurationError(" in str(caught)
    assert f"pass {cls.__name__}() (an instance)" in str(caught), repr(caught)
    assert "TypeError" not in str(caught)
