"""Groups of our assignors over each secured transport of Apache Kafka 4.4: SCRAM-SHA-512
(SASL_PLAINTEXT), TLS with a client certificate (SSL) and SCRAM over TLS (SASL_SSL).

One secured node for the module (:mod:`secured_tier`, ``StandardAuthorizer``, no ACL means no
access). Every member connects as ``alice``, a user with only the ACLs a consumer needs
(``READ`` on the group, ``READ``/``DESCRIBE`` on the topic). Each transport runs one mixed
group, so the three clients are each met on two transports and both assignors are used:

============  ====================  =======================  ======================
transport     assignor              first member (leader)    second member
============  ====================  =======================  ======================
scram         cooperative-sticky    kafka-python 3 (hooked)  confluent-kafka
tls           sticky                aiokafka (hooked)        kafka-python 3 (hooked,
                                                             a child process)
scram_tls     cooperative-sticky    confluent-kafka          aiokafka (hooked)
============  ====================  =======================  ======================

The first member joins and commits; the second joins (a rebalance; under cooperative-sticky
the first is revoked nothing), then leaves (the first gets everything back). Checked: every
stable generation covers every partition once, balanced; never two owners of a partition; no
acknowledged record lost; offsets committed by both members, none refused for want of an
ACL (a commit refused because a rebalance is under way is retried: not a failure), and what the
broker keeps as committed (read back by the super user over the same transport) is the last
offset each member reported committing. Every log line of the test (ours, kafka-python's,
aiokafka's and librdkafka's at DEBUG, librdkafka with its ``security``, ``conf``, ``broker``
and ``protocol`` debug contexts, a child-process member's lines forwarded to this process),
every member event and the node's log is scanned for the passwords and private-key lines of
the run: none may appear, and the scan must have read at least :data:`MIN_LINES_PER_SOURCE`
lines of librdkafka and of the child where they ran.

The node's own contract, on the same node: no ACL, no access (for ``User:ANONYMOUS`` on the
probe listener too); an ACL granted and revoked takes effect on every transport; a client
certificate ``CN=admin`` is the super user; a wrong password or a missing client certificate
connects nowhere.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import confluent_kafka
import confluent_kafka.admin
import pytest
from group_flow import FlowingGroup
from kafka import KafkaConsumer
from secured_tier import (
    EMBEDDED_SKIP,
    LogLines,
    assert_no_secret,
    log_lines,
    secured_flow,
    secured_kafka,
)

from kafka_sticky_plugin.client_security import (
    ClientSecurity,
    confluent_settings,
    kafka_python_settings,
)
from kafka_sticky_plugin.groups.admin import create_topic, unique_name
from kafka_sticky_plugin.groups.events import Partition
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner, StableGroup
from testlab.checks import check_stable_assignment
from testlab.kafka_security import TRANSPORTS, SecuredKafka

__all__ = ["log_lines", "secured_flow", "secured_kafka"]  # fixtures, imported for pytest

pytestmark = EMBEDDED_SKIP

PARTITIONS = 6
STABLE_S = 60.0
#: The fewest log lines the scan must read from librdkafka (when a confluent member ran) and
#: from a child-process member (when one ran): an empty capture cannot pass.
MIN_LINES_PER_SOURCE = 50


@dataclass(frozen=True)
class Scenario:
    transport: str
    assignor: str
    first: str
    second: str
    #: The second member runs in a child process (its credentials cross by the environment).
    second_process: bool = False


SCENARIOS = [
    Scenario("scram", "cooperative-sticky", "kafka-python", "confluent"),
    Scenario("tls", "sticky", "aiokafka", "kafka-python", second_process=True),
    Scenario("scram_tls", "cooperative-sticky", "confluent", "aiokafka"),
]


def _stable(group: ConsumerGroupRunner, what: str, t0: float) -> StableGroup:
    stable = group.wait_stable(timeout_s=STABLE_S)
    check_stable_assignment(stable, group.all_partitions())
    print(f"{time.monotonic() - t0:6.1f}s {what}: generation {stable.generation}")
    return stable


def _last_commits(group: ConsumerGroupRunner) -> dict[Partition, int]:
    last: dict[Partition, int] = {}
    for event in group.log.events():
        if event.kind == "committed":
            last.update(zip(event.partitions, event.offsets, strict=True))
    return last


@pytest.mark.timeout(240)
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.transport for s in SCENARIOS])
def test_join_rebalance_and_commit_over_a_secured_transport(
    scenario: Scenario,
    secured_kafka: SecuredKafka,
    secured_flow: Callable[..., FlowingGroup],
    log_lines: LogLines,
) -> None:
    """Join, a second member joins and leaves, commits: over ``scenario.transport`` as a user
    with a consumer's ACLs only (see the module docstring)."""
    kafka = secured_kafka
    flow = secured_flow("alice", scenario.transport, [scenario.assignor], PARTITIONS)
    group = flow.group
    t0 = time.monotonic()
    group.start_member("first", client=scenario.first)
    alone = _stable(group, f"{scenario.first} alone", t0)
    group.start_member("second", process=scenario.second_process, client=scenario.second)
    both = _stable(group, f"{scenario.second} joined", t0)
    assert set(both.assignment) == {"first", "second"}
    assert set(both.assignment["first"]) <= set(alone.assignment["first"])
    if scenario.assignor == "cooperative-sticky":
        revoked = [
            e
            for e in group.log.events()
            if e.member == "first" and e.kind in ("revoked", "lost") and e.partitions
        ]
        kept = set(both.assignment["first"])
        assert all(set(e.partitions).isdisjoint(kept) for e in revoked), revoked
    group.stop_member("second")
    again = _stable(group, f"{scenario.second} left", t0)
    assert set(again.assignment) == {"first"}
    time.sleep(2.0)  # one more commit interval of the first member after the last rebalance
    flow.finish(f"{scenario.transport}: {scenario.first} + {scenario.second}")

    events = group.log.events()
    refused = [
        e
        for e in events
        if e.kind == "error" or (e.kind == "commit_failed" and "uthoriz" in e.detail)
    ]
    assert not refused, refused
    committers = {e.member for e in events if e.kind == "committed" and e.partitions}
    assert committers == {"first", "second"}
    with kafka.admin_client(scenario.transport) as admin:
        stored = admin.list_group_offsets(group.group_id)[group.group_id]
    broker_view = {(tp.topic, tp.partition): meta.offset for tp, meta in stored.items()}
    assert broker_view == _last_commits(group)

    scan = assert_no_secret(kafka, [*log_lines.lines, *(e.detail for e in events)])
    librdkafka, child = log_lines.count("librdkafka"), log_lines.count("child")
    print(
        f"{scan.describe()} (KafkaAdminClient's DEBUG line: the harness's admin);"
        f" {len(log_lines.lines)} from the loggers, {librdkafka} of them librdkafka's,"
        f" {child} forwarded by a child process"
    )
    assert len(log_lines.lines) > 100, "the DEBUG loggers produced almost nothing: scan blind"
    if "confluent" in (scenario.first, scenario.second):
        assert librdkafka >= MIN_LINES_PER_SOURCE, "librdkafka's debug lines were not captured"
        # its configuration dump, where a password would show first, is among them
        conf = "sasl.password = " if "scram" in scenario.transport else "ssl.ca.location = "
        assert any(line.startswith("librdkafka ") and conf in line for line in log_lines.lines)
    if scenario.second_process:
        assert child >= MIN_LINES_PER_SOURCE, "the child member's DEBUG lines were not forwarded"


