"""Online migrations between the classic protocol and KIP-848's ``consumer`` protocol, on
Apache Kafka, with this package's members on the classic side.

Upgrade and back: a classic group of our members (hooked kafka-python 3.0 members on our
``sticky`` or ``cooperative-sticky``, hooked kafka-python 2.2 members, the 2.x hook family, in
child processes of the version matrix's venv, or hooked aiokafka members) consumes a topic
that keeps receiving records; its members are replaced one by one by confluent-kafka (or Java
4.4) members with ``group.protocol=consumer`` (the broker converts the group to a consumer
group at the first one: "Converted the classic group to a consumer group"; our classic
members stay members of it, and the broker's assignor decides), until none is classic; then
they are rolled back one by one (the broker converts the group back to classic when the last
consumer-protocol member leaves).

Checks at every step: the group settles with every partition owned exactly once and
balanced; at the end, no partition ever had two live owners, nothing acknowledged was lost
(commit-on-revoke on both sides), and nothing from this package was logged at ERROR.
Printed per step: partitions moved, and the generation each classic member reports (in a
consumer group that is the member epoch the broker gives the classic member), asserted never
to go down. A child-process member's warnings reach ``caplog`` through its pipe
(:mod:`kafka_sticky_plugin.groups.member_process`).
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Iterable
from pathlib import Path

import pytest
from group_flow import FlowingGroupFactory
from kip848_logs import assert_no_error_of_ours

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner, StableGroup
from testlab.checks import check_stable_assignment
from testlab.java_member import JAVA_CLIENT_VERSIONS

PARTITIONS = 6
MEMBERS = ("m0", "m1")
#: (client, group_protocol) of a KIP-848 member.
CONSUMER_PROTOCOL = ("confluent", "consumer")
#: The kafka-python 2.x hook family run here (its venv is made by ``make matrix-venvs``).
KAFKA_PYTHON_2 = "kafka-python-2.2"


def _our_members(client: str) -> tuple[str, str, bool]:
    """(client, python, process?) of our classic members on ``client``: a matrix venv's
    kafka-python runs them as child processes of that interpreter (skipped without it)."""
    if client != KAFKA_PYTHON_2:
        return client, "", False
    python = Path(__file__).resolve().parents[2] / ".venvs" / KAFKA_PYTHON_2 / "bin" / "python"
    if not python.exists():
        pytest.skip(f"needs {python} (make matrix-venvs)")
    version = subprocess.run(
        [str(python), "-c", "import kafka; print(kafka.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version.startswith("2."), f"{python} runs kafka-python {version}, not 2.x"
    return "kafka-python", str(python), True


def _moved(before: StableGroup, after: StableGroup) -> int:
    old, new = before.owner_of(), after.owner_of()
    return sum(1 for p, owner in new.items() if old.get(p) != owner)


def _generations(group: ConsumerGroupRunner, classic: Iterable[str] = ()) -> dict[str, int]:
    """The last generation each live classic member reported. Asserted: every member named in
    ``classic`` has reported one, and no member incarnation's generation ever went down (in a
    converted group it is the member epoch the broker gives the classic member, and the
    conversions carry the generation over)."""
    live = group.live_keys()
    seen: dict[str, int] = {}
    for event in group.log.events():
        if event.kind == "generation":
            assert event.generation >= seen.get(event.key, -1), (
                f"{event.key}'s generation went down: {seen[event.key]} -> {event.generation}"
            )
            seen[event.key] = event.generation
    missing = [name for name in classic if live.get(name) not in seen]
    assert not missing, f"classic members that reported no generation: {missing}"
    return {name: seen[key] for name, key in live.items() if key in seen}


def _conversions(broker: RunningBroker, group_id: str) -> list[str]:
    """The broker's "Converted the ... group to a ... group" lines for ``group_id``, in order."""
    assert broker.log_path is not None
    text = broker.log_path.read_text(encoding="utf-8", errors="replace")
    return [
        line.split("Converted ", 1)[1].strip()
        for line in text.splitlines()
        if "Converted " in line and f"GroupId {group_id}]" in line
    ]


