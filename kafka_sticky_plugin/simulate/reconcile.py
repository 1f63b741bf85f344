"""One KIP-848 target epoch and its per-member reconciliation (the consumer group protocol).

Under the consumer protocol there is no group-wide barrier and no leader: when membership,
subscriptions or topics change, the broker bumps the group epoch and computes a new *target
assignment* from the previous target (its own records, not what members claim). Then each
member reconciles on its own heartbeats:

- round 1 (every member's next heartbeat): a member revokes the partitions its target leaves
  out, acknowledges, and is given the partitions of its target that nobody consumes (new
  partitions, the orphans of departed members); a partition another member still consumes is
  withheld from it;
- round 2 (the heartbeats after the acknowledgements): the withheld partitions go to their
  new owners. Nothing moves twice (the target is fixed for the epoch), so a target epoch
  takes one round, or two when any partition moves between live members.

A partition is never given to a new owner before its old owner has acknowledged (checked
here against the ground truth, as :mod:`.rebalance` checks the cooperative contract). A
member that was fenced (removed after the session timeout: the simulator's ``pause``) or is
new has no previous target: the broker does not take a member's claims, so a stale member's
``owned`` is cleared before the assignor runs.

What a round costs differs from a classic round and is not modelled in time: a classic round
is a JoinGroup/SyncGroup barrier every member takes part in (waiting for the slowest member's
poll), a KIP-848 round is one heartbeat interval of the members concerned only; members the
new target does not change do nothing at all. The ``paused_partition_rounds`` counted are
comparable unit for unit with a cooperative rebalance's.

Invariants after :func:`reconcile`: ``group.consuming`` is the new target; every member's
``owned`` is its target and its ``generation`` the group epoch.
"""

from __future__ import annotations

from functools import partial

from ..invariants import check_complete, check_valid
from .checks import check_consuming_contract, count_violations, specs_of
from .group import GroupState
from .outcome import RebalanceOutcome
from .strategies import Plan, Strategy

__all__ = ["reconcile"]


def reconcile(group: GroupState, strategy: Strategy, outcome: RebalanceOutcome) -> None:
    """Compute the new target epoch of ``group`` with ``strategy`` (a KIP-848 assignor) and
    reconcile every member to it; mutates ``group`` and fills ``outcome``."""
    topics = dict(group.topics)
    members = [group.members[m] for m in sorted(group.members)]
    for member in members:
        if member.generation != group.generation:
            member.owned = frozenset()  # new, or fenced: the broker holds no target for it
    specs = specs_of(members)
    target, seconds = strategy.assign(topics, members)
    outcome.compute_s = outcome.max_compute_s = seconds
    checks = [
        partial(check_valid, topics, specs, target),
        partial(check_complete, topics, specs, target),
    ]
    outcome.violations += count_violations(checks, outcome.messages)

    owner = group.owner_map()
    wanted = {tp: m for m, tps in target.items() for tp in tps}
    # Round 1: everyone revokes what its target leaves out and gets what nobody consumes.
    in_transit = {tp for tp, old in owner.items() if wanted.get(tp) != old}
    first_grants: Plan = {
        m: [tp for tp in tps if owner.get(tp) in (None, m)] for m, tps in target.items()
    }
    outcome.violations += count_violations(
        [partial(check_consuming_contract, group.consuming, first_grants)], outcome.messages
    )
    unconsumed = group.assignable() - set(owner)
    outcome.rounds = 1
    outcome.paused_partition_rounds = len(unconsumed)
    outcome.revoked = len(in_transit)
    handed_over = {tp for tp in in_transit if tp in wanted}
    if handed_over:
        # Round 2: the new owners get what the old ones acknowledged; paused in between.
        after_revoking = {
            m: {tp for tp in tps if tp not in in_transit} | set(first_grants.get(m, ()))
            for m, tps in group.consuming.items()
        }
        outcome.violations += count_violations(
            [partial(check_consuming_contract, after_revoking, target)], outcome.messages
        )
        outcome.rounds = 2
        outcome.paused_partition_rounds += len(handed_over)
    group.apply_plan(target)
