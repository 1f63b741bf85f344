"""The aiokafka hooks of this aiokafka version over SCRAM-SHA-512, as a user with a consumer's
ACLs only, on a secured Apache Kafka 4.4 node (``StandardAuthorizer``, no ACL means no
access; :mod:`testlab.kafka_security`). The aiokafka counterpart of
``integration_tests/hooks/test_hooks_scram.py``; the ACL scenarios are in the security tier
(``integration_tests/security/test_security_acl_aiokafka.py``, newest aiokafka only).

Two hooked ``cooperative-sticky`` members of ``alice`` (``READ`` on the group and the topic)
share four partitions; one leaves and the other takes everything back without being revoked
anything; the offsets committed on the way (auto-commit, and at ``stop()``) are read back as
``alice`` (:mod:`scram_scenario`, shared with kafka-python's matrix). Apache Kafka only:
skipped on the embedded broker.
"""

from __future__ import annotations

import aiokafka
from aio_harness import AioMember
from scram_scenario import SECURED_MARKS, join_leave_and_commit, secured

from kafka_sticky_plugin.aiokafka import CooperativeStickyAssignor
from kafka_sticky_plugin.client_security import aiokafka_settings
from testlab.kafka_security import SecuredKafka

pytestmark = SECURED_MARKS
__all__ = ["secured"]


def test_hooked_aiokafka_members_join_rebalance_and_commit_over_scram(
    secured: SecuredKafka,
) -> None:
    """Join, leave and commit over SCRAM with a consumer's ACLs (module docstring)."""
    alice = aiokafka_settings(secured.client("alice", "scram"))
    committed, delivered = join_leave_and_commit(
        secured,
        lambda name, bootstrap, group_id, topic: AioMember(
            name, bootstrap, group_id, [topic], [CooperativeStickyAssignor], settings=alice
        ),
    )
    print(f"aiokafka {aiokafka.__version__}: committed {committed}, delivered {delivered}")
    assert committed == delivered
