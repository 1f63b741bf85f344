"""``ConsumerGroupRunner.static_member_settings``: every incarnation with a
``group_instance_id`` gets them (over the group's settings, under a call's own), the others do
not; restarts keep them (the confluent gauntlet's static member keeps its 30 s session through
every bounce). No broker: only the configurations are built."""

from __future__ import annotations

from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner


def _runner() -> ConsumerGroupRunner:
    runner = ConsumerGroupRunner(
        "127.0.0.1:9",
        "g",
        {"t": 4},
        ["cooperative-sticky"],
        session_timeout_ms=6000,
        client="confluent",
    )
    runner.static_member_settings = {"session_timeout_ms": 30_000}
    return runner


def test_static_incarnations_get_the_static_settings() -> None:
    runner = _runner()
    static = runner._config("m0", "m0-static", None)
    dynamic = runner._config("m1", None, None)
    again = runner._config("m0", "m0-static", None, {"client": "confluent"})
    own = runner._config("m0", "m0-static", None, {"session_timeout_ms": 7000})
    assert (static.session_timeout_ms, static.incarnation) == (30_000, 0)
    assert dynamic.session_timeout_ms == 6000
    assert (again.session_timeout_ms, again.incarnation) == (30_000, 1)
    assert own.session_timeout_ms == 7000
    assert {c.client for c in (static, dynamic, again, own)} == {"confluent"}
