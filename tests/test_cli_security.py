"""The commands' security options (:mod:`kafka_sticky_plugin.cli_security`): parsed into one
ClientSecurity without connecting, the password only from the environment or a file, every
inconsistent combination one line naming the fix and never the password."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from kafka_sticky_plugin.cli_security import (
    PASSWORD_ENV,
    add_security_arguments,
    security_from_args,
)
from kafka_sticky_plugin.client_security import (
    ClientSecurity,
    confluent_settings,
    kafka_python_settings,
)
from kafka_sticky_plugin.errors import ConfigurationError
from kafka_sticky_plugin.migration_check import main, parse_args

SECRET = "pa55-w0rd-never-shown"


def _parse(argv: list[str], environ: dict[str, str] | None = None) -> ClientSecurity | None:
    parser = argparse.ArgumentParser()
    add_security_arguments(parser)
    return security_from_args(parser.parse_args(argv), environ or {})


@pytest.fixture
def pems(tmp_path: Path) -> dict[str, str]:
    files = {}
    for name in ("ca", "cert", "key"):
        path = tmp_path / f"{name}.pem"
        path.write_text("-----BEGIN X-----\n")
        files[name] = str(path)
    return files


def test_no_option_is_plaintext_and_no_settings() -> None:
    assert _parse([]) is None
    assert kafka_python_settings(None) == {} and confluent_settings(None) == {}


def test_scram_password_from_the_default_environment_variable() -> None:
    sec = _parse(
        ["--security-protocol", "sasl_plaintext", "--sasl-username", "alice"],
        {PASSWORD_ENV: SECRET},
    )
    assert sec == ClientSecurity(
        protocol="SASL_PLAINTEXT", username="alice", password=SECRET, mechanism="SCRAM-SHA-512"
    )
    assert SECRET not in repr(sec)
    assert kafka_python_settings(sec)["sasl_plain_password"] == SECRET
    assert confluent_settings(sec)["sasl.mechanisms"] == "SCRAM-SHA-512"


def test_password_from_a_named_variable_or_a_file(tmp_path: Path) -> None:
    named = _parse(
        [
            "--security-protocol=SASL_PLAINTEXT",
            "--sasl-username=bob",
            "--sasl-mechanism=scram-sha-256",
            "--sasl-password-env=MY_PW",
        ],
        {"MY_PW": "from-env"},
    )
    assert named is not None and named.password == "from-env"
    assert named.mechanism == "SCRAM-SHA-256"
    secret_file = tmp_path / "pw"
    secret_file.write_text(f"{SECRET}\nignored second line\n")
    from_file = _parse(
        [
            "--security-protocol=SASL_PLAINTEXT",
            "--sasl-username=bob",
            f"--sasl-password-file={secret_file}",
        ],
        {PASSWORD_ENV: "the file wins"},
    )
    assert from_file is not None and from_file.password == SECRET


def test_sasl_ssl_and_mutual_tls(pems: dict[str, str]) -> None:
    both = _parse(
        [
            "--security-protocol=SASL_SSL",
            "--sasl-username=carol",
            f"--ssl-cafile={pems['ca']}",
        ],
        {PASSWORD_ENV: SECRET},
    )
    assert both is not None and both.cafile == pems["ca"] and both.certfile is None
    assert confluent_settings(both)["ssl.ca.location"] == pems["ca"]
    mutual = _parse(
        [
            "--security-protocol=SSL",
            f"--ssl-cafile={pems['ca']}",
            f"--ssl-certfile={pems['cert']}",
            f"--ssl-keyfile={pems['key']}",
        ]
    )
    assert mutual is not None and mutual.username is None and mutual.password is None
    settings = kafka_python_settings(mutual)
    assert (settings["ssl_certfile"], settings["ssl_keyfile"]) == (pems["cert"], pems["key"])
    system_ca = _parse(["--security-protocol=SSL"])
    assert system_ca is not None and "ssl.ca.location" not in confluent_settings(system_ca)


@pytest.mark.parametrize(
    ("argv", "environ", "says"),
    [
        (["--security-protocol=SASL_SSL"], {PASSWORD_ENV: SECRET}, "needs --sasl-username"),
        (
            ["--security-protocol=SASL_PLAINTEXT", "--sasl-username=a"],
            {},
            f"set the environment variable {PASSWORD_ENV}",
        ),
        (
            [
                "--security-protocol=SASL_PLAINTEXT",
                "--sasl-username=a",
                "--sasl-password-file=/nope",
            ],
            {},
            "--sasl-password-file /nope: cannot read it",
        ),
        (["--sasl-username=a"], {}, "need --security-protocol SASL_PLAINTEXT or SASL_SSL"),
        (
            ["--security-protocol=SASL_PLAINTEXT", "--ssl-cafile=/x"],
            {},
            "--ssl-* options need --security-protocol SSL or SASL_SSL",
        ),
        (["--security-protocol=SSL", "--ssl-keyfile=/x"], {}, "go together"),
        (["--security-protocol=SSL", "--ssl-cafile=/nope.pem"], {}, "--ssl-cafile /nope.pem: no"),
    ],
)
def test_inconsistent_options_are_one_line_without_the_password(
    argv: list[str], environ: dict[str, str], says: str
) -> None:
    with pytest.raises(ConfigurationError) as refused:
        _parse(argv, environ)
    text = str(refused.value)
    assert says in text and "\n" not in text and SECRET not in text


def test_the_password_cannot_be_given_on_the_command_line() -> None:
    parser = argparse.ArgumentParser()
    add_security_arguments(parser)
    with pytest.raises(SystemExit):
        parser.parse_args(["--sasl-password", SECRET])


def test_migration_check_carries_the_security_options(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv(PASSWORD_ENV, SECRET)
    args = parse_args(
        [
            "--bootstrap=kafka-1.prod:9094",
            "--group=orders",
            "--security-protocol=SASL_PLAINTEXT",
            "--sasl-username=ops",
        ]
    )
    assert args.security == ClientSecurity("SASL_PLAINTEXT", "ops", SECRET)
    plain = parse_args(["--bootstrap=kafka-1.prod:9092", "--group=orders"])
    assert plain.security is None
    code = main(["--bootstrap=h:9094", "--group=g", "--security-protocol=SASL_SSL"])
    out = capsys.readouterr().out
    assert code == 2 and out.startswith("error: SASL_SSL needs --sasl-username")
    assert SECRET not in out


def test_a_failed_bootstrap_names_its_last_connection_failure() -> None:
    import logging

    from kafka_sticky_plugin.cli_security import _BootstrapFailures

    failures = _BootstrapFailures()
    assert str(failures) == ""
    logger = logging.getLogger("test.bootstrap")
    logger.addHandler(failures)
    try:
        refused = RuntimeError("Authentication failed due to invalid credentials")
        logger.warning("Bootstrap connection to %s failed: %s (backoff %.2f secs)", 1, refused, 0.1)
        logger.warning("something else: %s", ValueError("not this"))
    finally:
        logger.removeHandler(failures)
    assert str(failures) == (
        " (last connection failure: RuntimeError: Authentication failed due to invalid credentials)"
    )


def test_unread_settings_are_told_only_on_a_kip848_broker() -> None:
    from kafka_sticky_plugin.authorization_advice import cluster_configs_unread_line
    from kafka_sticky_plugin.migration_advice import ClusterFacts
    from kafka_sticky_plugin.migration_check import _settings_unread

    assert _settings_unread(ClusterFacts(1, None, None, None, None))
    assert not _settings_unread(ClusterFacts(0, None, None, None, None))
    assert not _settings_unread(ClusterFacts(1, None, "bidirectional", None, None))
    line = cluster_configs_unread_line("User:ops")
    assert "grant DescribeConfigs on Cluster 'kafka-cluster' to User:ops" in line
