"""Measure, on a running cluster, each behaviour a :class:`~.profile.BrokerProfile` records.

One function per capability: it creates what it needs (topics and group ids with a random
suffix, see :func:`~kafka_sticky_plugin.groups.admin.unique_name`), drives real kafka-python (or,
for the librdkafka check, confluent-kafka) consumers against the cluster, deletes nothing it did not
create, and returns an :class:`Observation`. The conformance tests
(``integration_tests/test_broker_profile.py``) compare each observation with the session
broker's profile; ``python -m kafka_sticky_plugin conformance --bootstrap HOST:PORT`` runs them
against a user's own cluster (any address) and prints which capabilities it has. Each takes
the cluster's ``security`` (a :class:`~kafka_sticky_plugin.client_security.ClientSecurity`,
None for PLAINTEXT): every client it starts (admin, members, the librdkafka child)
authenticates with it; its topics are named ``conf-*`` and its groups ``conformance-*``, so
prefixed ACLs can cover them.

Invariant: a measurement never decides from the profile; it only reports what it saw
(``observed``), why (``detail``), and any guarantee the plugin relies on that broke on the way
(``violations``, empty when all held).
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import IO, Protocol

from ..assignor.strategies import STRATEGIES
from ..broker_kind import unserved_request
from ..client_security import ClientSecurity, confluent_settings
from ..groups.admin import create_topic, delete_topic, grow_topic, unique_name
from ..groups.analysis import current_ownership
from ..groups.member_process import ProcessMember
from ..groups.runner import ConsumerGroupRunner, GroupNotStable
from ..lifetime import start_tied

__all__ = [
    "MEASUREMENTS",
    "UNSERVED",
    "Measurement",
    "Observation",
    "measure",
]

#: How a detail starts when the broker does not serve a request (the command puts the broker
#: kind in its place).
UNSERVED = "the broker does not serve"


@dataclass(frozen=True)
class Observation:
    """What one measurement saw (see the module docstring)."""

    capability: str
    observed: bool | int
    detail: str
    violations: tuple[str, ...] = ()
    #: Why the measurement could not run in this install (then ``observed`` means nothing).
    skipped: str | None = None


class Measurement(Protocol):
    """One measurement: the cluster's bootstrap address and security in, an observation out."""

    def __call__(self, bootstrap: str, security: ClientSecurity | None = None) -> Observation: ...


def _member_security(security: ClientSecurity | None) -> dict[str, str] | None:
    """``security`` as a member's configuration carries it."""
    return security.as_dict() if security is not None else None


def _group(
    bootstrap: str,
    topics: dict[str, int],
    assignors: list[str],
    security: ClientSecurity | None,
    **settings: int,
) -> ConsumerGroupRunner:
    """A runner for a fresh group id whose members authenticate with ``security``;
    ``settings`` are member timeouts (``MemberConfig``).

    Members that run this package's assignors get ``install_hooks``: the measurements are of
    the broker, and without the hooks kafka-python 3.0's own coordinator defects (a join
    left pending, a rejoin thrown away) can stall a group under load and look like broker
    behaviour."""
    group_id = unique_name("conformance")
    hooks = all(name in STRATEGIES for name in assignors)
    return ConsumerGroupRunner(
        bootstrap,
        group_id,
        topics,
        assignors,
        None,
        install_hooks=hooks,
        security=_member_security(security),
        **settings,
    )


def generations_start_at(bootstrap: str, security: ClientSecurity | None = None) -> Observation:
    """The generation id a fresh group's first member first joins with (the lowest one it
    reports: a leader whose metadata of a just-created topic was still empty rejoins at once,
    so the first *stable* generation can be the second)."""
    topic = create_topic(bootstrap, unique_name("conf-gen"), 2, security=security)
    try:
        with _group(bootstrap, {topic: 2}, ["cooperative-sticky"], security) as group:
            group.start_member("m0")
            stable = group.wait_stable(timeout_s=45)
            first = min(
                (e.generation for e in group.log.events() if e.kind == "generation"),
                default=stable.generation,
            )
    finally:
        delete_topic(bootstrap, topic, security)
    return Observation(
        "generations_start_at", first, f"first generation {first}, first stable {stable.generation}"
    )


