"""kafka-python 3.0.12 discards a JoinGroup/SyncGroup that finishes between two polls.

A consumer that works about a second between short polls sees its join task finish while it
is busy; 3.0.12's next poll starts a new JoinGroup instead of using the result, forever. The
hooks complete the finished task. The ``without_hooks`` variant is a strict xfail: it
demonstrates the defect on the real broker.

The defect needs a JoinGroup that is answered while the member works: the embedded broker
holds every JoinGroup for seconds (``prompt_join_response`` is False), so it always shows
there. Apache Kafka usually answers within the member's 100 ms poll, so the same member
usually joins without the hooks, but not always: on a loaded machine an answer that comes
during the member's work meets the defect, so whether it joins is timing, not a property to
assert (it failed once in two suite runs on a 2-core machine). There the ``without_hooks``
variant is skipped, and the ``with_hooks`` one is the check.
"""

from __future__ import annotations

import time
from typing import Any

import kafka
import pytest
from hooks_harness import Member, create_topics, unique

from kafka_sticky_plugin import CooperativeStickyAssignor

pytestmark = [
    pytest.mark.skipif(not kafka.__version__.startswith("3."), reason="kafka-python 3.0 defect"),
    pytest.mark.timeout(90),
]

JOIN_WITHIN_S = 25.0


def _joins_while_working_between_polls(broker: Any, hooks: bool) -> bool:
    topic = unique("t-slow")
    create_topics(broker.bootstrap, {topic: 2})
    member = Member(
        "slow",
        broker.bootstrap,
        unique("g-slow"),
        [topic],
        [CooperativeStickyAssignor],
        hooks=hooks,
        poll_ms=100,
        work_s=1.2,
    ).start()
    try:
        deadline = time.monotonic() + JOIN_WITHIN_S
        while time.monotonic() < deadline:
            member.check()
            if member.snapshot():
                return True
            time.sleep(0.2)
        return False
    finally:
        member.stop()


def test_slow_poller_joins_with_hooks(broker: Any) -> None:
    """With the hooks, a member working 1.2 s between 100 ms polls joins its group."""
    assert _joins_while_working_between_polls(broker, hooks=True)


@pytest.mark.xfail(strict=True, reason="kafka-python 3.0.12 discards finished joins")
def test_slow_poller_joins_without_hooks(broker: Any) -> None:
    """Without the hooks the same member never completes a join where joins are held (a
    strict xfail); where they are answered promptly, joining is timing (see the module
    docstring), so the test is skipped there."""
    if broker.profile.prompt_join_response:
        pytest.skip("the broker answers JoinGroup promptly: joining without hooks is timing")
    assert _joins_while_working_between_polls(broker, hooks=False)