def _swap(
    group: ConsumerGroupRunner, name: str, kind: tuple[str, str], process: bool = False
) -> None:
    group.stop_member(name)
    group.start_member(name, process=process, client=kind[0], group_protocol=kind[1])


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(240)
@pytest.mark.parametrize(
    ("client", "strategy", "kip848_client"),
    [
        ("kafka-python", "cooperative-sticky", "confluent"),
        ("kafka-python", "sticky", f"java-{JAVA_CLIENT_VERSIONS[0]}"),
        ("aiokafka", "cooperative-sticky", "confluent"),
        (KAFKA_PYTHON_2, "sticky", "confluent"),
    ],
)
def test_classic_group_moves_to_kip848_and_back(
    client: str,
    strategy: str,
    kip848_client: str,
    broker: RunningBroker,
    flowing_group: FlowingGroupFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Our classic members (kafka-python 3.0 and 2.2, aiokafka, hooked) -> confluent or Java
    ``consumer``-protocol members one by one -> back. (A group led by librdkafka cannot move:
    see test_kip848_refusals.)"""
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    member_client, python, process = _our_members(client)
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=20, client=member_client, python=python)
    group = flow.group
    everything = group.all_partitions()
    group.start_members(MEMBERS, process=process)
    stable = group.wait_stable(timeout_s=60)
    check_stable_assignment(stable, everything)
    classic = set(MEMBERS)
    print(f"classic start: generations {_generations(group, classic)}")
    ours = (member_client, "classic")
    kip848 = (kip848_client, "consumer")
    steps = [(n, kip848) for n in MEMBERS] + [(n, ours) for n in MEMBERS]
    for name, kind in steps:
        _swap(group, name, kind, process=process and kind == ours)
        after = group.wait_stable(timeout_s=90)
        check_stable_assignment(after, everything)
        classic = classic | {name} if kind == ours else classic - {name}
        print(
            f"{name} -> {kind[1]}: moved {_moved(stable, after)} partitions,"
            f" classic generations {_generations(group, classic)}"
        )
        stable = after
    flow.finish(f"{client} {strategy} classic -> consumer -> classic")
    assert _conversions(broker, group.group_id) == [
        "the classic group to a consumer group.",
        "the consumer group to a classic group.",
    ]
    assert_no_error_of_ours(caplog)


@pytest.mark.kafka_only("protocol_vote")
@pytest.mark.timeout(180)
@pytest.mark.parametrize(
    ("client", "strategy"),
    [("kafka-python", "cooperative-sticky"), (KAFKA_PYTHON_2, "sticky")],
)
def test_our_classic_members_join_a_consumer_group_and_take_it_over(
    client: str,
    strategy: str,
    broker: RunningBroker,
    flowing_group: FlowingGroupFactory,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The reverse: a group born a consumer group (KIP-848 members only); our classic
    members join it (the broker answers their JoinGroups itself, our assignor is not asked),
    then the KIP-848 members leave one by one and the group turns classic, run by our
    assignor from then on."""
    caplog.set_level(logging.WARNING, logger="kafka_sticky_plugin")
    member_client, python, process = _our_members(client)
    flow = flowing_group([strategy], PARTITIONS, rate_per_s=20, client=member_client, python=python)
    group = flow.group
    everything = group.all_partitions()
    for name in ("k0", "k1"):
        group.start_member(name, client=CONSUMER_PROTOCOL[0], group_protocol=CONSUMER_PROTOCOL[1])
    stable = group.wait_stable(timeout_s=60)
    check_stable_assignment(stable, everything)
    for index, name in enumerate(MEMBERS):
        group.start_member(name, process=process)
        after = group.wait_stable(timeout_s=90)
        check_stable_assignment(after, everything)
        generations = _generations(group, MEMBERS[: index + 1])
        print(f"{name} joins: moved {_moved(stable, after)}, generations {generations}")
        stable = after
    for name in ("k0", "k1"):
        group.stop_member(name)
        after = group.wait_stable(timeout_s=90)
        check_stable_assignment(after, everything)
        generations = _generations(group, MEMBERS)
        print(f"{name} leaves: moved {_moved(stable, after)}, generations {generations}")
        stable = after
    flow.finish(f"{client} {strategy}: consumer group -> our classic members")
    assert _conversions(broker, group.group_id) == ["the consumer group to a classic group."]
    assert_no_error_of_ours(caplog)