# -- the node's own contract ------------------------------------------------------------------


def _visible_topics(bootstrap: str, security: ClientSecurity | None) -> set[str]:
    """The topics a kafka-python client of ``security`` is allowed to see."""
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, **kafka_python_settings(security))
    try:
        return set(consumer.topics())
    finally:
        consumer.close()


@pytest.mark.timeout(120)
def test_the_node_authorizes_by_acl_and_maps_certificates_to_users(
    secured_kafka: SecuredKafka,
) -> None:
    """Nothing without an ACL (neither ``User:ANONYMOUS`` on the probe listener nor a user),
    a granted ``DESCRIBE`` shows the topic until it is revoked, and a client certificate
    ``CN=admin`` is the super user ``User:admin`` (the principal mapping)."""
    kafka = secured_kafka
    topic = create_topic(
        kafka.bootstrap(), unique_name("sec-node"), 1, security=kafka.admin("scram")
    )
    assert topic not in _visible_topics(kafka.broker.bootstrap, None)
    assert topic not in _visible_topics(kafka.bootstrap("scram"), kafka.client("bob", "scram"))
    kafka.grant("bob", "topic", topic, ("DESCRIBE",))
    for transport in TRANSPORTS:
        assert topic in _visible_topics(kafka.bootstrap(transport), kafka.client("bob", transport))
    kafka.revoke("bob", "topic", topic, ("DESCRIBE",))
    assert topic not in _visible_topics(kafka.bootstrap("tls"), kafka.client("bob", "tls"))
    assert topic in _visible_topics(kafka.bootstrap("tls"), kafka.admin("tls"))


@pytest.mark.timeout(120)
@pytest.mark.parametrize("transport", ["scram", "tls"])
def test_a_wrong_credential_is_refused(secured_kafka: SecuredKafka, transport: str) -> None:
    """A wrong SCRAM password, or TLS without a client certificate, connects nowhere
    (librdkafka says so within seconds; kafka-python only times out bootstrapping)."""
    right = secured_kafka.client("bob", transport)
    wrong = (
        replace(right, password="0" * 32)
        if transport == "scram"
        else replace(right, certfile=None, keyfile=None)
    )
    for security, works in ((right, True), (wrong, False)):
        config: dict[str, Any] = {
            "bootstrap.servers": secured_kafka.bootstrap(transport),
            "log_level": 0,
        }
        client = confluent_kafka.admin.AdminClient({**config, **confluent_settings(security)})
        try:
            client.list_topics(timeout=8)
            connected = True
        except confluent_kafka.KafkaException:
            connected = False
        assert connected is works, (transport, security.protocol, works)
