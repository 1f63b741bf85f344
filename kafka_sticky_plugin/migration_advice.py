"""Whether a consumer group can move online between the classic protocol and KIP-848's
``consumer`` protocol, and what each member must change: pure, from facts already read.

:mod:`.migration_check` reads the facts from a cluster (features, broker settings, the group)
and prints :func:`advise`'s answer. The rules are Apache Kafka 4.x's (group coordinator):

- the ``consumer`` protocol needs the ``group.version`` feature at 1 or more and
  ``consumer`` in ``group.coordinator.rebalance.protocols``;
- a classic group converts to a consumer group when the first member with
  ``group.protocol=consumer`` joins, only if ``group.consumer.migration.policy`` allows an
  upgrade (``bidirectional`` or ``upgrade``), the group uses the ``consumer`` protocol type
  (not Connect's), it has at most ``group.consumer.max.size`` members, and no member's
  current *assignment* carries user data (a custom assignor's private state, which the broker
  cannot carry over: "userData from a custom assignor would be lost"; a librdkafka leader
  writes some for every member whose subscription carries any, see
  :attr:`MemberFacts.echoed_user_data`). Refused, the joining member gets GROUP_ID_NOT_FOUND;
- it converts back when the last ``consumer``-protocol member leaves, only if the policy
  allows a downgrade (``bidirectional`` or ``downgrade``); classic members may join a
  consumer group (the broker answers their JoinGroup itself, no client assignor runs) unless
  the policy is ``disabled``, and they must share a protocol name with the classic members
  already in it (else INCONSISTENT_GROUP_PROTOCOL).

Invariant: :attr:`Advice.possible` is true exactly when :attr:`Advice.blockers` is empty; every
blocker says what to change.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "EXIT_BLOCKED",
    "EXIT_NO_GROUP",
    "EXIT_POSSIBLE",
    "Advice",
    "ClusterFacts",
    "GroupFacts",
    "MemberFacts",
    "advise",
    "client_family",
    "refusal_line",
    "render",
]

EXIT_POSSIBLE = 0
EXIT_BLOCKED = 1
EXIT_NO_GROUP = 3

_UPGRADE_POLICIES = ("bidirectional", "upgrade")
_DOWNGRADE_POLICIES = ("bidirectional", "downgrade")


@dataclass(frozen=True)
class ClusterFacts:
    """What the cluster says about KIP-848 (``None``: not reported / not readable)."""

    group_version: int | None
    rebalance_protocols: tuple[str, ...] | None
    migration_policy: str | None
    consumer_max_size: int | None
    consumer_assignors: tuple[str, ...] | None


@dataclass(frozen=True)
class MemberFacts:
    """One member as DescribeGroups / ConsumerGroupDescribe shows it."""

    member_id: str
    client_id: str
    host: str = ""
    assignment_user_data: bytes | None = None
    #: the user data of the member's subscription in the group's protocol (classic groups)
    subscription_user_data: bytes | None = None

    @property
    def echoed_user_data(self) -> bool:
        """The assignment carries the member's own subscription user data, byte for byte:
        what a librdkafka (confluent-kafka) leader writes, whatever its assignor (it copies
        every member's subscription user data into that member's assignment; librdkafka's
        ``sticky`` and ``cooperative-sticky`` subscriptions carry the member's previous
        assignment and generation from its second join on)."""
        data = self.assignment_user_data
        return bool(data) and data == self.subscription_user_data


@dataclass(frozen=True)
class GroupFacts:
    """The group: ``group_type`` is ``classic``, ``consumer`` or ``None`` when it does not
    exist; ``protocol`` is the classic group's selected protocol (assignor) or the consumer
    group's broker assignor."""

    group_id: str
    group_type: str | None
    state: str = ""
    protocol_type: str = "consumer"
    protocol: str = ""
    members: tuple[MemberFacts, ...] = ()


@dataclass
class Advice:
    """The verdict and the lines to print (see the module docstring)."""

    direction: str
    blockers: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def possible(self) -> bool:
        return not self.blockers

    @property
    def exit_code(self) -> int:
        return EXIT_POSSIBLE if self.possible else EXIT_BLOCKED


def client_family(client_id: str) -> str:
    """A best guess at a member's client from its client id (the defaults each client uses):
    ``kafka-python``, ``aiokafka``, ``librdkafka``, ``java`` or ``unknown``."""
    text = client_id.lower()
    if text.startswith("kafka-python"):
        return "kafka-python"
    if text.startswith("aiokafka"):
        return "aiokafka"
    if text.startswith("rdkafka"):
        return "librdkafka"
    if text.startswith("consumer-"):
        return "java"
    return "unknown"