def prompt_join_response(bootstrap: str, security: ClientSecurity | None = None) -> Observation:
    """How long a lone member (10 s session) takes to be assigned a fresh group's partitions:
    a broker that holds JoinGroups until half the session timeout needs 5 s or more."""
    topic = create_topic(bootstrap, unique_name("conf-join"), 1, security=security)
    try:
        with _group(
            bootstrap, {topic: 1}, ["cooperative-sticky"], security, session_timeout_ms=10000
        ) as group:
            started = time.monotonic()
            group.start_member("m0")
            group.wait_stable(timeout_s=45, quiet_s=0.0)
            took = time.monotonic() - started
    finally:
        delete_topic(bootstrap, topic, security)
    return Observation("prompt_join_response", took < 3.0, f"a lone member joined in {took:.1f} s")


def protocol_vote(bootstrap: str, security: ClientSecurity | None = None) -> Observation:
    """First member lists [roundrobin, range], second only [range]: a broker that votes picks
    range for both; one that fixes the first member's first choice refuses the second."""
    topic = create_topic(bootstrap, unique_name("conf-vote"), 4, security=security)
    try:
        with _group(bootstrap, {topic: 4}, ["roundrobin", "range"], security) as group:
            group.start_member("first")
            group.wait_stable(timeout_s=45)
            group.start_member("second", assignors=["range"])
            try:
                stable = group.wait_stable(timeout_s=25)
            except GroupNotStable:
                joined = False
            else:
                joined = bool(stable.assignment.get("second")) and bool(
                    stable.assignment.get("first")
                )
            errors = [
                e.detail for e in group.log.events() if e.member == "second" and e.kind == "error"
            ]
    finally:
        delete_topic(bootstrap, topic, security)
    return Observation(
        "protocol_vote", joined, f"a member listing only [range] joined: {joined}; {errors[:1]}"
    )


def partition_growth(bootstrap: str, security: ClientSecurity | None = None) -> Observation:
    """CreatePartitions 2 -> 4 on a fresh topic."""
    topic = create_topic(bootstrap, unique_name("conf-grow"), 2, security=security)
    try:
        grow_topic(bootstrap, topic, 4, timeout_s=10, security=security)
    except Exception as exc:  # the refusal itself is the observation
        if unserved_request(exc) == "CreatePartitions":
            return Observation("partition_growth", False, f"{UNSERVED} CreatePartitions")
        return Observation("partition_growth", False, f"CreatePartitions refused: {exc!r}")
    finally:
        delete_topic(bootstrap, topic, security)
    return Observation("partition_growth", True, "CreatePartitions 2 -> 4 succeeded")


def leader_rejoin_rebalances(bootstrap: str, security: ClientSecurity | None = None) -> Observation:
    """Deleting one of two subscribed topics: does the leader's rejoin start a generation?"""
    kept = create_topic(bootstrap, unique_name("conf-kept"), 2, security=security)
    doomed = create_topic(bootstrap, unique_name("conf-doomed"), 2, security=security)
    try:
        with _group(bootstrap, {kept: 2, doomed: 2}, ["cooperative-sticky"], security) as group:
            group.start_members(["m0", "m1"])
            before = group.wait_stable(timeout_s=45)
            delete_topic(bootstrap, doomed, security)
            group.set_partition_count(doomed, 0)
            try:
                after = group.wait_stable(timeout_s=25)
            except GroupNotStable:
                rebalanced, now = False, "no stable group within 25 s"
            else:
                rebalanced = after.generation > before.generation
                now = f"generation {after.generation}"
    finally:
        delete_topic(bootstrap, kept, security)
    return Observation(
        "leader_rejoin_rebalances",
        rebalanced,
        f"one of two subscribed topics deleted at generation {before.generation}: {now}",
    )


