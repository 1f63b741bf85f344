"""A rolling switch from aiokafka's own ``sticky`` to ours, led by an aiokafka-native leader.

Both assignors are named ``sticky``, so a group can move from aiokafka's own
``StickyPartitionAssignor`` to :class:`kafka_sticky_plugin.aiokafka.StickyAssignor` one member
at a time, without the hooks (issue 40). While a native member leads, it must read the
previous assignment our members send, or it reshuffles their partitions: aiokafka's leader
reads sticky user data v1 only, and our member that does not know its generation (always, for
an aiokafka member without the hooks: aiokafka#1176) used to write v0.

Every native member gets a subclass of its own: aiokafka's assignor keeps a member's state on
the class (aiokafka#1175), and the members here share one process. The subclass only records
what its leader read (``parse_member_metadata``, aiokafka's own reader) and who led.

Checked at every stable point: every partition owned once; each member present before and
after kept ``min(before, after)`` of its partitions (no move balance did not require); the
leader of every round was a native member; aiokafka logged no ``Could not parse member data``;
and, once our members hold history, the native leader read it. About 30 s per run.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import Mapping
from typing import Any

import pytest
from aiokafka.coordinator.assignors.sticky.sticky_assignor import StickyPartitionAssignor
from hooks_harness import wait_stable

from kafka_sticky_plugin.aiokafka import StickyAssignor

pytestmark = pytest.mark.timeout(240)

Partition = tuple[str, int]

#: Per round led by a native member: its name and what it read of each member's history.
ROUNDS: list[tuple[str, dict[str, frozenset[Partition]]]] = []


def _native(name: str) -> type[StickyPartitionAssignor]:
    """aiokafka's own sticky assignor with its class state to itself, recording its rounds."""

    def assign(cls: Any, cluster: Any, members: Mapping[str, Any]) -> Any:
        read = {
            member: frozenset(
                (tp.topic, tp.partition) for tp in cls.parse_member_metadata(meta).partitions
            )
            for member, meta in members.items()
        }
        ROUNDS.append((name, read))
        return StickyPartitionAssignor.assign.__func__(cls, cluster, members)  # type: ignore[attr-defined]

    return type(
        f"NativeSticky_{name}",
        (StickyPartitionAssignor,),
        {"member_assignment": None, "generation": -1, "assign": classmethod(assign)},
    )


def _check_sticky(
    before: Mapping[str, frozenset[Partition]], after: Mapping[str, frozenset[Partition]]
) -> None:
    for member in before.keys() & after.keys():
        kept = before[member] & after[member]
        want = min(len(before[member]), len(after[member]))
        assert len(kept) == want, f"{member} kept {sorted(kept)} of {sorted(before[member])}"


def test_rolling_switch_from_aiokafka_sticky_to_ours_keeps_partitions(
    group: Any, caplog: pytest.LogCaptureFixture
) -> None:
    ROUNDS.clear()
    g = group({"t": 6})
    everything = g.all_partitions()
    with caplog.at_level(logging.ERROR, logger="aiokafka"):
        native = {n: g.aio(n, strategy=[_native(n)], hooks=False) for n in ("n1",)}
        wait_stable(list(native.values()), everything)  # n1 forms the group: it leads
        native |= {n: g.aio(n, strategy=[_native(n)], hooks=False) for n in ("n2", "n3")}
        live = dict(native)
        before = wait_stable(list(live.values()), everything)
        stable_points = [before]
        # n3, then n2, switch to ours; n1 (native) stays and leads every round.
        for old, new in (("n3", "o3"), ("n2", "o2")):
            live.pop(old).stop()
            stable_points.append(wait_stable(list(live.values()), everything))
            live[new] = g.aio(new, strategy=[StickyAssignor()], hooks=False)
            stable_points.append(wait_stable(list(live.values()), everything))
    for earlier, later in itertools.pairwise(stable_points):
        _check_sticky(earlier, later)
    leaders = {name for name, _ in ROUNDS}
    assert leaders == {"n1"}, f"rounds were led by {leaders}"
    parse_errors = [r for r in caplog.records if "Could not parse" in r.getMessage()]
    assert not parse_errors, parse_errors[0].getMessage()
    # The native leader read o3's history: what o3 held at a stable point (partitions are
    # exclusive, so only o3 can have sent exactly that set).
    o3_held = stable_points[2]["o3"]
    assert any(o3_held in read.values() for _, read in ROUNDS), (
        f"the native leader never read o3's history {sorted(o3_held)}: {ROUNDS}"
    )
