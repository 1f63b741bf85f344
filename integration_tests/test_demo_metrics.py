"""The demo, run as a user runs it, prints the members' rebalance metrics per strategy, and
their counts agree with the demo's own (which it measures from the harness's events).

One small run (2 members, 4 partitions, eager ``sticky`` and ``cooperative-sticky``) on the
session's broker through the demo's entry point; both printed tables are read back:

- every member incarnation reported (the initial members plus one per restart);
- each incarnation completed at least its own first rebalance, so the members' summed
  ``rebalance-total`` is at least the incarnations, and at least the demo's rebalance rounds;
- the leaders computed at least one assignment and no more than the rebalances completed;
- nothing was lost (clean restarts), and the listeners were told to revoke at least what the
  demo saw the non-restarting members give up (the metrics also count the restarting
  member's own revocation at close).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafka_sticky_plugin.brokers.embedded import RunningBroker
from kafka_sticky_plugin.demo.cli import main

MEMBERS = 2


def _tables(output: str) -> list[dict[str, dict[str, str]]]:
    """Every Markdown table printed, as ``{strategy: {column: cell}}``, in order."""
    tables: list[dict[str, dict[str, str]]] = []
    header: list[str] | None = None
    for line in output.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
            tables.append({})
        elif not set(line) <= set("|-: "):
            tables[-1][cells[0]] = dict(zip(header, cells, strict=True))
    return tables


ROOT = Path(__file__).resolve().parents[1]


def _samples_have_the_layout_of(output: str) -> None:
    """README's and docs/demo.md's sample table has the layout this real run printed: the same
    header and separator lines (the demo's own printer), a row per strategy with a cell per
    column, and (docs/demo.md) the legend lines as printed. The figures are the recorded
    run's, not this one's."""
    printed = output.splitlines()
    header = next(i for i, line in enumerate(printed) if line.startswith("| strategy "))
    for document in (ROOT / "README.md", ROOT / "docs" / "demo.md"):
        text = document.read_text(encoding="utf-8")
        block = next(b for b in text.split("```")[1::2] if "strategy" in b and "restarts" in b)
        lines = block.strip("\n").splitlines()
        where = document.name
        assert lines[:2] == printed[header : header + 2], (where, lines[:2])
        rows = [line for line in lines[2:] if line.startswith("|")]
        assert [r.split("|")[1].strip() for r in rows] == ["sticky", "cooperative-sticky"], where
        assert all(r.count("|") == printed[header].count("|") for r in rows), where
        legend = lines[2 + len(rows) :]
        assert all(line in printed for line in legend), (where, legend)
    assert "revoked/restart: partitions taken" in (ROOT / "docs" / "demo.md").read_text()


@pytest.mark.timeout(240)
def test_the_demo_prints_metrics_consistent_with_its_own_counts(
    broker: RunningBroker, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status = main(
        [
            "--bootstrap",
            broker.bootstrap,
            "--strategy",
            "both",
            "--members",
            str(MEMBERS),
            "--partitions",
            "4",
            "--out",
            str(tmp_path),
        ]
    )
    output = capsys.readouterr().out
    print(output)
    assert status == 0, output
    demo, metrics = _tables(output)
    assert set(metrics) == set(demo) == {"sticky", "cooperative-sticky"}
    _samples_have_the_layout_of(output)
    for strategy, row in demo.items():
        mine = metrics[strategy]
        restarts = int(row["restarts"])
        incarnations = int(mine["members"])
        rebalances = int(mine["rebalances"])
        assert incarnations == MEMBERS + restarts, (strategy, mine)
        assert rebalances >= incarnations, (strategy, mine)
        assert rebalances >= int(row["rounds"]), (strategy, row, mine)
        assert 1 <= int(mine["assigns"]) <= rebalances, (strategy, mine)
        assert int(mine["lost"]) == 0, (strategy, mine)
        seen_revoked = round(float(row["revoked/restart"]) * restarts)
        assert int(mine["revoked"]) >= seen_revoked, (strategy, row, mine)
