"""``python -m kafka_sticky_plugin migration-check --bootstrap HOST:PORT --group G``.

Reads, from any cluster address the user gives (``kafka-1.prod:9093``, ``10.0.0.5:9092``,
``[::1]:9092``; read-only: nothing is created, joined or changed):

- the cluster's ``group.version`` feature (DescribeFeatures) and the settings that govern
  KIP-848 (DescribeConfigs of one broker: ``group.consumer.migration.policy``,
  ``group.consumer.max.size``, ``group.consumer.assignors``,
  ``group.coordinator.rebalance.protocols``);
- the group: its type and state (ListGroups), and for a classic group its members, their
  client ids and current assignments (DescribeGroups); for a consumer group its members
  through confluent-kafka's ConsumerGroupDescribe when confluent-kafka is installed;

and prints whether the group can move online (classic -> consumer, or back), what blocks it
and what each member must change (:mod:`.migration_advice` holds the rules).

Over a secured listener it authenticates with the options of :mod:`.cli_security`
(``--security-protocol``, ``--sasl-username``, the password from an environment variable or a
file, ``--ssl-cafile``...); its principal needs ``Describe`` on the cluster and the group and
``DescribeConfigs`` on the cluster.

Exit status: 0 the move is possible, 1 something blocks it (printed), 2 bad arguments or an
unreachable cluster (said at once when no address accepts a connection), 3 no such group,
4 kafka-python is not installed (the ``kafka-python`` extra; one line, before anything is
connected to), 5 the broker does not serve a request the command needs (one line naming the
request and the broker kind: the embedded Tansu broker closes the connection on
DescribeConfigs of a broker, say).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import Any, TypeVar

from .authorization_advice import cluster_configs_unread_line, principal_text
from .broker_kind import broker_kind, unreachable
from .brokers.choose import parse_bootstrap
from .cli_security import (
    add_bootstrap_argument,
    add_security_arguments,
    bootstrap_servers,
    open_admin,
    security_from_args,
)
from .client_security import ClientSecurity, confluent_settings, kafka_python_settings
from .command_line import command_parser
from .errors import ConfigurationError
from .migration_advice import (
    EXIT_NO_GROUP,
    ClusterFacts,
    GroupFacts,
    MemberFacts,
    advise,
    render,
)

__all__ = ["main", "parse_args"]

EXIT_USAGE = 2
EXIT_UNSERVED = 5
_T = TypeVar("_T")
_SETTINGS = (
    "group.consumer.migration.policy",
    "group.consumer.max.size",
    "group.consumer.assignors",
    "group.coordinator.rebalance.protocols",
)


def _parser() -> argparse.ArgumentParser:
    parser = command_parser(
        "migration-check",
        (
            "Say whether a consumer group can move online between the classic protocol and"
            " KIP-848's consumer protocol, what blocks it, and what each member must change."
        ),
    )
    add_bootstrap_argument(parser, "the cluster")
    parser.add_argument("--group", required=True, metavar="GROUP", help="the group id")
    parser.add_argument(
        "--timeout", type=float, default=15.0, metavar="S", help="per request (default 15 s)"
    )
    add_security_arguments(parser)
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """The parsed arguments (``args.security``: a
    :class:`~.client_security.ClientSecurity` or ``None``); a malformed
    ``--bootstrap`` or inconsistent security options raise :class:`ConfigurationError`
    (nothing is resolved or connected to)."""
    args = _parser().parse_args(argv)
    args.endpoints = parse_bootstrap(args.bootstrap)
    if not args.group:
        raise ConfigurationError("--group is empty: give the group id to check")
    args.security = security_from_args(args)
    return args


class Unserved(Exception):
    """The broker answered the command's earlier requests but not this one (it closed the
    connection, or answered in a form the client cannot read): ``request`` names it."""

    def __init__(self, request: str, purpose: str, cause: Exception) -> None:
        self.request = request
        self.purpose = purpose
        super().__init__(f"{type(cause).__name__}: {cause}")


def _step(request: str, purpose: str, call: Callable[[], _T]) -> _T:
    """``call()``, which sends ``request``; a failure other than the broker's own error code
    becomes :class:`Unserved` (an unreachable cluster was ruled out before the first step)."""
    from kafka.errors import BrokerResponseError, KafkaConnectionError, KafkaError

    try:
        return call()
    except BrokerResponseError:
        raise
    except (KafkaConnectionError, ValueError, KeyError, TypeError) as exc:
        raise Unserved(request, purpose, exc) from exc
    except KafkaError as exc:
        if "does not support" in str(exc) or type(exc).__name__ == "IncompatibleBrokerVersion":
            raise Unserved(request, purpose, exc) from exc
        raise


def _unserved_line(shown: str, kind: str, unserved: Unserved) -> str:
    return (
        f"error: {shown} is {kind}, which does not serve {unserved.request}"
        f" ({unserved}); migration-check needs it to {unserved.purpose}"
    )


def _cluster_facts(admin: Any) -> ClusterFacts:
    from kafka.admin import ConfigResource, ConfigResourceType

    features = _step("ApiVersions", "read the group.version feature", admin.describe_features)
    finalized = features.get("group.version", {}).get("finalized")
    group_version = int(finalized[1]) if finalized else 0
    first = _step("DescribeCluster", "find a broker", admin.describe_cluster)["brokers"][0]
    broker_id = str(first.get("broker_id", first.get("node_id")))
    resource = ConfigResource(
        ConfigResourceType.BROKER, broker_id, configs=dict.fromkeys(_SETTINGS)
    )
    found = _step(
        "DescribeConfigs",
        "read the broker's group.consumer.* settings",
        lambda: admin.describe_configs([resource], config_filter="all"),
    )["broker"][broker_id]

    def value(name: str) -> str | None:
        entry = found.get(name)
        return None if entry is None else entry.get("value")

    def listed(name: str) -> tuple[str, ...] | None:
        raw = value(name)
        return None if raw is None else tuple(x.strip() for x in raw.split(",") if x.strip())

    size = value("group.consumer.max.size")
    return ClusterFacts(
        group_version=group_version,
        rebalance_protocols=listed("group.coordinator.rebalance.protocols"),
        migration_policy=value("group.consumer.migration.policy"),
        consumer_max_size=int(size) if size is not None else None,
        consumer_assignors=listed("group.consumer.assignors"),
    )


def _settings_unread(cluster: ClusterFacts) -> bool:
    """A KIP-848 broker (``group.version`` >= 1) knows every setting asked for; none came
    back, so they were refused (an older broker has no ``group.version`` and none of them)."""
    return bool(cluster.group_version) and (
        cluster.migration_policy,
        cluster.consumer_max_size,
        cluster.consumer_assignors,
        cluster.rebalance_protocols,
    ) == (None, None, None, None)


def _user_data(assignment: Any) -> bytes | None:
    raw = assignment.get("user_data") if isinstance(assignment, dict) else None
    if raw is None:
        return None
    return raw if isinstance(raw, bytes) else str(raw).encode()


def _group_facts(
    admin: Any,
    bootstrap: list[str],
    group_id: str,
    timeout_s: float,
    security: ClientSecurity | None = None,
) -> GroupFacts:
    listed = {g["group_id"]: g for g in _step("ListGroups", "find the group", admin.list_groups)}
    entry = listed.get(group_id)
    if entry is None:
        return GroupFacts(group_id, None)
    group_type = str(entry.get("group_type") or "classic")
    state = str(entry.get("group_state") or "")
    if group_type == "classic":
        described = _step(
            "DescribeGroups",
            "read the group's members",
            lambda: admin.describe_groups([group_id]),
        )[group_id]
        members = tuple(
            MemberFacts(
                member_id=m["member_id"],
                client_id=m["client_id"],
                host=m["client_host"],
                assignment_user_data=_user_data(m.get("member_assignment")),
                subscription_user_data=_user_data(m.get("member_metadata")),
            )
            for m in described["members"]
        )
        return GroupFacts(
            group_id,
            "classic",
            state=state,
            protocol_type=str(described["protocol_type"] or entry.get("protocol_type") or ""),
            protocol=str(described["protocol_data"] or ""),
            members=members,
        )
    members, assignor = _consumer_group_members(bootstrap, group_id, timeout_s, security)
    return GroupFacts(group_id, group_type, state=state, protocol=assignor, members=members)


def _consumer_group_members(
    bootstrap: list[str], group_id: str, timeout_s: float, security: ClientSecurity | None
) -> tuple[tuple[MemberFacts, ...], str]:
    """ConsumerGroupDescribe through confluent-kafka (kafka-python has no such request);
    nothing when confluent-kafka is not installed."""
    try:
        from confluent_kafka.admin import AdminClient
    except ImportError:
        return (), ""
    client = AdminClient(
        {"bootstrap.servers": ",".join(bootstrap), "log_level": 3, **confluent_settings(security)}
    )
    description = client.describe_consumer_groups([group_id])[group_id].result(timeout=timeout_s)
    members = tuple(
        MemberFacts(member_id=m.member_id, client_id=m.client_id, host=m.host)
        for m in description.members
    )
    return members, str(description.partition_assignor or "")


def main(argv: list[str] | None = None) -> int:
    """Read the facts, print the advice; see the module docstring for the exit status."""
    try:
        args = parse_args(argv)
    except ConfigurationError as exc:
        print(f"error: {exc}")
        return EXIT_USAGE
    from kafka.errors import KafkaError

    bootstrap = bootstrap_servers(args.endpoints)
    refused = unreachable(args.endpoints, min(args.timeout, 5.0))
    if refused is not None:
        print(f"error: cannot reach {args.bootstrap}: {refused}")
        return EXIT_USAGE
    try:
        admin = open_admin(
            args.endpoints,
            args.security,
            args.timeout,
            "kafka-sticky-migration-check",
            args.bootstrap,
        )
    except ConfigurationError as exc:
        print(f"error: {exc}")
        return EXIT_USAGE
    try:
        cluster = _cluster_facts(admin)
        group = _group_facts(admin, bootstrap, args.group, args.timeout, args.security)
    except Unserved as unserved:
        print(_unserved_line(args.bootstrap, broker_kind(admin), unserved))
        return EXIT_UNSERVED
    except KafkaError as exc:
        print(f"error: reading {args.bootstrap} failed: {type(exc).__name__}: {exc}")
        return EXIT_USAGE
    finally:
        admin.close()
    advice = advise(cluster, group)
    if _settings_unread(cluster):
        print(cluster_configs_unread_line(principal_text(kafka_python_settings(args.security))))
    for line in render(cluster, group, advice):
        print(line)
    return EXIT_NO_GROUP if group.group_type is None else advice.exit_code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
