"""A throwaway certificate authority for the security tier: a CA, the broker's certificate and
one client certificate per name, made fresh by each test run and written as PEM files.

``make_certificates(folder, ["admin", "alice"])`` writes ``ca.pem`` (the CA's certificate, the
truststore of the broker and of every client), ``broker.pem`` (the broker's unencrypted
PKCS#8 key followed by its certificate: Kafka's ``ssl.keystore.type=PEM`` file) and, for each
client name, ``<name>-cert.pem`` and ``<name>-key.pem`` (what kafka-python, aiokafka and
librdkafka read). Nothing comes from elsewhere: keys are new EC P-256 keys, made with the
pinned ``cryptography`` package (requirements/base.txt).

Invariants: every certificate's subject is ``CN=<name>`` and nothing else, so the broker's
``ssl.principal.mapping.rules`` (:mod:`.kafka_security`) turns a client certificate into the
principal ``User:<name>``, the same principal as the SCRAM user of that name; the broker's
certificate names ``127.0.0.1`` and ``localhost`` (the only addresses a test connects to), so
clients may keep hostname verification on; the files are readable by their owner only. The
key files are the tier's secrets: :attr:`Certificates.key_lines` lists their PEM body lines
for the log scan (no line of them may appear in a log).
"""

from __future__ import annotations

import datetime
import ipaddress
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BROKER_NAME", "Certificates", "make_certificates"]

#: The subject name of the broker's certificate (and so its TLS principal, ``User:broker``).
BROKER_NAME = "broker"

_VALID_FOR = datetime.timedelta(days=2)


@dataclass(frozen=True)
class Certificates:
    """Where :func:`make_certificates` wrote the files (all absolute paths)."""

    ca: Path
    broker_keystore: Path
    clients: dict[str, tuple[Path, Path]] = field(default_factory=dict)

    def cert(self, name: str) -> Path:
        """The client certificate of ``name``."""
        return self.clients[name][0]

    def key(self, name: str) -> Path:
        """The client private key of ``name``."""
        return self.clients[name][1]

    def key_lines(self) -> list[str]:
        """Every base64 body line of at least 16 characters (a shorter last line could match
        by chance) of every private key written, the broker's and the clients': the strings
        no log may contain."""
        lines: list[str] = []
        for path in (self.broker_keystore, *(key for _, key in self.clients.values())):
            in_key = False
            for line in path.read_text(encoding="ascii").splitlines():
                if line.startswith("-----BEGIN") and "PRIVATE KEY" in line:
                    in_key = True
                elif line.startswith("-----END"):
                    in_key = False
                elif in_key and len(line.strip()) >= 16:
                    lines.append(line.strip())
        return lines


def _write_private(path: Path, data: bytes) -> Path:
    path.touch(mode=0o600, exist_ok=True)
    path.chmod(0o600)
    path.write_bytes(data)
    return path


def make_certificates(folder: Path, client_names: Iterable[str]) -> Certificates:
    """Make a CA, the broker's certificate and one client certificate per name in ``folder``
    (see the module docstring for the files and their invariants)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    folder.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)

    def name(common: str) -> x509.Name:
        return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = name("kafka-sticky-plugin test CA")
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + _VALID_FOR)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .sign(ca_key, hashes.SHA256())
    )
    pem = serialization.Encoding.PEM

    def leaf(common: str, server: bool) -> tuple[bytes, bytes]:
        key = ec.generate_private_key(ec.SECP256R1())
        builder = (
            x509.CertificateBuilder()
            .subject_name(name(common))
            .issuer_name(ca_name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now)
            .not_valid_after(now + _VALID_FOR)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(
                x509.ExtendedKeyUsage(
                    [ExtendedKeyUsageOID.SERVER_AUTH, ExtendedKeyUsageOID.CLIENT_AUTH]
                    if server
                    else [ExtendedKeyUsageOID.CLIENT_AUTH]
                ),
                critical=False,
            )
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName(
                    [x509.IPAddress(ipaddress.ip_address("127.0.0.1")), x509.DNSName("localhost")]
                ),
                critical=False,
            )
        cert = builder.sign(ca_key, hashes.SHA256())
        key_pem = key.private_bytes(
            pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
        )
        return cert.public_bytes(pem), key_pem

    ca_path = folder / "ca.pem"
    ca_path.write_bytes(ca_cert.public_bytes(pem))
    broker_cert, broker_key = leaf(BROKER_NAME, server=True)
    keystore = _write_private(folder / f"{BROKER_NAME}.pem", broker_key + broker_cert)
    clients: dict[str, tuple[Path, Path]] = {}
    for client in client_names:
        cert, key = leaf(client, server=False)
        cert_path = folder / f"{client}-cert.pem"
        cert_path.write_bytes(cert)
        clients[client] = (cert_path, _write_private(folder / f"{client}-key.pem", key))
    return Certificates(ca=ca_path, broker_keystore=keystore, clients=clients)
