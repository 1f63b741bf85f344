"""``conformance --bootstrap``: the address parsing, for any address a user gives, and the
security options it shares with ``migration-check`` (nothing here connects anywhere: the
steps that would are replaced by recorders)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kafka_sticky_plugin.brokers import conformance_cli
from kafka_sticky_plugin.brokers.choose import parse_bootstrap
from kafka_sticky_plugin.brokers.embedded import BrokerStartError
from kafka_sticky_plugin.cli_security import PASSWORD_ENV
from kafka_sticky_plugin.client_security import ClientSecurity
from kafka_sticky_plugin.errors import ConfigurationError


@pytest.fixture(autouse=True)
def _no_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing here connects anywhere: the command's first TCP probe of the addresses (which
    says at once that nobody listens) answers "reachable"."""
    monkeypatch.setattr(conformance_cli, "unreachable", lambda *_args: None)


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


# -- the security options (shared with migration-check: kafka_sticky_plugin.cli_security) ----

SECRET = "conformance-pa55-never-shown"
SCRAM = ["--security-protocol=SASL_SSL", "--sasl-username=ops", "--sasl-mechanism=scram-sha-256"]


@dataclass
class Recorded:
    """What the command did instead of connecting."""

    reached: tuple[object, ...] | None = None
    measured: list[str] = field(default_factory=list)
    security: ClientSecurity | None = None


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> Recorded:
    """Nothing connects: reaching the cluster and the measurements are replaced by
    recorders (the measurements observe nothing)."""
    seen = Recorded()

    def reach(endpoints: object, shown: str, security: object) -> None:
        seen.reached = (endpoints, shown, security)

    def measure(
        bootstrap: str, chosen: list[str], say: object, security: ClientSecurity | None
    ) -> list[object]:
        seen.measured.extend(chosen)
        seen.security = security
        return []

    monkeypatch.setattr(conformance_cli, "_reach", reach)
    monkeypatch.setattr(conformance_cli, "_kind", lambda *_args: "a Kafka broker")
    monkeypatch.setattr(conformance_cli, "measure", measure)
    return seen


