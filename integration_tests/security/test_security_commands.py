"""The commands that read a user's cluster, ``migration-check`` and ``conformance``, on the
secured node (loopback): their security options (one parser,
:mod:`kafka_sticky_plugin.cli_security`) reach every client they start, the password comes
from an environment variable or a file, and a refusal is one line without it. One secured
node for the module (:mod:`secured_tier`).

``migration-check``: its clients are kafka-python's admin client and, for a consumer group,
confluent-kafka's. A classic group of ``alice`` (over
SCRAM) is checked by the super user over SCRAM (password in the default environment
variable), over TLS with the super user's client certificate and over SCRAM-over-TLS
(password in a file); then by ``alice``, who has no ACL on the cluster (the broker's group.*
settings are refused: one note naming the grant), again once she is granted DescribeConfigs
on the cluster (the settings are read), and with a wrong password (exit 2, one line). No
output line carries a password or key line of the run.

``conformance`` over SCRAM as ``carol``, no super user: its clients are the admin client that
makes, grows and deletes its topics, the group members, and the librdkafka child (its
credentials by the environment, never its command line). ``carol`` first has no ACL: the
first measurement is refused, one line naming it (exit 2). Then she gets exactly the ACLs
docs/security.md lists for the command (prefixed: the topics ``conf-`` and the groups
``conformance-``), and a topic, a group and the librdkafka measurement run and match Apache
Kafka (exit 0). Every output line and every log line of the test (DEBUG) is scanned for the
run's passwords and key lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from group_flow import FlowingGroup
from secured_tier import (
    EMBEDDED_SKIP,
    LogLines,
    assert_no_secret,
    cli_options,
    log_lines,
    secured_flow,
    secured_kafka,
)

from kafka_sticky_plugin import migration_check
from kafka_sticky_plugin.brokers import conformance_cli
from kafka_sticky_plugin.cli_security import PASSWORD_ENV
from kafka_sticky_plugin.client_security import ClientSecurity
from testlab.kafka_security import SecuredKafka

pytestmark = [EMBEDDED_SKIP]
__all__ = ["log_lines", "secured_flow", "secured_kafka"]  # fixtures, imported for pytest


def _run(
    argv: list[str],
    capsys: pytest.CaptureFixture[str],
    outputs: list[str],
    main: Callable[[list[str]], int] = migration_check.main,
) -> tuple[int, str]:
    """Run the command ``main`` in this process; its output is kept in ``outputs`` (for the
    scan) and shown past the capture with its exit status and wall time."""
    capsys.readouterr()
    t0 = time.monotonic()
    code = main(argv)
    out = capsys.readouterr().out
    outputs.append(out)
    with capsys.disabled():
        took = time.monotonic() - t0
        print(f"\n{main.__module__}: exit {code} in {took:.1f} s\n{out}", end="")
    return code, out


@pytest.mark.timeout(240)
def test_migration_check_over_each_secured_transport(
    secured_kafka: SecuredKafka,
    secured_flow: Callable[..., FlowingGroup],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    kafka = secured_kafka
    flow = secured_flow("alice", "scram", ["cooperative-sticky"], 3)
    group_id = flow.group.group_id
    flow.group.start_members(["m0"])
    flow.group.wait_stable(timeout_s=60)
    outputs: list[str] = []

    def check(transport: str, sec: ClientSecurity, password_file: Path | None = None) -> str:
        argv = ["--bootstrap", kafka.bootstrap(transport), "--group", group_id, "--timeout=10"]
        code, out = _run(argv + cli_options(sec, password_file), capsys, outputs)
        assert code == 0, out
        assert f"group {group_id}: type=classic" in out and "members=1" in out
        return out

    admin_scram = kafka.admin("scram")
    monkeypatch.setenv(PASSWORD_ENV, admin_scram.password or "")
    check("scram", admin_scram)
    check("tls", kafka.admin("tls"))
    monkeypatch.delenv(PASSWORD_ENV)
    secret_file = tmp_path / "admin-password"
    secret_file.write_text(f"{kafka.admin('scram_tls').password}\n")
    check("scram_tls", kafka.admin("scram_tls"), secret_file)

    alice = kafka.client("alice", "scram")
    monkeypatch.setenv("ALICE_PW", alice.password or "")
    argv = ["--bootstrap", kafka.bootstrap("scram"), "--group", group_id, "--timeout=10"]
    as_alice = [*argv, *cli_options(alice), "--sasl-password-env=ALICE_PW"]
    code, out = _run(as_alice, capsys, outputs)
    assert code == 0 and f"group {group_id}: type=classic" in out, out
    unread = "grant DescribeConfigs on Cluster 'kafka-cluster' to User:alice"
    assert out.startswith("note: the broker's group.* settings could not be read") and unread in out

    kafka.grant("alice", "cluster", "kafka-cluster", ("DESCRIBE_CONFIGS",))
    code, out = _run(as_alice, capsys, outputs)
    assert code == 0 and "migration.policy=bidirectional" in out and "note:" not in out, out
    # the node outlives a rerun of this test (module scope): leave alice as she came
    kafka.revoke("alice", "cluster", "kafka-cluster", ("DESCRIBE_CONFIGS",))

    monkeypatch.setenv("WRONG_PW", "not-the-password")
    code, out = _run([*argv, *cli_options(alice), "--sasl-password-env=WRONG_PW"], capsys, outputs)
    assert code == 2 and out.count("\n") == 1 and out.startswith("error: cannot reach"), out
    # kafka-python reports either the refused SASL handshake or the broker closing the socket
    # after it (a race inside the client): both name the last connection failure
    assert "last connection failure: " in out, out

    flow.finish("secured migration-check")
    assert_no_secret(kafka, outputs)


# -- conformance ---------------------------------------------------------------------------

#: A topic measurement, a group one and the librdkafka child's.
CAPABILITIES = ("partition_growth", "prompt_join_response", "topic_deletion_safe_for_librdkafka")
#: What docs/security.md says the command's principal needs (resource, prefix, operations).
CONFORMANCE_ACLS = (
    ("topic", "conf-", ("CREATE", "DESCRIBE", "READ", "ALTER", "DELETE")),
    ("group", "conformance-", ("READ",)),
)


@pytest.fixture
def grant_carol(secured_kafka: SecuredKafka) -> Iterator[Callable[[], None]]:
    """A function that grants :data:`CONFORMANCE_ACLS` to ``carol``; what it granted is
    revoked at teardown (the node outlives a rerun: module scope)."""
    granted: list[tuple[str, str, tuple[str, ...]]] = []

    def grant() -> None:
        for resource, prefix, operations in CONFORMANCE_ACLS:
            secured_kafka.grant("carol", resource, prefix, operations, prefixed=True)
            granted.append((resource, prefix, operations))

    yield grant
    for resource, prefix, operations in granted:
        secured_kafka.revoke("carol", resource, prefix, operations, prefixed=True)


@pytest.mark.timeout(240)
def test_conformance_over_scram_as_a_user_with_the_documented_acls(
    secured_kafka: SecuredKafka,
    grant_carol: Callable[[], None],
    log_lines: LogLines,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kafka = secured_kafka
    carol = kafka.client("carol", "scram")
    monkeypatch.setenv("CAROL_PW", carol.password or "")
    argv = [
        "--bootstrap",
        kafka.bootstrap("scram"),
        "--only",
        ",".join(CAPABILITIES),
        *cli_options(carol),
        "--sasl-password-env=CAROL_PW",
    ]
    outputs: list[str] = []
    code, out = _run(argv, capsys, outputs, conformance_cli.main)
    last = out.splitlines()[-1]
    assert code == 2 and last.startswith(f"error: {CAPABILITIES[0]}: "), out
    assert "AuthorizationFailedError: the cluster refused it; the principal needs" in last, out

    grant_carol()
    code, out = _run(argv, capsys, outputs, conformance_cli.main)
    assert code == 0, out
    assert f"{len(CAPABILITIES)} measured, 0 skipped, 0 differ from Apache Kafka" in out, out
    for capability in CAPABILITIES:
        assert f"{capability} " in out and "same as Apache Kafka" in out, out

    scan = assert_no_secret(kafka, [*outputs, *log_lines.lines])
    print(scan.describe())
    assert len(log_lines.lines) > 100, "the DEBUG loggers produced almost nothing: scan blind"
