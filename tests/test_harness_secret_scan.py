"""The security tier's secret scan (``testlab/secret_scan.py``) finds a planted secret, says
where without repeating it, counts the known client leak apart, and refuses to scan blind."""

from __future__ import annotations

import secrets as random_secrets

import pytest

from testlab.secret_scan import MIN_SECRET_LENGTH, scan_for_secrets

PASSWORD = random_secrets.token_hex(16)
KEY_LINE = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg" + random_secrets.token_hex(8)
KNOWN = ("kafka.admin.client DEBUG Starting KafkaAdminClient with configuration",)
CLEAN = [
    "kafka.conn DEBUG <BrokerConnection node_id=1 host=127.0.0.1:9094>: Authenticated as alice",
    "librdkafka DEBUG SASL [m0-0#consumer-1] ... SASL_PLAINTEXT: Send SASL Kafka frame",
    "kafka_sticky_plugin.hooks INFO group g: generation 3, 6 partitions",
]


@pytest.mark.parametrize("secret", [PASSWORD, KEY_LINE], ids=["password", "key line"])
def test_a_planted_secret_is_found_and_masked(secret: str) -> None:
    planted = f"librdkafka DEBUG CONF [m0-0#consumer-1] Client configuration: x={secret}"
    scan = scan_for_secrets([PASSWORD, KEY_LINE], [*CLEAN, planted, *CLEAN], KNOWN)
    assert scan.scanned == 2 * len(CLEAN) + 1
    assert scan.known == 0
    assert scan.leaks == [
        "librdkafka DEBUG CONF [m0-0#consumer-1] Client configuration: x=<secret>"
    ]
    assert secret not in scan.describe() and "1 leak(s)" in scan.describe()


def test_clean_lines_pass() -> None:
    scan = scan_for_secrets([PASSWORD, KEY_LINE], CLEAN, KNOWN)
    assert (scan.scanned, scan.known, scan.leaks) == (len(CLEAN), 0, [])


def test_a_known_client_leak_is_counted_not_failed() -> None:
    """kafka-python's KafkaAdminClient logs its keyword arguments at DEBUG: counted by name;
    the same secret in any other line is still a leak."""
    known_line = f"{KNOWN[0]}: {{'sasl_plain_password': '{PASSWORD}'}}"
    other = f"kafka.consumer DEBUG config {{'sasl_plain_password': '{PASSWORD}'}}"
    scan = scan_for_secrets([PASSWORD], [known_line, other], KNOWN)
    assert scan.known == 1
    assert len(scan.leaks) == 1 and scan.leaks[0].startswith("kafka.consumer DEBUG")


def test_a_leak_in_a_traceback_line_is_found() -> None:
    """A record's traceback is part of its formatted line (one string with newlines)."""
    line = f"kafka_sticky_plugin ERROR failed\nTraceback...\nValueError: bad password {PASSWORD}"
    assert scan_for_secrets([PASSWORD], [line]).leaks


def test_a_blind_scan_is_refused() -> None:
    with pytest.raises(ValueError, match="blind"):
        scan_for_secrets([], CLEAN)
    with pytest.raises(ValueError, match="shorter than"):
        scan_for_secrets(["x" * (MIN_SECRET_LENGTH - 1)], CLEAN)
