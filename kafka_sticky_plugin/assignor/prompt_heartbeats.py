"""Prompt heartbeats: a short window of quicker heartbeats after a cooperative SyncGroup, so a
follow-up rebalance round is noticed in a fraction of the heartbeat interval.

Why: KIP-429 moves a partition in two rounds. The first round's SyncGroup withholds it; its
owner revokes it and rejoins at once, which starts the second round; the broker answers that
round's JoinGroups only when *every* member has rejoined, and a member that revoked nothing
learns of the round only from its next Heartbeat (REBALANCE_IN_PROGRESS). So the revoked
partition stays unowned for up to one whole ``heartbeat.interval.ms`` (the slowest member's
wait), on every move. A member cannot know that a second round is coming (that would take
data in the assignment, which blocks an online move to KIP-848), but the round can only
start shortly after a SyncGroup: the revoking member rejoins as soon as its
``on_partitions_revoked`` returned. So after every cooperative SyncGroup the member
heartbeats every :attr:`PromptHeartbeats.interval_ms` for :attr:`PromptHeartbeats.window_ms`,
then at its configured interval again.

Safety (what bounds it):

- a Heartbeat never starts a rebalance; it only learns of one (the same
  REBALANCE_IN_PROGRESS the regular heartbeat would get a little later), so the group goes
  through exactly the rounds it would go through anyway;
- at most ``window_ms / interval_ms`` extra Heartbeats per member per completed cooperative
  rebalance (10 with the defaults), none between rebalances: the steady-state request rate is
  the configured one;
- the prompt interval is never longer than the configured one (a member already heartbeating
  faster keeps its rate), and a failed heartbeat keeps the client's retry backoff;
- EAGER groups never open the window (their rebalances have no follow-up round).

Java's classic consumer has no such window; nothing in the protocol forbids it (a member may
heartbeat at any rate below the session timeout). Pure: time is passed in, nothing here does
I/O; the client adapters schedule the heartbeats (:mod:`..adapters.kafka_python.hooks.prompt`,
:mod:`..adapters.aiokafka.prompt`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ..errors import ConfigurationError

__all__ = [
    "DEFAULT_PROMPT_HEARTBEATS",
    "TALLY",
    "HeartbeatTally",
    "PromptHeartbeats",
    "PromptWindow",
]


@dataclass(frozen=True)
class PromptHeartbeats:
    """The policy: heartbeat every ``interval_ms`` for ``window_ms`` after each cooperative
    SyncGroup. Invariants: ``0 < interval_ms <= window_ms``; at most
    :attr:`extra_per_rebalance` Heartbeats per window."""

    interval_ms: int = 200
    window_ms: int = 2000

    def __post_init__(self) -> None:
        if not 0 < self.interval_ms <= self.window_ms:
            raise ConfigurationError(
                "prompt heartbeats need 0 < interval_ms <= window_ms, got"
                f" interval_ms={self.interval_ms}, window_ms={self.window_ms}"
            )

    @property
    def extra_per_rebalance(self) -> int:
        """The most Heartbeats one member sends in one window."""
        return self.window_ms // self.interval_ms


#: On by default (see the module docstring for why it is safe); ``install_hooks(consumer,
#: prompt_heartbeats=None)`` turns it off.
DEFAULT_PROMPT_HEARTBEATS = PromptHeartbeats()


class HeartbeatTally:
    """Heartbeats sent by hooked consumers in this process (all, and those sent early because
    a prompt window was open), for benchmarks that report the request rate. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.sent = 0
        self.prompt = 0

    def count(self, prompt: bool) -> None:
        """One Heartbeat sent; ``prompt``: sent before the configured interval was up."""
        with self._lock:
            self.sent += 1
            self.prompt += int(prompt)

    def read(self) -> tuple[int, int]:
        """``(sent, prompt)`` so far."""
        with self._lock:
            return self.sent, self.prompt


#: The process-wide tally (read by ``make bench-rolling``).
TALLY = HeartbeatTally()


class PromptWindow:
    """One member's window. ``policy`` ``None``: never opens. Invariant: :meth:`delay_s` is
    never longer than the client's own delay and never shorter than the policy's interval
    after the last send."""

    def __init__(self, policy: PromptHeartbeats | None) -> None:
        self.policy = policy
        self._until = float("-inf")

    def open(self, now: float) -> bool:
        """A cooperative SyncGroup completed at ``now``: open (or restart) the window.
        Returns whether it opened (``False`` when the policy is off)."""
        if self.policy is None:
            return False
        self._until = now + self.policy.window_ms / 1000
        return True

    def close(self) -> None:
        """The member rejoins or leaves: no prompt heartbeats until the next SyncGroup."""
        self._until = float("-inf")

    def is_open(self, now: float) -> bool:
        return now < self._until

    def delay_s(self, client_delay_s: float, last_send: float, now: float) -> float:
        """Seconds until the next Heartbeat: the client's ``client_delay_s`` (its interval or
        its retry backoff, already counted from its last send), or, while the window is
        open, at most ``interval_ms`` after ``last_send`` (never later than the window's
        end, when the client's own schedule applies again)."""
        if self.policy is None or not self.is_open(now):
            return client_delay_s
        prompt = max(0.0, last_send + self.policy.interval_ms / 1000 - now)
        return min(client_delay_s, prompt)

    def sent(self, now: float, tally: HeartbeatTally = TALLY) -> None:
        """Count one Heartbeat sent at ``now`` (prompt when the window is open)."""
        tally.count(self.is_open(now))
