"""KIP-848 beside a hooked member of the v2 family (kafka-python 2.0.2, 2.2, 2.3,
kafka-python-ng; one matrix row each), on Apache Kafka: a classic cooperative-sticky group of
one hooked member is joined by a Java 4.4 ``KafkaConsumer`` with ``group.protocol=consumer``
(the broker converts the group and assigns both; the hooked member stays classic), then the
Java member leaves (the group converts back) and the hooked member owns everything again,
having kept its half throughout. And a refused classic member (INCONSISTENT_GROUP_PROTOCOL)
gets one WARNING line from the hooks saying what to change. The v3 family does the same in
``integration_tests/kip848``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kafka
import pytest

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.groups.analysis import current_ownership
from kafka_sticky_plugin.groups.events import EventLog, Partition, member_key
from kafka_sticky_plugin.groups.member_config import MemberConfig
from testlab.java_member import (
    JAVA_CLIENT_VERSIONS,
    JavaProcessMember,
    java_tools_missing,
)

pytestmark = [
    pytest.mark.skipif(
        kafka.__version__.startswith("3."), reason="v3: see integration_tests/kip848"
    ),
    pytest.mark.timeout(180),
]

PARTITIONS = 4


def _wait(what: str, condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


def test_a_kip848_java_member_joins_and_leaves_a_hooked_group(
    group: Any, broker: Any, tmp_path: Path
) -> None:
    if broker.profile.name == "tansu":
        pytest.skip("KIP-848 migrations are Apache Kafka behaviour")
    reason = java_tools_missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the Java member cannot run: {reason}")
        pytest.skip(reason)
    g = group({"t": PARTITIONS})
    everything = frozenset(g.all_partitions())
    python = g.member("py", strategy=[CooperativeStickyAssignor])
    _wait("the hooked member owns every partition", lambda: python.snapshot() == everything)
    log = EventLog()
    config = MemberConfig(
        bootstrap=broker.bootstrap,
        group_id=g.group_id,
        topics=tuple(g.partitions),
        member="java",
        client=f"java-{JAVA_CLIENT_VERSIONS[0]}",
        group_protocol="consumer",
    )
    java = JavaProcessMember(config, log, tmp_path / "java.log")
    key = member_key("java", 0)

    def java_owns() -> frozenset[Partition]:
        return frozenset(current_ownership(log.events()).get(key, ()))

    java.start()
    try:

        def split() -> bool:
            mine, theirs = python.snapshot(), java_owns()
            return len(mine) == len(theirs) == PARTITIONS // 2 and mine | theirs == everything

        _wait("the converted group is split half and half", split, 90)
        python_half = python.snapshot()
        java.stop()
        _wait(
            "the hooked member owns every partition again", lambda: python.snapshot() == everything
        )
        assert python_half <= python.snapshot()
        revoked = {p for e in python.events if e.kind == "revoked" for p in e.partitions}
        assert revoked <= everything - python_half, f"kept partitions were revoked: {revoked}"
    finally:
        java.stop()


def test_a_refused_classic_member_says_what_to_change_in_one_line(
    group: Any, broker: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """INCONSISTENT_GROUP_PROTOCOL (here: the group's member offers only ``range``, ours only
    ``cooperative-sticky``; a KIP-848 group whose policy refuses classic members answers the
    same) is one WARNING line from the hooks, as on 3.0, and still fails the join."""
    if broker.profile.name == "tansu":
        pytest.skip("Apache Kafka's answer is the one checked")
    import logging

    from kafka.coordinator.assignors.range import RangePartitionAssignor

    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    g = group({"t": 2}, produce=False)
    everything = frozenset(g.all_partitions())
    plain = g.member("range", strategy=[RangePartitionAssignor], hooks=False)
    _wait("the range member owns every partition", lambda: plain.snapshot() == everything)
    ours = g.member("ours")
    _wait("the hooked member is refused", lambda: ours.error is not None, timeout_s=30)
    refused, ours.error = ours.error, None  # expected: not a failure at teardown
    assert "InconsistentGroupProtocol" in type(refused).__name__, repr(refused)
    lines = [
        r.getMessage()
        for r in caplog.records
        if r.name.startswith("kafka_sticky_plugin")
        and "INCONSISTENT_GROUP_PROTOCOL" in r.getMessage()
    ]
    print(lines)
    assert len(lines) == 1 and "cooperative-sticky" in lines[0], lines
    assert plain.snapshot() == everything  # the group went on
