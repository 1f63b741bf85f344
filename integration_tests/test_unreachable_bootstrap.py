"""A kafka-python group member started before its broker answers (issue 39): one line of
ours at once naming the address, and the member is not stopped: when the address starts
answering while the client still tries, the member joins and gets its partitions.

The address is a real closed loopback port; "the broker comes up" is a plain TCP relay to the
session's broker opening on that port after our line (the client bootstraps through it, then
talks to the broker's advertised address). Without the check the member says nothing of ours
(kafka-python 3.0 waits in its constructor, up to 30 s). About 5 s.
"""

from __future__ import annotations

import contextlib
import logging
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from kafka_sticky_plugin.groups.events import EventLog
from kafka_sticky_plugin.groups.kafka_python_member import consume_loop
from kafka_sticky_plugin.groups.member_config import LoopControl, MemberConfig

SAID = "no bootstrap address answers"


def _pump(source: socket.socket, target: socket.socket) -> None:
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            target.sendall(data)
    for sock in (source, target):
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


@contextlib.contextmanager
def _relay(port: int, to: tuple[str, int]) -> Iterator[None]:
    """Listen on 127.0.0.1:``port`` and relay every connection to ``to`` until closed."""
    server = socket.create_server(("127.0.0.1", port))
    opened: list[socket.socket] = [server]

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                client, _ = server.accept()
                upstream = socket.create_connection(to)
                opened.extend((client, upstream))
                for a, b in ((client, upstream), (upstream, client)):
                    threading.Thread(target=_pump, args=(a, b), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield
    finally:
        for sock in opened:
            sock.close()


@pytest.mark.timeout(90)
def test_a_member_before_its_broker_says_so_once_then_joins(
    broker: Any, topic_factory: Any, caplog: pytest.LogCaptureFixture
) -> None:
    import kafka

    if int(kafka.__version__.split(".")[0]) < 3:
        pytest.skip("kafka-python 2.x gives up bootstrapping in its constructor after 2 s")
    topic = topic_factory(2)
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    host, broker_port = broker.bootstrap.split(",")[0].rsplit(":", 1)
    config = MemberConfig(
        bootstrap=f"127.0.0.1:{port}", group_id=f"g-early-{port}", topics=(topic,), member="m1"
    )
    log, stop = EventLog(), threading.Event()
    member = threading.Thread(
        target=consume_loop, args=(config, log, LoopControl(should_stop=stop.is_set)), daemon=True
    )

    def said() -> list[str]:
        return [r.getMessage() for r in caplog.records if SAID in r.getMessage()]

    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    member.start()
    try:
        deadline = time.monotonic() + 20  # a bound under the client's own 30 s, not a figure
        while not said() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert said(), "nothing of ours said while the client was still trying"
        assert member.is_alive(), "the member stopped"
        with _relay(port, (host, int(broker_port))):
            deadline = time.monotonic() + 45
            while time.monotonic() < deadline and not any(
                e.kind == "assigned" and e.partitions for e in log.events()
            ):
                time.sleep(0.1)
            stop.set()
            member.join(30)
    finally:
        stop.set()
    assigned = {p for e in log.events() if e.kind == "assigned" for p in e.partitions}
    assert assigned == {(topic, 0), (topic, 1)}, log.events()
    assert said() == [
        f"group g-early-{port} client m1-0: no bootstrap address answers: 127.0.0.1:{port}"
        " (Connection refused); check the address and that the broker runs. Nothing is"
        " stopped here: the client retries or gives up by its own rules (a broker that"
        " answers meanwhile is used)"
    ]
