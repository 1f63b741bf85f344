"""Byte builders for codec tests: write what any client might send, canonical or not."""

from __future__ import annotations


def owned_array(groups: list[tuple[str, list[int]]]) -> bytes:
    """A ``[topic [partition]]`` array exactly as given: group order, repeated topics and
    partitions, and empty groups are all kept (what some other writer may send)."""
    out = [len(groups).to_bytes(4, "big")]
    for topic, partitions in groups:
        name = topic.encode()
        out.append(len(name).to_bytes(2, "big") + name + len(partitions).to_bytes(4, "big"))
        out.extend(p.to_bytes(4, "big", signed=True) for p in partitions)
    return b"".join(out)
