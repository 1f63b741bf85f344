"""Leader-side JoinGroup members and subscriptions, whatever shape the client hands over.

kafka-python passes the JoinGroup response members to ``_perform_assignment`` as
``(member_id, metadata)`` tuples (2.0.2, 2.2), ``(member_id, instance_id, metadata)``
tuples (kafka-python-ng on JoinGroup v5+), ``GroupMember`` namedtuples with
``metadata_bytes`` (2.3) or response objects with ``metadata`` (3.0). All become
:class:`~kafka_sticky_plugin.assignor.leader.MemberMetadata` here; the metadata stays raw
bytes so that our codec (v0-v3) reads owned partitions, generation and rack that the
clients' v0 decoders drop.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ....assignor.leader import MemberMetadata

__all__ = ["normalise_members"]


def _as_bytes(value: Any) -> Any:
    """Raw bytes of a member's metadata; a value that is neither bytes nor re-encodable is
    passed on as is, and the leader reports that member as unreadable (never raised here:
    one broken member must not stop the group)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    encode = getattr(value, "encode", None)
    if callable(encode):  # a client-side struct that was decoded earlier
        try:
            return bytes(encode())
        except Exception:  # a broken client object: the leader names this member
            return value
    return value


def _normalise_one(member: Any) -> MemberMetadata:
    if isinstance(member, tuple) and not hasattr(member, "_fields"):
        if len(member) == 2:
            member_id, raw = member
            return MemberMetadata(str(member_id), _as_bytes(raw))
        if len(member) == 3:
            member_id, instance_id, raw = member
            instance = str(instance_id) if instance_id else None
            return MemberMetadata(str(member_id), _as_bytes(raw), instance)
    member_id = str(member.member_id)
    instance_id = getattr(member, "group_instance_id", None) or None
    raw = getattr(member, "metadata_bytes", None)
    if raw is None:
        raw = member.metadata
    return MemberMetadata(member_id, _as_bytes(raw), instance_id)


def normalise_members(members: Iterable[Any]) -> list[MemberMetadata]:
    """Every member as ``MemberMetadata(member_id, raw metadata, group_instance_id or None)``."""
    return [_normalise_one(member) for member in members]
