"""``conformance --bootstrap``: the address parsing, for any address a user gives (nothing here
connects anywhere: the one step that would is replaced by a recorder)."""

from __future__ import annotations

import pytest

from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.testing import conformance_cli
from kafka_sticky_plugin.testing.brokers import parse_bootstrap
from kafka_sticky_plugin.testing.embedded_broker import BrokerStartError


@pytest.mark.parametrize(
    ("text", "endpoints"),
    [
        ("kafka-1.prod:9093", [("kafka-1.prod", 9093)]),
        ("[::1]:9092", [("::1", 9092)]),
        ("10.0.0.5:9092", [("10.0.0.5", 9092)]),
        ("localhost:9092, 127.0.0.1:9093", [("localhost", 9092), ("127.0.0.1", 9093)]),
        ("[2001:db8::7]:19092,b.example:1", [("2001:db8::7", 19092), ("b.example", 1)]),
    ],
)
def test_any_address_is_parsed(text: str, endpoints: list[tuple[str, int]]) -> None:
    assert parse_bootstrap(text) == endpoints


@pytest.mark.parametrize(
    "text", ["", "kafka-1.prod", "kafka-1.prod:", ":9092", "host:port", "a:70000", "::1:9092"]
)
def test_a_malformed_address_is_one_line_error(text: str) -> None:
    with pytest.raises(ConfigurationError) as caught:
        parse_bootstrap(text)
    assert "\n" not in str(caught.value)
    assert "HOST:PORT" in str(caught.value)


@pytest.mark.parametrize("address", ["kafka-1.prod:9093", "[::1]:9092", "10.0.0.5:9092"])
def test_conformance_takes_any_address(
    address: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The command goes on to wait for the cluster at that address (it is not refused)."""
    waited: list[tuple[str, int]] = []

    def unreachable(host: str, port: int, timeout_s: float) -> None:
        waited.append((host, port))
        raise BrokerStartError(f"{host}:{port} not ready after {timeout_s:.1f}s")

    monkeypatch.setattr(conformance_cli, "wait_until_ready", unreachable)
    assert conformance_cli.main(["--bootstrap", address]) == 2
    assert waited == parse_bootstrap(address)[:1]
    out = capsys.readouterr().out
    assert "loopback" not in out
    assert "not ready" in out


def test_conformance_refuses_a_malformed_address(capsys: pytest.CaptureFixture[str]) -> None:
    assert conformance_cli.main(["--bootstrap", "kafka-1.prod"]) == 2
    assert "error: bootstrap address 'kafka-1.prod' is not HOST:PORT" in capsys.readouterr().out
