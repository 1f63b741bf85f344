"""Hypothesis composites shared by the fast tier: random groups, rack groups, subscriptions,
owned-partition messages, simulator scenarios.

Every property test draws its inputs from here, so one generator describes one kind of input
for every test that needs it (CI runs them derandomized: see ``conftest.py``). The module name
is free at the top level of ``tests`` (pytest puts ``tests`` on ``sys.path``; nothing else
imports a top-level ``strategies``; Hypothesis's own is ``hypothesis.strategies``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from kafka_sticky_plugin.codec import Subscription
from kafka_sticky_plugin.core import MemberSpec
from kafka_sticky_plugin.simulate.model import EVENT_KINDS, SHAPES, Event, Scenario

Group = tuple[dict[str, int], list[MemberSpec]]
Racks = dict[tuple[str, int], list[str]]
RackGroup = tuple[dict[str, int], list[MemberSpec], Racks]

# -- engine inputs ------------------------------------------------------------------------


@st.composite
def groups(draw: st.DrawFn, max_topics: int = 4, max_parts: int = 6, max_members: int = 6) -> Group:
    """Members with any subscriptions (some naming a topic that does not exist, ``ghost``)
    and garbage claims mixed with valid ones (unknown topics, negative or too-high partitions,
    any generation)."""
    n_topics = draw(st.integers(1, max_topics))
    parts = {f"t{i}": draw(st.integers(0, max_parts)) for i in range(n_topics)}
    names = [*sorted(parts), "ghost"]
    n_members = draw(st.integers(1, max_members))
    members = []
    for i in range(n_members):
        topics = draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True))
        owned = draw(
            st.lists(st.tuples(st.sampled_from(names), st.integers(-1, max_parts)), max_size=8)
        )
        generation = draw(st.integers(-1, 4))
        members.append(
            MemberSpec(member_id=f"m{i}", topics=topics, owned=owned, generation=generation)
        )
    return parts, members


@st.composite
def rack_groups(
    draw: st.DrawFn,
    homogeneous: bool,
    max_topics: int = 2,
    max_members: int = 4,
    replica_racks: tuple[str, ...] = ("r0", "r1", "r2"),
) -> RackGroup:
    """Small groups with member racks (``r0``-``r2`` or none), claims and generations, and
    up to two replica racks per partition drawn from ``replica_racks`` (a rack there that no
    member has, such as ``r3``, holds replicas but no consumer)."""
    parts = {f"t{i}": draw(st.integers(0, 3)) for i in range(draw(st.integers(1, max_topics)))}
    names = sorted(parts)
    members = []
    for i in range(draw(st.integers(1, max_members))):
        topics = (
            names
            if homogeneous
            else draw(st.lists(st.sampled_from(names), min_size=1, unique=True))
        )
        owned = draw(st.lists(st.tuples(st.sampled_from(names), st.integers(0, 2)), max_size=3))
        rack = draw(st.sampled_from([None, "r0", "r1", "r2"]))
        members.append(
            MemberSpec(
                member_id=f"m{i}",
                topics=topics,
                owned=owned,
                rack=rack,
                generation=draw(st.integers(-1, 2)),
            )
        )
    racks = {
        (t, p): draw(st.lists(st.sampled_from(replica_racks), max_size=2, unique=True))
        for t, n in parts.items()
        for p in range(n)
    }
    return parts, members, racks


WIRE_TOPICS = ("a", "b", "c")


@st.composite
def versioned_groups(draw: st.DrawFn) -> tuple[dict[str, int], list[tuple[MemberSpec, int]]]:
    """Members of topics ``a``-``c``, each with the consumer-protocol version (0-3) it speaks;
    claims are real partitions or one past the end (stale), generations only with claims."""
    counts = {t: draw(st.integers(min_value=0, max_value=5)) for t in WIRE_TOPICS}
    n_members = draw(st.integers(min_value=1, max_value=5))
    members = []
    for i in range(n_members):
        topics = draw(st.lists(st.sampled_from(WIRE_TOPICS), min_size=1, max_size=3, unique=True))
        candidates = [(t, p) for t in topics for p in range(counts[t] + 1)]  # +1: stale claim
        owned = draw(st.lists(st.sampled_from(candidates), unique=True)) if candidates else []
        generation = draw(st.integers(min_value=-1, max_value=6)) if owned else -1
        version = draw(st.integers(min_value=0, max_value=3))
        spec = MemberSpec(member_id=f"m{i}", topics=topics, owned=owned, generation=generation)
        members.append((spec, version))
    return counts, members


# -- codec inputs -------------------------------------------------------------------------

INT32 = st.integers(min_value=-(2**31), max_value=2**31 - 1)
topic_names = st.text(min_size=0, max_size=12)
pairs = st.lists(st.tuples(topic_names, INT32), max_size=12)
generations = st.one_of(st.none(), st.integers(min_value=0, max_value=2**31 - 1))
user_datas = st.one_of(st.none(), st.binary(max_size=40))


@st.composite
def subscriptions(draw: st.DrawFn) -> Subscription:
    """Any subscription value of any version (fields the version lacks may be set too)."""
    return Subscription(
        version=draw(st.integers(min_value=0, max_value=3)),
        topics=tuple(draw(st.lists(topic_names, max_size=8))),
        user_data=draw(user_datas),
        owned_partitions=tuple(draw(pairs)),
        generation_id=draw(INT32),
        rack_id=draw(st.one_of(st.none(), topic_names)),
    )


# -- simulator inputs ---------------------------------------------------------------------


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """A random simulator scenario: up to six events of any kind, one to four topics, any
    shape and seed."""
    kinds = sorted(EVENT_KINDS)
    events = draw(
        st.lists(
            st.builds(Event, st.sampled_from(kinds), st.integers(min_value=1, max_value=3)),
            min_size=1,
            max_size=6,
        )
    )
    topic_count = draw(st.integers(min_value=1, max_value=4))
    topics = [(f"t{i}", draw(st.integers(min_value=1, max_value=12))) for i in range(topic_count)]
    members = draw(st.integers(min_value=1, max_value=7))
    shape = draw(st.sampled_from(SHAPES))
    seed = draw(st.integers(min_value=0, max_value=2**31 - 1))
    return Scenario("s", seed, members, tuple(topics), shape, tuple(events))
