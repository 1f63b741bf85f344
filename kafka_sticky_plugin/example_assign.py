"""``python -m kafka_sticky_plugin assign``: plan an example group and print it.

Three members subscribe to two topics; the group is planned fresh, then one member leaves
and the survivors' ownership is fed back (eager sticky), then a new member joins and the
cooperative rounds are run until nothing is withheld. Useful to see the engine without a
broker; ``--members`` and ``--partitions`` change the size.
"""

from __future__ import annotations

from .command_line import command_parser
from .core import MemberSpec, cooperative_assign, sticky_assign
from .invariants import check_plan

Plan = dict[str, list[tuple[str, int]]]


def _show(title: str, plan: Plan) -> None:
    print(f"\n{title}")
    for member_id, tps in plan.items():
        text = ", ".join(f"{t}-{p}" for t, p in tps) or "(nothing)"
        print(f"  {member_id:<10} {len(tps):>3}  {text}")


def main(argv: list[str] | None = None) -> int:
    parser = command_parser("assign", __doc__)
    parser.add_argument("--members", type=int, default=3, help="group members (at least 1)")
    parser.add_argument(
        "--partitions", type=int, default=4, help="partitions per topic (at least 1)"
    )
    args = parser.parse_args(argv)
    if args.members < 1:
        parser.error(f"--members must be at least 1 (got {args.members})")
    if args.partitions < 1:
        parser.error(f"--partitions must be at least 1 (got {args.partitions})")
    parts = {"orders": args.partitions, "payments": args.partitions}
    topics = sorted(parts)
    names = [f"member-{i}" for i in range(args.members)]
    members = [MemberSpec(member_id=m, topics=topics) for m in names]
    plan = sticky_assign(parts, members)
    check_plan(parts, members, plan)
    _show("fresh group (generation 1)", plan)

    leaver = names[-1]
    survivors = [
        MemberSpec(member_id=m, topics=topics, owned=plan[m], generation=1)
        for m in names
        if m != leaver
    ]
    after = sticky_assign(parts, survivors)
    check_plan(parts, survivors, after)
    kept = sum(len(set(plan[m]) & set(after[m])) for m in after)
    _show(f"{leaver} left (eager sticky, generation 2): survivors kept {kept} partitions", after)

    joined = [
        *(MemberSpec(member_id=m, topics=topics, owned=after[m], generation=2) for m in after),
        MemberSpec(member_id="member-new", topics=topics),
    ]
    for rnd in range(1, 5):
        coop = cooperative_assign(parts, joined)
        assigned = sum(len(v) for v in coop.values())
        total = sum(parts.values())
        _show(f"member-new joined: cooperative round {rnd} ({assigned} of {total} assigned)", coop)
        if assigned == total:
            break
        joined = [
            MemberSpec(
                member_id=m.member_id, topics=topics, owned=coop[m.member_id], generation=2 + rnd
            )
            for m in joined
        ]
    return 0