def static_member_expiry(bootstrap: str, security: ClientSecurity | None = None) -> Observation:
    """A static member (15 s session) crashes: is it removed and its partitions reassigned
    within 120 s? Either way the survivor must keep every partition it had, and hold them all
    if the crashed member was removed (``violations`` otherwise)."""
    topic = create_topic(bootstrap, unique_name("conf-static"), 4, security=security)
    violations: list[str] = []
    try:
        with _group(
            bootstrap,
            {topic: 4},
            ["cooperative-sticky"],
            security,
            session_timeout_ms=15000,
            max_poll_interval_ms=15000,
        ) as group:
            group.start_member("m0", instance_id=f"{group.group_id}-m0")
            group.start_member("gone", process=True, instance_id=f"{group.group_id}-gone")
            before = group.wait_stable(timeout_s=60)
            gone = group.member("gone")
            assert isinstance(gone, ProcessMember)
            gone.kill()
            t_crash = time.monotonic()
            try:
                after = group.wait_stable(timeout_s=120)
            except GroupNotStable:
                expired = False
                detail = "the crashed static member was not removed within 120 s"
            else:
                expired = set(after.assignment["m0"]) == group.all_partitions()
                detail = f"removed after {time.monotonic() - t_crash:.0f} s"
            survivor = current_ownership(group.log.events()).get(group.live_keys()["m0"], ())
            if not set(before.assignment["m0"]) <= set(survivor):
                violations.append("the survivor lost partitions")
            if expired and set(survivor) != group.all_partitions():
                violations.append("the member was removed but the survivor does not hold all")
    finally:
        delete_topic(bootstrap, topic, security)
    return Observation("static_member_expiry", expired, detail, tuple(violations))


def per_member_session_timeout(
    bootstrap: str, security: ClientSecurity | None = None
) -> Observation:
    """The first member has a 6 s session, the second 30 s; the second freezes: a broker that
    applies each member's own timeout waits about 30 s before expelling it."""
    topic = create_topic(bootstrap, unique_name("conf-session"), 2, security=security)
    try:
        with _group(bootstrap, {topic: 2}, ["cooperative-sticky"], security) as group:
            group.start_member("short")
            group.wait_stable(timeout_s=45)
            long_lived = ConsumerGroupRunner(
                bootstrap,
                group.group_id,
                {topic: 2},
                ["cooperative-sticky"],
                log=group.log,
                install_hooks=True,
                security=_member_security(security),
                session_timeout_ms=30000,
                max_poll_interval_ms=30000,
            )
            try:
                long_lived.start_member("long", process=True)
                with contextlib.suppress(GroupNotStable):
                    group.wait_stable(
                        timeout_s=60, members=["short"], expect_partitions={(topic, 0)}
                    )
                frozen = long_lived.member("long")
                assert isinstance(frozen, ProcessMember)
                frozen.pause()
                t_freeze = time.monotonic()
                group.wait_stable(timeout_s=60)
                took = time.monotonic() - t_freeze
            finally:
                long_lived.close()
    finally:
        delete_topic(bootstrap, topic, security)
    return Observation(
        "per_member_session_timeout",
        took > 20.0,
        f"a frozen 30 s member expelled after {took:.1f} s",
    )


#: The librdkafka child's security settings (JSON, :func:`confluent_settings`): kept out of
#: its command line, which process listings show.
_CHILD_SECURITY_ENV = "KAFKA_STICKY_CONFORMANCE_SECURITY"

