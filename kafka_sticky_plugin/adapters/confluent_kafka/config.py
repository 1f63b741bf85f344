"""Check a confluent-kafka consumer configuration before the consumer starts.

Pure: no client import, so the check runs (and is tested) without librdkafka. It refuses what
librdkafka itself refuses at construction (an unknown strategy, eager and cooperative
strategies in one list) and what cannot work in a group (no ``group.id``, a heartbeat that is
not shorter than the session timeout), and every refusal says what to do instead.

Invariant: :func:`check_config` returns the rebalance protocol librdkafka will use for a
configuration it accepts. For the classic protocol that protocol is fixed by the strategy list
(librdkafka requires every listed strategy to share one protocol type), so the answer is exact
before the consumer exists. ``group.protocol=consumer`` (KIP-848) is always incremental.
"""

from __future__ import annotations

from collections.abc import Mapping

from ...assignor.rebalance import RebalanceProtocol
from ...errors import ConfigurationError

__all__ = [
    "COOPERATIVE_STRATEGIES",
    "EAGER_STRATEGIES",
    "RebalanceProtocol",
    "check_config",
    "config_value",
    "strategy_list",
]


# librdkafka's built-in strategies (CONFIGURATION.md, "Available strategies"). It has no eager
# ``sticky``: its only sticky strategy is the cooperative one.
EAGER_STRATEGIES = frozenset({"range", "roundrobin"})
COOPERATIVE_STRATEGIES = frozenset({"cooperative-sticky"})
_DEFAULT_STRATEGIES = ("range", "roundrobin")
# Classic-only session settings: with group.protocol=consumer the broker sets them (librdkafka
# refuses them there), and max.poll.interval.ms is no longer bound to the session timeout.
_BROKER_SIDE_SESSION = ("session.timeout.ms", "heartbeat.interval.ms")

# Names users bring from the Java client or from kafka-python, mapped to the advice we give.
_FOREIGN_NAMES = {
    "sticky": "librdkafka has no eager 'sticky' strategy",
    "stickyassignor": "librdkafka has no eager 'sticky' strategy",
    "org.apache.kafka.clients.consumer.stickyassignor": "librdkafka has no eager 'sticky' strategy",
    "cooperativestickyassignor": "librdkafka spells it 'cooperative-sticky'",
    "org.apache.kafka.clients.consumer.cooperativestickyassignor": (
        "librdkafka spells it 'cooperative-sticky'"
    ),
    "rangeassignor": "librdkafka spells it 'range'",
    "org.apache.kafka.clients.consumer.rangeassignor": "librdkafka spells it 'range'",
    "roundrobinassignor": "librdkafka spells it 'roundrobin'",
    "roundrobinpartitionassignor": "librdkafka spells it 'roundrobin'",
    "org.apache.kafka.clients.consumer.roundrobinassignor": "librdkafka spells it 'roundrobin'",
}

_MIGRATION_ADVICE = (
    "librdkafka cannot run Java's two-step rolling upgrade (first 'range,cooperative-sticky', "
    "then 'cooperative-sticky'): it refuses any list that mixes eager and cooperative "
    "strategies. Supported path: (1) stop every member of the group; (2) start them all "
    "again with partition.assignment.strategy='cooperative-sticky' and the same group.id - "
    "committed offsets are kept, and Apache Kafka picks the group's protocol anew once the "
    "group is empty. On a broker that fixes a group's protocol forever (the embedded Tansu "
    "broker does), or to keep the old group untouched, start the new members under a new "
    "group.id instead, after copying the old group's committed offsets with "
    "kafka_sticky_plugin.confluent.copy_committed_offsets() while the old members are stopped."
)


def config_value(config: Mapping[str, object], name: str) -> object | None:
    """The value of a dotted librdkafka property (``None`` when unset).

    Only the dotted spelling counts: librdkafka refuses ``group_id`` in a configuration dict.
    """
    return config.get(name)


def strategy_list(config: Mapping[str, object]) -> tuple[str, ...]:
    """The configured strategies in preference order (librdkafka's default when unset).

    Like librdkafka, only leading spaces are dropped from each entry: ``"range "`` stays a
    different (unknown) name, which :func:`check_config` then refuses with the reason.
    """
    raw = config_value(config, "partition.assignment.strategy")
    if raw is None:
        return _DEFAULT_STRATEGIES
    if not isinstance(raw, str):
        raise ConfigurationError(
            f"partition.assignment.strategy must be a comma-separated string, got {raw!r}; "
            "for example 'cooperative-sticky'"
        )
    return tuple(name.lstrip(" ") for name in raw.split(","))


