"""Pause Python's cyclic garbage collector for the length of one assignment.

An assignment of a million partitions allocates millions of small objects (ints in lists,
``(topic, partition)`` tuples) that all stay alive until it returns, so every generation-2
collection in between would rescan them for nothing: neither the engine nor the leader's
bytes path creates reference cycles, and reference counting still frees everything.
Re-enabled on exit only if it was enabled on entry, so nested pauses and callers that run
with the collector off keep their state. Process-wide (CPython has one collector): another
thread's allocations during the pause are collected after it.

Callers keep the paused block's large temporaries out of locals that outlive it (a helper
call, or one expression): the first allocation after the collector comes back runs a
generation-0 collection over every container created during the pause that is still alive,
so a million claim tuples still referenced from the caller's frame when the pause ends cost
a tenth of a second of scanning for nothing.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["cyclic_gc_paused"]


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """The pause described in the module docstring."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