_MEMBER_ADVICE = {
    "librdkafka": (
        "confluent-kafka/librdkafka: set group.protocol=consumer; remove"
        " partition.assignment.strategy, session.timeout.ms and heartbeat.interval.ms (the"
        " broker sets them; group.remote.assignor picks 'uniform' or 'range'); keep"
        " incremental callbacks (kafka_sticky_plugin.confluent.subscribe does both protocols)"
    ),
    "java": (
        "Java: set group.protocol=consumer; remove partition.assignment.strategy and the"
        " session settings (group.remote.assignor picks the broker's assignor)"
    ),
    "kafka-python": (
        "kafka-python: has no KIP-848 client; stay classic. It stays a member of the converted"
        " group; the broker answers its JoinGroup and assigns it (our assignor is not asked)"
        " until the group is classic again"
    ),
    "aiokafka": (
        "aiokafka: has no KIP-848 client; stay classic (as kafka-python: the broker assigns it"
        " while the group is a consumer group)"
    ),
    "unknown": (
        "unknown client: a KIP-848 client takes group.protocol=consumer; any other stays"
        " classic and is assigned by the broker while the group is a consumer group"
    ),
}

_LOST = (
    "lost in a consumer group: rack-aware placement (the broker's uniform and range assignors"
    " ignore client.rack since Kafka 3.8, KAFKA-16694) and our assignor's own placement"
    " (the broker assigns every member, classic ones too)"
)


def _cluster_blockers(cluster: ClusterFacts) -> list[str]:
    blockers = []
    if cluster.group_version is not None and cluster.group_version < 1:
        blockers.append(
            "the cluster's group.version feature is 0: enable KIP-848 with"
            " `kafka-features.sh --bootstrap-server ... upgrade --feature group.version=1`"
        )
    protocols = cluster.rebalance_protocols
    if protocols is not None and "consumer" not in protocols:
        blockers.append(
            "group.coordinator.rebalance.protocols lacks 'consumer': add it on every broker"
        )
    return blockers


def advise(cluster: ClusterFacts, group: GroupFacts) -> Advice:
    """The move this group can make next (classic -> consumer, or back), what blocks it and
    what each member must change."""
    if group.group_type is None:
        advice = Advice("none")
        advice.notes.append(
            f"group {group.group_id} does not exist: new members can start with either"
            " protocol, nothing to migrate"
        )
        return advice
    policy = cluster.migration_policy
    if group.group_type == "classic":
        advice = Advice("classic -> consumer")
        advice.blockers.extend(_cluster_blockers(cluster))
        if policy is not None and policy not in _UPGRADE_POLICIES:
            advice.blockers.append(
                f"group.consumer.migration.policy is '{policy}': set it to 'bidirectional'"
                " (or 'upgrade') on every broker; until then a consumer-protocol member is"
                " refused with GROUP_ID_NOT_FOUND"
            )
        if group.protocol_type != "consumer":
            advice.blockers.append(
                f"protocol type '{group.protocol_type}' is not 'consumer' (a Connect or"
                " custom group): it cannot become a consumer group"
            )
        size = cluster.consumer_max_size
        if size is not None and len(group.members) > size:
            advice.blockers.append(
                f"{len(group.members)} members exceed group.consumer.max.size={size}: raise it"
            )
        echoed = [m for m in group.members if m.echoed_user_data]
        if echoed:
            advice.blockers.append(_librdkafka_leader_blocker(len(echoed)))
        for member in group.members:
            if member.assignment_user_data and not echoed:
                advice.blockers.append(
                    f"member {member.member_id} ({member.client_id}) has assignment user data"
                    f" from assignor '{group.protocol}' (a custom assignor the broker cannot"
                    " carry over): switch the group to one whose assignments carry none"
                    " (range, roundrobin, cooperative-sticky, or this package's sticky and"
                    " cooperative-sticky) first"
                )
    elif group.group_type == "consumer":
        advice = Advice("consumer -> classic")
        if policy is not None and policy not in _DOWNGRADE_POLICIES:
            advice.blockers.append(
                f"group.consumer.migration.policy is '{policy}': classic members cannot join"
                " and the group never converts back; set it to 'bidirectional' (or"
                " 'downgrade') on every broker"
            )
    else:
        advice = Advice("none")
        advice.blockers.append(
            f"group type '{group.group_type}' is neither classic nor consumer (a share or"
            " streams group): no online move"
        )
        return advice
    families = sorted({client_family(m.client_id) for m in group.members})
    for family in families:
        advice.notes.append(_MEMBER_ADVICE[family])
    advice.notes.append(_LOST)
    if advice.direction == "classic -> consumer":
        advice.notes.append(
            "runbook: restart members one at a time with group.protocol=consumer; the group"
            " converts at the first one. Way back: restart them classic one at a time; the"
            " group converts back to classic when the last consumer-protocol member leaves"
        )
    else:
        advice.notes.append(
            "way back to classic: restart the consumer-protocol members classic one at a"
            " time (same group.id, a classic assignor every classic member shares); the group"
            " converts back when the last of them leaves"
        )
    return advice


