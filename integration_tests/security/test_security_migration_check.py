"""``migration-check`` on the secured node (loopback): its security options reach both of its
clients (kafka-python's admin client and, for a consumer group, confluent-kafka's), the
password comes from an environment variable or a file, and a refusal is one line without it.

One secured node for the module (:mod:`secured_tier`). A classic group of ``alice`` (over
SCRAM) is checked by the super user over SCRAM (password in the default environment
variable), over TLS with the super user's client certificate and over SCRAM-over-TLS
(password in a file); then by ``alice``, who has no ACL on the cluster (the broker's group.*
settings are refused: one note naming the grant), again once she is granted DescribeConfigs
on the cluster (the settings are read), and with a wrong password (exit 2, one line). No
output line carries a password or key line of the run.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from group_flow import FlowingGroup
from secured_tier import (
    EMBEDDED_SKIP,
    assert_no_secret,
    cli_options,
    secured_flow,
    secured_kafka,
)

from kafka_sticky_plugin.cli_security import PASSWORD_ENV
from kafka_sticky_plugin.client_security import ClientSecurity
from kafka_sticky_plugin.migration_check import main
from kafka_sticky_plugin.testing.kafka_security import SecuredKafka

pytestmark = [EMBEDDED_SKIP]
__all__ = ["secured_flow", "secured_kafka"]


def _run(
    argv: list[str], capsys: pytest.CaptureFixture[str], outputs: list[str]
) -> tuple[int, str]:
    capsys.readouterr()
    code = main(argv)
    out = capsys.readouterr().out
    outputs.append(out)
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
