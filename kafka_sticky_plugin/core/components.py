"""Split a group into independent parts: members connected through shared topics.

Two members are in the same component when a chain of shared subscribed topics links them.
Components never compete for a partition, so each is planned on its own; a component whose
members all have the same subscription is *homogeneous* and gets the fast quota builder.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from itertools import repeat
from operator import setitem

from .layout import Layout

__all__ = ["Component", "split_components"]


@dataclass
class Component:
    """Member indices (ascending) and topic indices (ascending) of one connected part."""

    members: list[int]
    topics: list[int]
    homogeneous: bool


def split_components(layout: Layout) -> list[Component]:
    """Connected components over subscription classes; members with no known topic are left out.

    Each topic carries its component's label; a subscription class whose topics carry
    several labels relabels the smaller components' topics to the largest's (each topic is
    moved O(log T) times at most), and a class already inside one component costs one C-level
    pass (``set(map(...))``).
    """
    label = list(range(len(layout.topics)))
    topics_of: list[list[int]] = [[t] for t in range(len(layout.topics))]
    seen: set[frozenset[int]] = set()
    for subs in layout.subscriptions:
        if subs in seen or not subs:
            continue
        seen.add(subs)
        labels = set(map(label.__getitem__, subs))
        if len(labels) > 1:
            _merge(label, topics_of, labels)
    members_by_root: dict[int, list[int]] = {}
    for m, subs in enumerate(layout.subscriptions):
        if subs:
            members_by_root.setdefault(label[next(iter(subs))], []).append(m)
    components = []
    for root in sorted(members_by_root, key=lambda r: members_by_root[r][0]):
        ms = members_by_root[root]
        first = layout.subscriptions[ms[0]]
        homogeneous = all(layout.subscriptions[m] is first for m in ms)
        components.append(
            Component(members=ms, topics=sorted(topics_of[root]), homogeneous=homogeneous)
        )
    return components


def _merge(label: list[int], topics_of: list[list[int]], labels: set[int]) -> None:
    """Relabel the topics of every component in ``labels`` to the largest one's."""
    root = max(labels, key=lambda r: len(topics_of[r]))
    labels.discard(root)
    kept = topics_of[root]
    for other in labels:
        moved = topics_of[other]
        deque(map(setitem, repeat(label), moved, repeat(root)), maxlen=0)
        kept.extend(moved)
        topics_of[other] = []
