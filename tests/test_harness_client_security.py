"""The security tier's client settings and certificates (``client_security.py``,
``testlab/kafka_certificates.py``), without a broker."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import pytest

from kafka_sticky_plugin.client_security import (
    ClientSecurity,
    aiokafka_settings,
    confluent_settings,
    kafka_python_settings,
)
from kafka_sticky_plugin.groups.member_config import MemberConfig
from testlab.kafka_certificates import make_certificates

SCRAM = ClientSecurity("SASL_PLAINTEXT", username="alice", password="pw-1")
TLS = ClientSecurity("SSL", cafile="/k/ca.pem", certfile="/k/a-cert.pem", keyfile="/k/a-key.pem")
SCRAM_TLS = ClientSecurity("SASL_SSL", username="alice", password="pw-1", cafile="/k/ca.pem")


def test_no_security_adds_no_setting() -> None:
    """A PLAINTEXT client's configuration stays exactly what it was."""
    assert kafka_python_settings(None) == {}
    assert aiokafka_settings(None) == {}
    assert confluent_settings(None) == {}


def test_kafka_python_settings_per_protocol() -> None:
    assert kafka_python_settings(SCRAM) == {
        "security_protocol": "SASL_PLAINTEXT",
        "sasl_mechanism": "SCRAM-SHA-512",
        "sasl_plain_username": "alice",
        "sasl_plain_password": "pw-1",
    }
    tls = kafka_python_settings(TLS)
    assert tls["ssl_certfile"] == "/k/a-cert.pem" and tls["ssl_keyfile"] == "/k/a-key.pem"
    assert tls["ssl_check_hostname"] is True and "sasl_mechanism" not in tls
    both = kafka_python_settings(SCRAM_TLS)
    assert both["security_protocol"] == "SASL_SSL" and both["ssl_cafile"] == "/k/ca.pem"
    assert both["sasl_plain_password"] == "pw-1" and "ssl_certfile" not in both


def test_aiokafka_settings_carry_tls_in_a_context(tmp_path: Path) -> None:
    """aiokafka takes SCRAM by the same names as kafka-python, and TLS as an SSLContext that
    trusts the CA."""
    certs = make_certificates(tmp_path, [])
    settings = aiokafka_settings(
        ClientSecurity("SASL_SSL", username="alice", password="pw-1", cafile=str(certs.ca))
    )
    assert settings["sasl_plain_password"] == "pw-1" and settings["security_protocol"] == "SASL_SSL"
    context = settings["ssl_context"]
    assert isinstance(context, ssl.SSLContext) and context.verify_mode == ssl.CERT_REQUIRED
    assert context.get_ca_certs(), "the CA is loaded"
    assert "ssl_context" not in aiokafka_settings(SCRAM)


def test_confluent_settings_per_protocol() -> None:
    assert confluent_settings(SCRAM) == {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanisms": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": "pw-1",
    }
    assert confluent_settings(TLS) == {
        "security.protocol": "SSL",
        "ssl.ca.location": "/k/ca.pem",
        "ssl.certificate.location": "/k/a-cert.pem",
        "ssl.key.location": "/k/a-key.pem",
    }


def test_the_password_is_not_in_a_repr_and_survives_json() -> None:
    """A member's configuration crosses to a child process as JSON, security included; the
    password is in no ``repr``."""
    assert "pw-1" not in repr(SCRAM)
    config = MemberConfig("127.0.0.1:9", "g", ("t",), "m", security=SCRAM.as_dict())
    again = MemberConfig.from_json(config.to_json())
    assert ClientSecurity.of(again.security) == SCRAM


def _handshake(client: ssl.SSLContext, server: ssl.SSLContext) -> str:
    """One TLS handshake in memory; the server's view of the client certificate's CN."""
    c_in, c_out, s_in, s_out = (ssl.MemoryBIO() for _ in range(4))
    near = client.wrap_bio(c_in, c_out, server_hostname="127.0.0.1")
    far = server.wrap_bio(s_in, s_out, server_side=True)
    done = [False, False]
    for _ in range(10):
        for index, (end, out, into) in enumerate(((near, c_out, s_in), (far, s_out, c_in))):
            if not done[index]:
                try:
                    end.do_handshake()
                    done[index] = True
                except ssl.SSLWantReadError:
                    pass
            into.write(out.read())
        if all(done):
            break
    peer = far.getpeercert()
    assert peer is not None
    subject: Any = peer["subject"]
    names = [pair for entry in subject for pair in entry]
    return next(str(value) for key, value in names if key == "commonName")


def test_certificates_verify_against_their_ca(tmp_path: Path) -> None:
    """A client that checks the broker's certificate for 127.0.0.1 against the CA completes a
    handshake with mutual TLS, and the broker sees the client's name; key files are private;
    the key lines for the log scan are key lines only."""
    certs = make_certificates(tmp_path, ["alice"])
    client = ssl.create_default_context(cafile=str(certs.ca))
    client.load_cert_chain(str(certs.cert("alice")), str(certs.key("alice")))
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(str(certs.broker_keystore))
    server.load_verify_locations(cafile=str(certs.ca))
    server.verify_mode = ssl.CERT_REQUIRED
    assert _handshake(client, server) == "alice"
    for key in (certs.key("alice"), certs.broker_keystore):
        assert key.stat().st_mode & 0o077 == 0
    lines = certs.key_lines()
    keys = certs.key("alice").read_text() + certs.broker_keystore.read_text()
    assert len(lines) >= 4 and all(line in keys for line in lines)
    assert not any(line in certs.cert("alice").read_text() for line in lines)
    stranger = ssl.create_default_context(cafile=str(make_certificates(tmp_path / "x", []).ca))
    with pytest.raises(ssl.SSLCertVerificationError):
        _handshake(stranger, server)


def test_a_child_member_gets_its_security_outside_its_command_line() -> None:
    """A process member's command line (process listings, the leftover-process report) never
    carries the password: the security settings go through the child's environment."""
    from kafka_sticky_plugin.groups.events import EventLog
    from kafka_sticky_plugin.groups.member_process import ProcessMember, _child_environment

    config = MemberConfig("127.0.0.1:9", "g", ("t",), "m", security=SCRAM.as_dict())
    command = ProcessMember(config, EventLog())._command()
    assert not any("pw-1" in part for part in command)
    assert "pw-1" in _child_environment(config)["KAFKA_STICKY_MEMBER_SECURITY"]
    assert "KAFKA_STICKY_MEMBER_SECURITY" not in _child_environment(
        MemberConfig("127.0.0.1:9", "g", ("t",), "m")
    )
