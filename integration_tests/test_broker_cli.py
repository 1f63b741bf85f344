"""``python -m kafka_sticky_plugin broker``: started as a user would, used by a real consumer
group with the settings it prints, stopped with Ctrl-C (SIGINT) and with SIGTERM.

This test does not use the session broker: the command under test is the broker.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer

from kafka_sticky_plugin import CooperativeStickyAssignor
from kafka_sticky_plugin.brokers.wire_probe import metadata_brokers
from kafka_sticky_plugin.groups.admin import create_topic, partition_count
from kafka_sticky_plugin.hooks import install_hooks

RECORDS = 20


class BrokerCommand:
    """The running command: its process and the settings it printed."""

    def __init__(self, process: subprocess.Popen[str], banner: str) -> None:
        self.process = process
        self.banner = banner
        found = re.search(r"^bootstrap\.servers=(127\.0\.0\.1:\d+)$", banner, re.MULTILINE)
        assert found, banner
        self.bootstrap = found.group(1)

    def kafka_python_settings(self) -> dict[str, int]:
        line = next(x for x in self.banner.splitlines() if x.strip().startswith("kafka-python"))
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def _start() -> BrokerCommand:
    process = subprocess.Popen(
        [sys.executable, "-m", "kafka_sticky_plugin", "broker", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if line.startswith("Ctrl-C"):
            return BrokerCommand(process, "".join(lines))
    process.kill()
    process.wait(timeout=10)
    process.stdout.close()
    raise AssertionError(f"broker command did not start: {''.join(lines)}")


@pytest.fixture
def command() -> Iterator[BrokerCommand]:
    started = _start()
    try:
        yield started
    finally:
        # SIGTERM first: the command stops its broker (SIGKILL alone relies on the broker's
        # parent-death signal, which only Linux has).
        if started.process.poll() is None:
            started.process.terminate()
            try:
                started.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                started.process.kill()
                started.process.wait(timeout=10)
        if started.process.stdout is not None:
            started.process.stdout.close()


def _answers(bootstrap: str) -> bool:
    host, port = bootstrap.rsplit(":", 1)
    try:
        metadata_brokers(host, int(port), timeout_s=1.0)
    except OSError:
        return False
    return True


def _stop(command: BrokerCommand, signum: int) -> str:
    command.process.send_signal(signum)
    out, _ = command.process.communicate(timeout=20)
    return out


@pytest.mark.timeout(90)
def test_a_group_consumes_and_commits_on_the_broker_command(command: BrokerCommand) -> None:
    """The printed settings are what a consumer needs; Ctrl-C stops the broker cleanly."""
    settings = command.kafka_python_settings()
    assert settings == {
        "session_timeout_ms": 6000,
        "heartbeat_interval_ms": 1000,
        "max_poll_interval_ms": 10000,
    }
    topic = create_topic(command.bootstrap, "orders", 3)
    producer = KafkaProducer(bootstrap_servers=command.bootstrap)
    for n in range(RECORDS):
        producer.send(topic, key=str(n % 3).encode(), value=str(n).encode())
    producer.flush()
    producer.close()

    consumer: Any = KafkaConsumer(
        topic,
        bootstrap_servers=command.bootstrap,
        group_id="billing",
        auto_offset_reset="earliest",
        enable_auto_commit=False,
        partition_assignment_strategy=[CooperativeStickyAssignor],
        **settings,
    )
    install_hooks(consumer)
    seen: list[int] = []
    started = time.monotonic()
    try:
        while len(seen) < RECORDS and time.monotonic() - started < 40:
            for records in consumer.poll(timeout_ms=500).values():
                seen.extend(int(r.value) for r in records)
        joined_s = time.monotonic() - started
        consumer.commit()
        committed = sum(consumer.committed(tp) or 0 for tp in consumer.assignment())
    finally:
        consumer.close()
    assert sorted(seen) == list(range(RECORDS))
    assert committed == RECORDS
    print(f"first join and {RECORDS} records took {joined_s:.1f}s")
    assert command.process.poll() is None, "the broker command ended on its own"

    out = _stop(command, signal.SIGINT)
    assert command.process.returncode == 0, out
    assert "broker stopped" in out
    assert not _answers(command.bootstrap), "the broker still answers after Ctrl-C"


@pytest.mark.timeout(60)
def test_sigterm_stops_the_broker_command(command: BrokerCommand) -> None:
    """SIGTERM (what a process manager sends) stops it with status 0 and frees the port."""
    assert _answers(command.bootstrap)
    out = _stop(command, signal.SIGTERM)
    assert command.process.returncode == 0, out
    assert not _answers(command.bootstrap)


@pytest.mark.timeout(60)
def test_a_port_in_use_is_refused_with_a_message(command: BrokerCommand) -> None:
    """A second broker on the same port: exit status 2 and what to do, nothing started."""
    port = command.bootstrap.rsplit(":", 1)[1]
    done = subprocess.run(
        [sys.executable, "-m", "kafka_sticky_plugin", "broker", "--port", port],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 2
    assert f"127.0.0.1:{port} is already in use" in done.stderr
    assert _answers(command.bootstrap), "the running broker was disturbed"


@pytest.mark.timeout(60)
def test_the_banner_says_topics_are_auto_created_and_how_to_create_one(
    command: BrokerCommand,
) -> None:
    """What the banner says about auto-created topics is what the broker does, and the
    snippet it prints creates a topic with the partitions asked for."""
    found = re.search(
        r"topics are created on first use with (\d+) partitions", command.banner, re.MULTILINE
    )
    assert found, command.banner
    producer = KafkaProducer(bootstrap_servers=command.bootstrap)
    producer.send("auto-created", b"x").get(timeout=20)
    producer.close()
    assert partition_count(command.bootstrap, "auto-created") == int(found.group(1))
    start = command.banner.rindex("\n", 0, command.banner.index("from kafka.admin")) + 1
    snippet = command.banner[start:]
    snippet = snippet[: snippet.index("\n\n")] if "\n\n" in snippet else snippet
    code = textwrap.dedent(snippet).replace("127.0.0.1:9092", command.bootstrap)
    code = code.replace('"orders"', '"from-the-snippet"')
    exec(compile(code, "<banner snippet>", "exec"), {})
    assert partition_count(command.bootstrap, "from-the-snippet") == 12


def _command(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafka_sticky_plugin", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.timeout(180)
def test_commands_name_the_request_this_broker_does_not_serve(command: BrokerCommand) -> None:
    """migration-check and conformance on the embedded broker (which serves consumers but
    closes the connection on DescribeConfigs of a broker and has no CreatePartitions): one
    line naming the request and the broker kind, not "unreachable" (issue 39)."""
    done = _command("migration-check", "--bootstrap", command.bootstrap, "--group", "g")
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == 5, said
    assert len(said.splitlines()) == 1, said
    assert "is Tansu (cluster id" in said and "does not serve DescribeConfigs" in said, said
    done = _command("conformance", "--bootstrap", command.bootstrap, "--only", "partition_growth")
    said = done.stdout + done.stderr
    assert "Traceback" not in said, said
    (row,) = [line for line in said.splitlines() if line.startswith("partition_growth")]
    assert row.endswith("Tansu (cluster id tansu_cluster) does not serve CreatePartitions"), row
    assert _answers(command.bootstrap), "the broker stopped answering"


@pytest.mark.timeout(60)
def test_migration_check_says_at_once_that_nothing_answers(command: BrokerCommand) -> None:
    """A wrong bootstrap (a loopback port nobody listens on): one line at once, exit 2, not
    after the admin client's 15 s bootstrap timeout."""
    port = command.bootstrap.rsplit(":", 1)[1]
    command.process.terminate()
    command.process.wait(timeout=20)
    started = time.monotonic()
    done = _command("migration-check", "--bootstrap", f"127.0.0.1:{port}", "--group", "g")
    took = time.monotonic() - started
    said = (done.stdout + done.stderr).strip()
    assert done.returncode == 2, said
    assert said == f"error: cannot reach 127.0.0.1:{port}: Connection refused", said
    print(f"said after {took:.1f} s")
