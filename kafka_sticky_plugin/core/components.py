"""Split a group into independent parts: members connected through shared topics.

Two members are in the same component when a chain of shared subscribed topics links them.
Components never compete for a partition, so each is planned on its own; a component whose
members all have the same subscription is *homogeneous* and gets the fast quota builder.
"""

from __future__ import annotations

from dataclasses import dataclass

from .layout import Layout

__all__ = ["Component", "split_components"]


@dataclass
class Component:
    """Member indices (ascending) and topic indices (ascending) of one connected part."""

    members: list[int]
    topics: list[int]
    homogeneous: bool


def split_components(layout: Layout) -> list[Component]:
    """Connected components over subscription classes; members with no known topic are left out."""
    parent = list(range(len(layout.topics)))

    def find(x: int) -> int:
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    seen: set[int] = set()
    for subs in layout.subscriptions:
        if id(subs) in seen or not subs:
            continue
        seen.add(id(subs))
        it = iter(subs)
        root = find(next(it))
        for t in it:
            r = find(t)
            if r != root:
                parent[r] = root
    members_by_root: dict[int, list[int]] = {}
    for m, subs in enumerate(layout.subscriptions):
        if subs:
            members_by_root.setdefault(find(next(iter(subs))), []).append(m)
    topics_by_root: dict[int, list[int]] = {}
    for t in range(len(layout.topics)):
        topics_by_root.setdefault(find(t), []).append(t)
    components = []
    for root in sorted(members_by_root, key=lambda r: members_by_root[r][0]):
        ms = members_by_root[root]
        first = layout.subscriptions[ms[0]]
        homogeneous = all(layout.subscriptions[m] is first for m in ms)
        components.append(
            Component(members=ms, topics=topics_by_root[root], homogeneous=homogeneous)
        )
    return components
