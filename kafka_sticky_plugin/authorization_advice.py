"""What a consumer is told when the cluster's authorizer refuses it: one line per refusal,
naming the group or topics, the ACL that is missing and the principal to grant it to. Pure
text from facts the client adapters already hold; no client import, no I/O.

Apache Kafka's rules (KafkaApis, 4.x) behind the advice:

- FindCoordinator for a group needs ``Describe`` on the group; JoinGroup, SyncGroup,
  Heartbeat, OffsetCommit and OffsetFetch need ``Read`` on it (``Read`` implies
  ``Describe``), so the one grant to ask for is ``Read`` on ``Group``;
- Metadata lists a topic only to a principal with ``Describe`` on it (TOPIC_AUTHORIZATION_FAILED
  otherwise); Fetch, ListOffsets and OffsetCommit need ``Read`` on the topic, so the advice
  for a consumer's topic is ``Read`` (which implies ``Describe``).

Invariant: every line names what is refused and the grant that ends the refusal; no line
carries a credential (the principal is a user *name*, never a password or key material).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = [
    "cluster_configs_unread_line",
    "group_refused_line",
    "leader_stays_reason",
    "leader_step_aside_line",
    "leader_topics_refused_line",
    "member_topics_refused_line",
    "own_topics_change_lines",
    "principal_text",
    "topics_text",
    "unassigned_topics_line",
]


def principal_text(config: Mapping[str, Any] | None) -> str:
    """The principal a client authenticates as, as far as its configuration tells:
    ``User:<name>`` for SASL PLAIN/SCRAM (the broker's default principal builder), else a
    description (TLS certificates map to ``User:<distinguished name>``, which only the broker's
    ``ssl.principal.mapping.rules`` decide). Accepts kafka-python/aiokafka settings
    (``sasl_plain_username``) and librdkafka ones (``sasl.username``)."""
    config = config or {}
    name = config.get("sasl_plain_username") or config.get("sasl.username")
    mechanism = str(
        config.get("sasl_mechanism")
        or config.get("sasl.mechanism")
        or config.get("sasl.mechanisms")
        or ""
    ).upper()
    protocol = str(config.get("security_protocol") or config.get("security.protocol") or "").upper()
    if (
        isinstance(name, str)
        and name
        and protocol.startswith("SASL")
        and (mechanism in ("", "PLAIN") or mechanism.startswith("SCRAM"))
    ):
        return f"User:{name}"
    if protocol == "SSL":
        return "this consumer's certificate principal (User:<its distinguished name>)"
    if protocol in ("", "PLAINTEXT"):
        return "User:ANONYMOUS"
    return "this consumer's principal"


def topics_text(topics: Iterable[str]) -> str:
    """``'a', 'b'`` (sorted, quoted) for a message."""
    return ", ".join(repr(t) for t in sorted(set(topics)))


def group_refused_line(group_id: str, principal: str, request: str, retry_s: float | None) -> str:
    """GROUP_AUTHORIZATION_FAILED: the member cannot be in the group at all. ``retry_s``:
    when it asks again (``None``: its client retries on its own schedule)."""
    again = "its client keeps asking" if retry_s is None else f"asks again in {retry_s:.0f} s"
    return (
        f"group {group_id}: not authorized to use the group ({request} answered"
        f" GROUP_AUTHORIZATION_FAILED): grant Read on Group {group_id!r} to {principal};"
        f" this consumer holds no partitions until then and {again}"
    )


def member_topics_refused_line(
    group_id: str, topics: Iterable[str], principal: str, *, client_rejoins: bool = False
) -> str:
    """The consumer cannot describe topics it subscribes to: it leaves them out of what it
    asks the group for until they are granted (``client_rejoins``: the client, librdkafka,
    does that itself)."""
    then = (
        "is assigned its other topics only; its client adds them once they are granted"
        if client_rejoins
        else "asks the group for its other topics only and rejoins when they are granted"
    )
    return (
        f"group {group_id}: not authorized to describe subscribed topic(s) {topics_text(topics)}"
        f" (TOPIC_AUTHORIZATION_FAILED): grant Read on each Topic to {principal}; this consumer"
        f" {then}"
    )


def own_topics_change_lines(
    group_id: str, before: Iterable[str], now: Iterable[str], principal: str
) -> list[tuple[int, str]]:
    """What a hooked member says when the set of its own refused topics changes from
    ``before`` to ``now``: ``(logging level, line)`` pairs, a WARNING
    (:func:`member_topics_refused_line`) when some are refused now, an INFO line naming those
    authorized again."""
    refused, granted = set(now), set(before) - set(now)
    lines: list[tuple[int, str]] = []
    if refused:
        lines.append((logging.WARNING, member_topics_refused_line(group_id, refused, principal)))
    if granted:
        lines.append(
            (
                logging.INFO,
                f"group {group_id}: topic(s) {topics_text(granted)} are authorized again;"
                " rejoining with them",
            )
        )
    return lines


def leader_topics_refused_line(
    group_id: str,
    topics: Iterable[str],
    principal: str,
    subscribers: Iterable[str] = (),
    *,
    why_stays: str | None = None,
) -> str:
    """The group's leader cannot describe topics only other members subscribe to: it cannot
    know their partitions, so they stay unassigned (Java's leader raises
    TopicAuthorizationException out of ``poll()`` instead, and the group stalls).
    ``why_stays``: why it does not step aside (see :func:`leader_step_aside_line`)."""
    who = sorted(set(subscribers))
    by = f" by member(s) {', '.join(who)}" if who else " by other members"
    stays = f" ({why_stays})" if why_stays else ""
    return (
        f"group {group_id}: this consumer leads the group but is not authorized to describe"
        f" topic(s) {topics_text(topics)} subscribed{by}: their partitions stay unassigned"
        f" while it leads{stays}; grant Describe on each Topic to {principal}"
    )


def leader_stays_reason(static: bool) -> str:
    """Why a refused leader stays leader instead of stepping aside (for ``why_stays``)."""
    if static:
        return "a static member: the coordinator keeps it leader when it rejoins"
    return "it stepped aside once for them already and was elected again"


def leader_step_aside_line(group_id: str, topics: Iterable[str], principal: str) -> str:
    """The leader cannot describe topics other members subscribe to and steps aside: it
    gives its partitions up, leaves the group and rejoins, so that the coordinator makes
    another member the leader (once per set of refused topics)."""
    return (
        f"group {group_id}: this consumer leads the group but is not authorized to describe"
        f" topic(s) {topics_text(topics)} subscribed by other members: it leaves the group"
        " once and rejoins so that another member leads and can assign them; grant Describe"
        f" on each Topic to {principal}"
    )


def unassigned_topics_line(group_id: str, topics: Iterable[str], leader: str) -> str:
    """This member subscribes to topics it may describe, but no member of the group holds
    any of their partitions (checked with DescribeGroups): the leader, which assigns the
    whole classic group, most likely may not describe them. ``leader``: how the leader is
    known (its client id and host)."""
    return (
        f"group {group_id}: subscribed topic(s) {topics_text(topics)} are assigned to no"
        f" member; the group's leader ({leader}) most likely is not authorized to describe"
        " them: grant Describe on each Topic to the leader's principal; this consumer"
        " consumes its other topics meanwhile"
    )


def cluster_configs_unread_line(principal: str) -> str:
    """A broker that knows KIP-848 answered DescribeConfigs without any of its group
    settings: the authorizer refused them (kafka-python's admin client drops the per-resource
    error), so what depends on them is unknown, not default."""
    return (
        "note: the broker's group.* settings could not be read (DescribeConfigs on the cluster"
        f" answered none of them): grant DescribeConfigs on Cluster 'kafka-cluster' to {principal};"
        " the verdict below assumes their defaults"
    )