_LIBRDKAFKA_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    import confluent_kafka
    bootstrap, topic, group = sys.argv[1:4]
    security = json.loads(os.environ.pop(sys.argv[5], "{}"))
    consumer = confluent_kafka.Consumer({
        "bootstrap.servers": bootstrap, "group.id": group, "auto.offset.reset": "earliest",
        "session.timeout.ms": 6000, "heartbeat.interval.ms": 1000,
        "max.poll.interval.ms": 10000, **security,
    })
    consumer.subscribe([topic], on_assign=lambda c, ps: print("assigned", flush=True))
    deadline = time.monotonic() + float(sys.argv[4])
    while time.monotonic() < deadline:
        consumer.poll(0.2)
    consumer.close()
    print("survived", flush=True)
    """
)


def _last_line(stream: IO[str]) -> str:
    stream.seek(0)
    lines = [line.strip() for line in stream.read().splitlines() if line.strip()]
    return lines[-1] if lines else "(nothing on stderr)"


def topic_deletion_safe_for_librdkafka(
    bootstrap: str, security: ClientSecurity | None = None
) -> Observation:
    """A confluent-kafka consumer (child process) whose topic is deleted: does it survive?

    Skipped (:attr:`Observation.skipped`) when confluent-kafka cannot be imported here (the
    child runs this interpreter). The child's stderr goes to a temporary file; its last line
    is part of the report whenever the child fails."""
    try:
        importlib.import_module("confluent_kafka")
    except ImportError:
        return Observation(
            "topic_deletion_safe_for_librdkafka",
            False,
            "not measured",
            skipped="confluent-kafka not installed",
        )
    topic = create_topic(bootstrap, unique_name("conf-delete"), 2, security=security)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as stderr:
        group_id = unique_name("conformance-librdkafka")
        child = start_tied(
            [
                sys.executable,
                "-c",
                _LIBRDKAFKA_CHILD,
                bootstrap,
                topic,
                group_id,
                "25",
                _CHILD_SECURITY_ENV,
            ],
            env={**os.environ, _CHILD_SECURITY_ENV: json.dumps(confluent_settings(security))},
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
        )
        try:
            assert child.stdout is not None
            first = child.stdout.readline().strip()
            if first != "assigned":
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.wait(10)  # let it finish writing stderr
                return Observation(
                    "topic_deletion_safe_for_librdkafka",
                    False,
                    "the librdkafka consumer never got an assignment",
                    (
                        f"librdkafka consumer printed {first!r} instead of 'assigned'"
                        f" (its stderr: {_last_line(stderr)})",
                    ),
                )
            delete_topic(bootstrap, topic, security)
            child.wait(60)
        finally:
            if child.poll() is None:
                child.kill()
                child.wait(10)
            if child.stdout is not None:
                child.stdout.close()
        status = child.returncode
        detail = f"the consumer's exit status after its topic was deleted: {status}"
        if status != 0:
            detail += f" (its stderr: {_last_line(stderr)})"
    return Observation("topic_deletion_safe_for_librdkafka", status == 0, detail)


#: Every measurement a running cluster allows, by capability name (``durable`` needs a broker
#: restart, so only the embedded broker's own test measures it).
MEASUREMENTS: dict[str, Measurement] = {
    "generations_start_at": generations_start_at,
    "protocol_vote": protocol_vote,
    "partition_growth": partition_growth,
    "leader_rejoin_rebalances": leader_rejoin_rebalances,
    "static_member_expiry": static_member_expiry,
    "per_member_session_timeout": per_member_session_timeout,
    "topic_deletion_safe_for_librdkafka": topic_deletion_safe_for_librdkafka,
    "prompt_join_response": prompt_join_response,
}


def measure(
    bootstrap: str,
    capabilities: Iterable[str] | None = None,
    say: Callable[[Observation], None] | None = None,
    security: ClientSecurity | None = None,
) -> list[Observation]:
    """Run the named measurements (default: all), in order, reporting each as it ends; every
    client authenticates with ``security`` (None: PLAINTEXT)."""
    chosen = list(MEASUREMENTS) if capabilities is None else list(capabilities)
    unknown = [c for c in chosen if c not in MEASUREMENTS]
    if unknown:
        raise KeyError(f"no measurement for {unknown}; known: {sorted(MEASUREMENTS)}")
    observations = []
    for name in chosen:
        observation = MEASUREMENTS[name](bootstrap, security)
        observations.append(observation)
        if say is not None:
            say(observation)
    return observations
