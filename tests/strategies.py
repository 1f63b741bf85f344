"""Hypothesis composites shared by the fast tier: random groups, racks, subscriptions, traces.

Every property test draws its inputs from here, so one generator describes one kind of input
for every test that needs it (CI runs them derandomized: see ``conftest.py``). The module name
is free at the top level of ``tests`` (pytest puts ``tests`` on ``sys.path``; nothing else
imports a top-level ``strategies``; Hypothesis's own is ``hypothesis.strategies``).
"""

from __future__ import annotations

from hypothesis import strategies as st

from kafka_sticky_plugin.core import MemberSpec

Group = tuple[dict[str, int], list[MemberSpec]]


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
