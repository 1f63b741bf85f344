"""``make bench-rolling`` in small, so it cannot rot: the same rolling restart, reduced to 3
members and 6 partitions, for our classic cooperative-sticky (hooked kafka-python) and the two
KIP-848 clients (confluent-kafka, and Java 4.4.0 where java/javac/mvn are installed), through
the very functions the benchmark runs (:mod:`testlab.rolling_compare`).

Apache Kafka only (the embedded Tansu broker has no KIP-848): skipped there in one line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from testlab.rolling_compare import PEERS, run_peers, write_report

SMOKE_PEERS = ("kafka-python/cooperative-sticky", "confluent/uniform", "java/uniform")


def test_rolling_restart_comparison_in_small(broker: RunningBroker, tmp_path: Path) -> None:
    """Every peer that can run here restarts each of its 3 members once; nothing acknowledged
    is lost, no partition has two owners, every restart pauses something (a leaving member's
    partitions wait for the next owner) and every paused partition is consumed again; the
    report files hold one row per peer that ran."""
    if broker.profile.name != "apache-kafka":
        pytest.skip(f"KIP-848 needs Apache Kafka; this broker is {broker.profile.name}")
    peers = [p for p in PEERS if p.key in SMOKE_PEERS]
    rows, skipped = run_peers(broker.bootstrap, peers, members=3, partitions=6, rate_per_s=50.0)
    print("\n".join(skipped))
    assert len(rows) + len(skipped) == len(peers) == 3
    assert [r.client for r in rows][:2] == ["kafka-python", "confluent"], skipped
    for row in rows:
        assert row.problems == (), row
        assert (row.lost, row.overlaps, row.bounces) == (0, 0, 3), row
        assert row.paused_ps_per_bounce > 0, row
        assert row.recovery_s_mean is not None and row.recovery_s_mean > 0, row
        assert row.handovers_per_bounce > 0, row
    assert rows[0].rounds_per_bounce is not None and rows[0].rounds_per_bounce >= 1
    text = write_report(tmp_path, "smoke", rows, skipped, {"members": 3})
    print(text)
    document = json.loads((tmp_path / "rolling-compare.json").read_text(encoding="utf-8"))
    assert [r["assignor"] for r in document["rows"]] == [r.assignor for r in rows]
