"""A genuine Java member hands its partitions over to a hooked member of this matrix row.

The Java interop tests (``integration_tests/test_java_interop.py``) run kafka-python 3.0 (the
``v3`` hook family) next to the Java client; this file gives the ``v2`` family (kafka-python
2.0.2, 2.2, 2.3 and kafka-python-ng, one matrix row each) the same migration step: a group of
one Java ``KafkaConsumer`` (kafka-clients 4.4.0 on Apache Kafka, 3.9.2 on the embedded broker,
which 4.4.0 cannot talk to) is joined by a hooked kafka-python member, which gets half the
partitions while the Java member keeps the other half; then the Java member leaves and the
kafka-python member takes the rest while keeping its half (stickiness across the change).
Throughout: never one partition owned by both (cooperative), and no WARN/ERROR from the Java
client's assignor. Skipped on 3.x rows (the interop file covers them).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import kafka
import pytest

from kafka_sticky_plugin import CooperativeStickyAssignor, StickyAssignor
from kafka_sticky_plugin.groups.analysis import current_ownership
from kafka_sticky_plugin.groups.events import EventLog, Partition, member_key
from kafka_sticky_plugin.groups.member_config import MemberConfig
from testlab.java_member import (
    ASSIGNOR_LOGGERS,
    JAVA_CLIENT_VERSIONS,
    JavaProcessMember,
    java_tools_missing,
    log_problems,
)

pytestmark = [
    pytest.mark.skipif(
        kafka.__version__.startswith("3."), reason="the v3 family meets Java in test_java_interop"
    ),
    pytest.mark.timeout(180),
]

PARTITIONS = 4


def _wait(what: str, condition: Callable[[], bool], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting until {what}"
        time.sleep(0.2)


@pytest.mark.parametrize("strategy", ["cooperative-sticky", "sticky"])
def test_java_member_hands_over_to_a_hooked_member(
    group: Any, broker: Any, strategy: str, tmp_path: Path
) -> None:
    reason = java_tools_missing()
    if reason is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true but the Java member cannot run: {reason}")
        pytest.skip(reason)
    newest, older = JAVA_CLIENT_VERSIONS
    version = older if broker.profile.name == "tansu" else newest
    assignor = CooperativeStickyAssignor if strategy == "cooperative-sticky" else StickyAssignor
    g = group({"t": PARTITIONS})
    everything = frozenset(g.all_partitions())
    log = EventLog()
    java_log = tmp_path / "java.log"
    config = MemberConfig(
        bootstrap=broker.bootstrap,
        group_id=g.group_id,
        topics=tuple(g.partitions),
        member="java",
        assignors=(strategy,),
        client=f"java-{version}",
    )
    java = JavaProcessMember(config, log, java_log)
    key = member_key("java", 0)

    def java_owns() -> frozenset[Partition]:
        return frozenset(current_ownership(log.events()).get(key, ()))

    java.start()
    try:
        _wait("the Java member owns every partition", lambda: java_owns() == everything)
        python = g.member("py", strategy=[assignor])

        def split() -> bool:
            mine, theirs = python.snapshot(), java_owns()
            return len(mine) == len(theirs) == PARTITIONS // 2 and mine | theirs == everything

        _wait("the group is split half and half", split, 90)
        python_half = python.snapshot()
        java.stop()
        _wait(
            "the kafka-python member owns every partition", lambda: python.snapshot() == everything
        )
        assert python_half <= python.snapshot()
        if strategy == "cooperative-sticky":
            revoked = {p for e in python.events if e.kind == "revoked" for p in e.partitions}
            assert not revoked & python_half, f"kept partitions were revoked: {revoked}"
        problems = [
            line
            for line in log_problems([java_log])
            if any(name in line.logger for name in ASSIGNOR_LOGGERS)
        ]
        assert not problems, problems[:3]
        assert java_log.is_file(), "the Java member wrote no log"
    finally:
        java.stop()