def check_config(config: Mapping[str, object]) -> RebalanceProtocol:
    """Validate a consumer configuration; return the rebalance protocol it will use.

    Raises :class:`~kafka_sticky_plugin.errors.ConfigurationError` naming the property at fault
    and the fix. Never contacts a broker and never builds a client.
    """
    group_id = config_value(config, "group.id")
    if not isinstance(group_id, str) or not group_id:
        raise ConfigurationError(
            "group.id is missing or empty: a subscribing consumer joins a group, and "
            "rebalance callbacks only exist inside a group; set group.id to the group's name"
        )
    group_protocol = config_value(config, "group.protocol")
    if group_protocol is None or group_protocol == "classic":
        # KIP-848's session and heartbeat are the broker's (group.consumer.*): these
        # client-side limits bind classic members only.
        _check_timeouts(config)
        return _classic_protocol(config)
    if group_protocol == "consumer":
        if config_value(config, "partition.assignment.strategy") is not None:
            raise ConfigurationError(
                "partition.assignment.strategy is not used with group.protocol='consumer' "
                "(KIP-848: the broker assigns); remove it and, if needed, choose the broker's "
                "assignor with group.remote.assignor ('uniform' or 'range')"
            )
        for name in _BROKER_SIDE_SESSION:
            if config_value(config, name) is not None:
                raise ConfigurationError(
                    f"{name} is not used with group.protocol='consumer' (KIP-848: the broker "
                    "sets the session: group.consumer.session.timeout.ms and "
                    "group.consumer.heartbeat.interval.ms); remove it"
                )
        return RebalanceProtocol.COOPERATIVE
    raise ConfigurationError(
        f"group.protocol={group_protocol!r} is not a librdkafka group protocol; "
        "use 'classic' (the JoinGroup/SyncGroup protocol this plugin interoperates with) "
        "or 'consumer' (KIP-848)"
    )


def _classic_protocol(config: Mapping[str, object]) -> RebalanceProtocol:
    names = strategy_list(config)
    for name in names:
        _check_known(name)
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise ConfigurationError(
            f"partition.assignment.strategy lists {', '.join(duplicates)} more than once; "
            "list each strategy once, in preference order"
        )
    eager = [name for name in names if name in EAGER_STRATEGIES]
    cooperative = [name for name in names if name in COOPERATIVE_STRATEGIES]
    if eager and cooperative:
        raise ConfigurationError(
            f"partition.assignment.strategy={','.join(names)!r} mixes eager ({', '.join(eager)}) "
            f"and cooperative ({', '.join(cooperative)}) strategies. " + _MIGRATION_ADVICE
        )
    return RebalanceProtocol.COOPERATIVE if cooperative else RebalanceProtocol.EAGER


def _check_known(name: str) -> None:
    if name in EAGER_STRATEGIES or name in COOPERATIVE_STRATEGIES:
        return
    if not name:
        raise ConfigurationError(
            "partition.assignment.strategy has an empty entry; "
            "list strategy names separated by commas, for example 'cooperative-sticky'"
        )
    known = ", ".join(sorted(EAGER_STRATEGIES | COOPERATIVE_STRATEGIES))
    if name.strip() != name or any(c.isspace() for c in name):
        raise ConfigurationError(
            f"partition.assignment.strategy entry {name!r} contains whitespace that librdkafka "
            f"keeps as part of the name; write the names without it ({known})"
        )
    reason = _FOREIGN_NAMES.get(name.lower())
    if reason is not None and "sticky" in name.lower() and "cooperative" not in name.lower():
        raise ConfigurationError(
            f"partition.assignment.strategy {name!r}: {reason}. Use 'cooperative-sticky' "
            "(the same sticky plan, handed over incrementally; switching an existing group "
            "from an eager strategy needs the migration below), or run kafka-python with "
            "kafka_sticky_plugin.StickyAssignor if you need eager sticky. " + _MIGRATION_ADVICE
        )
    if reason is not None:
        raise ConfigurationError(
            f"partition.assignment.strategy {name!r}: {reason}; librdkafka knows {known}"
        )
    raise ConfigurationError(
        f"partition.assignment.strategy {name!r} is not a librdkafka strategy (it knows "
        f"{known}); librdkafka cannot run a Python assignor, so a custom strategy is not "
        "possible with confluent-kafka"
    )


def _check_timeouts(config: Mapping[str, object]) -> None:
    session = _int_property(config, "session.timeout.ms", 45000)
    heartbeat = _int_property(config, "heartbeat.interval.ms", 3000)
    if heartbeat >= session:
        raise ConfigurationError(
            f"heartbeat.interval.ms={heartbeat} is not shorter than session.timeout.ms={session}: "
            "the member would be expelled between heartbeats; keep the heartbeat at most a "
            "third of the session timeout (for example 1000 and 6000)"
        )
    max_poll = _int_property(config, "max.poll.interval.ms", 300000)
    if max_poll < session:
        raise ConfigurationError(
            f"max.poll.interval.ms={max_poll} is shorter than session.timeout.ms={session}; "
            "librdkafka refuses this; raise max.poll.interval.ms to at least the session timeout"
        )


def _int_property(config: Mapping[str, object], name: str, default: int) -> int:
    raw = config_value(config, name)
    if raw is None:
        return default
    if isinstance(raw, bool):
        raise ConfigurationError(f"{name} must be an integer number of milliseconds, got {raw!r}")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.strip().isdigit():
        return int(raw)
    raise ConfigurationError(f"{name} must be an integer number of milliseconds, got {raw!r}")
