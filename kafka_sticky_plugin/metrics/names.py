"""Every rebalance metric once: its snapshot field, Java name, unit, type, exporter names and
meaning. The exporters and the docs page's table are made from :data:`METRICS`.

Conventions: the plain values (:class:`~.recorder.RebalanceMetricsSnapshot`) keep Java's
units (milliseconds); Prometheus and OpenTelemetry get seconds (``scale``), Prometheus names
end in their unit and counters in ``_total``, OpenTelemetry names are dotted under
``kafka.consumer.`` (the messaging semantic conventions define no rebalance metric; their
attributes ``messaging.system``, ``messaging.consumer.group.name`` and
``messaging.client.id`` label every point). Labels are the group and client id only.

The ``rdkafka_*`` rows exist only for confluent-kafka consumers built by ``create_consumer``
with ``statistics.interval.ms`` set: they are librdkafka's own ``cgrp`` statistics
(:mod:`.rdkafka_stats`), as of its last emission. Its three text fields are in the snapshot
only (:data:`TEXT_FIELDS`): a string is no gauge, and a label per state would add series.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["METRICS", "TEXT_FIELDS", "MetricInfo"]


@dataclass(frozen=True)
class MetricInfo:
    """One metric. ``kind``: ``counter`` (only grows) or ``gauge``; ``unit``: of the plain
    value; ``scale``: plain value times ``scale`` is what the exporters report (in
    ``export_unit``); ``java``: whether the Java consumer has the same metric; ``rdkafka``:
    read from librdkafka's statistics, exported only once some arrived
    (:meth:`~.recorder.RebalanceMetricsSnapshot.exports`)."""

    field: str
    kind: Literal["counter", "gauge"]
    unit: str
    prometheus: str
    otel: str
    meaning: str
    java: bool = True
    scale: float = 1.0
    export_unit: str = ""
    rdkafka: bool = False

    @property
    def java_name(self) -> str:
        return self.field.replace("_", "-")


METRICS: tuple[MetricInfo, ...] = (
    MetricInfo(
        "rebalance_latency_avg",
        "gauge",
        prometheus="kafka_consumer_rebalance_latency_avg_seconds",
        otel="kafka.consumer.rebalance.latency.avg",
        meaning="Mean time of the rebalances completed in the window (JoinGroup to SyncGroup)",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "rebalance_latency_max",
        "gauge",
        prometheus="kafka_consumer_rebalance_latency_max_seconds",
        otel="kafka.consumer.rebalance.latency.max",
        meaning="Longest rebalance completed in the window",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "rebalance_latency_total",
        "counter",
        prometheus="kafka_consumer_rebalance_latency_seconds_total",
        otel="kafka.consumer.rebalance.latency.total",
        meaning="Time spent in completed rebalances since the consumer started",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "rebalance_total",
        "counter",
        "rebalances",
        "kafka_consumer_rebalances_total",
        "kafka.consumer.rebalance.count",
        "Rebalances this member completed",
    ),
    MetricInfo(
        "rebalance_rate_per_hour",
        "gauge",
        "rebalances/h",
        "kafka_consumer_rebalance_rate_per_hour",
        "kafka.consumer.rebalance.rate",
        "Completed rebalances per hour over the window",
    ),
    MetricInfo(
        "failed_rebalance_total",
        "counter",
        "attempts",
        "kafka_consumer_failed_rebalances_total",
        "kafka.consumer.rebalance.failed.count",
        "JoinGroup or SyncGroup attempts that failed during a rebalance",
    ),
    MetricInfo(
        "failed_rebalance_rate_per_hour",
        "gauge",
        "attempts/h",
        "kafka_consumer_failed_rebalance_rate_per_hour",
        "kafka.consumer.rebalance.failed.rate",
        "Failed attempts per hour over the window",
    ),
    MetricInfo(
        "last_rebalance_seconds_ago",
        "gauge",
        "s",
        "kafka_consumer_last_rebalance_age_seconds",
        "kafka.consumer.rebalance.last.age",
        "Whole seconds since the last completed rebalance; -1 before the first",
        export_unit="s",
    ),
    MetricInfo(
        "partition_revoked_latency_avg",
        "gauge",
        prometheus="kafka_consumer_partition_revoked_latency_avg_seconds",
        otel="kafka.consumer.partition.revoked.latency.avg",
        meaning="Mean time of on_partitions_revoked in the window",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "partition_revoked_latency_max",
        "gauge",
        prometheus="kafka_consumer_partition_revoked_latency_max_seconds",
        otel="kafka.consumer.partition.revoked.latency.max",
        meaning="Longest on_partitions_revoked in the window",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "partition_assigned_latency_avg",
        "gauge",
        prometheus="kafka_consumer_partition_assigned_latency_avg_seconds",
        otel="kafka.consumer.partition.assigned.latency.avg",
        meaning="Mean time of on_partitions_assigned in the window",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "partition_assigned_latency_max",
        "gauge",
        prometheus="kafka_consumer_partition_assigned_latency_max_seconds",
        otel="kafka.consumer.partition.assigned.latency.max",
        meaning="Longest on_partitions_assigned in the window",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "partition_lost_latency_avg",
        "gauge",
        prometheus="kafka_consumer_partition_lost_latency_avg_seconds",
        otel="kafka.consumer.partition.lost.latency.avg",
        meaning="Mean time of on_partitions_lost in the window",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "partition_lost_latency_max",
        "gauge",
        prometheus="kafka_consumer_partition_lost_latency_max_seconds",
        otel="kafka.consumer.partition.lost.latency.max",
        meaning="Longest on_partitions_lost in the window",
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "assigned_partitions",
        "gauge",
        "partitions",
        "kafka_consumer_assigned_partitions",
        "kafka.consumer.assigned.partitions",
        "Partitions assigned to this member now",
    ),
    MetricInfo(
        "generation",
        "gauge",
        "generation",
        "kafka_consumer_group_generation",
        "kafka.consumer.group.generation",
        "Generation of the last assignment; -1 before one and after a loss",
        java=False,
    ),
    MetricInfo(
        "partitions_revoked_total",
        "counter",
        "partitions",
        "kafka_consumer_partitions_revoked_total",
        "kafka.consumer.partitions.revoked",
        "Partitions handed to on_partitions_revoked",
        java=False,
    ),
    MetricInfo(
        "partitions_lost_total",
        "counter",
        "partitions",
        "kafka_consumer_partitions_lost_total",
        "kafka.consumer.partitions.lost",
        "Partitions handed to on_partitions_lost",
        java=False,
    ),
    MetricInfo(
        "partitions_added_total",
        "counter",
        "partitions",
        "kafka_consumer_partitions_added_total",
        "kafka.consumer.partitions.added",
        "Partitions handed to on_partitions_assigned",
        java=False,
    ),
    MetricInfo(
        "last_rebalance_partitions_revoked",
        "gauge",
        "partitions",
        "kafka_consumer_last_rebalance_partitions_revoked",
        "kafka.consumer.rebalance.last.partitions.revoked",
        "Partitions the last assignment took from this member",
        java=False,
    ),
    MetricInfo(
        "last_rebalance_partitions_added",
        "gauge",
        "partitions",
        "kafka_consumer_last_rebalance_partitions_added",
        "kafka.consumer.rebalance.last.partitions.added",
        "Partitions the last assignment gave this member",
        java=False,
    ),
    MetricInfo(
        "leader_assign_total",
        "counter",
        "assignments",
        "kafka_consumer_leader_assignments_total",
        "kafka.consumer.leader.assignments",
        "Assignments this member computed as the group's leader",
        java=False,
    ),
    MetricInfo(
        "leader_assign_decode_ms_total",
        "counter",
        prometheus="kafka_consumer_leader_assign_decode_seconds_total",
        otel="kafka.consumer.leader.assign.decode.time",
        meaning="Leader time decoding members' metadata",
        java=False,
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "leader_assign_engine_ms_total",
        "counter",
        prometheus="kafka_consumer_leader_assign_engine_seconds_total",
        otel="kafka.consumer.leader.assign.engine.time",
        meaning="Leader time in the assignment engine",
        java=False,
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "leader_assign_encode_ms_total",
        "counter",
        prometheus="kafka_consumer_leader_assign_encode_seconds_total",
        otel="kafka.consumer.leader.assign.encode.time",
        meaning="Leader time encoding the assignments",
        java=False,
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "leader_assign_latency_max",
        "gauge",
        prometheus="kafka_consumer_leader_assign_latency_max_seconds",
        otel="kafka.consumer.leader.assign.latency.max",
        meaning="Longest leader assignment (decode, engine, encode, these metrics) in the window",
        java=False,
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "partitions_moved_total",
        "counter",
        "partitions",
        "kafka_consumer_partitions_moved_total",
        "kafka.consumer.partitions.moved",
        "Partitions the leader took from their valid owner (balance)",
        java=False,
    ),
    MetricInfo(
        "last_assign_partitions_moved",
        "gauge",
        "partitions",
        "kafka_consumer_last_assign_partitions_moved",
        "kafka.consumer.leader.last.partitions.moved",
        "Partitions moved by the last assignment this member led",
        java=False,
    ),
    MetricInfo(
        "claims_honoured_total",
        "counter",
        "claims",
        "kafka_consumer_claims_honoured_total",
        "kafka.consumer.claims.honoured",
        "Ownership claims the leader kept",
        java=False,
    ),
    MetricInfo(
        "claims_refused_stale_total",
        "counter",
        "claims",
        "kafka_consumer_claims_refused_stale_total",
        "kafka.consumer.claims.refused.stale",
        "Claims beaten by a higher generation",
        java=False,
    ),
    MetricInfo(
        "claims_refused_contested_total",
        "counter",
        "claims",
        "kafka_consumer_claims_refused_contested_total",
        "kafka.consumer.claims.refused.contested",
        "Claims tied at the highest generation",
        java=False,
    ),
    MetricInfo(
        "claims_refused_invalid_total",
        "counter",
        "claims",
        "kafka_consumer_claims_refused_invalid_total",
        "kafka.consumer.claims.refused.invalid",
        "Claims of unknown, unsubscribed or out-of-range partitions",
        java=False,
    ),
    MetricInfo(
        "members_unreadable_total",
        "counter",
        "members",
        "kafka_consumer_members_unreadable_total",
        "kafka.consumer.members.unreadable",
        "Members given an empty assignment: metadata unreadable",
        java=False,
    ),
    MetricInfo(
        "rack_local_ratio",
        "gauge",
        "ratio",
        "kafka_consumer_rack_local_ratio",
        "kafka.consumer.rack.local.ratio",
        "Share of rack-aware placements on a replica's rack (leader, all rounds)",
        java=False,
    ),
    MetricInfo(
        "rdkafka_rebalance_cnt",
        "counter",
        "rebalances",
        "kafka_consumer_rdkafka_rebalances_total",
        "kafka.consumer.rdkafka.rebalance.count",
        "librdkafka statistics: rebalances (assign or revoke) since start; -1 before any",
        java=False,
        rdkafka=True,
    ),
    MetricInfo(
        "rdkafka_rebalance_age",
        "gauge",
        prometheus="kafka_consumer_rdkafka_rebalance_age_seconds",
        otel="kafka.consumer.rdkafka.rebalance.age",
        meaning="librdkafka statistics: time since its last rebalance, as of the last emission",
        java=False,
        rdkafka=True,
        unit="ms",
        scale=0.001,
        export_unit="s",
    ),
    MetricInfo(
        "rdkafka_assignment_size",
        "gauge",
        "partitions",
        "kafka_consumer_rdkafka_assignment_size",
        "kafka.consumer.rdkafka.assignment.size",
        "librdkafka statistics: partitions in the current assignment; -1 before any",
        java=False,
        rdkafka=True,
    ),
    MetricInfo(
        "rdkafka_group_up",
        "gauge",
        "state",
        "kafka_consumer_rdkafka_group_up",
        "kafka.consumer.rdkafka.group.up",
        "librdkafka statistics: 1 when the group handler's state is up, else 0; -1 before any",
        java=False,
        rdkafka=True,
    ),
)

#: Snapshot fields holding text (librdkafka's ``cgrp`` strings; ``""`` before any statistics):
#: read from the snapshot, never exported. Field name to meaning.
TEXT_FIELDS: dict[str, str] = {
    "rdkafka_state": "librdkafka's group handler state (e.g. up, wait-coord)",
    "rdkafka_join_state": "librdkafka's join state (e.g. steady, wait-join)",
    "rdkafka_rebalance_reason": "why librdkafka's last rebalance happened, or empty",
}
