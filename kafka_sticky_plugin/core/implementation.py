"""Which implementation of the engine's compiled steps runs: the twin or the reference.

The engine (this package) is the reference and the specification: plain Python, every step's
result defined by its docstring's rules. The compiled twin (:mod:`..twin_loader`) carries the
steps where Python pays per element, each under the name of the Python function it twins,
returning exactly that function's result for input it vouches for and ``None`` for anything
else (the caller then runs the reference):

- ``push_min_cost(n, heads, caps, costs, source, sink)``:
  :meth:`.flow.FlowNetwork.push_min_cost` on the network whose arc ``a`` enters
  ``heads[a]`` (its reverse is ``a ^ 1``) with residual capacity ``caps[a]`` and cost
  ``costs[a]``; returns ``(residual capacities after the push, amount pushed)``.
- ``each_canonical_runs(members)``: :func:`.spec.canonical_runs` of each member's runs, in
  order (the same runs object where they are canonical, else new runs of the same ``str``
  objects and an ``array("i")``), or ``None`` in a member's place where the reference must
  decide; the twin sorts each distinct topics tuple once.
- ``resolve_claims(topics, counts, subscriptions, generations, runs, pairs)``:
  :func:`.claims.resolve_claims` on the layout of ``topics`` (names) with ``counts``
  partitions, member ``m`` subscribing to the topic indices ``subscriptions[m]`` at
  ``generations[m]`` and claiming the canonical runs ``runs[m]`` (:func:`.spec.owned_runs`)
  or, where that is ``None``, the pairs ``pairs[m]``; returns the ``Claims`` fields
  ``(owner, hints, owned, claimed, ignored, runs)``, identities included (``owned[m] is
  claimed[m]`` where the member won every claim, ``owned is claimed`` when nothing is
  contested, ``runs[m][0] is claimed[m]``), each member's claims an ``array("i")``.
- ``build_quota_plan(members, topics, offsets, counts, owned, hints)``:
  :func:`.quota_builder.build_quota_plan` of the equal-subscription component ``(members,
  topics)`` under ``layout.offsets`` / ``layout.counts``, with ``owned`` / ``hints`` the
  claims'; returns per member of ``members``, in order, its plan list in the reference's own
  order, or ``None`` when that is exactly its ``claims.owned`` list.
- ``place_by_racks(members, topics, offsets, counts, subscriptions, owner, hints, owned,
  plan, member_rack, rack_sets, partition_set)``: :func:`.rack_flow.place_by_racks` of the
  component ``(members, topics)`` under the layout's lists, the claims' ``owner`` / ``hints``
  / ``owned``, the component's ``plan`` without racks and the rack view's lists; returns per
  member of ``members``, in order, its global partitions ascending.
- ``plan_component(members, topics, offsets, counts, subscriptions, owner, owned, hints)``:
  :func:`.api.plan_component` of the heterogeneous component ``(members, topics)``
  (``comp``'s lists) under ``layout.offsets`` / ``layout.counts`` / ``layout.subscriptions``
  and the claims' ``owner`` / ``owned`` / ``hints``: the balancing builder's plan
  (:func:`.balance_builder.build_balanced_plan`), then the keep flow's
  (:func:`.keep_flow.maximise_kept`, its early returns taken as the reference takes them),
  on one read of the component; returns per member of ``members``, in order, its global
  partitions ascending, or ``None`` when they are exactly its ``claims.owned`` array.

The twin is used when it is importable, its ``ENGINE_VERSION`` equals :data:`ENGINE_VERSION`
(a twin built for other steps is ignored whole) and ``KAFKA_STICKY_PURE_PYTHON`` is unset,
empty or ``0``; :data:`IMPLEMENTATION` names the choice, made once at import, and
``python -m kafka_sticky_plugin --version`` prints it (:func:`describe`).

Invariant (``tests/test_engine_twin.py``, when the twin is installed): every step returns
the same plan with the twin as without it.
"""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Literal, Protocol, TypeAlias, cast

from ..twin_loader import describe as describe_twin
from ..twin_loader import load

#: One member's claimed runs, :data:`.spec.OwnedRuns` (spelled out: ``spec`` calls this
#: module).
OwnedRuns = tuple[tuple[str, ...], Sequence[int] | None, Sequence[int]]

