"""The commit guard's rule, client-free: which partitions of a commit this member may commit.

A member may commit a partition only while it owns it: the partition is in its current
assignment *and* the member holds a generation (it is in the group). Everything else is a
"zombie" commit (a stale view after a revocation, a loss, or a partition never assigned):
on the classic protocol the broker accepts it from any current member and moves the new
owner's committed offset (KIP-1251 closes this on the broker side with assignment epochs;
the guard closes it on the client side for every client we hook).

Partitions being revoked stay owned until the revocation callback returns (so the
``on_partitions_revoked`` commit still works, as in Java); lost partitions are not owned
from the moment the loss is known (the membership is already reset). The adapters apply the
rule *when the OffsetCommit request is built*, not when the user called ``commit``, so a
commit queued behind a coordinator lookup or racing a rebalance is checked against the
assignment of the moment it would be sent.

Two modes (:data:`GuardMode`), both commit the owned partitions of a commit:

- ``"refuse"`` (default): then raise :class:`~kafka_sticky_plugin.errors.CommitRefusedError`
  naming the refused partitions (an async commit's callback or future receives it);
- ``"drop"``: then log one WARNING line naming them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Container, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from ..errors import CommitRefusedError, ConfigurationError

__all__ = [
    "GUARD_MODES",
    "CommitGuard",
    "CommitVerdict",
    "GuardMode",
    "check_mode",
    "split_commit",
    "topic_partition_pairs",
]

log = logging.getLogger("kafka_sticky_plugin.commit_guard")

GuardMode = Literal["refuse", "drop"]
GUARD_MODES: tuple[GuardMode, ...] = ("refuse", "drop")

K = TypeVar("K")
V = TypeVar("V")

_NOT_ASSIGNED = "not in its assignment: revoked, lost or never assigned"
_NO_GENERATION = "its membership is lost or not yet joined"


def check_mode(mode: object) -> GuardMode:
    """``mode`` as a :data:`GuardMode`; anything else raises one clear ``ConfigurationError``."""
    if mode not in GUARD_MODES:
        raise ConfigurationError(
            f"commit guard mode must be one of {', '.join(map(repr, GUARD_MODES))}, not {mode!r}"
        )
    return mode


def topic_partition_pairs(partitions: Iterable[Any]) -> list[tuple[str, int]]:
    """Sorted ``(topic, partition)`` pairs of any client's partition objects (or pairs)."""
    pairs = []
    for tp in partitions:
        if isinstance(tp, tuple) and len(tp) == 2 and not hasattr(tp, "topic"):
            pairs.append((str(tp[0]), int(tp[1])))
        else:
            pairs.append((str(tp.topic), int(tp.partition)))
    return sorted(pairs)


@dataclass(frozen=True)
class CommitVerdict(Generic[K, V]):
    """One commit split by the rule: ``allowed`` (the offsets to send, in the caller's
    order), ``refused`` (the partitions withheld) and ``why`` they were refused (empty when
    nothing was)."""

    allowed: dict[K, V]
    refused: list[K]
    why: str = ""


def split_commit(
    offsets: Mapping[K, V], owned: Container[K], in_generation: bool = True
) -> CommitVerdict[K, V]:
    """Split ``offsets`` by ownership: a partition is allowed iff it is in ``owned`` and the
    member holds a generation (``in_generation``); without one nothing is allowed."""
    if not in_generation:
        return CommitVerdict({}, list(offsets), _NO_GENERATION if offsets else "")
    allowed = {tp: offset for tp, offset in offsets.items() if tp in owned}
    refused = [tp for tp in offsets if tp not in owned]
    return CommitVerdict(allowed, refused, _NOT_ASSIGNED if refused else "")


@dataclass
class CommitGuard:
    """One consumer's guard: its mode and group, and what it refused so far.

    ``owned`` and ``in_generation`` are read from the hooks at every check (the hooks'
    view is the single source of ownership; the guard keeps none of its own).
    Invariant: a partition counted in ``refused_total`` was never sent.
    """

    group_id: str
    mode: GuardMode
    owned: Callable[[], Container[Any]]
    in_generation: Callable[[], bool]
    refused_total: int = 0

    def split(self, offsets: Mapping[K, V]) -> CommitVerdict[K, V]:
        """The verdict for ``offsets`` against the ownership of this moment."""
        verdict = split_commit(offsets, self.owned(), self.in_generation())
        self.refused_total += len(verdict.refused)
        return verdict

    def settle(self, verdict: CommitVerdict[Any, Any]) -> None:
        """After the allowed part was committed: raise (``refuse``) or warn (``drop``)
        about the refused partitions; nothing when none were refused."""
        if not verdict.refused:
            return
        pairs = topic_partition_pairs(verdict.refused)
        if self.mode == "refuse":
            raise CommitRefusedError(self.group_id, pairs, verdict.why)
        log.warning(
            "group %s: commit guard dropped %d partition(s) this consumer does not own (%s): %s",
            self.group_id,
            len(pairs),
            verdict.why,
            ", ".join(f"{topic}-{partition}" for topic, partition in pairs),
        )
