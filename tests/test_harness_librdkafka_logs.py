"""A confluent member with ``debug_logs`` hands librdkafka's own lines to the Python logger
``librdkafka``, its configuration dump among them, and librdkafka leaves the SASL password
out of it (the security tier's scan relies on both). No broker: the consumer points at a
closed loopback port and is polled for a moment."""

from __future__ import annotations

import logging
import secrets
import socket
import time

import pytest

from kafka_sticky_plugin.client_security import ClientSecurity, confluent_settings
from kafka_sticky_plugin.groups.confluent_member import _log_settings
from kafka_sticky_plugin.groups.member_config import LIBRDKAFKA_LOGGER, MemberConfig

confluent_kafka = pytest.importorskip("confluent_kafka")


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
    return port


@pytest.mark.parametrize("debug_logs", [True, False])
def test_librdkafka_lines_reach_the_logger_without_the_password(
    debug_logs: bool, caplog: pytest.LogCaptureFixture
) -> None:
    password = secrets.token_hex(16)
    bootstrap = f"127.0.0.1:{_closed_port()}"
    config = MemberConfig(bootstrap, "g", ("t",), "m0", debug_logs=debug_logs)
    security = ClientSecurity("SASL_PLAINTEXT", username="alice", password=password)
    caplog.set_level(logging.DEBUG, logger=LIBRDKAFKA_LOGGER)
    consumer = confluent_kafka.Consumer(
        {
            "bootstrap.servers": bootstrap,
            "group.id": "g",
            "client.id": "m0-0",
            **_log_settings(config),
            **confluent_settings(security),
        }
    )
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            consumer.poll(0.1)
    finally:
        consumer.close()
    lines = [r.getMessage() for r in caplog.records if r.name == LIBRDKAFKA_LOGGER]
    if not debug_logs:
        assert lines == []  # errors go to stderr, as before
        return
    print(f"{len(lines)} librdkafka lines in 1.5 s against a closed port")
    assert len(lines) >= 10
    dump = [line for line in lines if "sasl.password" in line or "sasl.username" in line]
    assert dump, "the conf context's configuration dump is not among the lines"
    assert not [line for line in lines if password in line]
