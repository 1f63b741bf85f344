"""The broker's own KIP-848 assignors in a JVM, for the simulator's plan-for-plan cross-check.

``kafkasticky.BrokerAssignors`` (``jvm/broker-assignors/src``) runs Apache Kafka's
``UniformAssignor`` and ``RangeAssignor`` from the pinned ``kafka-group-coordinator`` jar
on group specs, one JSON line each way; ``make broker-assignors`` resolves the jars with
Maven and compiles it (:func:`broker_assignors_classpath` runs it once per process, a no-op
when up to date). One :class:`JavaBrokerAssignors` is one JVM for any number of specs.

Invariant: nothing here downloads anything by itself; resolving jars is ``make``'s job.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from kafka_sticky_plugin.core.spec import TopicPartitionTuple
from testlab.java_member import JavaToolsMissing, JsonLineJvm, java_tools_missing, make_locked

__all__ = ["JavaBrokerAssignors", "broker_assignors_classpath"]

_BUILD = Path(__file__).resolve().parents[1] / "build" / "jvm"
_LOCK = threading.Lock()


def broker_assignors_classpath() -> str:
    """The classpath of ``kafkasticky.BrokerAssignors`` after ``make broker-assignors``.
    Raises :class:`~.java_member.JavaToolsMissing` when java/javac/mvn are missing or the
    build fails."""
    reason = java_tools_missing()
    if reason is not None:
        raise JavaToolsMissing(reason)
    classes = _BUILD / "broker-assignors"
    with _LOCK:
        make_locked("broker-assignors", classes / ".built")
    return f"{classes}:{_BUILD / 'kafka-group-coordinator' / '*'}"


class JavaBrokerAssignors(JsonLineJvm):
    """One JVM answering :meth:`assign` requests with the broker's own assignor classes."""

    def __init__(self) -> None:
        super().__init__(
            broker_assignors_classpath(), "kafkasticky.BrokerAssignors", "broker assignor"
        )

    def assign(
        self,
        assignor: str,
        topics: Mapping[str, int],
        members: Sequence[tuple[str, Sequence[str], Sequence[TopicPartitionTuple]]],
    ) -> tuple[dict[str, list[TopicPartitionTuple]], bool]:
        """The broker's plan for ``members`` (``(member_id, subscribed topics, current
        target)``; topics and members in the order the model uses: names ascending), and
        whether the broker took the group as homogeneous. Raises :class:`RuntimeError` with
        Java's message when the assignor failed."""
        answer = self.request(
            {
                "assignor": assignor,
                "topics": [[t, topics[t]] for t in sorted(topics)],
                "members": [[m, sorted(ts), sorted(cur)] for m, ts, cur in members],
            }
        )
        plan = {m: [(str(t), int(p)) for t, p in pairs] for m, pairs in answer["plan"].items()}
        return plan, bool(answer["homogeneous"])
