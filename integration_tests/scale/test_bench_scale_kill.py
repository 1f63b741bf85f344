"""``make bench-scale``'s kill step in small, so it cannot rot (issue 38, "one member
killed"): the benchmark's own :func:`testlab.bench_scale.run_sizes` with 3 members, 2 per
process and the last one alone in its own process, one restart, then that process SIGKILLed,
for our classic cooperative-sticky (hooked kafka-python), confluent-kafka under KIP-848 and
Java 4.4.0's classic cooperative-sticky (one JVM holding the lone member; skipped where
java/javac/mvn are missing).

Asserted for every row: the row kept its guarantees (nothing lost, never two owners, and the
run's own check that the kill step killed the lone member and nobody else); the kill step
was measured (its member, a pause on the killed member's partitions, which moved, a stable
group after it) and lost nothing, with no two owners. No time is asserted (a 2-core
machine's timing is not this test's business); the figures are printed.
"""

from __future__ import annotations

import pytest

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from testlab.bench_scale import format_table, run_sizes
from testlab.rolling_compare import choose_peers

PEERS = "kafka-python/cooperative-sticky,confluent/uniform,java/cooperative-sticky"


@pytest.mark.timeout(600)
def test_bench_scale_rows_measure_one_member_killed(broker: RunningBroker) -> None:
    if broker.profile.name != "apache-kafka":
        pytest.skip(
            f"bench-scale runs on Apache Kafka (KIP-848 rows); this is {broker.profile.name}"
        )
    rows, skipped = run_sizes(
        broker.bootstrap,
        [3],
        choose_peers(PEERS),
        topics=2,
        partitions_per_topic=6,
        rate_per_s=50.0,
        per_process=2,
        restarts=1,
    )
    print("\n" + format_table(rows) + "\n" + "\n".join(skipped))
    failed = [s for s in skipped if "failed" in s]
    assert not failed, failed
    clients = {r.row.client for r in rows}
    assert {"kafka-python", "confluent"} <= clients, skipped  # Java: where its tools are
    assert len(rows) + len(skipped) == 3, skipped
    for scale in rows:
        row = scale.row
        assert row.problems == (), row.problems
        assert (row.bounces, row.lost, row.overlaps) == (1, 0, 0), row
        kill = row.kill
        assert kill is not None, row
        assert kill.killed == "m2#0", kill
        assert (kill.guarantees.lost, kill.guarantees.overlaps) == (0, 0), kill
        assert kill.pause.moved >= 1 and kill.paused_partition_s > 0, kill
        assert kill.pause.moved_paused_s > 0 and kill.stable_s > 0, kill
        assert scale.session_timeout_s in (6.0, 10.0), scale