def test_conformance_takes_the_security_options(
    recorded: Recorded,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Every measurement gets the one ClientSecurity the options give (password from the
    environment); nothing is printed of the password."""
    monkeypatch.setenv(PASSWORD_ENV, SECRET)
    argv = ["--bootstrap", "kafka-1.prod:9094", "--only", "partition_growth,protocol_vote", *SCRAM]
    assert conformance_cli.main(argv) == 0
    expected = ClientSecurity("SASL_SSL", "ops", SECRET, mechanism="SCRAM-SHA-256")
    assert recorded.security == expected
    assert recorded.measured == ["partition_growth", "protocol_vote"]
    assert recorded.reached == ([("kafka-1.prod", 9094)], "kafka-1.prod:9094", expected)
    assert SECRET not in capsys.readouterr().out


def test_conformance_without_security_options_is_plaintext(recorded: Recorded) -> None:
    assert conformance_cli.main(["--bootstrap", "[::1]:9092", "--only", "partition_growth"]) == 0
    assert recorded.measured == ["partition_growth"] and recorded.security is None


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--security-protocol=SASL_SSL"], "error: SASL_SSL needs --sasl-username"),
        (
            SCRAM,
            f"error: SASL_SSL needs the SASL password: set the environment variable {PASSWORD_ENV}",
        ),
        (["--ssl-cafile=/nonexistent/ca.pem"], "error: --ssl-* options need --security-protocol"),
        (
            ["--security-protocol=SSL", "--ssl-certfile=/nonexistent/c.pem"],
            "error: --ssl-certfile and --ssl-keyfile go together",
        ),
    ],
)
def test_inconsistent_security_options_are_one_line_before_connecting(
    extra: list[str],
    said: str,
    recorded: Recorded,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.delenv(PASSWORD_ENV, raising=False)
    assert conformance_cli.main(["--bootstrap", "kafka-1.prod:9094", *extra]) == 2
    out = capsys.readouterr().out
    assert out.startswith(said) and out.count("\n") == 1, out
    assert recorded == Recorded()


def test_a_refused_authentication_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over a secured listener the command reaches the cluster by one authenticated
    connection (the plaintext probe cannot speak to it): its refusal is the error line."""
    monkeypatch.setenv(PASSWORD_ENV, SECRET)

    def plaintext_probe(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the plaintext probe is not for a secured listener")

    monkeypatch.setattr(conformance_cli, "wait_until_ready", plaintext_probe)

    def refused(*_args: object) -> None:
        raise ConfigurationError("cannot reach h:9094: NoBrokersAvailable: NoBrokersAvailable")

    monkeypatch.setattr(conformance_cli, "open_admin", refused)
    assert conformance_cli.main(["--bootstrap", "h:9094", *SCRAM]) == 2
    assert capsys.readouterr().out == (
        "error: cannot reach h:9094: NoBrokersAvailable: NoBrokersAvailable\n"
    )


def test_a_refused_measurement_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A measurement the cluster refuses (an ACL missing) ends the run: one line naming it and
    the ACLs the command needs; any other failure, its first line."""
    monkeypatch.setattr(conformance_cli, "wait_until_ready", lambda h, p, timeout_s: None)
    monkeypatch.setattr(conformance_cli, "_kind", lambda *_args: "a Kafka broker")

    class TopicAuthorizationFailedError(Exception):
        """kafka-python's name; its text repeats the whole request and response."""

    failures = [
        TopicAuthorizationFailedError("[Error 29] Request 'CreateTopicsRequest(...)' failed"),
        TimeoutError("topic 'conf-grow-1' shows 0 partitions, expected 2\nmore"),
    ]

    def measure(bootstrap: str, chosen: list[str], say: object, security: object) -> list[object]:
        raise failures.pop(0)

    monkeypatch.setattr(conformance_cli, "measure", measure)
    argv = ["--bootstrap", "h:9092", "--only", "partition_growth"]
    assert conformance_cli.main(argv) == 2
    assert capsys.readouterr().out.splitlines()[-1] == (
        "error: partition_growth: TopicAuthorizationFailedError: the cluster refused it; the"
        " principal needs Create, Describe, Read, Alter and Delete on the topics prefixed"
        " conf-, Read on the groups prefixed conformance-"
    )
    assert conformance_cli.main(argv) == 2
    assert capsys.readouterr().out.splitlines()[-1] == (
        "error: partition_growth: TimeoutError: topic 'conf-grow-1' shows 0 partitions, expected 2"
    )


def test_a_request_the_broker_does_not_serve_is_named_with_the_broker_kind(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """kafka-python's refusal to send a request the broker does not advertise ends the run in
    one line naming the request and the broker kind, exit 5 (not "the cluster refused it")."""
    from kafka.errors import IncompatibleBrokerVersion

    monkeypatch.setattr(conformance_cli, "wait_until_ready", lambda h, p, timeout_s: None)
    monkeypatch.setattr(conformance_cli, "_kind", lambda *_args: "Tansu (cluster id t)")

    def measure(bootstrap: str, chosen: list[str], say: object, security: object) -> list[object]:
        raise IncompatibleBrokerVersion(
            "Kafka broker does not support the 'CreatePartitionsRequest' Kafka protocol."
        )

    monkeypatch.setattr(conformance_cli, "measure", measure)
    argv = ["--bootstrap", "h:9092", "--only", "partition_growth"]
    assert conformance_cli.main(argv) == 5
    assert capsys.readouterr().out.splitlines()[-1] == (
        "error: partition_growth: Tansu (cluster id t) does not serve CreatePartitions"
    )


def test_an_address_nobody_listens_on_is_said_at_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A loopback port nobody listens on: one line naming the refusal, exit 2, before the
    readiness probe's 10 s wait."""
    import socket

    from kafka_sticky_plugin.broker_kind import unreachable

    monkeypatch.setattr(conformance_cli, "unreachable", unreachable)

    def never(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("the readiness probe ran")

    monkeypatch.setattr(conformance_cli, "wait_until_ready", never)
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    assert conformance_cli.main(["--bootstrap", f"127.0.0.1:{port}"]) == 2
    assert capsys.readouterr().out == f"error: cannot reach 127.0.0.1:{port}: Connection refused\n"


def test_every_exit_status_the_command_returns_is_documented() -> None:
    """Each status ``main`` can return (read from its source, plus the missing extra's,
    which ``__main__`` returns) is named in docs/brokers.md's "Exit status:" sentence and in
    the module docstring (issue 39: the exit codes were documented nowhere)."""
    import ast
    import inspect
    import re
    from pathlib import Path

    from kafka_sticky_plugin.extras import EXIT_MISSING_EXTRA

    tree = ast.parse(inspect.getsource(conformance_cli))
    constants = {
        node.targets[0].id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Constant)
    }
    returned = {EXIT_MISSING_EXTRA}
    for node in ast.walk(tree):
        if isinstance(node, ast.Return) and node.value is not None:
            value = node.value
            parts = [value.body, value.orelse] if isinstance(value, ast.IfExp) else [value]
            for part in parts:
                known = constants.get(part.id) if isinstance(part, ast.Name) else None
                if isinstance(part, ast.Constant) and isinstance(part.value, int):
                    returned.add(part.value)
                elif isinstance(known, int):
                    returned.add(known)
    assert returned >= {0, 1, 2, 4, 5}
    page = (Path(__file__).parents[1] / "docs" / "brokers.md").read_text(encoding="utf-8")
    found = re.search(r"Exit status:(.*?)\n\n", page, re.S)
    assert found is not None, "docs/brokers.md has no 'Exit status:' sentence"
    documented = {int(n) for n in re.findall(r"`(\d)`", found.group(1))}
    assert documented == returned
    docstring = conformance_cli.__doc__ or ""
    said = docstring[docstring.index("Exit status:") :]
    assert all(re.search(rf"\b{n}\b", said) for n in returned), said
