"""The child members' client logs of a ``ConsumerGroupRunner`` stay readable after
``close()`` (a Java member's log is complete only once its JVM stopped, and the interop tests
read it then) and are deleted with the runner: a run leaves no ``child-members-*`` directory
behind. No broker: the runner only makes the log paths it hands its child members."""

from __future__ import annotations

import gc

from kafka_sticky_plugin.groups.runner import ConsumerGroupRunner


def test_logs_outlive_close_and_go_with_the_runner() -> None:
    runner = ConsumerGroupRunner("127.0.0.1:9", "g", {"t": 4}, ["cooperative-sticky"])
    first, second = runner._child_log("m0-0.log"), runner._child_log("pack-0.log")
    first.write_text("client log\n", encoding="utf-8")
    second.write_text("pack log\n", encoding="utf-8")
    directory = first.parent
    assert second.parent == directory and directory.name.startswith("child-members-")
    runner.close()
    assert runner.java_logs() == [first, second]
    assert first.read_text(encoding="utf-8") == "client log\n"
    del runner
    gc.collect()
    assert not directory.exists()