def render(cluster: ClusterFacts, group: GroupFacts, advice: Advice) -> list[str]:
    """The report's lines: facts first, then the verdict, blockers and notes."""
    assignors = ",".join(cluster.consumer_assignors or ()) or "?"
    lines = [
        f"cluster: group.version={_or_unknown(cluster.group_version)}"
        f" migration.policy={_or_unknown(cluster.migration_policy)}"
        f" group.consumer.max.size={_or_unknown(cluster.consumer_max_size)}"
        f" group.consumer.assignors={assignors}",
        f"group {group.group_id}: type={group.group_type or 'none'} state={group.state or '?'}"
        f" protocol={group.protocol or '?'} members={len(group.members)}",
    ]
    for member in group.members:
        lines.append(
            f"  member {member.member_id} client={member.client_id}"
            f" ({client_family(member.client_id)}) host={member.host or '?'}"
        )
    if advice.direction == "none" and advice.possible:
        lines.extend(advice.notes)
        return lines
    verdict = "possible" if advice.possible else "BLOCKED"
    lines.append(f"online move {advice.direction}: {verdict}")
    lines.extend(f"  blocked: {b}" for b in advice.blockers)
    lines.extend(f"  - {n}" for n in advice.notes)
    return lines


def _or_unknown(value: object) -> str:
    return "?" if value is None else str(value)


def _librdkafka_leader_blocker(members: int) -> str:
    """The blocker of a classic group led by librdkafka whose members' subscriptions carry
    user data (:attr:`MemberFacts.echoed_user_data`): no assignor change helps while it leads."""
    return (
        f"{members} member(s) have assignment user data because the group's leader is a"
        " librdkafka (confluent-kafka) consumer, which copies each member's subscription user"
        " data into its assignment (librdkafka's sticky and cooperative-sticky state, Java's"
        " and this package's sticky state): either restart every member at once with"
        " group.protocol=consumer (committed offsets stay; the group converts while empty), or"
        " have a member whose leader code writes no assignment user data lead the conversion"
        " (a hooked kafka-python or aiokafka member, or Java, on cooperative-sticky; a new"
        " leader is chosen when the current one leaves)"
    )


def refusal_line(
    group_id: str, error_name: str, *, classic: bool, offered: tuple[str, ...]
) -> str | None:
    """One line saying what to change when the broker refuses a member for a KIP-848 reason,
    or ``None`` when ``error_name`` (the broker's error code name) is not one of them.

    A classic member answered INCONSISTENT_GROUP_PROTOCOL: the group is a consumer group whose
    policy forbids classic members, or its classic members share no protocol name (assignor)
    with ``offered``. A ``consumer``-protocol member answered GROUP_ID_NOT_FOUND: the broker
    refused to convert the classic group (see the module docstring for the four reasons).
    """
    check = "python -m kafka_sticky_plugin migration-check --bootstrap HOST:PORT --group"
    if classic and error_name == "INCONSISTENT_GROUP_PROTOCOL":
        return (
            f"group {group_id}: the broker refused this classic member"
            f" (INCONSISTENT_GROUP_PROTOCOL): every classic member must offer an assignor the"
            f" others offer (this one offers {', '.join(offered) or 'none'}), and if the group"
            " is a KIP-848 consumer group, group.consumer.migration.policy must allow classic"
            f" members ('bidirectional' or 'downgrade'); see `{check} {group_id}`"
        )
    if not classic and error_name == "GROUP_ID_NOT_FOUND":
        return (
            f"group {group_id}: the broker refused to convert this classic group to a KIP-848"
            " consumer group (GROUP_ID_NOT_FOUND): group.consumer.migration.policy must be"
            " 'bidirectional' or 'upgrade', no classic member's assignment may carry user data"
            " (a custom assignor, or a confluent-kafka classic leader, which copies its members'"
            " sticky state into their assignments), and the group must fit"
            " group.consumer.max.size; see"
            f" `{check} {group_id}`"
        )
    return None
