"""Keep fetching the owned partitions while a cooperative rejoin is in flight (kafka-python
3.0.x, 2.3.x and 2.2.x).

kafka-python's ``KafkaConsumer._poll_once`` returns no records while ``coordinator.poll()``
has not finished a join: the JoinGroup/SyncGroup round trip is awaited with the whole
``poll()`` timeout, and ``poll()`` returns ``{}`` until it completes. A cooperative member
(KIP-429) keeps its partitions through the rebalance, so it stops consuming partitions it owns
for as long as the slowest member of the group takes to rejoin. Java's consumer polls its
coordinator with ``waitForJoinGroup=false`` (a zero timer for the join) and fetches its owned
partitions meanwhile.

These hooks do the same on *one coordinator instance*: while :func:`keeps_fetching` holds,
``coordinator.poll`` drives the join without waiting for it (timeout 0: the pre-join step
runs as before; the JoinGroup/SyncGroup task, kept across polls by the client, progresses
while the consumer's fetch waits on the network) and answers "ready" so that ``_poll_once``
fetches the partitions the member still owns; ``coordinator.time_to_next_poll`` is capped at
``retry_backoff_ms`` so a finished join is completed within that delay (and an overdue
heartbeat or auto-commit deadline does not make the fetch loop spin).

Invariants (unchanged by these hooks, which only decide *when* the client fetches):
revoked partitions leave the assignment in ``on_partitions_revoked`` (marked pending
revocation first, so the fetcher drops their buffered records); lost partitions leave it
before anything is fetched (a lost membership never takes this path: the client's own wait
applies); the auto-commit is skipped while the join is in flight (``coordinator.poll``
returns before it, as Java's does), and, since records were returned after the pre-join
commit, the hooks auto-commit the consumed positions of the partitions a round revokes
right before ``on_partitions_revoked`` (with ``enable_auto_commit``; Java's classic consumer
does not, so its next owner reads them again); every commit stays checked by the commit
guard.
Under the eager protocol a rejoining member owns nothing, so nothing changes there.
kafka-python 2.0.2's ``coordinator.poll()`` has no timeout (it blocks until joined): these
hooks are not installed there (see :func:`supported`).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from ....assignor.decisions import membership_lost
from ....assignor.rebalance import RebalanceProtocol

__all__ = ["KeepFetching", "keeps_fetching", "supported"]


def keeps_fetching(
    *,
    protocol: RebalanceProtocol,
    auto_assigned: bool,
    owns_partitions: bool,
    lost: bool,
    rebalancing: bool,
) -> bool:
    """Whether a member fetches its owned partitions instead of waiting for its join (pure):
    only a cooperative, subscribed member, during a rebalance, that still owns partitions
    under a membership it has not lost."""
    return (
        protocol is RebalanceProtocol.COOPERATIVE
        and auto_assigned
        and owns_partitions
        and not lost
        and rebalancing
    )


def supported(coordinator: Any) -> bool:
    """Whether this client's ``coordinator.poll`` takes a timeout (3.0.x, 2.3.x, 2.2.x; not
    2.0.2 nor kafka-python-ng 2.2.x, whose ``poll()`` blocks until the join completes)."""
    try:
        return "timeout_ms" in inspect.signature(coordinator.poll).parameters
    except (TypeError, ValueError):
        return False


class KeepFetching:
    """The patch on one consumer's coordinator (see the module docstring).

    ``protocol``: the group's rebalance protocol, selected at install time; ``patch`` is the
    hooks' instance patcher (so ``uninstall`` restores the client's methods).
    """

    def __init__(self, consumer: Any, protocol: RebalanceProtocol) -> None:
        self._coordinator = consumer._coordinator
        self._subscription = consumer._subscription
        self._protocol = protocol
        self._cap_s = float(consumer.config["retry_backoff_ms"]) / 1000
        self._client_poll: Callable[..., Any] | None = None
        self._client_time_to_next_poll: Callable[[], float] | None = None
        #: How many ``poll()`` calls fetched while the join was in flight (for tests/metrics).
        self.polls_during_join = 0
        #: Whether :meth:`install` patched the coordinator (the hooks then also auto-commit
        #: what a round revokes before it leaves: records of it were returned meanwhile).
        self.installed = False

    def install(self, patch: Callable[[Any, str, Callable[..., Any]], None]) -> bool:
        """Patch ``poll`` and ``time_to_next_poll`` under the cooperative protocol on a client
        whose ``coordinator.poll`` takes a timeout; returns whether it did."""
        coordinator = self._coordinator
        if self._protocol is not RebalanceProtocol.COOPERATIVE or not supported(coordinator):
            return False
        self._client_poll = coordinator.poll
        self._client_time_to_next_poll = coordinator.time_to_next_poll
        patch(coordinator, "poll", self.poll)
        patch(coordinator, "time_to_next_poll", self.time_to_next_poll)
        self.installed = True
        return True

    def revoked_offsets(self, revoked: Any) -> dict[Any, Any]:
        """The consumed positions of ``revoked`` partitions that the hooks auto-commit right
        before ``on_partitions_revoked`` (records of them were returned while the join was in
        flight, after the pre-join commit); empty when this patch is not installed or
        auto-commit is off (the listener commits then)."""
        if not self.installed or not self._coordinator.config["enable_auto_commit"]:
            return {}
        wanted = set(revoked)
        consumed = self._subscription.all_consumed_offsets().items()
        return {tp: offset for tp, offset in consumed if tp in wanted}

    def active(self) -> bool:
        """:func:`keeps_fetching` for this member now."""
        coordinator = self._coordinator
        sub = self._subscription
        generation = coordinator._generation
        return keeps_fetching(
            protocol=self._protocol,
            auto_assigned=bool(sub.partitions_auto_assigned()),
            owns_partitions=bool(sub.assigned_partitions()),
            lost=membership_lost(generation.generation_id, generation.member_id),
            rebalancing=bool(coordinator.rejoining or coordinator.need_rejoin()),
        )

    def poll(self, timeout_ms: int | None = None, **kwargs: Any) -> bool:
        """The client's ``coordinator.poll``; during a cooperative rebalance the join is not
        waited for, and the member fetches what it still owns."""
        assert self._client_poll is not None
        if not self.active():
            return bool(self._client_poll(timeout_ms=timeout_ms, **kwargs))
        if self._client_poll(timeout_ms=0, **kwargs):
            return True  # the join completed (or was not needed after all)
        # The join is in flight. The pre-join step may just have given partitions up (a
        # listener, a dropped topic) or the membership may have been lost: check again.
        if not self.active():
            return False
        self.polls_during_join += 1
        return True

    def time_to_next_poll(self) -> float:
        """The client's answer, at most ``retry_backoff_ms`` while a join is in flight (the
        heartbeat is off then, and the join's completion is noticed by the next poll)."""
        assert self._client_time_to_next_poll is not None
        if self.active():
            return self._cap_s
        return float(self._client_time_to_next_poll())
