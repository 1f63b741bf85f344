"""Several Java members in one JVM (issue 38: hundreds of Java members on 2 cores), on the
session's broker.

Two JVMs (``kafkasticky.JavaMemberPack``, :func:`testlab.java_member.java_pack_command`) of
two genuine kafka-clients 4.4.0 ``KafkaConsumer`` members each, each consumer a thread of its
own, ``CooperativeStickyAssignor``, 8 partitions produced to throughout. The scenario: all
four join and the group becomes stable; one member is restarted (a clean close, then a new
incarnation in the same JVM) and the group is stable again with the other three untouched
(they keep every partition they had: cooperative); the second JVM is killed (SIGKILL: both
its members gone at once, no LeaveGroup) and the first JVM's two members take everything.
Asserted: each stable group covers every partition once among live members, never two owners
at once, nothing acknowledged lost, every incarnation's events from its own thread (a
``started`` for each, a ``stopped`` for the cleanly closed one, ``killed`` for the killed
ones), no member raised. No time is asserted (the bounds below only end a hung run).
"""

from __future__ import annotations

import pytest
from group_flow import FlowingGroupFactory

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from testlab.checks import check_stable_assignment
from testlab.java_member import java_tools_missing

JAVA = "java-4.4.0"
PARTITIONS = 8


@pytest.mark.timeout(300)
def test_four_java_members_in_two_jvms_restart_and_kill(
    broker: RunningBroker, flowing_group: FlowingGroupFactory
) -> None:
    reason = java_tools_missing()
    if reason is not None:
        pytest.skip(reason)
    if broker.profile.name == "tansu":
        pytest.skip("kafka-clients 4.4.0 cannot connect to Tansu (test_java_interop.py)")
    flow = flowing_group(["cooperative-sticky"], PARTITIONS, rate_per_s=40, client=JAVA)
    group = flow.group
    everything = group.all_partitions()
    first = group.start_pack(["a0", "a1"])
    second = group.start_pack(["b0", "b1"])
    assert first.pid is not None and second.pid is not None and first.pid != second.pid
    stable = group.wait_stable(timeout_s=120, quiet_s=2.0)
    check_stable_assignment(stable, everything)
    assert sorted(stable.assignment) == ["a0", "a1", "b0", "b1"]

    group.restart_member("a1")
    assert first.pid is not None  # the same JVM runs a1's next incarnation
    after = group.wait_stable(timeout_s=120, quiet_s=2.0)
    check_stable_assignment(after, everything)
    for name in ("a0", "b0", "b1"):
        assert set(stable.assignment[name]) <= set(after.assignment[name]), name

    second.kill()
    survivors = group.wait_stable(timeout_s=120, quiet_s=2.0)
    check_stable_assignment(survivors, everything)
    assert sorted(survivors.assignment) == ["a0", "a1"]

    flow.finish(label="4 Java members in 2 JVMs")
    events = group.log.events()
    assert not [e for e in events if e.kind == "error"]
    kinds = {(e.key, e.kind) for e in events}
    for key in ("a0#0", "a1#0", "a1#1", "b0#0", "b1#0"):
        assert (key, "started") in kinds, key
    assert ("a1#0", "stopped") in kinds
    assert ("b0#0", "killed") in kinds and ("b1#0", "killed") in kinds
