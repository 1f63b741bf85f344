"""An unreachable bootstrap is said by this package once, early, in one line naming the
addresses (issue 39), without stopping the consumer: its client goes on trying by its own
rules. Real clients, a real closed loopback port (bound, then closed: nothing listens)."""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Callable
from typing import Any

import pytest

from kafka_sticky_plugin.bootstrap_check import BootstrapCheck, bootstrap_endpoints

pytestmark = pytest.mark.timeout(60)
SAID = "no bootstrap address answers"


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def _ours(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("kafka_sticky_plugin") and SAID in r.getMessage()
    ]


def _until_said(caplog: pytest.LogCaptureFixture, step: Callable[[], Any], limit_s: float) -> None:
    """Run ``step`` until our line is logged (``limit_s``: well under the clients' own
    bootstrap timeouts; a bound, not a figure)."""
    deadline = time.monotonic() + limit_s
    while not _ours(caplog) and time.monotonic() < deadline:
        step()


@pytest.mark.parametrize(
    ("servers", "endpoints"),
    [
        ("127.0.0.1:9092", [("127.0.0.1", 9092)]),
        ("a:1, b", [("a", 1), ("b", 9092)]),
        (["PLAINTEXT://h:2", "[::1]:3"], [("h", 2), ("::1", 3)]),
        ("h:notaport,,", []),
        (None, []),
    ],
)
def test_bootstrap_forms_are_read_and_unreadable_ones_skipped(
    servers: Any, endpoints: list[tuple[str, int]]
) -> None:
    assert bootstrap_endpoints(servers) == endpoints


def test_the_check_says_every_address_once_and_nothing_when_one_answers(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    check = BootstrapCheck("group g client c", f"127.0.0.1:{closed_port},127.0.0.1:{closed_port}")
    line = check.run()
    assert line is not None and line.startswith(
        f"group g client c: no bootstrap address answers: 127.0.0.1:{closed_port}"
        " (Connection refused), "
    )
    assert check.run() is None  # once per consumer
    assert _ours(caplog) == [line]
    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        port = listening.getsockname()[1]
        assert BootstrapCheck("group g", f"127.0.0.1:{closed_port},127.0.0.1:{port}").run() is None


def test_a_hooked_kafka_python_consumer_says_it_once_at_its_first_poll_and_keeps_trying(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """Given an api_version, kafka-python builds the consumer without bootstrapping; the
    client alone then retries in poll() with its own repeated lines and nothing of ours."""
    from kafka import KafkaConsumer

    from kafka_sticky_plugin.adapters.kafka_python.hooks.versions import detect_client

    client = detect_client()
    if client.distribution == "kafka-python-ng" or client.version.startswith("2.0."):
        pytest.skip("this client's poll() never returns without a coordinator (no timeout)")

    from kafka_sticky_plugin import CooperativeStickyAssignor
    from kafka_sticky_plugin.hooks import install_hooks

    consumer = KafkaConsumer(
        bootstrap_servers=f"127.0.0.1:{closed_port}",
        group_id="g-unreachable",
        client_id="c1",
        api_version=(2, 5, 0),
        partition_assignment_strategy=[CooperativeStickyAssignor],
    )
    try:
        install_hooks(consumer)
        consumer.subscribe(["t"])
        caplog.set_level(logging.WARNING)
        _until_said(caplog, lambda: consumer.poll(timeout_ms=200), limit_s=20)
        for _ in range(5):  # polls go on (the consumer is not stopped); nothing more is said
            consumer.poll(timeout_ms=200)
    finally:
        consumer.close()
    assert _ours(caplog) == [
        f"group g-unreachable client c1: no bootstrap address answers: 127.0.0.1:{closed_port}"
        " (Connection refused); check the address and that the broker runs. Nothing is"
        " stopped here: the client retries or gives up by its own rules (a broker that"
        " answers meanwhile is used)"
    ]


def test_a_confluent_consumer_says_it_once_at_its_first_poll_and_keeps_trying(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """librdkafka alone logs a connection error per attempt, none of ours."""
    pytest.importorskip("confluent_kafka")
    from kafka_sticky_plugin.confluent import create_consumer

    consumer = create_consumer(
        {
            "bootstrap.servers": f"127.0.0.1:{closed_port}",
            "group.id": "g-unreachable",
            "client.id": "c2",
            "partition.assignment.strategy": "cooperative-sticky",
            "log_level": 0,
        }
    )
    try:
        consumer.subscribe(["t"])
        caplog.set_level(logging.WARNING)
        _until_said(caplog, lambda: consumer.poll(0.2), limit_s=20)
        for _ in range(5):
            consumer.poll(0.2)
    finally:
        consumer.close()
    (said,) = _ours(caplog)
    assert said.startswith(
        f"group g-unreachable client c2: no bootstrap address answers: 127.0.0.1:{closed_port}"
        " (Connection refused);"
    )


def test_a_hooked_aiokafka_consumer_says_it_once_before_its_own_error(
    closed_port: int, caplog: pytest.LogCaptureFixture
) -> None:
    """aiokafka's ``start()`` raises at once (naming no group); ours comes first, once."""
    pytest.importorskip("aiokafka")
    import asyncio

    from aiokafka import AIOKafkaConsumer
    from aiokafka.errors import KafkaConnectionError

    from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor, install_hooks

    async def scenario() -> None:
        consumer = AIOKafkaConsumer(
            "t",
            bootstrap_servers=f"127.0.0.1:{closed_port}",
            group_id="g-unreachable",
            client_id="c3",
            partition_assignment_strategy=[CooperativeStickyAssignor],
        )
        install_hooks(consumer)
        try:
            with pytest.raises(KafkaConnectionError):
                await consumer.start()
        finally:
            await consumer.stop()

    caplog.set_level(logging.WARNING)
    asyncio.run(scenario())
    (said,) = _ours(caplog)
    assert said.startswith(
        f"group g-unreachable client c3: no bootstrap address answers: 127.0.0.1:{closed_port}"
        " (Connection refused);"
    )


def test_a_client_that_reached_its_cluster_within_the_grace_is_not_probed() -> None:
    """``start()`` waits ``GRACE_S``, then probes only a client still without its cluster:
    a listening socket sees no connection when ``reached`` says so, and one when not."""
    from kafka_sticky_plugin import bootstrap_check

    with socket.socket() as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        listening.settimeout(bootstrap_check.GRACE_S + 5.0)
        servers = f"127.0.0.1:{listening.getsockname()[1]}"

        reached = BootstrapCheck("group g", servers, reached=lambda: True)
        reached.start()
        reached.start()  # once per consumer, however often it polls
        listening.settimeout(bootstrap_check.GRACE_S + 1.0)
        with pytest.raises(TimeoutError):
            listening.accept()

        not_reached = BootstrapCheck("group g", servers, reached=lambda: False)
        not_reached.start()
        listening.settimeout(bootstrap_check.GRACE_S + 5.0)
        conn, _ = listening.accept()
        conn.close()
        assert not_reached.said is None  # it answered: nothing to say