Indices: TypeAlias = "array[int]"  # a string: array is subscriptable from Python 3.12 on
"""Ascending global partition indices of one member's claims (``Claims.owned[m]``,
``Claims.claimed[m]``): an ``array("i")``, so that a million claims are a few thousand
objects, not a million ints, and the twin makes and reads them whole."""

Planned: TypeAlias = "list[int] | Indices"
"""One member's planned global partitions, ascending: a list, or its claims' own
:data:`Indices` when it is planned exactly its claims (plans are only read)."""

#: ``Claims``' fields as the twin returns them: ``(owner, hints, owned, claimed, ignored,
#: runs)``.
ClaimsFields = tuple[
    list[int],
    dict[int, int],
    list[Indices],
    list[Indices],
    int,
    dict[int, tuple[Indices, list[int], Sequence[int] | None]],
]

__all__ = [
    "ENGINE_VERSION",
    "IMPLEMENTATION",
    "STEPS",
    "ClaimsFields",
    "EngineTwin",
    "Indices",
    "Planned",
    "component_plan",
    "describe",
    "twin",
]

#: The engine steps' contract version: the twin's ``ENGINE_VERSION`` must equal it (bump both
#: when a step is added or removed or changes its arguments, results or rules).
ENGINE_VERSION = 9


class EngineTwin(Protocol):
    """The twin module's engine steps (``twin/src/lib.rs``), each returning ``None`` where
    the reference must decide."""

    ENGINE_VERSION: int
    __version__: str

    def push_min_cost(
        self,
        n: int,
        heads: Sequence[int],
        caps: Sequence[int],
        costs: Sequence[int],
        source: int,
        sink: int,
    ) -> tuple[list[int], int] | None: ...

    def each_canonical_runs(
        self, members: Sequence[OwnedRuns]
    ) -> list[OwnedRuns | None] | None: ...

    def resolve_claims(
        self,
        topics: Sequence[str],
        counts: Sequence[int],
        subscriptions: Sequence[frozenset[int]],
        generations: Sequence[int],
        runs: Sequence[OwnedRuns | None],
        pairs: Sequence[tuple[tuple[str, int], ...] | None],
    ) -> ClaimsFields | None: ...

    def build_quota_plan(
        self,
        members: list[int],
        topics: list[int],
        offsets: list[int],
        counts: list[int],
        owned: list[Indices],
        hints: Mapping[int, int],
    ) -> list[list[int] | None] | None: ...

    def place_by_racks(
        self,
        members: list[int],
        topics: list[int],
        offsets: list[int],
        counts: list[int],
        subscriptions: list[frozenset[int]],
        owner: list[int],
        hints: Mapping[int, int],
        owned: list[Indices],
        plan: Mapping[int, Planned],
        member_rack: list[int],
        rack_sets: list[frozenset[int]],
        partition_set: list[int],
    ) -> list[list[int]] | None: ...

    def plan_component(
        self,
        members: list[int],
        topics: list[int],
        offsets: list[int],
        counts: list[int],
        subscriptions: list[frozenset[int]],
        owner: list[int],
        owned: list[Indices],
        hints: Mapping[int, int],
    ) -> list[list[int] | None] | None: ...


#: The engine's steps a twin must carry to be used (:class:`EngineTwin`'s methods).
STEPS = (
    "each_canonical_runs",
    "push_min_cost",
    "resolve_claims",
    "build_quota_plan",
    "place_by_racks",
    "plan_component",
)

#: The twin in use for the engine's steps, or ``None`` when the reference runs alone.
twin: EngineTwin | None = cast("EngineTwin | None", load("ENGINE_VERSION", ENGINE_VERSION, STEPS))
#: ``"compiled"`` when :data:`twin` is in use, else ``"reference"``.
IMPLEMENTATION: Literal["compiled", "reference"] = "reference" if twin is None else "compiled"


def describe() -> str:
    """One line naming the engine steps' implementation and why (for ``--version``)."""
    return describe_twin("engine steps", twin, "ENGINE_VERSION", ENGINE_VERSION, STEPS)


def component_plan(
    members: Sequence[int], planned: Sequence[list[int] | None], owned: Sequence[Indices]
) -> Mapping[int, Planned]:
    """A builder twin's answer as the component's plan: per member of ``members`` (in order)
    its list, or its claims' own list ``owned[m]`` where the twin answered ``None`` (exactly
    its claims), as the reference builders give it (plans are only read)."""
    return {m: owned[m] if part is None else part for m, part in zip(members, planned, strict=True)}
