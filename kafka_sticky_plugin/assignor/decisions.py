"""Pure rebalance decisions shared by every client family (no client objects, no I/O).

The coordinator hooks ask two questions per rebalance and act on the answers:

- before JoinGroup (:func:`decide_prepare`): was membership lost, and which owned partitions
  must be given up *now*, with which callback;
- after SyncGroup (:func:`decide_complete`): which partitions leave, which arrive, which are
  kept (their fetch positions must survive), and whether another round is needed;
- which listener callback receives lost partitions (:func:`lost_method_name`), and which
  assigned partitions a member must refuse (:func:`drop_unsubscribed`).

Invariants (checked by the property tests in ``tests/hooks``): the sets of every decision
partition their input (``lost | revoked | kept == owned`` before the join; under COOPERATIVE
``revoked | kept == owned`` and ``added | kept == assigned`` after it, and a partition is
never both revoked and added); a follow-up rebalance is requested exactly when a COOPERATIVE
round revoked something. Under EAGER everything was revoked before the join, so after it
nothing is revoked or kept again: the whole assignment is new (``added == assigned``).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from .rebalance import RebalanceProtocol

__all__ = [
    "CompleteDecision",
    "PrepareDecision",
    "decide_complete",
    "decide_prepare",
    "drop_unsubscribed",
    "log_assigned",
    "lost_method_name",
    "membership_lost",
]

NO_GENERATION_ID = -1
UNKNOWN_MEMBER_ID = ""

P = TypeVar("P", bound=Hashable)


def membership_lost(generation_id: int, member_id: str | None) -> bool:
    """Java's rule: no generation or no member id means the broker no longer knows us."""
    return generation_id == NO_GENERATION_ID or not member_id


@dataclass(frozen=True)
class PrepareDecision(Generic[P]):
    """What to do before (re-)joining.

    ``lost``: partitions to hand to ``on_partitions_lost`` (no commit, join state forgotten).
    ``revoked``: partitions to hand to ``on_partitions_revoked`` before they leave.
    ``kept``: partitions that stay assigned across the JoinGroup.
    ``commit``: whether the auto-commit may run (never for lost partitions).
    """

    lost: frozenset[P]
    revoked: frozenset[P]
    kept: frozenset[P]
    commit: bool
    forget_join: bool


@dataclass(frozen=True)
class CompleteDecision(Generic[P]):
    """What to do with a new assignment.

    ``revoked`` leave (callback first), ``added`` arrive, ``kept`` keep their fetch state;
    ``assigned_callback`` is the set ``on_partitions_assigned`` receives; ``rejoin`` asks for
    the follow-up round of KIP-429.
    """

    revoked: frozenset[P]
    added: frozenset[P]
    kept: frozenset[P]
    assigned_callback: frozenset[P]
    rejoin: bool


def decide_prepare(
    owned: Iterable[P],
    subscribed_topic_of: dict[P, bool],
    protocol: RebalanceProtocol,
    lost: bool,
) -> PrepareDecision[P]:
    """Decide the pre-join step.

    ``subscribed_topic_of[p]`` tells whether partition ``p``'s topic is still subscribed
    (KIP-70: a dropped topic's partitions are revoked at this rebalance, not before).
    EAGER revokes everything owned; COOPERATIVE revokes only dropped topics' partitions.
    """
    owned_set = frozenset(owned)
    empty: frozenset[P] = frozenset()
    if lost:
        return PrepareDecision(owned_set, empty, empty, commit=False, forget_join=True)
    if protocol is RebalanceProtocol.EAGER:
        return PrepareDecision(empty, owned_set, empty, commit=True, forget_join=False)
    revoked = frozenset(p for p in owned_set if not subscribed_topic_of.get(p, False))
    return PrepareDecision(empty, revoked, owned_set - revoked, commit=True, forget_join=False)


def decide_complete(
    owned: Iterable[P], assigned: Iterable[P], protocol: RebalanceProtocol
) -> CompleteDecision[P]:
    """Decide the post-sync step (EAGER already revoked everything before the join)."""
    owned_set = frozenset(owned)
    assigned_set = frozenset(assigned)
    if protocol is RebalanceProtocol.EAGER:
        empty: frozenset[P] = frozenset()
        return CompleteDecision(
            revoked=empty,
            added=assigned_set,
            kept=empty,
            assigned_callback=assigned_set,
            rejoin=False,
        )
    revoked = owned_set - assigned_set
    added = assigned_set - owned_set
    return CompleteDecision(
        revoked=revoked,
        added=added,
        kept=owned_set & assigned_set,
        assigned_callback=added,
        rejoin=bool(revoked),
    )


def lost_method_name(listener: Any) -> str:
    """The listener method that receives lost partitions: ``on_partitions_lost`` when the
    listener defines it as a callable, else ``on_partitions_revoked`` (Java's default method;
    kafka-python 2.x and aiokafka listeners predate KIP-429). An attribute that is not
    callable (``on_partitions_lost = None``) does not count."""
    method = getattr(listener, "on_partitions_lost", None)
    return "on_partitions_lost" if callable(method) else "on_partitions_revoked"


def drop_unsubscribed(
    assigned: set[Any], topics: Iterable[str], group_id: str, log: logging.Logger
) -> bool:
    """Remove from ``assigned`` (the client's partitions, with ``.topic``) those of topics the
    member is not subscribed to, with one warning line on ``log``; true when any were removed,
    and the caller then requests a rejoin, as the clients do."""
    subscribed = set(topics)
    unsubscribed = {tp for tp in assigned if tp.topic not in subscribed}
    if not unsubscribed:
        return False
    log.warning(
        "group %s: assignment has partitions of unsubscribed topics %s; rejoining",
        group_id,
        sorted(unsubscribed),
    )
    assigned -= unsubscribed
    return True


def log_assigned(
    log: logging.Logger,
    group_id: str,
    generation: int,
    assigned: Collection[Any],
    decision: CompleteDecision[Any],
) -> None:
    """One INFO line per applied assignment with counts; the partition lists at DEBUG only
    (at a million partitions a list is megabytes, so it is not even built otherwise)."""
    log.info(
        "group %s generation %s: assigned %d partitions (added %d, revoked %d)",
        group_id,
        generation,
        len(assigned),
        len(decision.added),
        len(decision.revoked),
    )
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "group %s generation %s: assigned %s (added %s, revoked %s)",
            group_id,
            generation,
            sorted(assigned),
            sorted(decision.added),
            sorted(decision.revoked),
        )
