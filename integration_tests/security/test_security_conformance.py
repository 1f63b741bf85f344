"""``conformance`` on the secured node over SCRAM (loopback), as a user who is no super user:
its security options (shared with ``migration-check``) reach every client it starts: the
admin client that makes and deletes its topics, the group members, and the librdkafka child
(its credentials by the environment, never its command line).

``carol`` first has no ACL: the first measurement is refused, one line naming it (exit 2).
Then she gets exactly the ACLs docs/security.md lists for the command (prefixed: the topics
``conf-`` and the groups ``conformance-``), and three measurements run and match Apache
Kafka (exit 0). Every output line and every log line of the test (DEBUG) is scanned for the
run's passwords and key lines.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from secured_tier import (
    EMBEDDED_SKIP,
    LogLines,
    assert_no_secret,
    cli_options,
    log_lines,
    secured_kafka,
)

from kafka_sticky_plugin.testing.conformance_cli import main
from kafka_sticky_plugin.testing.kafka_security import SecuredKafka

pytestmark = [EMBEDDED_SKIP]
__all__ = ["log_lines", "secured_kafka"]  # fixtures, imported for pytest

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

    def run() -> tuple[int, str]:
        capsys.readouterr()
        t0 = time.monotonic()
        code = main(argv)
        out = capsys.readouterr().out
        with capsys.disabled():
            print(f"conformance as carol: exit {code} in {time.monotonic() - t0:.1f} s\n{out}")
        outputs.append(out)
        return code, out

    code, out = run()
    last = out.splitlines()[-1]
    assert code == 2 and last.startswith(f"error: {CAPABILITIES[0]}: "), out
    assert "AuthorizationFailed" in last, out

    grant_carol()
    code, out = run()
    assert code == 0, out
    assert f"{len(CAPABILITIES)} measured, 0 skipped, 0 differ from Apache Kafka" in out, out
    for capability in CAPABILITIES:
        assert f"{capability} " in out and "same as Apache Kafka" in out, out

    scan = assert_no_secret(kafka, [*outputs, *log_lines.lines])
    print(scan.describe())
    assert len(log_lines.lines) > 100, "the DEBUG loggers produced almost nothing: scan blind"
