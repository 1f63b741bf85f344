"""What a static confluent-kafka member is told when librdkafka fences it: one ERROR line
naming the cause and the remedy. Pure text from facts the consumer already holds; no I/O.

librdkafka (2.x) behaviour behind the line (docs/faults.md, "confluent-kafka and static
membership"):

- when no heartbeat succeeds for ``session.timeout.ms`` (the group coordinator's broker is
  down, say), librdkafka declares its session expired on the client side, gives its
  assignment up as lost and drops its member id, also for a static member
  (``group.instance.id``); the Java consumer keeps its member id and goes on heartbeating;
- an offset commit made while no coordinator is known waits, up to ``session.timeout.ms``,
  and is then sent with the member id of that moment, the dropped (empty) one; the broker
  still maps the instance id to the old member id and answers ``FENCED_INSTANCE_ID``, which
  librdkafka always treats as fatal (the Java consumer does not when its generation changed
  meanwhile): the consumer is unusable from then on.

So a static member whose coordinator is unreachable for longer than its session timeout,
and which commits meanwhile, can be fenced by its own commit, with no other consumer using
its instance id. The only recovery is a new consumer; a session timeout longer than the
cluster's coordinator failover avoids it.

Invariant: a line is given only for librdkafka's fatal error whose text says the static
member was fenced, and only for a consumer configured with a ``group.instance.id``.
"""

from __future__ import annotations

__all__ = ["FENCED_TEXT", "self_fencing_line"]

#: librdkafka's text for FENCED_INSTANCE_ID (``rd_kafka_err2str``), part of the fatal error
FENCED_TEXT = "Static consumer fenced by other consumer with same group.instance.id"


def self_fencing_line(
    group_id: str,
    client_id: str,
    instance_id: str | None,
    session_timeout_ms: int,
    fatal_text: str,
) -> str | None:
    """The line for librdkafka's fatal error ``fatal_text`` on a consumer of ``group_id``
    (None when it is not a fencing of a static member: see the module docstring)."""
    if not instance_id or FENCED_TEXT not in fatal_text:
        return None
    return (
        f"group {group_id} client {client_id}: librdkafka fenced this static member "
        f"(group.instance.id {instance_id}) with a fatal error and the consumer can no longer "
        f"be used: {fatal_text}. Unless another consumer runs with that group.instance.id, "
        f"librdkafka fenced itself: its session expired on the client side while the group "
        f"coordinator was unreachable for more than session.timeout.ms={session_timeout_ms}, "
        f"it dropped its member id, and an offset commit made meanwhile was sent with the "
        f"dropped id. Close this consumer and create a new one with the same "
        f"group.instance.id; a session.timeout.ms longer than the cluster's coordinator "
        f"failover avoids it"
    )
