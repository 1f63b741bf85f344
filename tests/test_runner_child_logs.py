"""``ConsumerGroupRunner.close`` deletes the child members' client logs: a run leaves no
``child-members-*`` directory behind (files included, not only processes). No broker: the
runner only makes the log paths it hands its child members."""

from __future__ import annotations

from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner


def test_close_deletes_the_child_log_directory() -> None:
    runner = ConsumerGroupRunner("127.0.0.1:9", "g", {"t": 4}, ["cooperative-sticky"])
    first, second = runner._child_log("m0-0.log"), runner._child_log("pack-0.log")
    first.write_text("client log\n", encoding="utf-8")
    second.write_text("pack log\n", encoding="utf-8")
    assert runner.java_logs() == [first, second]
    assert first.parent == second.parent and first.parent.name.startswith("child-members-")
    runner.close()
    assert not first.parent.exists()
    assert runner.java_logs() == []
    runner.close()  # a second close has nothing left to delete
